// The fast reader of the project's JSON for the large files (results.jsonl: reports/results.cpp),
// over simdjson's DOM (Debian's libsimdjson-dev). Writing stays with nlohmann (core/json.h); the
// conventions are the same, and so are the messages:
//
//   Reader::parse accepts and refuses what json::parse does, and a refusal is json::parse's own
//   ParseError (the byte offset and nlohmann's words): on simdjson's refusal the text is parsed
//   again by json::parse for the message. That costs nothing on valid lines, and keeps one wording.
//   Nesting is limited to kMaxDepth levels, and a UTF-8 byte order mark at the start is skipped,
//   as json::parse does.
//   The typed accessors throw json.h's messages (`field "<key>" is missing`, ...), number_of
//   reads the strings "nan", "inf", "-inf", and with a key given twice the last wins (Object).
//
// Where the two readers differ (each only for text convcheck never writes), and why:
//   - "-0" is the integer 0 to simdjson, so unsigned_of accepts it (nlohmann refused it as
//     negative); simdjson keeps no sign for an integer zero.
//   - An integer literal outside the 64-bit range (e.g. 18446744073709551616) is refused, with
//     simdjson's message ("Problem while parsing a number", no byte offset): nlohmann read it as a
//     double. The writer writes every integer within 64 bits and every double with a '.' or an
//     exponent when it is that large ("%.17g").
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.h"

namespace convcheck::json {

/// A value in the document a Reader parsed last: valid until that Reader parses again.
using Node = simdjson::dom::element;

class Reader {
 public:
  Reader();
  /// Parses one JSON value (surrounding whitespace allowed, nothing after it). Throws ParseError as
  /// json::parse does (or std::runtime_error in the one case above).
  Node parse(std::string_view text);

 private:
  simdjson::dom::parser parser_;
  std::unique_ptr<simdjson::dom::parser> deeper_;  // kMaxDepth + 1 levels, made when needed
  std::string padded_;  // the text and simdjson's padding, reused from line to line
};

/// An object's fields, gathered in one pass so that each lookup scans a few keys, not the
/// document (simdjson's own lookup walks the object each time); with a key given twice the last
/// wins, as in nlohmann. A value that is not an object has no fields.
class Object {
 public:
  explicit Object(const Node& node);
  std::optional<Node> find(std::string_view key) const;  // empty when absent

 private:
  std::vector<std::pair<std::string_view, Node>> fields_;
};

/// Typed access, as core/json.h's: throws std::runtime_error naming the key when it is missing or
/// of the wrong type. Strings are views into the Reader's document.
Node field(const Object& object, std::string_view key);
simdjson::dom::array array_of(const Object& object, std::string_view key);
std::string_view string_of(const Object& object, std::string_view key);
/// A number, or one of the strings "nan", "inf", "-inf".
double number_of(const Object& object, std::string_view key);
int64_t integer_of(const Object& object, std::string_view key);
uint64_t unsigned_of(const Object& object, std::string_view key);
bool bool_of(const Object& object, std::string_view key);

}  // namespace convcheck::json
