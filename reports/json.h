// A small JSON reader and writer for the report files (results.jsonl, summary.json, run.json).
//
// The reader takes untrusted text (a results.jsonl from another machine, a truncated line): it
// never recurses deeper than kMaxDepth, and every error is a ParseError naming the byte offset and
// what was expected. Numbers are doubles; the writer prints NaN and infinities as the strings
// "nan", "inf", "-inf" (as the oracle's check --json does), and number_of() reads them back.
// Objects keep their keys in order (the writer's order), so a file written, read and written again
// is byte-identical.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convcheck::json {

class ParseError : public std::runtime_error {
 public:
  ParseError(std::size_t offset, const std::string& what)
      : std::runtime_error("at byte " + std::to_string(offset) + ": " + what), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

struct Value {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Value> items;                           // array
  std::vector<std::pair<std::string, Value>> fields;  // object, in order

  bool is_null() const { return type == Type::null; }
  bool is_object() const { return type == Type::object; }
  bool is_array() const { return type == Type::array; }
  bool is_string() const { return type == Type::string; }
  /// The field `key` of an object, or nullptr (also when this is not an object).
  const Value* find(std::string_view key) const;
};

inline constexpr int kMaxDepth = 64;

/// Parses one JSON value (surrounding whitespace allowed, nothing after it).
Value parse(std::string_view text);

/// A JSON string literal, escaped.
std::string quote(std::string_view s);
/// A number with 17 significant digits (round-trips a double); NaN and infinities as strings.
std::string number(double v);
/// Serialises a value compactly (no spaces), or indented by `indent` spaces per level when > 0.
std::string dump(const Value& v, int indent = 0);

/// Typed access for records: throws std::runtime_error naming the key when it is missing or of
/// the wrong type.
const Value& field(const Value& object, std::string_view key);
std::string string_of(const Value& object, std::string_view key);
/// A number, or one of the strings "nan", "inf", "-inf".
double number_of(const Value& object, std::string_view key);
int64_t integer_of(const Value& object, std::string_view key);
bool bool_of(const Value& object, std::string_view key);

/// Builders for writing.
Value make_string(std::string s);
Value make_number(double v);
/// An integer, written exactly (all 64 bits, unlike a double).
Value make_integer(int64_t v);
Value make_bool(bool b);
Value make_array();
Value make_object();
/// Appends a field to an object (no duplicate check).
Value& add(Value& object, std::string key, Value v);

}  // namespace convcheck::json
