#define BOOST_TEST_MODULE mutants
// The mutant backends: without its bug the copy is the reference bit for bit (random problems of
// every op, dtype, format, padding kind, groups and multipliers); with it, each mutant shows its
// bug on a problem built to trigger it and hides it on one where it cannot trigger. Plus the
// registry family, the names and the contracts.
//
// Every run goes through the Backend interface into a poisoned buffer with a guard band after it,
// the way the oracle runs backends: oob_write's deliberate write lands in that band.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"
#include "core/tensor.h"
#include "mutants/internal.h"
#include "mutants/mutants.h"
#include "reference/reference.h"

using namespace convcheck;
using mutants::Bug;

namespace {

constexpr unsigned char kPoison = 0xA5;
constexpr int64_t kGuardElements = 8;

// How a test fills the two operands (per storage element, from a seed).
enum class Fill {
  real,      // N(0,1) rounded into the dtype; int32: uniform in [-1000, 1000]
  small,     // integers in [-3, 3]: every partial sum of a few terms is exact even in bf16
  with_nan,  // real, with operand a's element 0 a NaN
  big_int,   // int32 in [2^20, 2^21]: every sum of two or more products overflows int32
  special,   // real, with NaN, +-Inf, subnormals and -0 sprinkled in
  scaled,    // real, the second operand scaled by 2^-10: roles of different scales
  tiny,      // real scaled by 2^-66 (f32): products and sums below the smallest normal
};

Tensor make_operand(const Problem& p, const Geometry& g, Role role, Fill fill, uint64_t seed,
                    bool first) {
  Tensor t(p.dtype, storage_shape(p, g, role), storage_layout(p, role));
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = 0;
    switch (fill) {
      case Fill::real:
      case Fill::with_nan:
      case Fill::special:
      case Fill::scaled:
      case Fill::tiny:
        v = p.dtype == DType::i32 ? static_cast<double>(static_cast<int64_t>(rng() % 2001) - 1000)
                                  : normal(rng);
        break;
      case Fill::small:
        v = static_cast<double>(static_cast<int64_t>(rng() % 7) - 3);
        break;
      case Fill::big_int:
        v = static_cast<double>((int64_t{1} << 20) + static_cast<int64_t>(rng() % (1 << 20)));
        break;
    }
    if (fill == Fill::scaled && !first) v = std::ldexp(v, -10);
    if (fill == Fill::tiny) v = std::ldexp(v, -66);
    if (fill == Fill::special && is_floating(p.dtype)) {
      const double kSpecials[] = {std::numeric_limits<double>::quiet_NaN(),
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(), -0.0,
                                  std::ldexp(1.0, float_format(p.dtype).min_exponent - 2)};
      if (rng() % 16 == 0) v = kSpecials[rng() % 5];
    }
    t.set(i, v);
  }
  if (fill == Fill::with_nan && first && t.size() > 0) {
    t.set(0, std::numeric_limits<double>::quiet_NaN());
  }
  return t;
}

struct Operand2 {
  Tensor a, b;  // the roles op_io(p.op) reads, in that order
};

Operand2 make_operands(const Problem& p, Fill fill, uint64_t seed) {
  const Geometry g = geometry(p);
  const OpIO io = op_io(p.op);
  return {make_operand(p, g, io.a, fill, seed * 2 + 1, true),
          make_operand(p, g, io.b, fill, seed * 2 + 2, false)};
}

Operands operands_of(const Problem& p, const ConstTensorView& a, const ConstTensorView& b) {
  const OpIO io = op_io(p.op);
  Operands ops;
  ops.set(io.a, &a);
  ops.set(io.b, &b);
  return ops;
}

Tensor reference_of(const Problem& p, const Operand2& in) {
  const ConstTensorView a = view(in.a), b = view(in.b);
  return reference_compute(p, operands_of(p, a, b)).result;
}

// Whether element i (of es bytes) of a buffer still holds the poison in every byte.
bool holds_poison(const unsigned char* bytes, int64_t i, std::size_t es) {
  for (std::size_t k = 0; k < es; ++k)
    if (bytes[static_cast<std::size_t>(i) * es + k] != kPoison) return false;
  return true;
}

// A backend's run on a poisoned result buffer followed by a guard band.
struct Run {
  Tensor result;
  bool guard_touched = false;  // a byte after the result changed
  bool poison_left = false;    // some result element still holds the poison
};

Run run_guarded(Backend& backend, const Problem& p, const Operand2& in) {
  const CheckedProblem checked(p);
  const Geometry& g = checked.geometry();
  const OpIO io = op_io(p.op);
  const Shape shape = storage_shape(p, g, io.result_like);
  const int64_t n = element_count(shape);
  const std::size_t es = dtype_size(p.dtype);
  std::vector<unsigned char> buffer(static_cast<std::size_t>(n + kGuardElements) * es, kPoison);
  const ConstTensorView a = view(in.a), b = view(in.b);
  backend.run(checked, operands_of(p, a, b),
              {buffer.data(), p.dtype, shape, storage_layout(p, io.result_like)});
  Run r;
  r.result = Tensor(p.dtype, shape, storage_layout(p, io.result_like));
  if (r.result.bytes() > 0) std::memcpy(r.result.data(), buffer.data(), r.result.bytes());
  for (std::size_t k = static_cast<std::size_t>(n) * es; k < buffer.size(); ++k) {
    r.guard_touched = r.guard_touched || buffer[k] != kPoison;
  }
  for (int64_t i = 0; i < n; ++i)
    r.poison_left = r.poison_left || holds_poison(buffer.data(), i, es);
  return r;
}

