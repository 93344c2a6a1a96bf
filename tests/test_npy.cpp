#define BOOST_TEST_MODULE npy
#include <unistd.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <string>

#include "core/error.h"
#include "core/half.h"
#include "core/npy.h"

namespace convcheck {

// Printers for Boost.Test's failure messages (internal linkage, found by ADL).
static std::ostream& operator<<(std::ostream& os, DType t) {
  return os << dtype_name(t);
}
static std::ostream& operator<<(std::ostream& os, Layout l) {
  return os << layout_name(l);
}

namespace {

namespace fs = std::filesystem;

// A scratch directory removed at the end of each test that uses it.
struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("convcheck_test_npy_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The message of the InvalidArgument `fn` throws; fails the test when it throws nothing.
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  BOOST_ERROR("expected InvalidArgument, nothing was thrown");
  return "";
}

#define CHECK_CONTAINS(message, part)                   \
  BOOST_TEST((message).find(part) != std::string::npos, \
             "message \"" << (message) << "\" does not contain \"" << (part) << "\"")

// A .npy image with the given header text (no padding added) and data, version 1.0 by default.
std::string image(const std::string& header, const std::string& data = "", int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t n = header.size();
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (major != 1) {
    out += static_cast<char>((n >> 16) & 0xFF);
    out += static_cast<char>((n >> 24) & 0xFF);
  }
  return out + header + data;
}

std::string dict(const std::string& descr, const std::string& shape,
                 const char* fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

std::string parse_error(const std::string& bytes) {
  return error_of([&] { parse_npy(bytes, "x.npy"); });
}

// ---------------------------------------------------------------------------------------------
// Round trips

Tensor sample(DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.size(); ++i) {
    // Mixed signs, fractions, zeros; integral values for i32.
    const double v = dtype == DType::i32 ? static_cast<double>((i * 7919) % 2001 - 1000)
                                         : (static_cast<double>(i % 17) - 8) * 0.375;
    t.set(i, v);
  }
  return t;
}

void check_same(const Tensor& a, const Tensor& b) {
  BOOST_TEST(a.dtype() == b.dtype());
  BOOST_TEST(a.shape() == b.shape());
  BOOST_TEST(a.size() == b.size());
  BOOST_REQUIRE(a.bytes() == b.bytes());
  if (a.bytes()) BOOST_TEST(std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

BOOST_AUTO_TEST_CASE(round_trip_every_dtype_and_shape) {
  const Shape shapes[] = {{}, {0}, {1}, {5}, {2, 3}, {2, 0, 3}, {1, 2, 3, 4}, {3, 1, 4, 2}};
  TempDir dir;
  for (DType dtype : kAllDTypes) {
    for (const Shape& shape : shapes) {
      BOOST_TEST_CONTEXT(dtype_name(dtype) << " " << shape_string(shape)) {
        const Tensor t = sample(dtype, shape);
        const std::string bytes = format_npy(t);
        BOOST_TEST((bytes.size() - t.bytes()) % 64 == 0u);
        BOOST_TEST(bytes.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
        check_same(parse_npy(bytes, "mem"), t);

        const std::string path = dir.file(std::string(dtype_name(dtype)) + ".npy");
        write_npy(path, t);
        BOOST_TEST(!fs::exists(path + ".tmp"));
        const Tensor back = read_npy(path, Layout::NHWC);
        check_same(back, t);
        BOOST_TEST(back.layout() == Layout::NHWC);
        check_same(read_npy_expect(path, "input", dtype, shape, Layout::Plain), t);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(special_values_survive) {
  Tensor t(DType::f32, {4});
  const float v[] = {-0.0f, std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::denorm_min(),
                     std::numeric_limits<float>::quiet_NaN()};
  std::memcpy(t.data(), v, sizeof v);
  check_same(parse_npy(format_npy(t), "mem"), t);
}

BOOST_AUTO_TEST_CASE(descr_names) {
  BOOST_TEST(std::string(npy_descr(DType::f16)) == "<f2");
  BOOST_TEST(std::string(npy_descr(DType::bf16)) == "<u2");
  BOOST_TEST(std::string(npy_descr(DType::f32)) == "<f4");
  BOOST_TEST(std::string(npy_descr(DType::f64)) == "<f8");
  BOOST_TEST(std::string(npy_descr(DType::i32)) == "<i4");
}

// ---------------------------------------------------------------------------------------------
// Byte images identical to numpy's (checked against np.save of numpy 1.23.5 and 2.4.6, which pad
// the dict with 21 - len(str(shape[0])) spaces of growth room, then align the data to 64 bytes).

BOOST_AUTO_TEST_CASE(matches_numpy_bytes_for_small_f32) {
  // np.save(f, np.arange(6, dtype='<f4').reshape(2, 3))
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                               std::string(58, ' ') + "\n" +
                               std::string(
                                   "\x00\x00\x00\x00\x00\x00\x80\x3f\x00\x00\x00\x40"
                                   "\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40",
                                   24);
  BOOST_REQUIRE(expected.size() == 128u + 24u);
  Tensor t(DType::f32, {2, 3});
  for (int i = 0; i < 6; ++i) t.set(i, i);
  BOOST_TEST(format_npy(t) == expected);
  check_same(parse_npy(expected, "numpy.npy"), t);
}

BOOST_AUTO_TEST_CASE(matches_numpy_bytes_for_other_shapes) {
  // np.save(f, np.array(1.5, '<f8')): rank 0 has no growth padding.
  Tensor scalar(DType::f64, {});
  scalar.set(0, 1.5);
  BOOST_TEST(format_npy(scalar) == std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                                       "{'descr': '<f8', 'fortran_order': False, 'shape': (), }" +
                                       std::string(62, ' ') + "\n" +
                                       std::string("\x00\x00\x00\x00\x00\x00\xf8\x3f", 8));

  // np.save(f, np.array([1, -2, 3], '<i4'))
  Tensor vec(DType::i32, {3});
  vec.set(0, 1);
  vec.set(1, -2);
  vec.set(2, 3);
  const std::string vec_bytes = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                                "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" +
                                std::string(60, ' ') + "\n" +
                                std::string("\x01\x00\x00\x00\xfe\xff\xff\xff\x03\x00\x00\x00", 12);
  BOOST_TEST(format_npy(vec) == vec_bytes);

  // np.save(f, np.zeros((2, 0, 3), '<u2')): bf16 is written as raw uint16.
  BOOST_TEST(format_npy(Tensor(DType::bf16, {2, 0, 3})) ==
             std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                 "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 0, 3), }" +
                 std::string(55, ' ') + "\n");

  // np.save(f, np.zeros((0, 1, ..., 1), '<f4')) with 15 axes: the header spills into 192 bytes.
  Shape tall(15, 1);
  tall[0] = 0;
  BOOST_TEST(format_npy(Tensor(DType::f32, tall)) ==
             std::string("\x93NUMPY\x01\x00\xb6\x00", 10) +
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1, 1, 1, 1, 1, 1, 1, 1, "
                 "1, 1, 1, 1, 1, 1), }" +
                 std::string(83, ' ') + "\n");

  // When the header already ends on a 64-byte boundary numpy still adds a full 64 spaces.
  Shape aligned(14, 1);
  aligned[0] = 0;
  aligned[1] = aligned[2] = 12;
  BOOST_TEST(format_npy(Tensor(DType::f32, aligned)) ==
             std::string("\x93NUMPY\x01\x00\xb6\x00", 10) +
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 12, 12, 1, 1, 1, 1, 1, 1, "
                 "1, 1, 1, 1, 1), }" +
                 std::string(84, ' ') + "\n");
}

BOOST_AUTO_TEST_CASE(reads_numpy_version_2) {
  // np.lib.format.write_array(f, np.array([1, -2, 3], '<i4'), version=(2, 0))
  const std::string v2 = std::string("\x93NUMPY\x02\x00\x74\x00\x00\x00", 12) +
                         "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }" +
                         std::string(58, ' ') + "\n" +
                         std::string("\x01\x00\x00\x00\xfe\xff\xff\xff\x03\x00\x00\x00", 12);
  const Tensor t = parse_npy(v2, "v2.npy");
  BOOST_TEST(t.dtype() == DType::i32);
  BOOST_TEST(t.shape() == Shape{3});
  BOOST_TEST(t.get(1) == -2.0);
  // Version 3.0 differs only in the header's encoding (UTF-8).
  const Tensor t3 =
      parse_npy(image(dict("<f2", "(1, 2)"), std::string("\x00\x3c\x00\xc0", 4), 3), "v3.npy");
  BOOST_TEST(t3.dtype() == DType::f16);
  BOOST_TEST(t3.get(0) == 1.0);
  BOOST_TEST(t3.get(1) == -2.0);
}

BOOST_AUTO_TEST_CASE(header_syntax_variants) {
  const std::string data(24, '\0');
  const std::string headers[] = {
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"shape\": (2,3), \"descr\": \"<f4\", \"fortran_order\": False}",
      "{'fortran_order':False,'shape':( 2 , 3 , ),'descr':'<f4'}\n",
      "  {\t'shape' : (2, 3) ,\n 'fortran_order' : False , 'descr' : '<f4' ,}   \n",
  };
  for (const std::string& h : headers) {
    BOOST_TEST_CONTEXT(h) {
      const Tensor t = parse_npy(image(h, data), "x.npy");
      BOOST_TEST(t.dtype() == DType::f32);
      BOOST_TEST(t.shape() == (Shape{2, 3}));
    }
  }
  const Tensor scalar = parse_npy(
      image("{'descr': '<f8', 'fortran_order': False, 'shape': ( )}", std::string(8, '\0')),
      "x.npy");
  BOOST_TEST(scalar.shape().empty());
  BOOST_TEST(scalar.size() == 1);
  const Tensor bf = parse_npy(image(dict("<u2", "(2,)"), std::string(4, '\0')), "x.npy");
  BOOST_TEST(bf.dtype() == DType::bf16);
}

// ---------------------------------------------------------------------------------------------
// Errors: one per class, each naming the file and what was expected vs found.

BOOST_AUTO_TEST_CASE(error_bad_magic) {
  const std::string m = parse_error("PK\x03\x04 not numpy at all");
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "not a .npy file");
  CHECK_CONTAINS(m, "\\x93NUMPY");
  CHECK_CONTAINS(m, "PK\\x03\\x04");
  CHECK_CONTAINS(parse_error(""), "empty");
  CHECK_CONTAINS(parse_error("\x93NUM"), "not a .npy file");
}

BOOST_AUTO_TEST_CASE(error_unsupported_version) {
  const std::string m = parse_error(std::string("\x93NUMPY\x04\x00\x10\x00", 10) + "{}");
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "unsupported .npy format version 4.0");
  CHECK_CONTAINS(m, "1.0, 2.0, 3.0");
  CHECK_CONTAINS(parse_error(std::string("\x93NUMPY\x01\x01\x10\x00", 10)), "version 1.1");
}

BOOST_AUTO_TEST_CASE(error_header_truncated) {
  CHECK_CONTAINS(parse_error(std::string("\x93NUMPY\x01", 7)), "preamble truncated");
  // Version 2.0 needs a 4-byte header length.
  const std::string v2 = parse_error(std::string("\x93NUMPY\x02\x00\x10\x00", 10));
  CHECK_CONTAINS(v2, "preamble truncated");
  CHECK_CONTAINS(v2, "12 bytes");
  const std::string h = dict("<f4", "(2, 3)");
  const std::string full = image(h, std::string(24, '\0'));
  const std::string m = parse_error(full.substr(0, 30));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "header truncated");
  CHECK_CONTAINS(m, std::to_string(h.size()) + " bytes");
  CHECK_CONTAINS(m, "only 20 bytes");
  // A hostile 4 GiB header length in a tiny file is refused without allocating it.
  const std::string huge = parse_error(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14));
  CHECK_CONTAINS(huge, "4294967295");
}

BOOST_AUTO_TEST_CASE(error_header_not_a_dict) {
  const std::string m = parse_error(image("[('descr', '<f4')]\n"));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "not a dict");
  CHECK_CONTAINS(parse_error(image("")), "not a dict");
  CHECK_CONTAINS(parse_error(image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)")),
                 "expected ',' or '}'");
  CHECK_CONTAINS(parse_error(image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x")),
                 "unexpected text after the dict");
  CHECK_CONTAINS(parse_error(image("{'descr: '<f4'}")), "expected ':'");
  CHECK_CONTAINS(parse_error(image("{descr: '<f4'}")), "expected a quoted key");
  CHECK_CONTAINS(parse_error(image("{'descr': '<f4")), "unterminated string");
}

BOOST_AUTO_TEST_CASE(error_missing_unexpected_duplicate_key) {
  const std::string m = parse_error(image("{'descr': '<f4', 'fortran_order': False}"));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "no 'shape' key");
  CHECK_CONTAINS(parse_error(image("{'shape': (1,), 'fortran_order': False}")), "no 'descr' key");
  CHECK_CONTAINS(parse_error(image("{'shape': (1,), 'descr': '<f4'}")), "no 'fortran_order' key");
  CHECK_CONTAINS(
      parse_error(image("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}")),
      "unexpected key 'x'");
  CHECK_CONTAINS(
      parse_error(image("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}")),
      "duplicate key 'descr'");
  CHECK_CONTAINS(parse_error(image("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}")),
                 "'fortran_order' must be True or False");
}

BOOST_AUTO_TEST_CASE(error_malformed_shape) {
  const std::string one = parse_error(image(dict("<f4", "(3)")));
  CHECK_CONTAINS(one, "x.npy");
  CHECK_CONTAINS(one, "(3,)");
  CHECK_CONTAINS(parse_error(image(dict("<f4", "[2, 3]"))), "'shape' must be a tuple");
  CHECK_CONTAINS(parse_error(image(dict("<f4", "(2, x)"))), "tuple of integers");
  CHECK_CONTAINS(parse_error(image(dict("<f4", "(2 3)"))), "expected ',' or ')'");
  CHECK_CONTAINS(parse_error(image(dict("<f4", "(2.5,)"))), "expected ',' or ')'");
  CHECK_CONTAINS(parse_error(image(dict("<f4", "(2,"))), "shape");
}

BOOST_AUTO_TEST_CASE(error_negative_or_overflowing_dims) {
  const std::string neg = parse_error(image(dict("<f4", "(-1, 3)")));
  CHECK_CONTAINS(neg, "x.npy");
  CHECK_CONTAINS(neg, "negative dimension");
  CHECK_CONTAINS(neg, "[-1, 3]");
  const std::string big = parse_error(image(dict("<f4", "(4294967296, 4294967296)")));
  CHECK_CONTAINS(big, "overflows");
  CHECK_CONTAINS(big, "[4294967296, 4294967296]");
  const std::string digits = parse_error(image(dict("<f4", "(99999999999999999999,)")));
  CHECK_CONTAINS(digits, "99999999999999999999");
  CHECK_CONTAINS(digits, "does not fit");
  // The element count fits, the byte count does not.
  const std::string bytes = parse_error(image(dict("<f8", "(2305843009213693952,)")));
  CHECK_CONTAINS(bytes, "data size");
  CHECK_CONTAINS(bytes, "overflows 64 bits");
}

BOOST_AUTO_TEST_CASE(error_unknown_descr) {
  const std::string m = parse_error(image(dict("<c8", "(1,)")));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "unsupported dtype descr '<c8'");
  CHECK_CONTAINS(m, "'<f4'");
  CHECK_CONTAINS(parse_error(image(dict("|u1", "(1,)"))), "unsupported dtype descr '|u1'");
  CHECK_CONTAINS(
      parse_error(image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}")),
      "structured dtypes are not supported");
}

// np.save of a big-endian array ('>f4') or of a transposed one (fortran_order True): read by value
// into little-endian C order (issue 17). The expected tensors are written element by element
// from their definition, not through the reader.
std::string be_bytes(const Tensor& t) {  // t's elements, each byte-reversed
  std::string out(static_cast<const char*>(t.data()), t.bytes());
  const std::size_t item = dtype_size(t.dtype());
  for (std::size_t i = 0; i < out.size(); i += item)
    std::reverse(out.begin() + i, out.begin() + i + item);
  return out;
}
std::string fortran_bytes(const Tensor& t) {  // a rank-3 t's elements in column-major order
  const Shape& s = t.shape();
  const std::size_t item = dtype_size(t.dtype());
  std::string out;
  for (int64_t k = 0; k < s[2]; ++k)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t i = 0; i < s[0]; ++i)
        out.append(static_cast<const char*>(t.data()) + ((i * s[1] + j) * s[2] + k) * item, item);
  return out;
}

BOOST_AUTO_TEST_CASE(big_endian_read_by_value) {
  for (DType dt : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32}) {
    const Tensor want = sample(dt, {2, 3});
    std::string descr = npy_descr(dt);
    descr[0] = '>';
    check_same(parse_npy(image(dict(descr, "(2, 3)"), be_bytes(want)), "x.npy"), want);
  }
  const std::string native = parse_error(image(dict("=f8", "(1,)")));
  CHECK_CONTAINS(native, "byte order '='");
  CHECK_CONTAINS(native, "expected '<f8' or '>f8'");
}

BOOST_AUTO_TEST_CASE(fortran_order_read_by_value) {
  for (DType dt : {DType::f16, DType::f32, DType::f64, DType::i32}) {
    const Tensor want = sample(dt, {2, 3, 4});
    check_same(
        parse_npy(image(dict(npy_descr(dt), "(2, 3, 4)", "True"), fortran_bytes(want)), "x.npy"),
        want);
    // Both at once: a big-endian Fortran-order array.
    Tensor swapped(dt, {2, 3, 4});
    const std::string be = be_bytes(want);
    std::memcpy(swapped.data(), be.data(), be.size());
    std::string descr = npy_descr(dt);
    descr[0] = '>';
    check_same(parse_npy(image(dict(descr, "(2, 3, 4)", "True"), fortran_bytes(swapped)), "x.npy"),
               want);
  }
  // Rank 0 and 1, and empty arrays: Fortran order is C order.
  const Tensor v = sample(DType::f32, {5});
  check_same(parse_npy(image(dict("<f4", "(5,)", "True"),
                             std::string(static_cast<const char*>(v.data()), v.bytes())),
                       "x.npy"),
             v);
  BOOST_TEST(parse_npy(image(dict("<f4", "(2, 0, 3)", "True")), "x.npy").size() == 0);
  // Writing stays C order, little-endian.
  const std::string written = format_npy(sample(DType::f32, {2, 3}));
  CHECK_CONTAINS(written, "'descr': '<f4', 'fortran_order': False");
}

BOOST_AUTO_TEST_CASE(error_data_truncated) {
  const std::string m = parse_error(image(dict("<f4", "(2, 3)"), std::string(20, '\0')));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "data truncated");
  CHECK_CONTAINS(m, "expected 24 bytes of data for shape [2, 3] <f4, got 20");
  // A hostile shape promising terabytes in a tiny file is refused before any allocation.
  const std::string huge = parse_error(image(dict("<f8", "(1099511627776,)")));
  CHECK_CONTAINS(huge, "expected 8796093022208 bytes of data for shape [1099511627776] <f8, got 0");
}

