#include "reports/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace convcheck::json {

const Value* Value::find(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  Value document() {
    skip();
    Value v = value(0);
    skip();
    if (i_ != t_.size()) fail("unexpected '" + printable(t_[i_]) + "' after the value");
    return v;
  }

 private:
  std::string_view t_;
  std::size_t i_ = 0;

  [[noreturn]] void fail(const std::string& what) const { throw ParseError(i_, what); }

  static std::string printable(char c) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      return buf;
    }
    return std::string(1, c);
  }

  void skip() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }

  bool literal(std::string_view word) {
    if (t_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  Value value(int depth) {
    if (depth >= kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (i_ >= t_.size()) fail("unexpected end of text, expected a value");
    Value v;
    const char c = t_[i_];
    if (c == '{') {
      v.type = Value::Type::object;
      ++i_;
      skip();
      if (i_ < t_.size() && t_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        skip();
        if (i_ >= t_.size() || t_[i_] != '"') fail("expected a string key");
        std::string key = string();
        skip();
        if (i_ >= t_.size() || t_[i_] != ':') fail("expected ':' after key \"" + key + "\"");
        ++i_;
        skip();
        v.fields.emplace_back(std::move(key), value(depth + 1));
        skip();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == '}') {
          ++i_;
          return v;
        }
        fail(i_ >= t_.size() ? "unexpected end of text inside an object"
                             : "expected ',' or '}' in an object");
      }
    }
    if (c == '[') {
      v.type = Value::Type::array;
      ++i_;
      skip();
      if (i_ < t_.size() && t_[i_] == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        skip();
        v.items.push_back(value(depth + 1));
        skip();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == ']') {
          ++i_;
          return v;
        }
        fail(i_ >= t_.size() ? "unexpected end of text inside an array"
                             : "expected ',' or ']' in an array");
      }
    }
    if (c == '"') {
      v.type = Value::Type::string;
      v.s = string();
      return v;
    }
    if (literal("true")) {
      v.type = Value::Type::boolean;
      v.b = true;
      return v;
    }
    if (literal("false")) {
      v.type = Value::Type::boolean;
      return v;
    }
    if (literal("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) return number_value();
    fail("unexpected '" + printable(c) + "', expected a value");
  }

  Value number_value() {
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t d = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      if (i_ == d) fail("malformed number");
    };
    if (t_[i_] == '-') ++i_;
    digits();
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      digits();
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      digits();
    }
    Value v;
    v.type = Value::Type::number;
    v.s = std::string(t_.substr(start, i_ - start));
    v.n = std::strtod(v.s.c_str(), nullptr);  // out of range: +-inf or 0, as strtod gives
    return v;
  }

  unsigned hex4() {
    if (i_ + 4 > t_.size()) fail("truncated \\u escape");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = t_[i_++];
      u <<= 4;
      if (h >= '0' && h <= '9') {
        u |= h - '0';
      } else if (h >= 'a' && h <= 'f') {
        u |= h - 'a' + 10;
      } else if (h >= 'A' && h <= 'F') {
        u |= h - 'A' + 10;
      } else {
        fail("bad hex digit in \\u escape");
      }
    }
    return u;
  }

  static void utf8(std::string& o, unsigned cp) {
    if (cp < 0x80) {
      o += static_cast<char>(cp);
    } else if (cp < 0x800) {
      o += static_cast<char>(0xc0 | (cp >> 6));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      o += static_cast<char>(0xe0 | (cp >> 12));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      o += static_cast<char>(0xf0 | (cp >> 18));
      o += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      o += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  std::string string() {
    ++i_;  // opening quote
    std::string o;
    for (;;) {
      if (i_ >= t_.size()) fail("unterminated string");
      const char c = t_[i_++];
      if (c == '"') return o;
      if (static_cast<unsigned char>(c) < 0x20) {
        --i_;
        fail("control character " + printable(c) + " inside a string");
      }
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i_ >= t_.size()) fail("unterminated escape");
      const char e = t_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          o += e;
          break;
        case 'b':
          o += '\b';
          break;
        case 'f':
          o += '\f';
          break;
        case 'n':
          o += '\n';
          break;
        case 'r':
          o += '\r';
          break;
        case 't':
          o += '\t';
          break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xd800 && cp < 0xdc00 && t_.substr(i_, 2) == "\\u") {
            const std::size_t save = i_;
            i_ += 2;
            const unsigned lo = hex4();
            if (lo >= 0xdc00 && lo < 0xe000) {
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else {
              i_ = save;
            }
          }
          utf8(o, cp);
          break;
        }
        default:
          --i_;
          fail("unknown escape \\" + printable(e));
      }
    }
  }
};