bool same_bits(const Tensor& x, const Tensor& y) {
  return x.bytes() == y.bytes() &&
         (x.bytes() == 0 || std::memcmp(x.data(), y.data(), x.bytes()) == 0);
}

// The first storage index where two results differ, for messages.
std::string first_difference(const Tensor& got, const Tensor& want) {
  const std::size_t es = dtype_size(got.dtype());
  for (int64_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(static_cast<const unsigned char*>(got.data()) + i * es,
                    static_cast<const unsigned char*>(want.data()) + i * es, es) != 0) {
      return "element " + std::to_string(i) + ": got " + std::to_string(got.get(i)) +
             ", reference " + std::to_string(want.get(i));
    }
  }
  return "none";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(registry)

BOOST_AUTO_TEST_CASE(names_cover_every_bug_and_never_none) {
  const std::vector<std::string> names = mutant_names();
  BOOST_TEST(names.size() == std::size(mutants::kAllBugs));
  for (const std::string& n : names) {
    BOOST_TEST(n != "none");
    BOOST_TEST((mutants::parse_bug(n).has_value()));
  }
  BOOST_TEST(!mutants::parse_bug("none").has_value());
}

BOOST_AUTO_TEST_CASE(family_makes_every_mutant_and_rejects_unknown_names) {
  Registry registry;
  register_mutant_backends(registry);
  BOOST_TEST_REQUIRE(registry.entries().size() == 1u);
  BOOST_TEST(registry.entries()[0].name == "mutant:");
  for (const std::string& n : mutant_names()) {
    BOOST_TEST(registry.entries()[0].description.find(n) != std::string::npos);
    const std::unique_ptr<Backend> b = registry.make("mutant:" + n);
    BOOST_TEST(b->name() == "mutant:" + n);
    BOOST_TEST(b->available().ok());
    BOOST_TEST(
        b->can_implement(CheckedProblem(parse_problem("conv2d:input=1x3x3x1,filter=2x2x1x1")))
            .ok());
  }
  for (const char* bad : {"mutant:nope", "mutant:none"}) {
    BOOST_CHECK_EXCEPTION(registry.make(bad), InvalidArgument, [&](const InvalidArgument& e) {
      const std::string what = e.what();
      const std::string name = std::string(bad).substr(7);
      return what.find("unknown mutant '" + name + "'; known: same_pad_before, ") == 0 &&
             what.find("nondeterministic") != std::string::npos;
    });
  }
}