BOOST_AUTO_TEST_CASE(error_trailing_bytes) {
  const std::string m = parse_error(image(dict("<f2", "(3,)"), std::string(7, '\0')));
  CHECK_CONTAINS(m, "x.npy");
  CHECK_CONTAINS(m, "trailing bytes");
  CHECK_CONTAINS(m, "expected 6 bytes of data for shape [3] <f2, got 7");
}

BOOST_AUTO_TEST_CASE(error_messages_from_files) {
  TempDir dir;
  const std::string missing = dir.file("missing.npy");
  const std::string m = error_of([&] { read_npy(missing); });
  CHECK_CONTAINS(m, "cannot open " + missing);
  CHECK_CONTAINS(m, "No such file or directory");
  CHECK_CONTAINS(error_of([&] { read_npy(dir.path.string()); }), "Is a directory");

  // The file reader checks sizes on its own path (it never reads the data into a string first).
  const std::string truncated = dir.file("truncated.npy");
  write_file(truncated, image(dict("<f4", "(2, 3)"), std::string(20, '\0')));
  const std::string t = error_of([&] { read_npy(truncated); });
  CHECK_CONTAINS(t, truncated + ": data truncated");
  CHECK_CONTAINS(t, "expected 24 bytes of data for shape [2, 3] <f4, got 20");

  const std::string trailing = dir.file("trailing.npy");
  write_file(trailing, image(dict("<f4", "(2, 3)"), std::string(25, '\0')));
  CHECK_CONTAINS(error_of([&] { read_npy(trailing); }), "got 25");

  const std::string hostile = dir.file("hostile.npy");
  write_file(hostile, std::string("\x93NUMPY\x03\x00\xff\xff\xff\x7f{}", 14));
  CHECK_CONTAINS(error_of([&] { read_npy(hostile); }), "header truncated");

  const std::string tiny = dir.file("tiny.npy");
  write_file(tiny, std::string("\x93NUMPY", 6));
  CHECK_CONTAINS(error_of([&] { read_npy(tiny); }), "preamble truncated");
  write_file(tiny, "");
  CHECK_CONTAINS(error_of([&] { read_npy(tiny); }), "empty");
}

