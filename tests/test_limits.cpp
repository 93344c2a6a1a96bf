// Resource limits and absurd descriptors (issue 8, item 3): sizes are computed in 64 bits with
// overflow checks, a problem too large for the memory limit is refused before anything is
// allocated, with its size and the limit, and absurd descriptors are errors with messages.
#define BOOST_TEST_MODULE limits
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/admission.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/npy.h"
#include "core/problem.h"
#include "core/suite.h"
#include "oracle/oracle.h"
#include "properties/generators.h"
#include "reference/reference.h"

using namespace convcheck;

namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// The message of the refusal of `descriptor`: parse, geometry, then the memory check for the
// oracle against `max_bytes`. Empty when nothing refuses it.
std::string refusal(const std::string& descriptor, uint64_t max_bytes = kGiB) {
  try {
    const Problem p = parse_problem(descriptor);
    const Geometry g = geometry(p);
    require_memory(p, g, MemoryUse::oracle, max_bytes);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const std::string& descriptor, const std::vector<std::string>& words) {
  const std::string m = refusal(descriptor);
  BOOST_TEST_CONTEXT(descriptor) {
    BOOST_TEST(!m.empty(), "accepted, expected a refusal");
    for (const std::string& w : words)
      BOOST_TEST(m.find(w) != std::string::npos, "message '" << m << "' lacks '" << w << "'");
  }
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// TF's testConv2DTransposeLargeOutputShape (spec B §3, §5.4): conv2d_transpose to output shape
// [114078056, 179835296] with stride 10 must be an error, not an allocation. As a descriptor the
// transpose's output shape is `input` (batch 2 and one channel, from TF's [2,2,2,2] value and
// 1x1x1x1 filter); SAME, stride 10. The geometry is valid; its tensors (4.1e16 elements) are not
// allocatable.
BOOST_AUTO_TEST_CASE(tf_large_output_shape_is_refused_before_allocating) {
  const std::string d =
      "conv2d_transpose:input=2x114078056x179835296x1,filter=1x1x1x1,stride=10x10,padding=SAME";
  const Problem p = parse_problem(d);
  const Geometry g = geometry(p);
  BOOST_TEST(g.OH == 11407806);
  BOOST_TEST(g.OW == 17983530);
  for (MemoryUse use : {MemoryUse::compute, MemoryUse::bench, MemoryUse::oracle}) {
    const Status s = check_memory(p, g, use, 64 * kGiB);
    BOOST_TEST(!s.ok());
    for (const char* w :
         {"conv2d_transpose: the problem needs", "EiB", "more than the memory limit", "64.0 GiB",
          "68719476736 bytes", "refused before allocating", "input [2, 114078056, 179835296, 1]",
          "out_backprop [2, 11407806, "})
      BOOST_TEST(s.reason().find(w) != std::string::npos, s.reason() << " lacks " << w);
  }
  // The default limit (half of physical memory) refuses it too, as the exception type callers can
  // tell apart.
  reset_memory_limit();
  BOOST_CHECK_THROW(require_memory(p, g, MemoryUse::compute), ResourceLimit);
  // And the oracle refuses it itself, before filling anything.
  std::vector<Backend*> none;
  BOOST_CHECK_THROW(run_case(Case{p, 1, FillKind::exact}, none), ResourceLimit);
}

// Ten and more absurd descriptors, each refused with a message naming what is wrong.
BOOST_AUTO_TEST_CASE(absurd_descriptors_are_errors_with_messages) {
  // 2^40 channels: every product fits, the tensors do not fit the memory limit.
  expect_refused("conv2d_backprop_input:input=1x1x1x1099511627776,filter=1x1x1099511627776x1",
                 {"needs", "TiB", "more than the memory limit of 1.00 GiB", "1099511627776"});
  // 2^40 images.
  expect_refused("conv2d:input=1099511627776x1x1x1,filter=1x1x1x1,dtype=f64",
                 {"needs", "memory limit"});
  // Negative sizes.
  expect_refused("conv2d:input=1x-5x5x1,filter=1x1x1x1",
                 {"Dimension 1 (H) of input must be >= 0, got -5"});
  expect_refused("conv2d_backprop_filter:input=1x5x5x1,filter=3x-3x1x1",
                 {"Dimension 1 (KW) of filter must be >= 0, got -3"});
  // Overflowing products: 2^32 x 2^32 x 2 elements.
  expect_refused("conv2d:input=4294967296x4294967296x2x1,filter=1x1x1x1",
                 {"the input tensor's size overflows 64 bits", "[4294967296, 4294967296, 2, 1]"});
  // 2^62 batch: the elements fit, their bytes do not.
  expect_refused("conv2d_backprop_filter:input=4611686018427387904x1x1x1,filter=1x1x1x1",
                 {"the input tensor's size overflows 64 bits"});
  // A zero batch does not excuse huge spatial sizes (kernels form H * W * C).
  expect_refused("conv2d:input=0x4294967296x4294967296x1,filter=1x1x1x1",
                 {"overflows 64 bits", "nonzero dimensions"});
  // An integer beyond int64.
  expect_refused("conv2d:input=1x99999999999999999999x1x1,filter=1x1x1x1",
                 {"integer '99999999999999999999' overflows 64 bits"});
  // Huge strides and dilations.
  expect_refused("conv2d:input=1x5x5x1,filter=1x1x1x1,stride=9223372036854775807x1",
                 {"stride 9223372036854775807 along rows is too large", "2^60"});
  expect_refused("depthwise_conv2d:input=1x5x5x1,filter=1x1x1x1,dilation=1x4611686018427387904",
                 {"dilation 4611686018427387904 along cols is too large"});
  // dilation x filter overflows.
  expect_refused(
      "conv2d_backprop_input:input=1x5x5x1,filter=3x3x1x1,dilation=4611686018427387904x1",
      {"effective filter size (3 - 1) * 4611686018427387904 + 1 overflows 64 bits"});
  // A huge dilated filter with SAME (which pads for any filter): its extent is refused.
  expect_refused("conv2d:input=1x5x5x1,filter=3x1x1x1,dilation=576460752303423489x1,padding=SAME",
                 {"effective filter size 1152921504606846979 along rows is too large"});
  // Padding near INT64_MAX.
  expect_refused("conv2d:input=1x5x5x1,filter=1x1x1x1,padding=9223372036854775807:0:0:0",
                 {"plus padding 9223372036854775807:0 overflows 64 bits"});
  expect_refused(
      "conv2d:input=1x5x5x1,filter=1x1x1x1,padding=0:0:4611686018427387904:4611686018427387904",
      {"overflows 64 bits"});
  // Depthwise C * M overflows.
  expect_refused("depthwise_conv2d:input=1x1x1x4294967296,filter=1x1x4294967296x4294967296",
                 {"output depth 4294967296 * 4294967296 overflows 64 bits"});
  // A filter tensor whose element count overflows.
  expect_refused("conv2d_backprop_filter:input=1x8x8x4,filter=8x8x4x4611686018427387904",
                 {"the filter tensor's size overflows 64 bits"});
  // The transpose's out_backprop from a padded extent past the bound.
  expect_refused("conv2d_transpose:input=1x1x1x1,filter=1x1x1x1,padding=2305843009213693952:0:0:0",
                 {"overflows 64 bits"});
}

// The bound is inclusive, and problems at it are valid (and tiny): a stride past the input gives
// one output, as in TF, computed without overflow.
BOOST_AUTO_TEST_CASE(extent_bound_is_inclusive_and_huge_strides_compute_without_overflow) {
  const int64_t b = kMaxExtent;
  Problem p = parse_problem("conv2d:input=1x5x7x1,filter=3x3x1x1,padding=SAME");
  p.stride_h = b;
  p.stride_w = b - 1;
  Geometry g = geometry(p);
  BOOST_TEST(g.OH == 1);
  BOOST_TEST(g.OW == 1);
  BOOST_TEST(g.pad_top == 0);  // needed = eff - in = 3 - 5 < 0
  p.padding.kind = PaddingKind::VALID;
  g = geometry(p);
  BOOST_TEST(g.OH == 1);
  p.input[1] = 2;  // eff 3 > 2: (2 - 3 + s) / s = 0 in TF's arithmetic, not an overflow
  g = geometry(p);
  BOOST_TEST(g.OH == 0);
  p.stride_h = b + 1;
  BOOST_TEST(refusal(to_string(p)).find("stride 1152921504606846977 along rows is too large") !=
             std::string::npos);
  // SAME with an empty input: output 0.
  p = parse_problem("conv2d:input=1x0x3x1,filter=2x2x1x1,padding=SAME,stride=7x7");
  g = geometry(p);
  BOOST_TEST(g.OH == 0);
  BOOST_TEST(g.OW == 1);
}

BOOST_AUTO_TEST_CASE(footprint_rule) {
  // 64 + 1 + 64 elements of (4 + 32) bytes: x4 for the oracle, x2 for compute and bench.
  const Problem p = parse_problem("conv2d:input=1x8x8x1,filter=1x1x1x1");
  const Geometry g = geometry(p);
  BOOST_TEST(estimate_memory(p, g, MemoryUse::oracle).bytes == 129u * 36 * 4);
  BOOST_TEST(estimate_memory(p, g, MemoryUse::compute).bytes == 129u * 36 * 2);
  BOOST_TEST(estimate_memory(p, g, MemoryUse::bench).bytes == 129u * 36 * 2);
  // The limit is inclusive.
  BOOST_TEST(check_memory(p, g, MemoryUse::oracle, 129u * 36 * 4).ok());
  BOOST_TEST(!check_memory(p, g, MemoryUse::oracle, 129u * 36 * 4 - 1).ok());
  // f64: 8 + 32 bytes.
  Problem q = p;
  q.dtype = DType::f64;
  BOOST_TEST(estimate_memory(q, geometry(q), MemoryUse::compute).bytes == 129u * 40 * 2);
  // Explicit padding: the oracle also counts the zero-padded input (valid_padded).
  const Problem e = parse_problem("conv2d:input=1x8x8x1,filter=1x1x1x1,padding=1:1:2:2");
  const Geometry ge = geometry(e);
  const uint64_t roles = 64 + 1 + 10 * 12, padded = 10 * 12;
  BOOST_TEST(estimate_memory(e, ge, MemoryUse::oracle).bytes == (roles + padded) * 36 * 4);
  BOOST_TEST(estimate_memory(e, ge, MemoryUse::compute).bytes == roles * 36 * 2);
  BOOST_TEST(estimate_memory(e, ge, MemoryUse::oracle).breakdown.find("zero-padded input") !=
             std::string::npos);
  // A footprint past 2^64 saturates and is refused as such.
  const Problem huge = parse_problem("conv2d:input=1x1x1x1,filter=1x1x1x1152921504606846975");
  const Geometry gh = geometry(huge);
  BOOST_TEST(estimate_memory(huge, gh, MemoryUse::oracle).bytes == UINT64_MAX);
  const Status s = check_memory(huge, gh, MemoryUse::oracle, UINT64_MAX - 1);
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.reason().find("needs more than 2^64 bytes") != std::string::npos, s.reason());
}

BOOST_AUTO_TEST_CASE(process_limit_and_parsing) {
  reset_memory_limit();
  BOOST_TEST(memory_limit_is_default());
  BOOST_TEST(physical_memory_bytes() > 0u);
  BOOST_TEST(memory_limit() == physical_memory_bytes() / 2);
  set_memory_limit(12345);
  BOOST_TEST(memory_limit() == 12345u);
  BOOST_TEST(!memory_limit_is_default());
  BOOST_CHECK_THROW(set_memory_limit(0), InvalidArgument);
  reset_memory_limit();

  BOOST_TEST(parse_byte_size("1", "--max-bytes") == 1u);
  BOOST_TEST(parse_byte_size("8G", "--max-bytes") == uint64_t{8} << 30);
  BOOST_TEST(parse_byte_size("8GiB", "--max-bytes") == uint64_t{8} << 30);
  BOOST_TEST(parse_byte_size("8gb", "--max-bytes") == uint64_t{8} << 30);
  BOOST_TEST(parse_byte_size("512m", "--max-bytes") == uint64_t{512} << 20);
  BOOST_TEST(parse_byte_size("3K", "--max-bytes") == 3072u);
  BOOST_TEST(parse_byte_size("2T", "--max-bytes") == uint64_t{2} << 40);
  BOOST_TEST(parse_byte_size("16383P", "--max-bytes") == uint64_t{16383} << 50);
  BOOST_TEST(parse_byte_size("18446744073709551615", "--max-bytes") == UINT64_MAX);
  struct Bad {
    const char* text;
    const char* why;
  };
  for (const Bad& b :
       {Bad{"0", "must be positive"}, Bad{"", "not a number"}, Bad{"-1", "not a number"},
        Bad{"1.5G", "unknown suffix '.5G'"}, Bad{"8 G", "unknown suffix ' G'"},
        Bad{"12Q", "unknown suffix 'Q'"}, Bad{"18446744073709551616", "does not fit in 64 bits"},
        Bad{"16384P", "does not fit in 64 bits"}, Bad{"G", "not a number"}}) {
    const std::string m = message_of([&] { parse_byte_size(b.text, "--max-bytes"); });
    BOOST_TEST(m.find(std::string("--max-bytes '") + b.text + "': " + b.why) == 0, m);
  }

  BOOST_TEST(format_bytes(0) == "0 B");
  BOOST_TEST(format_bytes(1023) == "1023 B");
  BOOST_TEST(format_bytes(1024) == "1.00 KiB");
  BOOST_TEST(format_bytes(1536) == "1.50 KiB");
  BOOST_TEST(format_bytes(uint64_t{12} << 30) == "12.0 GiB");
  BOOST_TEST(format_bytes(uint64_t{500} << 20) == "500 MiB");
  BOOST_TEST(format_bytes(UINT64_MAX) == "16.0 EiB");
}

// The .npy reader checks the data it is about to allocate against the limit (after checking that
// the file really holds it), and reads no more than the limit from a pipe or device.
BOOST_AUTO_TEST_CASE(npy_reader_respects_the_limit) {
  const std::string image = format_npy(Tensor(DType::f32, {64, 64}));  // 16 KiB of data
  set_memory_limit(16 << 10);
  BOOST_CHECK_NO_THROW(parse_npy(image, "x.npy"));
  set_memory_limit((16 << 10) - 1);
  const std::string m = message_of([&] { parse_npy(image, "x.npy"); });
  BOOST_TEST(m.find("x.npy: the data of shape [64, 64] <f4 needs 16.0 KiB (16384 bytes), more "
                    "than the memory limit of 16.0 KiB (16383 bytes, --max-bytes); refused "
                    "before allocating") == 0,
             m);
  BOOST_CHECK_THROW(parse_npy(image, "x.npy"), ResourceLimit);
  // A header that declares more than the file holds is a truncation, whatever the limit.
  std::string truncated = image.substr(0, image.size() - 4);
  BOOST_TEST(message_of([&] { parse_npy(truncated, "t.npy"); }).find("data truncated") !=
             std::string::npos);
  reset_memory_limit();
  // /dev/zero: not a .npy file, refused at its first bytes rather than read forever.
  BOOST_TEST(message_of([] { read_npy("/dev/zero"); }).find("not a .npy file") !=
             std::string::npos);
}

// `convcheck fuzz` refuses limits below kFuzzMemoryBytes; its generated cases must stay below it.
BOOST_AUTO_TEST_CASE(fuzz_cases_stay_below_the_fuzz_memory_floor) {
  const rc::Gen<Case> cases = gen::any_case();
  rc::Random random(20261123);
  uint64_t largest = 0;
  std::string which;
  for (int i = 0; i < 4000; ++i) {
    const Case c = cases(random.split(), 100).value();
    const uint64_t b = estimate_memory(c.problem, geometry(c.problem), MemoryUse::oracle).bytes;
    if (b > largest) {
      largest = b;
      which = to_string(c.problem);
    }
  }
  BOOST_TEST_MESSAGE("largest fuzz case footprint " << format_bytes(largest) << ": " << which);
  BOOST_TEST(largest * 8 < kFuzzMemoryBytes, format_bytes(largest) << ": " << which);
}

// The shipped suites fit a small CI machine: every problem's footprint for its use (bench for the
// perf suites, the oracle for the rest) is at most 4 GiB. Not `large` (issue 15): it crosses 2^31
// bytes on purpose, runs only when asked (CTest label `large`) and skips what --max-bytes refuses.
BOOST_AUTO_TEST_CASE(shipped_suites_fit_a_small_machine) {
  for (const std::string& name : suite_names()) {
    if (name == "large") continue;
    const Suite s = read_suite(name);
    const MemoryUse use = name.rfind("perf_", 0) == 0 ? MemoryUse::bench : MemoryUse::oracle;
    uint64_t largest = 0;
    for (const SuiteEntry& e : s.entries)
      largest = std::max(largest, estimate_memory(e.problem, geometry(e.problem), use).bytes);
    BOOST_TEST_MESSAGE(name << ": largest footprint " << format_bytes(largest));
    BOOST_TEST(largest <= 4 * kGiB, name << ": " << format_bytes(largest));
  }
}

// The Tensor constructor itself: byte counts that overflow, and tensors over the limit, are refused
// before allocating (a safety net under the per-problem checks).
BOOST_AUTO_TEST_CASE(tensor_constructor_checks_bytes) {
  const std::string over = message_of([] {
    Tensor t(DType::f64, {int64_t{1} << 31, int64_t{1} << 31, 1});
  });
  BOOST_TEST(over ==
                 "the byte size of a f64 tensor of shape [2147483648, 2147483648, 1] "
                 "overflows 64 bits",
             over);
  set_memory_limit(1000);
  const std::string big = message_of([] { Tensor t(DType::f32, {251}); });
  BOOST_TEST(big.find("a f32 tensor of shape [251] needs 1004 B (1004 bytes), more than the memory "
                      "limit of 1000 B (1000 bytes, --max-bytes)") == 0,
             big);
  BOOST_CHECK_NO_THROW(Tensor(DType::f32, {250}));
  reset_memory_limit();
}

// Found by fuzz/fuzz_descriptor (regressions/descriptor/undilated_too_large): TF admission of a
// dilated depthwise backprop recomputed the geometry without the dilation, whose larger
// out_backprop overflows 64 bits, and the refusal escaped as an exception. TF compares the sizes.
BOOST_AUTO_TEST_CASE(admission_of_a_problem_whose_undilated_twin_is_too_large) {
  const Problem p = parse_problem(
      "depthwise_conv2d_backprop_filter:input=4x3x6x1,filter=2x2x1x12,dilation=2x3,"
      "padding=9:1949161611111122:7:2");
  const Geometry g = geometry(p);
  BOOST_TEST(g.OH == 1949161611111132);
  Problem undilated = p;
  undilated.dilation_h = undilated.dilation_w = 1;
  BOOST_CHECK_THROW(geometry(undilated), InvalidArgument);
  TfAdmission a;
  BOOST_REQUIRE_NO_THROW(a = tf_admission(p));
  BOOST_TEST((a.cpu.kind == Admission::Kind::refused));
  BOOST_TEST(a.cpu.message ==
             "DepthwiseConv2DBackpropFilter: Number of rows of out_backprop doesn't match "
             "computed: actual = 1949161611111132, computed = 1949161611111133");
}
