#include "core/json.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace convcheck::json {

namespace {

struct TooDeep {};

// Where the nesting first exceeds kMaxDepth (only called once the parser found that it does).
std::size_t too_deep_at(std::string_view t) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return t.size();
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string message_of(const nlohmann::json::exception& e) {
  std::string m = e.what();
  const std::size_t bracket = m.find("] ");
  if (bracket != std::string::npos) m.erase(0, bracket + 2);
  const std::size_t colon = m.find(": ");
  if (m.rfind("parse error", 0) == 0 && colon != std::string::npos) m.erase(0, colon + 2);
  return m;
}

void dump_to(std::string& o, const Value& v, int indent, int level) {
  auto newline = [&](int l) {
    if (indent <= 0) return;
    o += '\n';
    o.append(static_cast<std::size_t>(indent * l), ' ');
  };
  auto quoted = [&](const std::string& s) {
    o += Value(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  switch (v.type()) {
    case Value::value_t::boolean:
      o += v.get<bool>() ? "true" : "false";
      return;
    case Value::value_t::number_integer:
      o += std::to_string(v.get<int64_t>());
      return;
    case Value::value_t::number_unsigned:
      o += std::to_string(v.get<uint64_t>());
      return;
    case Value::value_t::number_float:
      o += number(v.get<double>());
      return;
    case Value::value_t::string:
      quoted(v.get_ref<const std::string&>());
      return;
    case Value::value_t::array:
    case Value::value_t::object: {
      const bool object = v.is_object();
      if (v.empty()) {
        o += object ? "{}" : "[]";
        return;
      }
      o += object ? '{' : '[';
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) o += ',';
        first = false;
        newline(level + 1);
        if (object) {
          quoted(it.key());
          o += indent > 0 ? ": " : ":";
        }
        dump_to(o, it.value(), indent, level + 1);
      }
      newline(level);
      o += object ? '}' : ']';
      return;
    }
    default:  // null, and the binary and discarded values nlohmann has and JSON does not
      o += "null";
      return;
  }
}

}  // namespace

void field_error(std::string_view key, FieldProblem problem) {
  // In FieldProblem's order.
  static constexpr const char* kWhat[] = {"is missing",
                                          "is not an array",
                                          "is not a string",
                                          "is not a number",
                                          "is not an integer",
                                          "is out of the 64-bit range",
                                          "is not a non-negative integer",
                                          "is not true or false"};
  throw std::runtime_error("field \"" + std::string(key) + "\" " +
                           kWhat[static_cast<int>(problem)]);
}

std::optional<double> special_number(std::string_view s) {
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

Value parse(std::string_view text) {
  // Depth is checked as the parser goes (the callback sees every object and array start), so a
  // hostile line of a million '[' costs no more than its length.
  auto limit = [](int depth, nlohmann::json::parse_event_t event, Value&) {
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxDepth)
      throw TooDeep{};
    return true;
  };
  try {
    return Value::parse(text.begin(), text.end(), limit);
  } catch (const TooDeep&) {
    throw ParseError(too_deep_at(text),
                     "nested deeper than " + std::to_string(kMaxDepth) + " levels");
  } catch (const nlohmann::json::parse_error& e) {
    throw ParseError(e.byte > 0 ? e.byte - 1 : 0, message_of(e));
  } catch (const nlohmann::json::exception& e) {
    // A number out of the double range ("number overflow parsing '1e400'"): find the literal.
    const std::string m = message_of(e);
    const std::size_t q = m.find('\'');
    const std::size_t at = q == std::string::npos ? std::string_view::npos
                                                  : text.find(m.substr(q + 1, m.size() - q - 2));
    throw ParseError(at == std::string_view::npos ? 0 : at, m);
  }
}

std::string number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v == 0 ? 0.0 : v);  // -0 as 0: JSON readers read -0 as 0
  return buf;
}

std::string dump(const Value& v, int indent) {
  std::string o;
  dump_to(o, v, indent, 0);
  return o;
}

const Value* find(const Value& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

const Value& field(const Value& object, std::string_view key) {
  const Value* v = find(object, key);
  if (v == nullptr) field_error(key, FieldProblem::missing);
  return *v;
}

const Value& array_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (!v.is_array()) field_error(key, FieldProblem::not_array);
  return v;
}

std::string string_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (!v.is_string()) field_error(key, FieldProblem::not_string);
  return v.get<std::string>();
}

double number_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    if (const std::optional<double> d = special_number(v.get_ref<const std::string&>())) return *d;
  }
  field_error(key, FieldProblem::not_number);
}

int64_t integer_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      field_error(key, FieldProblem::out_of_range);
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (!v.is_number_integer()) field_error(key, FieldProblem::not_integer);
  return v.get<int64_t>();
}

uint64_t unsigned_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (!v.is_number_unsigned()) field_error(key, FieldProblem::not_unsigned);
  return v.get<uint64_t>();
}

bool bool_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (!v.is_boolean()) field_error(key, FieldProblem::not_bool);
  return v.get<bool>();
}

}  // namespace convcheck::json