void dump_to(std::string& o, const Value& v, int indent, int level) {
  auto newline = [&](int l) {
    if (indent <= 0) return;
    o += '\n';
    o.append(static_cast<std::size_t>(indent * l), ' ');
  };
  switch (v.type) {
    case Value::Type::null:
      o += "null";
      return;
    case Value::Type::boolean:
      o += v.b ? "true" : "false";
      return;
    case Value::Type::number:
      o += v.s.empty() ? number(v.n) : v.s;
      return;
    case Value::Type::string:
      o += quote(v.s);
      return;
    case Value::Type::array:
      if (v.items.empty()) {
        o += "[]";
        return;
      }
      o += '[';
      for (std::size_t k = 0; k < v.items.size(); ++k) {
        if (k) o += ',';
        newline(level + 1);
        dump_to(o, v.items[k], indent, level + 1);
      }
      newline(level);
      o += ']';
      return;
    case Value::Type::object:
      if (v.fields.empty()) {
        o += "{}";
        return;
      }
      o += '{';
      for (std::size_t k = 0; k < v.fields.size(); ++k) {
        if (k) o += ',';
        newline(level + 1);
        o += quote(v.fields[k].first);
        o += indent > 0 ? ": " : ":";
        dump_to(o, v.fields[k].second, indent, level + 1);
      }
      newline(level);
      o += '}';
      return;
  }
}

[[noreturn]] void missing(std::string_view key, const char* want) {
  throw std::runtime_error("field \"" + std::string(key) + "\" " + want);
}

}  // namespace

Value parse(std::string_view text) {
  return Parser(text).document();
}

std::string quote(std::string_view s) {
  std::string o = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        o += "\\\"";
        break;
      case '\\':
        o += "\\\\";
        break;
      case '\n':
        o += "\\n";
        break;
      case '\r':
        o += "\\r";
        break;
      case '\t':
        o += "\\t";
        break;
      default:
        if (ch < 0x20 || ch == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          o += buf;
        } else {
          o += static_cast<char>(ch);
        }
    }
  }
  return o + "\"";
}

std::string number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v == 0 ? 0.0 : v);  // -0 prints as 0
    return buf;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string dump(const Value& v, int indent) {
  std::string o;
  dump_to(o, v, indent, 0);
  return o;
}

const Value& field(const Value& object, std::string_view key) {
  const Value* v = object.find(key);
  if (v == nullptr) missing(key, "is missing");
  return *v;
}

std::string string_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.type != Value::Type::string) missing(key, "is not a string");
  return v.s;
}

double number_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.type == Value::Type::number) return v.n;
  if (v.type == Value::Type::string) {
    if (v.s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (v.s == "inf") return INFINITY;
    if (v.s == "-inf") return -INFINITY;
  }
  missing(key, "is not a number");
}

int64_t integer_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.type != Value::Type::number || v.s.find_first_of(".eE") != std::string::npos)
    missing(key, "is not an integer");
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v.s.c_str(), &end, 10);
  if (errno == ERANGE) missing(key, "is out of the 64-bit range");
  return x;
}

bool bool_of(const Value& object, std::string_view key) {
  const Value& v = field(object, key);
  if (v.type != Value::Type::boolean) missing(key, "is not true or false");
  return v.b;
}

Value make_string(std::string s) {
  Value v;
  v.type = Value::Type::string;
  v.s = std::move(s);
  return v;
}
Value make_number(double x) {
  if (std::isnan(x) || std::isinf(x))
    return make_string(std::isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
  Value v;
  v.type = Value::Type::number;
  v.n = x;
  v.s = number(x);
  return v;
}
Value make_integer(int64_t x) {
  Value v;
  v.type = Value::Type::number;
  v.n = static_cast<double>(x);
  v.s = std::to_string(x);
  return v;
}
Value make_bool(bool b) {
  Value v;
  v.type = Value::Type::boolean;
  v.b = b;
  return v;
}
Value make_array() {
  Value v;
  v.type = Value::Type::array;
  return v;
}
Value make_object() {
  Value v;
  v.type = Value::Type::object;
  return v;
}
Value& add(Value& object, std::string key, Value v) {
  object.fields.emplace_back(std::move(key), std::move(v));
  return object.fields.back().second;
}

}  // namespace convcheck::json