BOOST_AUTO_TEST_CASE(expect_dtype_and_shape) {
  TempDir dir;
  const std::string path = dir.file("x.npy");
  write_npy(path, Tensor(DType::f64, {1, 2, 3, 4}));

  const std::string d = error_of([&] {
    read_npy_expect(path, "input", DType::f32, {1, 2, 3, 4}, Layout::NHWC);
  });
  BOOST_TEST(d == "input: file " + path + " has dtype f64 ('<f8'), expected f32 ('<f4')");

  const std::string s = error_of([&] {
    read_npy_expect(path, "input", DType::f64, {1, 2, 3, 5}, Layout::NHWC);
  });
  BOOST_TEST(s == "input: file " + path + " has shape [1, 2, 3, 4], expected [1, 2, 3, 5]");

  write_npy(path, Tensor(DType::f16, {2}));
  const std::string bf =
      error_of([&] { read_npy_expect(path, "filter", DType::bf16, {2}, Layout::HWIO); });
  CHECK_CONTAINS(bf, "has dtype f16 ('<f2'), expected bf16 ('<u2')");

  // File-level errors get the role in front.
  const std::string missing = dir.file("none.npy");
  const std::string m =
      error_of([&] { read_npy_expect(missing, "out_backprop", DType::f32, {1}, Layout::NHWC); });
  CHECK_CONTAINS(m, "out_backprop: cannot open " + missing);

  const Tensor ok = read_npy_expect(path, "filter", DType::f16, {2}, Layout::HWIO);
  BOOST_TEST(ok.layout() == Layout::HWIO);
}

BOOST_AUTO_TEST_CASE(write_errors) {
  TempDir dir;
  const std::string bad = dir.file("no/such/dir/x.npy");
  const std::string m = error_of([&] { write_npy(bad, Tensor(DType::f32, {1})); });
  CHECK_CONTAINS(m, "cannot open " + bad + ".tmp for writing");
  CHECK_CONTAINS(m, "No such file or directory");

  // Renaming onto a non-empty directory fails; the temporary file is cleaned up.
  const std::string target = dir.file("occupied");
  fs::create_directories(fs::path(target) / "child");
  const std::string r = error_of([&] { write_npy(target, Tensor(DType::f32, {1})); });
  CHECK_CONTAINS(r, "cannot rename " + target + ".tmp to " + target);
  BOOST_TEST(!fs::exists(target + ".tmp"));
}

}  // namespace
}  // namespace convcheck
