#include "core/json_reader.h"

#include <cstring>
#include <memory>
#include <stdexcept>

namespace convcheck::json {

namespace dom = simdjson::dom;

Reader::Reader() {
  // The depth limit is fixed at allocation (simdjson keeps it when it grows for a longer text):
  // kMaxDepth levels pass and one more is refused, as in json::parse.
  if (parser_.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, kMaxDepth) != simdjson::SUCCESS)
    throw std::bad_alloc();
}

Node Reader::parse(std::string_view text) {
  std::string_view body = text;
  // nlohmann skips a UTF-8 byte order mark at the start; simdjson would refuse it.
  if (body.substr(0, 3) == "\xef\xbb\xbf") body.remove_prefix(3);
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: copy into a buffer that has them,
  // spaces (what an earlier longer line left there must not be read as this line's text).
  padded_.resize(body.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(padded_.data(), body.data(), body.size());
  std::memset(padded_.data() + body.size(), ' ', simdjson::SIMDJSON_PADDING);
  Node node;
  const simdjson::error_code error = parser_.parse(padded_.data(), body.size(), false).get(node);
  if (error == simdjson::SUCCESS) return node;
  if (error == simdjson::MEMALLOC) throw std::bad_alloc();
  (void)json::parse(text);  // refuses it too, with the offset and the words of every reader
  if (error == simdjson::DEPTH_ERROR) {
    // simdjson counts a scalar as a level and nlohmann does not: kMaxDepth arrays around a number
    // pass json::parse (just above), and a parser one level deeper reads them.
    if (!deeper_) {
      deeper_ = std::make_unique<simdjson::dom::parser>();
      if (deeper_->allocate(body.size(), kMaxDepth + 1) != simdjson::SUCCESS) {
        deeper_.reset();
        throw std::bad_alloc();
      }
    }
    if (deeper_->parse(padded_.data(), body.size(), false).get(node) == simdjson::SUCCESS)
      return node;
  }
  throw std::runtime_error(simdjson::error_message(error));
}

Object::Object(const Node& node) {
  dom::object o;
  if (node.get(o) != simdjson::SUCCESS) return;
  fields_.reserve(o.size());
  for (const dom::key_value_pair f : o) fields_.emplace_back(f.key, f.value);
}

std::optional<Node> Object::find(std::string_view key) const {
  // From the back: with a key given twice the last wins, as in nlohmann.
  for (auto it = fields_.rbegin(); it != fields_.rend(); ++it)
    if (it->first == key) return it->second;
  return std::nullopt;
}

Node field(const Object& object, std::string_view key) {
  const std::optional<Node> v = object.find(key);
  if (!v) field_error(key, FieldProblem::missing);
  return *v;
}

dom::array array_of(const Object& object, std::string_view key) {
  dom::array a;
  if (field(object, key).get(a) != simdjson::SUCCESS) field_error(key, FieldProblem::not_array);
  return a;
}

std::string_view string_of(const Object& object, std::string_view key) {
  std::string_view s;
  if (field(object, key).get(s) != simdjson::SUCCESS) field_error(key, FieldProblem::not_string);
  return s;
}

double number_of(const Object& object, std::string_view key) {
  const Node v = field(object, key);
  switch (v.type()) {
    case dom::element_type::INT64:
      return static_cast<double>(v.get_int64().value_unsafe());
    case dom::element_type::UINT64:
      return static_cast<double>(v.get_uint64().value_unsafe());
    case dom::element_type::DOUBLE:
      return v.get_double().value_unsafe();
    case dom::element_type::STRING:
      if (const std::optional<double> d = special_number(v.get_string().value_unsafe())) return *d;
      break;
    default:
      break;
  }
  field_error(key, FieldProblem::not_number);
}

int64_t integer_of(const Object& object, std::string_view key) {
  const Node v = field(object, key);
  // simdjson types an integer INT64 when it fits, UINT64 only above INT64_MAX.
  if (v.type() == dom::element_type::UINT64) field_error(key, FieldProblem::out_of_range);
  if (v.type() != dom::element_type::INT64) field_error(key, FieldProblem::not_integer);
  return v.get_int64().value_unsafe();
}

uint64_t unsigned_of(const Object& object, std::string_view key) {
  const Node v = field(object, key);
  if (v.type() == dom::element_type::UINT64) return v.get_uint64().value_unsafe();
  if (v.type() != dom::element_type::INT64 || v.get_int64().value_unsafe() < 0)
    field_error(key, FieldProblem::not_unsigned);
  return static_cast<uint64_t>(v.get_int64().value_unsafe());
}

bool bool_of(const Object& object, std::string_view key) {
  bool b = false;
  if (field(object, key).get(b) != simdjson::SUCCESS) field_error(key, FieldProblem::not_bool);
  return b;
}

}  // namespace convcheck::json
