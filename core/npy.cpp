#include "core/npy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/limits.h"

// Little-endian C-order data is copied byte for byte; big-endian data is byte-swapped and
// Fortran-order data transposed into C order once read (to_c_order_native), as np.load does.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "core/npy.cpp assumes a little-endian host"
#endif

namespace convcheck {
namespace {

constexpr std::string_view kMagic("\x93NUMPY", 6);
// numpy aligns the data to 64 bytes and leaves room for the first axis to grow to 21 digits
// without rewriting the file; we do the same so our files are byte-identical to np.save's.
constexpr uint64_t kAlign = 64;
constexpr std::size_t kGrowthAxisMaxDigits = 21;
// The largest header read. numpy writes a few hundred bytes (np.load refuses more than 10000 by
// default); a hostile version 2.0/3.0 file could declare 4 GiB.
constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 20;

struct DescrEntry {
  const char* descr;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {{"<f2", DType::f16},
                                  {"<u2", DType::bf16},
                                  {"<f4", DType::f32},
                                  {"<f8", DType::f64},
                                  {"<i4", DType::i32}};
constexpr const char* kSupportedDescrs = "'<f2', '<f4', '<f8', '<i4', '<u2' (bf16)";

const DescrEntry* find_descr(std::string_view d) {
  for (const DescrEntry& e : kDescrs) {
    if (d == e.descr) return &e;
  }
  return nullptr;
}

// Bytes from a possibly hostile file, made safe and short enough for a message.
std::string printable(std::string_view s, std::size_t max_len = 120) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (s.size() > max_len) out += "...";
  return out;
}

std::string errno_text(int err) {
  return std::strerror(err);
}

struct Preamble {
  int major;
  uint64_t header_start;  // offset of the header dict
  uint64_t header_len;
};

// `head` holds the first min(total, 12) bytes of an image of `total` bytes.
Preamble parse_preamble(std::string_view head, uint64_t total, const std::string& name) {
  if (total == 0) {
    throw InvalidArgument(name +
                          ": not a .npy file: it is empty (expected the magic \"\\x93NUMPY\")");
  }
  if (head.size() < kMagic.size() || head.substr(0, kMagic.size()) != kMagic) {
    throw InvalidArgument(name + ": not a .npy file: expected the magic \"\\x93NUMPY\", got \"" +
                          printable(head.substr(0, kMagic.size())) + "\"");
  }
  if (head.size() < 8) {
    throw InvalidArgument(name + ": .npy preamble truncated: the file ends after " +
                          std::to_string(total) + " bytes, before the format version");
  }
  const int major = static_cast<unsigned char>(head[6]);
  const int minor = static_cast<unsigned char>(head[7]);
  if (major < 1 || major > 3 || minor != 0) {
    throw InvalidArgument(name + ": unsupported .npy format version " + std::to_string(major) +
                          "." + std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  }
  // Version 1.0 has a 16-bit header length, 2.0 and 3.0 a 32-bit one (little-endian).
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  const uint64_t header_start = 8 + len_bytes;
  if (total < header_start) {
    throw InvalidArgument(name + ": .npy preamble truncated: version " + std::to_string(major) +
                          ".0 needs " + std::to_string(header_start) +
                          " bytes before the header, the file has " + std::to_string(total));
  }
  uint64_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) {
    header_len |= static_cast<uint64_t>(static_cast<unsigned char>(head[8 + i])) << (8 * i);
  }
  if (total - header_start < header_len) {
    throw InvalidArgument(name + ": .npy header truncated: the preamble declares a header of " +
                          std::to_string(header_len) + " bytes, but only " +
                          std::to_string(total - header_start) + " bytes follow");
  }
  if (header_len > kMaxHeaderBytes) {
    throw InvalidArgument(name + ": .npy header of " + std::to_string(header_len) +
                          " bytes is larger than convcheck reads (" +
                          std::to_string(kMaxHeaderBytes) + " bytes; numpy writes a few hundred)");
  }
  return {major, header_start, header_len};
}

struct Header {
  std::string descr;
  DType dtype;
  Shape shape;
  uint64_t data_bytes;
  bool big_endian = false;  // '>': bytes swapped on reading
  bool fortran = false;     // column-major: transposed into C order on reading
};

// A parser for the one Python literal numpy writes: a dict with the keys 'descr' (a string),
// 'fortran_order' (True/False) and 'shape' (a tuple of ints), in any order, either quote style,
// any spacing, optional trailing commas.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  Header parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;