BOOST_AUTO_TEST_CASE(contracts_claim_exact_except_nondeterministic) {
  for (DType t : kAllDTypes) {
    Problem p = parse_problem("conv2d:input=1x3x3x1,filter=2x2x1x1");
    p.dtype = t;
    for (Bug bug : mutants::kAllBugs) {
      const NumericContract c = mutants::make_mutant(bug)->contract(CheckedProblem(p));
      BOOST_TEST_CONTEXT(mutants::bug_name(bug) << " " << dtype_name(t)) {
        BOOST_TEST(c.deterministic);  // nondeterministic's lie, for the rerun check to catch
        const double u_out = t == DType::i32 ? 0.0 : std::ldexp(1.0, -float_format(t).precision);
        if ((bug == Bug::nondeterministic || bug == Bug::cancellation) && is_floating(t)) {
          BOOST_TEST((c.chain == NumericContract::Chain::linear));
          BOOST_TEST(c.u_acc == (t == DType::f64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24)));
          BOOST_TEST(c.u_out == (t == DType::f16 || t == DType::bf16 ? u_out : 0.0));
          BOOST_TEST(c.name != "exact");
        } else {
          BOOST_TEST(c.name == "exact");
          BOOST_TEST((c.chain == NumericContract::Chain::exact));
          BOOST_TEST(c.u_acc == 0.0);
          BOOST_TEST(c.u_out == u_out);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(bug_free_path)

// Random valid problems of op `op`: groups and multipliers, strides, dilations, every padding
// kind, sometimes an empty batch.
Problem random_problem(std::mt19937_64& rng, Op op, DType t, Format f) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    Problem p;
    p.op = op;
    p.dtype = t;
    p.format = f;
    const int64_t n = pick(0, 12) == 0 ? 0 : pick(1, 2);
    if (is_depthwise(op)) {
      const int64_t c = pick(1, 3);
      p.input = {n, pick(1, 7), pick(1, 7), c};
      p.filter = {pick(1, 3), pick(1, 3), c, pick(1, 3)};
    } else {
      const int64_t groups = pick(1, 3), cf = pick(1, 3);
      p.input = {n, pick(1, 7), pick(1, 7), groups * cf};
      p.filter = {pick(1, 3), pick(1, 3), cf, groups * pick(1, 2)};
    }
    p.stride_h = pick(1, 3);
    p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 2);
    p.dilation_w = pick(1, 2);
    p.padding.kind = static_cast<PaddingKind>(pick(0, 2));
    if (p.padding.kind == PaddingKind::EXPLICIT) {
      p.padding = {PaddingKind::EXPLICIT, pick(0, 2), pick(0, 2), pick(0, 2), pick(0, 2)};
    }
    try {
      geometry(p);
      return p;
    } catch (const InvalidArgument&) {
      // negative output size: draw again
    }
  }
}

BOOST_AUTO_TEST_CASE(without_a_bug_equals_the_reference_bit_for_bit) {
  const std::unique_ptr<Backend> clean = mutants::make_mutant(Bug::none);
  std::mt19937_64 rng(20240611);
  int64_t cases = 0;
  for (Op op : kAllOps) {
    for (DType t : kAllDTypes) {
      if (!op_takes_dtype(op, t)) continue;
      for (Format f : {Format::NHWC, Format::NCHW}) {
        for (int trial = 0; trial < 12; ++trial) {
          const Problem p = random_problem(rng, op, t, f);
          const Fill fill = trial % 4 == 3 ? Fill::special : Fill::real;
          const Operand2 in = make_operands(p, fill, rng());
          const Tensor want = reference_of(p, in);
          const Run got = run_guarded(*clean, p, in);
          BOOST_TEST_CONTEXT(to_string(p) << (fill == Fill::special ? " special" : " real")) {
            BOOST_TEST(same_bits(got.result, want), first_difference(got.result, want));
            BOOST_TEST(!got.guard_touched);
            BOOST_TEST(!got.poison_left);
          }
          ++cases;
        }
      }
    }
  }
  BOOST_TEST(cases == 12 * 2 * (7 * 4 + 3));
}

// int32 sums that wrap: the exact sum mod 2^32, like the reference.
BOOST_AUTO_TEST_CASE(int32_wraps_like_the_reference) {
  const std::unique_ptr<Backend> clean = mutants::make_mutant(Bug::none);
  const Problem p = parse_problem("conv2d:input=1x4x4x2,filter=2x2x2x2,padding=SAME,dtype=i32");
  const Operand2 in = make_operands(p, Fill::big_int, 7);
  const Tensor want = reference_of(p, in);
  BOOST_TEST(same_bits(run_guarded(*clean, p, in).result, want));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(planted_bugs)

// How a bug shows when it shows: in the result, past the result, or by leaving poison.
// read_past: nothing this file's run can see (the result is the reference's, the bands are
// untouched); only the oracle's page-guarded passes can (tests/test_oracle.cpp).
enum class Sign { result_differs, guard_touched, poison_left, rerun_differs, read_past };

struct BugCase {
  Bug bug;
  const char* descriptor;
  Fill fill;
  bool shows;  // false: the problem cannot trigger the bug, the run equals the reference
};

// Grouped by bug: for each, problems where the bug must show and problems where it cannot.
const BugCase kCases[] = {
    // SAME's odd padding element before instead of after; VALID and even SAME totals have none.
    {Bug::same_pad_before, "conv2d:input=1x4x4x1,filter=2x2x1x1,padding=SAME", Fill::real, true},
    {Bug::same_pad_before,
     "conv2d_backprop_input:input=1x5x5x2,filter=2x2x2x1,stride=2x2,padding=SAME", Fill::real,
     true},
    {Bug::same_pad_before,
     "depthwise_conv2d_backprop_filter:input=1x4x4x2,filter=2x2x2x2,"
     "padding=SAME",
     Fill::real, true},
    {Bug::same_pad_before, "conv2d:input=1x4x4x1,filter=2x2x1x1,padding=VALID", Fill::real, false},
    {Bug::same_pad_before, "conv2d:input=1x4x4x1,filter=3x3x1x1,padding=SAME", Fill::real, false},
    // Dilation ignored by the index law.
    {Bug::no_dilation, "conv2d_backprop_filter:input=1x6x6x2,filter=2x2x2x2,dilation=2x2",
     Fill::real, true},
    {Bug::no_dilation, "conv2d:input=1x6x6x1,filter=2x2x1x1,dilation=1x2", Fill::real, true},
    {Bug::no_dilation, "conv2d_backprop_filter:input=1x6x6x2,filter=2x2x2x2", Fill::real, false},
    {Bug::no_dilation, "conv2d:input=1x6x6x1,filter=1x1x1x1,dilation=3x3", Fill::real, false},
    // H and W strides exchanged in the index law.
    {Bug::swap_strides, "conv2d_backprop_input:input=1x7x7x1,filter=2x2x1x1,stride=1x2", Fill::real,
     true},
    {Bug::swap_strides, "conv2d:input=1x7x7x1,filter=2x2x1x1,stride=3x1", Fill::real, true},
    {Bug::swap_strides, "conv2d_backprop_input:input=1x7x7x1,filter=2x2x1x1,stride=2x2", Fill::real,
     false},
    // True convolution instead of correlation; a 1x1 filter is its own flip.
    {Bug::flip_filter, "conv2d:input=1x5x5x2,filter=3x3x2x2", Fill::real, true},
    {Bug::flip_filter, "conv2d_backprop_filter:input=1x5x5x1,filter=2x1x1x1", Fill::real, true},
    {Bug::flip_filter, "depthwise_conv2d_backprop_input:input=1x4x4x2,filter=1x2x2x1", Fill::real,
     true},
    {Bug::flip_filter, "conv2d:input=1x5x5x2,filter=1x1x2x2,stride=2x2", Fill::real, false},
    // The last out_backprop row (forward: the last input row) ignored.
    {Bug::drop_last_row, "conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1", Fill::real, true},
    {Bug::drop_last_row, "depthwise_conv2d_backprop_filter:input=1x4x4x2,filter=2x2x2x1",
     Fill::real, true},
    {Bug::drop_last_row, "conv2d:input=1x4x4x1,filter=2x2x1x1", Fill::real, true},
    // ... where the last out_backprop row only covers padding, or no window reaches row H-1.
    {Bug::drop_last_row, "conv2d_backprop_input:input=1x3x3x1,filter=1x1x1x1,padding=0:1:0:0",
     Fill::real, false},
    {Bug::drop_last_row, "conv2d_backprop_filter:input=1x3x3x1,filter=1x1x1x1,padding=0:1:0:0",
     Fill::real, false},
    {Bug::drop_last_row, "conv2d:input=1x4x4x1,filter=1x1x1x1,stride=2x2", Fill::real, false},
    // Depthwise channel m*C+k instead of k*M+m; one channel or one multiplier cannot tell.
    {Bug::depthwise_order, "depthwise_conv2d:input=1x3x3x2,filter=2x2x2x3", Fill::real, true},
    {Bug::depthwise_order, "depthwise_conv2d_backprop_input:input=1x3x3x3,filter=2x2x3x2",
     Fill::real, true},
    {Bug::depthwise_order, "depthwise_conv2d_backprop_filter:input=1x3x3x2,filter=2x2x2x2",
     Fill::real, true},
    {Bug::depthwise_order, "depthwise_conv2d:input=1x3x3x2,filter=2x2x2x1", Fill::real, false},
    {Bug::depthwise_order, "depthwise_conv2d_backprop_input:input=1x3x3x1,filter=2x2x1x3",
     Fill::real, false},
    {Bug::depthwise_order, "conv2d:input=1x3x3x2,filter=2x2x2x3", Fill::real, false},
    // Filter read as HWOI; with in_depth 1 (or out_depth 1) the two orders coincide.
    {Bug::filter_io_swapped, "conv2d:input=1x3x3x2,filter=2x2x2x3", Fill::real, true},
    {Bug::filter_io_swapped, "conv2d_transpose:input=1x3x3x3,filter=2x2x3x2", Fill::real, true},
    {Bug::filter_io_swapped, "conv2d_backprop_filter:input=1x3x3x2,filter=2x2x2x2", Fill::real,
     true},
    {Bug::filter_io_swapped, "depthwise_conv2d:input=1x3x3x2,filter=2x2x2x2", Fill::real, true},
    {Bug::filter_io_swapped, "conv2d:input=1x3x3x1,filter=2x2x1x3", Fill::real, false},
    {Bug::filter_io_swapped, "conv2d_backprop_input:input=1x3x3x3,filter=2x2x3x1", Fill::real,
     false},
    // Groups ignored; one group cannot tell.
    {Bug::ignore_groups, "conv2d:input=1x3x3x4,filter=2x2x2x4", Fill::real, true},
    {Bug::ignore_groups, "conv2d_backprop_input:input=1x3x3x4,filter=2x2x2x4", Fill::real, true},
    {Bug::ignore_groups, "conv2d_backprop_filter:input=1x3x3x6,filter=2x2x2x3", Fill::real, true},
    {Bug::ignore_groups, "depthwise_conv2d:input=1x3x3x2,filter=2x2x2x1", Fill::real, true},
    {Bug::ignore_groups, "conv2d:input=1x3x3x4,filter=2x2x4x4", Fill::real, false},
    {Bug::ignore_groups, "conv2d_backprop_filter:input=1x3x3x2,filter=2x2x2x3", Fill::real, false},
    // NCHW activations read and written as NHWC; NHWC (or one channel, one pixel) cannot tell.
    {Bug::nchw_as_nhwc, "conv2d:input=1x3x3x2,filter=2x2x2x2,format=NCHW", Fill::real, true},
    {Bug::nchw_as_nhwc,
     "depthwise_conv2d_backprop_filter:input=1x3x3x2,filter=2x2x2x1,"
     "format=NCHW",
     Fill::real, true},
    {Bug::nchw_as_nhwc, "conv2d:input=1x3x3x2,filter=2x2x2x2,format=NHWC", Fill::real, false},
    {Bug::nchw_as_nhwc, "conv2d_backprop_input:input=2x3x3x1,filter=2x2x1x1,format=NCHW",
     Fill::real, false},
    // A write past the end: it always shows (in the guard band), never in the result proper.
    {Bug::oob_write, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::real, true},
    {Bug::oob_write, "conv2d_backprop_filter:input=1x3x3x1,filter=2x2x1x1,dtype=f16", Fill::real,
     true},
    {Bug::oob_write, "conv2d:input=0x3x3x1,filter=2x2x1x1", Fill::real, true},
    // The last element never written; an empty result has none.
    {Bug::unwritten_tail, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::real, true},
    {Bug::unwritten_tail, "conv2d_backprop_input:input=1x3x3x2,filter=2x2x2x1,format=NCHW",
     Fill::real, true},
    {Bug::unwritten_tail, "conv2d:input=0x3x3x1,filter=2x2x1x1", Fill::real, false},
    // NaN read as 0; no NaN, nothing to change.
    {Bug::nan_to_zero, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::with_nan, true},
    {Bug::nan_to_zero, "depthwise_conv2d_backprop_input:input=1x3x3x1,filter=2x2x1x1,dtype=bf16",
     Fill::with_nan, true},
    {Bug::nan_to_zero, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::real, false},
    // Running sum rounded to bf16; exact small sums and int32 cannot tell.
    {Bug::low_precision_accumulate, "conv2d:input=1x5x5x4,filter=3x3x4x2", Fill::real, true},
    {Bug::low_precision_accumulate, "conv2d_backprop_filter:input=1x5x5x4,filter=3x3x4x2,dtype=f64",
     Fill::real, true},
    {Bug::low_precision_accumulate, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::small, false},
    {Bug::low_precision_accumulate, "conv2d:input=1x5x5x4,filter=3x3x4x2,dtype=i32", Fill::real,
     false},
    // int32 clamps instead of wrapping; without overflow (or for floats) it cannot tell.
    {Bug::int_saturate, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=i32", Fill::big_int, true},
    {Bug::int_saturate, "conv2d_backprop_input:input=1x3x3x2,filter=2x2x2x2,dtype=i32",
     Fill::big_int, true},
    {Bug::int_saturate, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=i32", Fill::real, false},
    {Bug::int_saturate, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=f32", Fill::real, false},
    // Summation order that changes every run: a rerun's bits differ on real data; exact sums
    // (small integers, int32) cannot tell.
    {Bug::nondeterministic, "conv2d:input=1x6x6x8,filter=3x3x8x4", Fill::real, true},
    {Bug::nondeterministic, "conv2d_backprop_filter:input=2x6x6x4,filter=3x3x4x4,dtype=f64",
     Fill::real, true},
    {Bug::nondeterministic, "conv2d:input=1x6x6x8,filter=3x3x8x4", Fill::small, false},
    {Bug::nondeterministic, "conv2d:input=1x6x6x8,filter=3x3x8x4,dtype=i32", Fill::real, false},
    // A channel loop blocked by 8 loses its tail block (9 = 8 + 1 channels), in each op's
    // reduction; a count that is a multiple of 8, or at most 8, has no tail to lose.
    {Bug::vector_tail, "conv2d:input=1x2x2x9,filter=1x1x9x2", Fill::real, true},
    {Bug::vector_tail, "conv2d_backprop_input:input=1x2x2x2,filter=1x1x2x9", Fill::real, true},
    {Bug::vector_tail, "conv2d_backprop_filter:input=1x2x2x9,filter=1x1x9x1", Fill::real, true},
    {Bug::vector_tail, "conv2d:input=1x2x2x16,filter=1x1x16x2", Fill::real, false},
    {Bug::vector_tail, "conv2d_backprop_input:input=1x2x2x2,filter=1x1x2x7", Fill::real, false},
    // A batch loop unrolled by 4 loses images 4.. of 5 or 6; 3, 4 and 8 images have no tail.
    {Bug::batch_unroll_tail, "conv2d:input=5x2x2x1,filter=1x1x1x1", Fill::real, true},
    {Bug::batch_unroll_tail, "conv2d_backprop_filter:input=6x2x2x1,filter=1x1x1x1", Fill::real,
     true},
    {Bug::batch_unroll_tail, "conv2d:input=8x2x2x1,filter=1x1x1x1", Fill::real, false},
    {Bug::batch_unroll_tail, "conv2d_backprop_input:input=3x2x2x1,filter=1x1x1x1", Fill::real,
     false},
    // 16-bit activation offsets wrap past 2^16 elements (257 x 256 = 65792); 2^16 exactly do not.
    {Bug::index16, "conv2d:input=1x257x256x1,filter=1x1x1x1", Fill::small, true},
    {Bug::index16, "conv2d:input=1x256x256x1,filter=1x1x1x1", Fill::small, false},
    // Quarter-square products: wrong when the roles' scales differ; exact on small integers.
    {Bug::cancellation, "conv2d:input=1x4x4x8,filter=3x3x8x4", Fill::scaled, true},
    {Bug::cancellation, "conv2d:input=1x4x4x8,filter=3x3x8x4", Fill::small, false},
    {Bug::cancellation, "conv2d:input=1x4x4x8,filter=3x3x8x4,dtype=i32", Fill::real, false},
    // Subnormal results flushed: they show on tiny data and nowhere near it.
    {Bug::flush_to_zero, "conv2d:input=1x3x3x2,filter=2x2x2x1", Fill::tiny, true},
    {Bug::flush_to_zero, "conv2d:input=1x3x3x2,filter=2x2x2x1", Fill::real, false},
    // An output-column loop unrolled by 4 loses columns 4.. of 5 or 6; 3 or 8 columns have none.
    {Bug::spatial_unroll_tail, "conv2d:input=1x1x5x1,filter=1x1x1x1", Fill::real, true},
    {Bug::spatial_unroll_tail, "conv2d_backprop_input:input=1x1x5x1,filter=1x1x1x1", Fill::real,
     true},
    {Bug::spatial_unroll_tail, "conv2d_backprop_filter:input=1x1x6x1,filter=1x1x1x1", Fill::real,
     true},
    {Bug::spatial_unroll_tail, "conv2d:input=1x1x8x1,filter=1x1x1x1", Fill::real, false},
    {Bug::spatial_unroll_tail, "conv2d:input=1x1x3x1,filter=1x1x1x1", Fill::real, false},
    // Padding taps multiplied as zeros: NaN where a non-finite filter meets padding; on finite
    // data a zero term changes nothing.
    {Bug::zero_padding_terms, "conv2d:input=1x4x4x2,filter=3x3x2x4,padding=SAME", Fill::special,
     true},
    {Bug::zero_padding_terms, "conv2d:input=1x4x4x2,filter=3x3x2x4,padding=SAME", Fill::real,
     false},
    // A 16-bit running sum; f32 is untouched.
    {Bug::half_accumulate, "conv2d:input=1x5x5x4,filter=3x3x4x2,dtype=f16", Fill::real, true},
    {Bug::half_accumulate, "conv2d_backprop_filter:input=1x5x5x4,filter=3x3x4x2,dtype=bf16",
     Fill::real, true},
    {Bug::half_accumulate, "conv2d:input=1x5x5x4,filter=3x3x4x2", Fill::real, false},
    // f64 in float: wrong on real data, exact on small integers, and f32 is untouched.
    {Bug::f64_in_f32, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=f64", Fill::real, true},
    {Bug::f64_in_f32, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=f64", Fill::small, false},
    {Bug::f64_in_f32, "conv2d:input=1x3x3x2,filter=2x2x2x2", Fill::real, false},
    // Truncation instead of rounding: wrong on real bf16 data; small exact integers round to
    // themselves either way.
    {Bug::truncate_16bit, "conv2d:input=1x5x5x4,filter=3x3x4x2,dtype=bf16", Fill::real, true},
    {Bug::truncate_16bit, "conv2d:input=1x2x2x1,filter=1x1x1x1,dtype=bf16", Fill::small, false},
    // f32 operands to 11 bits: wrong on real f32 data; small integers and f64 are untouched.
    {Bug::silent_tf32, "conv2d:input=1x3x3x2,filter=2x2x2x2", Fill::real, true},
    {Bug::silent_tf32, "conv2d:input=1x3x3x2,filter=2x2x2x2", Fill::small, false},
    {Bug::silent_tf32, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=f64", Fill::real, false},
    // int32 through float: products of 2^20-sized values lose bits; sums below 2^24 do not.
    {Bug::i32_via_f32, "conv2d:input=1x3x3x2,filter=2x2x2x2,dtype=i32", Fill::big_int, true},
    {Bug::i32_via_f32, "conv2d:input=1x3x3x1,filter=1x1x1x1,dtype=i32", Fill::real, false},
    // Lost updates, a different set each run; elements of one term have no update to lose.
    {Bug::lost_update, "conv2d:input=1x6x6x8,filter=3x3x8x4", Fill::real, true},
    {Bug::lost_update, "conv2d:input=1x3x3x1,filter=1x1x1x1", Fill::real, false},
    // A read one element past the end of the second operand: the result stays the reference's.
    {Bug::over_read_by_one, "conv2d:input=1x3x3x1,filter=2x2x1x1", Fill::real, true},
    {Bug::over_read_by_one, "conv2d_backprop_input:input=1x3x3x2,filter=2x2x2x1,dtype=f16",
     Fill::real, true},
    {Bug::stale_cache, "conv2d:input=1x5x5x2,filter=3x3x2x2", Fill::real, false},
    {Bug::stale_cache, "depthwise_conv2d_backprop_filter:input=2x4x4x2,filter=2x2x2x1", Fill::real,
     false},
    // Filter taps that meet only padding left unwritten: a 1-pixel-wide input under a 1x6 SAME
    // filter (pads 2 and 3: only column 2 meets it); rows of padding alone under a 4x1 filter.
    // Every tap meeting the input, or not backprop filter, cannot tell.
    {Bug::padding_taps_unwritten,
     "conv2d_backprop_filter:input=2x4x1x3,filter=1x6x3x2,padding=SAME", Fill::real, true},
    {Bug::padding_taps_unwritten,
     "depthwise_conv2d_backprop_filter:input=1x1x3x2,filter=4x1x2x2,padding=SAME,format=NCHW",
     Fill::real, true},
    {Bug::padding_taps_unwritten,
     "conv2d_backprop_filter:input=1x2x3x2,filter=2x1x2x2,stride=3x1,dilation=4x1,"
     "padding=4:4:0:0",
     Fill::real, true},  // rows -4 and -1 under tap 0 (stride and dilation in the law)
    {Bug::padding_taps_unwritten,
     "conv2d_backprop_filter:input=1x5x5x2,filter=3x3x2x2,padding=SAME", Fill::real, false},
    {Bug::padding_taps_unwritten, "conv2d:input=2x4x1x3,filter=1x6x3x2,padding=SAME", Fill::real,
     false},
};

// The sign a bug leaves when it shows.
Sign sign_of(Bug bug) {
  switch (bug) {
    case Bug::oob_write:
      return Sign::guard_touched;
    case Bug::unwritten_tail:
    case Bug::padding_taps_unwritten:
      return Sign::poison_left;
    case Bug::nondeterministic:
    case Bug::lost_update:
      return Sign::rerun_differs;
    case Bug::over_read_by_one:
      return Sign::read_past;
    default:
      return Sign::result_differs;
  }
}

BOOST_AUTO_TEST_CASE(every_bug_shows_where_it_must_and_hides_where_it_cannot) {
  for (Bug bug : mutants::kAllBugs) {
    int shows = 0, hides = 0;
    for (const BugCase& c : kCases) {
      if (c.bug != bug) continue;
      (c.shows ? shows : hides) += 1;
    }
    // stale_cache never shows on one call of a fresh instance: see its own test below.
    if (bug != Bug::stale_cache) {
      BOOST_TEST(shows >= 1, mutants::bug_name(bug) << " has no case where it shows");
    }
    // oob_write always shows (in the guard band), over_read_by_one always reads past the end;
    // their cases check the result proper instead.
    if (bug != Bug::oob_write && bug != Bug::over_read_by_one) {
      BOOST_TEST(hides >= 1, mutants::bug_name(bug) << " has no case where it hides");
    }
  }
  uint64_t seed = 1;
  for (const BugCase& c : kCases) {
    const Problem p = parse_problem(c.descriptor);
    const std::unique_ptr<Backend> mutant = mutants::make_mutant(c.bug);
    const Operand2 in = make_operands(p, c.fill, seed++);
    const Tensor want = reference_of(p, in);
    const Run first = run_guarded(*mutant, p, in);
    const Run second = run_guarded(*mutant, p, in);
    const bool differs = !same_bits(first.result, want);
    const bool rerun_differs = !same_bits(first.result, second.result);
    BOOST_TEST_CONTEXT(mutant->name()
                       << " on " << c.descriptor << (c.shows ? " (must show)" : " (must hide)")) {
      const Sign sign = sign_of(c.bug);
      if (!c.shows) {
        BOOST_TEST(!differs, first_difference(first.result, want));
        BOOST_TEST(!rerun_differs);
        BOOST_TEST(!first.guard_touched);
        BOOST_TEST(!first.poison_left);
        continue;
      }
      BOOST_TEST(first.guard_touched == (sign == Sign::guard_touched));
      BOOST_TEST(first.poison_left == (sign == Sign::poison_left));
      BOOST_TEST(rerun_differs == (sign == Sign::rerun_differs));
      switch (sign) {
        case Sign::result_differs:
          BOOST_TEST(differs);
          break;
        case Sign::guard_touched:
          // The result proper is the reference's: only the guard band tells.
          BOOST_TEST(!differs, first_difference(first.result, want));
          break;
        case Sign::poison_left: {
          // unwritten_tail: exactly the last element is missing. padding_taps_unwritten: only
          // elements whose exact value is 0 (the taps that meet only padding). The rest is the
          // reference's.
          Tensor patched = first.result;
          if (c.bug == Bug::unwritten_tail) {
            const int64_t last = want.size() - 1;
            patched.set(last, want.get(last));
          } else {
            // Exactly the elements without terms (the reference's own count) still hold the
            // poison; every other element is the reference's.
            const std::vector<int64_t> terms =
                reference_compute(p, operands_of(p, view(in.a), view(in.b))).terms;
            const std::size_t es = dtype_size(p.dtype);
            const auto* bytes = static_cast<const unsigned char*>(first.result.data());
            int64_t left = 0;
            for (int64_t i = 0; i < want.size(); ++i) {
              if (terms[static_cast<std::size_t>(i)] != 0) continue;
              BOOST_TEST(holds_poison(bytes, i, es),
                         "element " << i << " has no terms but was written");
              patched.set(i, want.get(i));
              ++left;
            }
            BOOST_TEST(left > 0);
          }
          BOOST_TEST(same_bits(patched, want), first_difference(patched, want));
          break;
        }
        case Sign::rerun_differs:
          break;  // each run is still within its declared bound: see the next test
        case Sign::read_past:
          BOOST_TEST(!differs, first_difference(first.result, want));
          break;
      }
    }
  }
}

// stale_cache shows across calls only: a fresh instance gives the reference's result; the next
// call with the same op, dtype and tensor shapes and operands of the same scale (rounded log2 of
// the mean |x|, non-finite count) gets the last call's result, whatever the data, strides or
// padding; another scale recomputes (so linearity's 2x and nan_footprint's NaN see no stale
// result).
BOOST_AUTO_TEST_CASE(stale_cache_returns_the_last_result_for_the_same_shapes_and_scale) {
  const Problem p = parse_problem("conv2d:input=1x5x5x2,filter=3x3x2x2");
  // The same tensor shapes (OH = OW = 3), another index law.
  const Problem q = parse_problem("conv2d:input=1x5x5x2,filter=3x3x2x2,stride=2x1,padding=1:1:0:0");
  const std::unique_ptr<Backend> m = mutants::make_mutant(Bug::stale_cache);
  const Operand2 x = make_operands(p, Fill::real, 1);
  Operand2 negated = x, doubled = x;
  for (int64_t i = 0; i < x.a.size(); ++i) {
    negated.a.set(i, -x.a.get(i));
    doubled.a.set(i, 2 * x.a.get(i));
  }
  const Run first = run_guarded(*m, p, x);
  BOOST_TEST(same_bits(first.result, reference_of(p, x)),
             first_difference(first.result, reference_of(p, x)));
  const Run stale = run_guarded(*m, p, negated);  // same scale: the last result
  BOOST_TEST(same_bits(stale.result, first.result));
  BOOST_TEST(!same_bits(stale.result, reference_of(p, negated)));
  const Run fresh = run_guarded(*m, p, doubled);  // another binade: recomputed
  BOOST_TEST(same_bits(fresh.result, reference_of(p, doubled)));
  const Run again = run_guarded(*m, p, doubled);  // the same call: the right result, cached
  BOOST_TEST(same_bits(again.result, fresh.result));
  const Run shapes = run_guarded(*m, q, doubled);  // same shapes and scale, another stride: stale
  BOOST_TEST(same_bits(shapes.result, fresh.result));
  BOOST_TEST(!same_bits(shapes.result, reference_of(q, doubled)));
}

// The nondeterministic mutant is caught only by the rerun: each run stays within the plain
// accumulation bound its contract declares, tau = gamma_n(u_acc) M + u_out |s| (with a little
// slack for the underflow-free data here), so a compare check alone would pass it.
BOOST_AUTO_TEST_CASE(nondeterministic_stays_within_its_declared_bound) {
  const std::unique_ptr<Backend> mutant = mutants::make_mutant(Bug::nondeterministic);
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    Problem p = parse_problem("conv2d_backprop_input:input=2x6x6x8,filter=3x3x8x8,padding=SAME");
    p.dtype = t;
    const Operand2 in = make_operands(p, Fill::real, 99);
    const ConstTensorView a = view(in.a), b = view(in.b);
    const ReferenceResult ref = reference_compute(p, operands_of(p, a, b));
    const NumericContract c = mutant->contract(CheckedProblem(p));
    for (int rep = 0; rep < 3; ++rep) {
      const Run r = run_guarded(*mutant, p, in);
      double worst = 0;
      for (int64_t i = 0; i < r.result.size(); ++i) {
        const double k = static_cast<double>(c.chain_length(ref.terms[i])) * c.u_acc;
        const double tau =
            (1 + c.u_out) * (k / (1 - k)) * ref.magnitude[i] + c.u_out * std::fabs(ref.exact_hi[i]);
        const double err = std::fabs((r.result.get(i) - ref.exact_hi[i]) - ref.exact_lo[i]);
        worst = std::max(worst, tau > 0 ? err / (tau * (1 + 1e-9)) : (err > 0 ? 2.0 : 0.0));
      }
      BOOST_TEST_CONTEXT(dtype_name(t) << " run " << rep) {
        BOOST_TEST(worst <= 1.0);
      }
    }
  }
}

// Without the counter the order would repeat: two fresh instances also disagree with each other.
BOOST_AUTO_TEST_CASE(nondeterministic_differs_across_instances_too) {
  const Problem p = parse_problem("conv2d:input=1x6x6x8,filter=3x3x8x4");
  const Operand2 in = make_operands(p, Fill::real, 5);
  const std::unique_ptr<Backend> m1 = mutants::make_mutant(Bug::nondeterministic);
  const std::unique_ptr<Backend> m2 = mutants::make_mutant(Bug::nondeterministic);
  BOOST_TEST(!same_bits(run_guarded(*m1, p, in).result, run_guarded(*m2, p, in).result));
}

BOOST_AUTO_TEST_SUITE_END()
