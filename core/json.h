// The project's JSON: nlohmann::json (Debian's nlohmann-json3-dev) with the conventions of every
// file convcheck writes and reads (results.jsonl, summary.json, run.json, fuzz.json, check --json,
// verify --json, report diff --json).
//
//   Values are nlohmann::ordered_json: objects keep their keys in the order written, so a file
//   written, read and written again is byte-identical.
//   dump() writes doubles with 17 significant digits (they round-trip; -0 is written 0), integers
//   exactly (all 64 bits), and NaN and infinities as the strings "nan", "inf", "-inf", which
//   number_of() reads back. Strings are escaped by nlohmann; bytes that are not UTF-8 are written
//   as U+FFFD, so what is written always parses.
//   parse() takes untrusted text (a results.jsonl from another machine, a truncated line): objects
//   and arrays nest at most kMaxDepth deep, and every error is a ParseError naming the byte offset.
//   The typed accessors (string_of, ...) throw std::runtime_error naming the key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace convcheck::json {

using Value = nlohmann::ordered_json;

class ParseError : public std::runtime_error {
 public:
  ParseError(std::size_t offset, const std::string& what)
      : std::runtime_error("at byte " + std::to_string(offset) + ": " + what), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

inline constexpr int kMaxDepth = 64;

/// Parses one JSON value (surrounding whitespace allowed, nothing after it).
Value parse(std::string_view text);

/// A number's text: 17 significant digits; NaN and infinities as the strings "nan", "inf", "-inf".
std::string number(double v);
/// Serialises a value compactly (no spaces), or indented by `indent` spaces per level when > 0.
std::string dump(const Value& v, int indent = 0);

/// Typed access for records: throws std::runtime_error naming the key when it is missing or of
/// the wrong type.
const Value* find(const Value& object, std::string_view key);  // nullptr when absent
const Value& field(const Value& object, std::string_view key);
const Value& array_of(const Value& object, std::string_view key);
std::string string_of(const Value& object, std::string_view key);
/// A number, or one of the strings "nan", "inf", "-inf".
double number_of(const Value& object, std::string_view key);
int64_t integer_of(const Value& object, std::string_view key);
uint64_t unsigned_of(const Value& object, std::string_view key);
bool bool_of(const Value& object, std::string_view key);

/// What the typed accessors (here and core/json_reader.h's) say about a field: they throw
/// std::runtime_error("field \"<key>\" <what>").
enum class FieldProblem {
  missing,
  not_array,
  not_string,
  not_number,
  not_integer,
  out_of_range,
  not_unsigned,
  not_bool
};
[[noreturn]] void field_error(std::string_view key, FieldProblem problem);
/// "nan", "inf", "-inf" as doubles; nothing for any other string.
std::optional<double> special_number(std::string_view s);

}  // namespace convcheck::json