    skip_ws();
    if (!consume('{')) fail("the header is not a dict (it must start with '{')");
    for (;;) {
      skip_ws();
      if (consume('}')) break;
      if (!at_quote()) fail("expected a quoted key " + where());
      const std::string key = parse_string();
      skip_ws();
      if (!consume(':')) fail("expected ':' after key '" + printable(key) + "' " + where());
      skip_ws();
      if (key == "descr") {
        if (descr) fail("duplicate key 'descr'");
        if (!at_quote()) {
          fail("'descr' must be a string such as '<f4' (structured dtypes are not supported) " +
               where());
        }
        descr = parse_string();
      } else if (key == "fortran_order") {
        if (fortran_order) fail("duplicate key 'fortran_order'");
        fortran_order = parse_bool();
      } else if (key == "shape") {
        if (shape) fail("duplicate key 'shape'");
        shape = parse_tuple();
      } else {
        fail("unexpected key '" + printable(key) +
             "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (consume(',')) continue;
      if (consume('}')) break;
      fail("expected ',' or '}' " + where());
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the dict " + where());

    if (!descr) fail("the header has no 'descr' key");
    if (!fortran_order) fail("the header has no 'fortran_order' key");
    if (!shape) fail("the header has no 'shape' key");

    Header h;
    h.descr = *descr;
    h.dtype = dtype_of(*descr, &h.big_endian);
    h.fortran = *fortran_order;
    h.shape = *shape;
    int64_t count;
    try {
      count = element_count(h.shape);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(name_ + ": bad shape in the .npy header: " + e.what());
    }
    const int64_t item = static_cast<int64_t>(dtype_size(h.dtype));
    if (count > INT64_MAX / item) {
      throw InvalidArgument(name_ + ": the data size of shape " + shape_string(h.shape) + " " +
                            h.descr + " overflows 64 bits");
    }
    h.data_bytes = static_cast<uint64_t>(count * item);
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument(name_ + ": malformed .npy header: " + what + "; header: \"" +
                          printable(s_, 200) + "\"");
  }
  std::string where() const {
    if (pos_ >= s_.size()) return "at the end of the header";
    return "at offset " + std::to_string(pos_) + " ('" + printable(s_.substr(pos_, 12)) + "')";
  }

  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_quote() const { return pos_ < s_.size() && (s_[pos_] == '\'' || s_[pos_] == '"'); }

  // Escapes never occur in the strings numpy writes here, so a backslash is rejected rather than
  // interpreted.
  std::string parse_string() {
    const char quote = s_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\') fail("escape sequences in strings are not supported " + where());
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False " + where());
  }

  int64_t parse_int() {
    const bool negative = consume('-');
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') {
      fail("'shape' must be a tuple of integers; expected an integer " + where());
    }
    uint64_t v = 0;
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      const uint64_t digit = static_cast<uint64_t>(s_[pos_] - '0');
      if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) {
        while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        fail("dimension " + std::string(negative ? "-" : "") +
             printable(s_.substr(start, pos_ - start)) + " in 'shape' does not fit in 64 bits");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }

  Shape parse_tuple() {
    if (!consume('(')) fail("'shape' must be a tuple such as (2, 3) " + where());
    Shape shape;
    skip_ws();
    if (consume(')')) return shape;
    for (;;) {
      shape.push_back(parse_int());
      skip_ws();
      if (consume(',')) {
        skip_ws();
        if (consume(')')) return shape;
        continue;
      }
      if (consume(')')) {
        // Python's (3) is the int 3, not a tuple.
        if (shape.size() == 1) {
          fail("'shape' (" + std::to_string(shape[0]) +
               ") is not a tuple; a 1-element tuple is written (" + std::to_string(shape[0]) +
               ",)");
        }
        return shape;
      }
      fail("expected ',' or ')' in 'shape' " + where());
    }
  }

  // '<' and '>' (numpy's explicit orders; '=' and '|' are never written for these types).
  DType dtype_of(const std::string& descr, bool* big_endian) const {
    if (const DescrEntry* e = find_descr(descr)) return e->dtype;
    if (descr.size() >= 2 && find_descr("<" + descr.substr(1))) {
      const std::string want = "<" + descr.substr(1);
      if (descr[0] == '>') {
        *big_endian = true;
        return find_descr(want)->dtype;
      }
      throw InvalidArgument(name_ + ": byte order '" + printable(descr.substr(0, 1)) +
                            "' in descr '" + printable(descr) + "' is not supported; expected '" +
                            want + "' or '>" + descr.substr(1) + "'");
    }
    throw InvalidArgument(name_ + ": unsupported dtype descr '" + printable(descr) +
                          "' (supported: " + kSupportedDescrs + ")");
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

// The data must be exactly what the header declares, and (since it is about to be allocated)
// within the memory limit.
void check_data_size(const Header& h, uint64_t available, const std::string& name) {
  if (available == h.data_bytes) {
    require_allocation(h.data_bytes,
                       name + ": the data of shape " + shape_string(h.shape) + " " + h.descr);
    return;
  }
  const std::string facts = "expected " + std::to_string(h.data_bytes) +
                            " bytes of data for shape " + shape_string(h.shape) + " " + h.descr +
                            ", got " + std::to_string(available);
  if (available < h.data_bytes) throw InvalidArgument(name + ": data truncated: " + facts);
  throw InvalidArgument(name + ": trailing bytes after the data: " + facts);
}

// The preamble and header numpy's np.save writes (format version 1.0 unless it does not fit).
std::string npy_preamble(const Tensor& t) {
  std::string dict = "{'descr': '";
  dict += npy_descr(t.dtype());
  dict += "', 'fortran_order': False, 'shape': (";
  const Shape& s = t.shape();
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) dict += ", ";
    dict += std::to_string(s[i]);
  }
  if (s.size() == 1) dict += ',';
  dict += "), }";
  if (!s.empty()) {
    const std::size_t digits = std::to_string(s[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }

  const uint64_t hlen = dict.size() + 1;  // with the final '\n'
  int major = 1;
  uint64_t len_bytes = 2;
  uint64_t pad = kAlign - (kMagic.size() + 2 + len_bytes + hlen) % kAlign;
  if (hlen + pad > 0xFFFF) {
    major = 2;
    len_bytes = 4;
    pad = kAlign - (kMagic.size() + 2 + len_bytes + hlen) % kAlign;
  }
  const uint64_t total_header = hlen + pad;

  std::string out(kMagic);
  out += static_cast<char>(major);
  out += '\0';
  for (uint64_t i = 0; i < len_bytes; ++i) {
    out += static_cast<char>((total_header >> (8 * i)) & 0xFF);
  }
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

// Reads exactly n bytes or throws.
void read_exact(std::FILE* f, void* dst, uint64_t n, const std::string& path) {
  if (n == 0) return;
  errno = 0;
  if (std::fread(dst, 1, n, f) != n) {
    const int err = errno;
    if (std::ferror(f)) {
      throw InvalidArgument("cannot read " + path + ": " +
                            (err ? errno_text(err) : std::string("read error")));
    }
    throw InvalidArgument("cannot read " + path + ": the file got shorter while being read");
  }
}

// The data as read from a file with header `h` (raw bytes in t), made little-endian and C order.
void to_c_order_native(const Header& h, Tensor& t) {
  const std::size_t item = dtype_size(h.dtype);
  auto* bytes = static_cast<unsigned char*>(t.data());
  if (h.big_endian) {
    for (int64_t i = 0; i < t.size(); ++i) {
      unsigned char* e = bytes + static_cast<std::size_t>(i) * item;
      for (std::size_t a = 0, b = item - 1; a < b; ++a, --b) std::swap(e[a], e[b]);
    }
  }
  if (!h.fortran || h.shape.size() < 2 || t.size() < 2) return;
  // Element (i0, ..., ik) is at sum(i_d * prod(s_0..s_{d-1})) in Fortran order. Walk the C-order
  // destination with an odometer, keeping the Fortran offset up to date.
  const std::string f(static_cast<const char*>(t.data()), t.bytes());
  const std::size_t rank = h.shape.size();
  std::vector<int64_t> fstride(rank), idx(rank, 0);
  int64_t s = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    fstride[d] = s;
    s *= h.shape[d];
  }
  int64_t off = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    std::memcpy(bytes + static_cast<std::size_t>(i) * item,
                f.data() + static_cast<std::size_t>(off) * item, item);
    for (std::size_t d = rank; d-- > 0;) {
      off += fstride[d];
      if (++idx[d] < h.shape[d]) break;
      off -= fstride[d] * h.shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

const char* npy_descr(DType t) {
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype == t) return e.descr;
  }
  return "?";
}

Tensor parse_npy(const std::string& bytes, const std::string& name, Layout layout) {
  const std::string_view all(bytes);
  const Preamble p = parse_preamble(all.substr(0, 12), all.size(), name);
  const Header h = HeaderParser(all.substr(p.header_start, p.header_len), name).parse();
  const uint64_t data_offset = p.header_start + p.header_len;
  check_data_size(h, all.size() - data_offset, name);
  Tensor t(h.dtype, h.shape, layout);
  if (h.data_bytes) std::memcpy(t.data(), all.data() + data_offset, h.data_bytes);
  to_c_order_native(h, t);
  return t;
}

Tensor read_npy(const std::string& path, Layout layout) {
  errno = 0;
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f) throw InvalidArgument("cannot open " + path + ": " + errno_text(errno));
  struct stat st;
  if (fstat(fileno(f.get()), &st) != 0) {
    throw InvalidArgument("cannot stat " + path + ": " + errno_text(errno));
  }
  if (S_ISDIR(st.st_mode)) throw InvalidArgument("cannot read " + path + ": " + errno_text(EISDIR));

  if (!S_ISREG(st.st_mode)) {
    // A pipe or device has no size to check up front: read it whole, then parse. The magic is
    // checked as soon as it has arrived (so /dev/zero fails at once), and the total is capped.
    std::string bytes;
    char buf[1 << 16];
    std::size_t n;
    bool preamble_checked = false;
    const uint64_t cap = memory_limit();
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
      bytes.append(buf, n);
      if (!preamble_checked && bytes.size() >= 12) {
        parse_preamble(std::string_view(bytes).substr(0, 12), UINT64_MAX, path);
        preamble_checked = true;
      }
      if (bytes.size() > cap) {
        require_allocation(bytes.size(), path + " (not a regular file, read whole)");
      }
    }
    if (std::ferror(f.get())) throw InvalidArgument("cannot read " + path + ": read error");
    return parse_npy(bytes, path, layout);
  }

  // A regular file: every size the header declares is checked against the real file size before
  // anything that large is allocated.
  const uint64_t total = static_cast<uint64_t>(st.st_size);
  char head[12];
  const uint64_t head_len = total < sizeof head ? total : sizeof head;
  read_exact(f.get(), head, head_len, path);
  const Preamble p = parse_preamble(std::string_view(head, head_len), total, path);

  std::string header(p.header_len, '\0');
  if (std::fseek(f.get(), static_cast<long>(p.header_start), SEEK_SET) != 0) {
    throw InvalidArgument("cannot read " + path + ": " + errno_text(errno));
  }
  read_exact(f.get(), header.data(), p.header_len, path);
  const Header h = HeaderParser(header, path).parse();
  check_data_size(h, total - p.header_start - p.header_len, path);

  Tensor t(h.dtype, h.shape, layout);
  read_exact(f.get(), t.data(), h.data_bytes, path);
  if (std::fgetc(f.get()) != EOF) {
    throw InvalidArgument("cannot read " + path + ": the file grew while being read");
  }
  to_c_order_native(h, t);
  return t;
}

Tensor read_npy_expect(const std::string& path, const std::string& role, DType dtype,
                       const Shape& shape, Layout layout) {
  Tensor t;
  try {
    t = read_npy(path, layout);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(role + ": " + e.what());
  }
  if (t.dtype() != dtype) {
    throw InvalidArgument(role + ": file " + path + " has dtype " + dtype_name(t.dtype()) + " ('" +
                          npy_descr(t.dtype()) + "'), expected " + dtype_name(dtype) + " ('" +
                          npy_descr(dtype) + "')");
  }
  if (t.shape() != shape) {
    throw InvalidArgument(role + ": file " + path + " has shape " + shape_string(t.shape()) +
                          ", expected " + shape_string(shape));
  }
  return t;
}

std::string format_npy(const Tensor& t) {
  std::string out = npy_preamble(t);
  out.append(static_cast<const char*>(t.data()), t.bytes());
  return out;
}

void write_npy(const std::string& path, const Tensor& t) {
  const std::string tmp = path + ".tmp";
  const std::string preamble = npy_preamble(t);
  errno = 0;
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw InvalidArgument("cannot open " + tmp + " for writing: " + errno_text(errno));
  bool ok = std::fwrite(preamble.data(), 1, preamble.size(), f) == preamble.size();
  if (ok && t.bytes()) ok = std::fwrite(t.data(), 1, t.bytes(), f) == t.bytes();
  int err = errno;
  // fclose flushes: a full disk may only show up here.
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    throw InvalidArgument("cannot write " + tmp + ": " +
                          (err ? errno_text(err) : std::string("write error")));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    std::remove(tmp.c_str());
    throw InvalidArgument("cannot rename " + tmp + " to " + path + ": " + errno_text(err));
  }
}

}  // namespace convcheck
