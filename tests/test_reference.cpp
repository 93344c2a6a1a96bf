// The exact reference: TF's own expected values (spec B §5), empty tensors, the seed example, the
// cross-check against the independent textbook conv, adjoint identities, and rounding.
//
// Every expected value here is derived independently of reference/: copied from TF's tests (with
// TF's 1..n ramps and all-ones inputs), or computed by tests/textbook_conv.cpp, or worked by hand.
#define BOOST_TEST_MODULE reference
#include <omp.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/half.h"
#include "core/problem.h"
#include "reference/exact_accumulator.h"
#include "reference/reference.h"
#include "textbook_conv.h"

using namespace convcheck;

namespace {

using Fill = std::function<double(int64_t)>;  // value of storage element i
const Fill ramp = [](int64_t i) { return static_cast<double>(i + 1); };
const Fill ones = [](int64_t) { return 1.0; };

// A problem with its two operands filled and the reference's answer.
struct Computed {
  Problem p;
  Geometry g;
  Tensor a, b;  // the two roles op_io(p.op) reads, in that order
  ReferenceResult r;
};

Tensor make_operand(const Problem& p, const Geometry& g, Role role, const Fill& fill) {
  Tensor t(p.dtype, storage_shape(p, g, role), storage_layout(p, role));
  for (int64_t i = 0; i < t.size(); ++i) t.set(i, fill(i));
  return t;
}

ReferenceResult run_reference(const Problem& p, const Tensor& a, const Tensor& b) {
  const OpIO io = op_io(p.op);
  const ConstTensorView va = view(a), vb = view(b);
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vb);
  return reference_compute(p, ops);
}

Computed compute(const Problem& p, const Fill& fa, const Fill& fb) {
  Computed c{p, geometry(p), {}, {}, {}};
  const OpIO io = op_io(p.op);
  c.a = make_operand(p, c.g, io.a, fa);
  c.b = make_operand(p, c.g, io.b, fb);
  c.r = run_reference(p, c.a, c.b);
  return c;
}

Computed compute(const std::string& text, const Fill& fa, const Fill& fb) {
  return compute(parse_problem(text), fa, fb);
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(t.size());
  for (int64_t i = 0; i < t.size(); ++i) v[i] = t.get(i);
  return v;
}

// NHWC <-> NCHW permutation of a [N,H,W,C]-shaped buffer.
std::vector<double> nhwc_to_nchw(const std::vector<double>& v, const std::array<int64_t, 4>& s) {
  std::vector<double> out(v.size());
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t h = 0; h < s[1]; ++h)
      for (int64_t w = 0; w < s[2]; ++w)
        for (int64_t c = 0; c < s[3]; ++c)
          out[((n * s[3] + c) * s[1] + h) * s[2] + w] = v[((n * s[1] + h) * s[2] + w) * s[3] + c];
  return out;
}

bool same_bits(const Tensor& x, const Tensor& y) {
  return x.bytes() == y.bytes() &&
         (x.bytes() == 0 || std::memcmp(x.data(), y.data(), x.bytes()) == 0);
}

// Rounds an exact (integer) expected value into dtype t, independently of reference/.
double round_into(double v, DType t) {
  switch (t) {
    case DType::f16:
      return f16_to_double(f16_from_double(v));
    case DType::bf16:
      return bf16_to_double(bf16_from_double(v));
    case DType::f32:
      return static_cast<float>(v);
    default:
      return v;
  }
}

struct Expected {
  const char* text;
  std::vector<double> values;  // flattened NHWC / HWIO, TF's "exp"
};

// One templated check for every dtype and both formats: TF's fill (1..n ramps over the NHWC
// operands) and TF's expected values; NCHW runs the same maths on transposed operands.
void check_tf_case(const Expected& e, DType t, Format f) {
  Problem p = parse_problem(e.text);
  p.dtype = t;
  if (!op_takes_dtype(p.op, t)) return;
  const Geometry g = geometry(p);
  const OpIO io = op_io(p.op);
  const std::string context =
      to_string(parse_problem(e.text)) + " as " + dtype_name(t) + " " + format_name(f);
  Problem nhwc = p;
  nhwc.format = Format::NHWC;
  Tensor a = make_operand(nhwc, g, io.a, ramp), b = make_operand(nhwc, g, io.b, ramp);
  if (f == Format::NCHW) {
    p.format = Format::NCHW;
    auto transposed = [&](const Tensor& x, Role r) {
      if (r == Role::filter) return x;
      const std::array<int64_t, 4> s = logical_shape(g, r);
      const std::vector<double> v = nhwc_to_nchw(values(x), s);
      return make_operand(p, g, r, [&](int64_t i) { return v[i]; });
    };
    a = transposed(a, io.a);
    b = transposed(b, io.b);
  }
  const ReferenceResult r = run_reference(p, a, b);
  std::vector<double> got = values(r.result);
  std::vector<double> want = e.values;
  for (double& v : want) v = round_into(v, t);
  if (f == Format::NCHW && io.result_like != Role::filter) {
    want = nhwc_to_nchw(want, logical_shape(g, io.result_like));
  }
  BOOST_TEST_CONTEXT(context) {
    BOOST_TEST(got == want, boost::test_tools::per_element());
  }
}

void check_tf_table(const std::vector<Expected>& table) {
  for (const Expected& e : table)
    for (DType t : kAllDTypes)
      for (Format f : {Format::NHWC, Format::NCHW}) check_tf_case(e, t, f);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(tf_expected_values)

// Spec B §5.1 (T1 Conv2DBackpropInput tests).
BOOST_AUTO_TEST_CASE(backprop_input) {
  check_tf_table({
      {"conv2d_backprop_input:input=1x2x3x1,filter=2x2x1x1", {1, 4, 4, 3, 10, 8}},
      {"conv2d_backprop_input:input=0x2x3x1,filter=2x2x1x1", {}},
      {"conv2d_backprop_input:input=1x2x3x3,filter=2x2x3x3",
       {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527}},
      {"conv2d_backprop_input:input=1x3x6x1,filter=2x2x1x1,stride=1x2",
       {1, 2, 2, 4, 3, 6, 7, 12, 11, 18, 15, 24, 12, 16, 15, 20, 18, 24}},
      {"conv2d_backprop_input:input=1x4x4x1,filter=1x1x1x1,stride=2x2,padding=SAME",
       {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}},
      // KernelSizeMatchesInputSize, and InputSizesContainsOnlySpatialDimensions (same problem).
      {"conv2d_backprop_input:input=1x2x2x1,filter=2x2x1x2", {5, 11, 17, 23}},
      // DegenerateBackpropInput: filter wider than input, out_w = 0, all-zero gradient.
      {"conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2",
       std::vector<double>(6, 0.0)},
  });
}

// Spec B §5.2 (T1 Conv2DBackpropFilter tests).
BOOST_AUTO_TEST_CASE(backprop_filter) {
  check_tf_table({
      {"conv2d_backprop_filter:input=1x2x3x1,filter=2x2x1x1", {5, 8, 14, 17}},
      {"conv2d_backprop_filter:input=1x2x3x1,filter=2x2x1x0", {}},
      {"conv2d_backprop_filter:input=0x2x3x1,filter=2x2x1x1", {0, 0, 0, 0}},
      {"conv2d_backprop_filter:input=1x2x3x3,filter=2x2x3x3",
       {17, 22, 27,  22, 29, 36,  27, 36, 45,  32, 43,  54,  37, 50,  63,  42, 57,  72,
        62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153}},
      {"conv2d_backprop_filter:input=1x3x6x1,filter=2x2x1x1,stride=1x2", {161, 182, 287, 308}},
      {"conv2d_backprop_filter:input=1x4x4x1,filter=1x1x1x1,stride=2x2,padding=SAME", {78}},
      {"conv2d_backprop_filter:input=1x2x2x1,filter=2x2x1x2", {1, 2, 2, 4, 3, 6, 4, 8}},
  });
}

// Spec B §5.5: the depthwise hand test pins output channel k*M + m.
BOOST_AUTO_TEST_CASE(depthwise_hand_test) {
  check_tf_table({{"depthwise_conv2d:input=1x2x3x2,filter=2x2x2x2",
                   {196, 216, 272, 296, 252, 280, 344, 376}}});
}

// Spec B §5.4 (T2): all-ones x and filter, expected counts generated exactly as TF's test does.
std::vector<double> transpose_expected(const std::string& which, int64_t N, int64_t H, int64_t W,
                                       int64_t C) {
  std::vector<double> v(N * H * W * C);
  std::vector<double> plane(H * W);
  if (which == "single_stride") {
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        const bool h_in = h > 0 && h<H - 1, w_in = w> 0 && w < W - 1;
        plane[h * W + w] = 4 * 3 + (h_in && w_in ? 5 * 3 : (h_in || w_in) ? 2 * 3 : 0);
      }
  } else if (which == "same") {
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        const bool h_in = h % 2 == 0 && h > 0 && h < H - 1, w_in = w % 2 == 0 && w > 0 && w < W - 1;
        plane[h * W + w] = 3 + (h_in && w_in ? 9 : (h_in || w_in) ? 3 : 0);
      }
  } else {  // valid: pad 1, then borders copied from their neighbours
    const int64_t pad = 1;
    for (int64_t h = pad; h < H - pad; ++h)
      for (int64_t w = pad; w < W - pad; ++w) {
        const bool h_in = h % 2 == 0 && h > pad && h < H - 1 - pad;
        const bool w_in = w % 2 == 0 && w > pad && w < W - 1 - pad;
        plane[h * W + w] = 3 + (h_in && w_in ? 9 : (h_in || w_in) ? 3 : 0);
      }
    for (int64_t w = 0; w < W; ++w) {
      plane[w] = plane[W + w];
      plane[(H - 1) * W + w] = plane[(H - 2) * W + w];
    }
    for (int64_t h = 0; h < H; ++h) {
      plane[h * W] = plane[h * W + 1];
      plane[h * W + W - 1] = plane[h * W + W - 2];
    }
  }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < H * W; ++i)
      for (int64_t c = 0; c < C; ++c) v[(n * H * W + i) * C + c] = plane[i];
  return v;
}

BOOST_AUTO_TEST_CASE(conv2d_transpose_all_ones) {
  struct Case {
    const char* text;
    const char* which;
    int64_t H, W;
  };
  // x [2,6,4,3] (TF's value) into output_shape [2,H,W,2], filter [3,3,2,3].
  const Case cases[] = {
      {"conv2d_transpose:input=2x6x4x2,filter=3x3x2x3,padding=SAME", "single_stride", 6, 4},
      {"conv2d_transpose:input=2x12x8x2,filter=3x3x2x3,stride=2x2,padding=SAME", "same", 12, 8},
      {"conv2d_transpose:input=2x13x9x2,filter=3x3x2x3,stride=2x2", "valid", 13, 9},
  };
  for (const Case& c : cases) {
    std::vector<Expected> table{{c.text, transpose_expected(c.which, 2, c.H, c.W, 2)}};
    for (DType t : {DType::f32, DType::i32, DType::f16, DType::f64}) {
      for (Format f : {Format::NHWC, Format::NCHW}) {
        Problem p = parse_problem(c.text);
        p.dtype = t;
        p.format = f;
        const Geometry g = geometry(p);
        BOOST_TEST(g.OH == 6);
        BOOST_TEST(g.OW == 4);
        const Computed got = compute(p, ones, ones);
        // all-ones is layout-free; only the result's layout moves.
        std::vector<double> want = table[0].values;
        if (f == Format::NCHW) want = nhwc_to_nchw(want, g.input_shape());
        BOOST_TEST_CONTEXT(to_string(p)) {
          BOOST_TEST(values(got.r.result) == want, boost::test_tools::per_element());
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(empty_tensors)

BOOST_AUTO_TEST_CASE(batch_zero_is_empty_or_zero) {
  for (const char* text :
       {"conv2d:input=0x4x4x2,filter=2x2x2x3", "conv2d_backprop_input:input=0x4x4x2,filter=2x2x2x3",
        "conv2d_transpose:input=0x4x4x2,filter=2x2x2x3",
        "depthwise_conv2d_backprop_input:input=0x4x4x2,filter=2x2x2x3"}) {
    BOOST_TEST(compute(text, ramp, ramp).r.result.size() == 0, text);
  }
  // Backprop filter with an empty batch: zeros of the filter's shape (T1 WithEmptyInput).
  for (const char* text : {"conv2d_backprop_filter:input=0x4x4x2,filter=2x2x2x3",
                           "depthwise_conv2d_backprop_filter:input=0x4x4x2,filter=2x2x2x3"}) {
    const Computed c = compute(text, ramp, ramp);
    BOOST_TEST(c.r.result.size() == 24, text);
    BOOST_TEST(values(c.r.result) == std::vector<double>(24, 0.0),
               boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_CASE(empty_out_backprop_gives_zero_gradients) {
  // out_w = 0 (filter wider than the input, stride 2): every gradient element is written, as 0.
  for (const char* text :
       {"conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2",
        "depthwise_conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2",
        "depthwise_conv2d_backprop_filter:input=3x1x1x2,filter=1x3x2x3,stride=1x2"}) {
    const Computed c = compute(text, ramp, ramp);
    BOOST_TEST(c.g.OW == 0, text);
    BOOST_TEST(c.r.result.size() > 0, text);
    for (int64_t i = 0; i < c.r.result.size(); ++i) {
      BOOST_TEST(c.r.result.get(i) == 0.0);
      BOOST_TEST(!std::signbit(c.r.result.get(i)));  // +0: an empty sum
      BOOST_TEST(c.r.terms[i] == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(input_only_padding_gives_zeros) {
  // T1 testConv2dOnlyPaddingReturnsZeros: input [1,0,2,1], explicit [[1,1],[1,1]] -> [1,2,4,1].
  const Computed c = compute("conv2d:input=1x0x2x1,filter=1x1x1x1,padding=1:1:1:1", ramp, ramp);
  BOOST_TEST((c.r.result.shape() == Shape{1, 2, 4, 1}));
  BOOST_TEST(values(c.r.result) == std::vector<double>(8, 0.0), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(seed_example)

// conv2d_transpose from [12,7,7,128] to [12,14,14,64], stride 2, SAME. With all-ones operands each
// element is 128 x (taps that reach it), counted here by scattering the forward windows.
void check_seed(int64_t k) {
  const std::string text = "conv2d_transpose:input=12x14x14x64,filter=" + std::to_string(k) + "x" +
                           std::to_string(k) + "x64x128,stride=2x2,padding=SAME";
  const Problem p = parse_problem(text);
  const Geometry g = geometry(p);
  BOOST_TEST((storage_shape(p, g, Role::out_backprop) == Shape{12, 7, 7, 128}));
  BOOST_TEST((storage_shape(p, g, Role::input) == Shape{12, 14, 14, 64}));
  // Forward scatter: output (i, j) reads rows i*2 + a - top; SAME total pad = max(0, 6*2 + k - 14).
  const int64_t pad = std::max<int64_t>(0, 12 + k - 14), top = pad / 2;
  std::vector<int64_t> hits(14, 0);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t a = 0; a < k; ++a) {
      const int64_t r = i * 2 + a - top;
      if (r >= 0 && r < 14) ++hits[r];
    }
  const Computed c = compute(p, ones, ones);
  bool all = true;
  for (int64_t n = 0; n < 12 && all; ++n)
    for (int64_t h = 0; h < 14; ++h)
      for (int64_t w = 0; w < 14; ++w)
        for (int64_t ch = 0; ch < 64; ++ch) {
          const double want = 128.0 * hits[h] * hits[w];
          all = all && c.r.result.get(((n * 14 + h) * 14 + w) * 64 + ch) == want;
        }
  BOOST_TEST(all, text);
}

BOOST_AUTO_TEST_CASE(filter_1x1) {
  check_seed(1);
}
BOOST_AUTO_TEST_CASE(filter_3x3) {
  check_seed(3);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(cross_checks)

// Random valid conv2d problems over every padding kind, groups, strides and dilations.
Problem random_conv(std::mt19937_64& rng, Op op) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    Problem p;
    p.op = op;
    const int64_t groups = pick(1, 3), cf = pick(1, 3);
    p.input = {pick(1, 2), pick(1, 9), pick(1, 9), groups * cf};
    p.filter = {pick(1, 4), pick(1, 4), cf, groups * pick(1, 3)};
    p.stride_h = pick(1, 3);
    p.stride_w = pick(1, 3);
    p.dilation_h = pick(1, 3);
    p.dilation_w = pick(1, 3);
    p.padding.kind = static_cast<PaddingKind>(pick(0, 2));
    if (p.padding.kind == PaddingKind::EXPLICIT) {
      p.padding = {PaddingKind::EXPLICIT, pick(0, 5), pick(0, 5), pick(0, 5), pick(0, 5)};
    }
    try {
      geometry(p);
      return p;
    } catch (const InvalidArgument&) {
      // negative output size: draw again
    }
  }
}

textbook::Conv textbook_of(const Problem& p) {
  textbook::Conv c;
  c.N = p.input[0], c.H = p.input[1], c.W = p.input[2], c.C = p.input[3];
  c.KH = p.filter[0], c.KW = p.filter[1], c.Cf = p.filter[2], c.O = p.filter[3];
  c.sh = p.stride_h, c.sw = p.stride_w, c.dh = p.dilation_h, c.dw = p.dilation_w;
  c.pad = p.padding.kind == PaddingKind::VALID  ? textbook::Conv::Pad::valid
          : p.padding.kind == PaddingKind::SAME ? textbook::Conv::Pad::same
                                                : textbook::Conv::Pad::explicit_;
  c.top = p.padding.top, c.bottom = p.padding.bottom;
  c.left = p.padding.left, c.right = p.padding.right;
  return c;
}

Fill small_ints(uint64_t seed) {
  return [seed](int64_t i) {
    std::mt19937_64 r(seed * 1000003 + static_cast<uint64_t>(i));
    return static_cast<double>(static_cast<int64_t>(r() % 9) - 4);
  };
}

BOOST_AUTO_TEST_CASE(forward_equals_textbook_bitwise_on_integers) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem p = random_conv(rng, Op::conv2d);
    const Computed c = compute(p, small_ints(trial), small_ints(trial + 7777));
    const std::vector<double> want = textbook::conv2d(textbook_of(p), values(c.a), values(c.b));
    const std::vector<int64_t> s = textbook::output_shape(textbook_of(p));
    BOOST_TEST_CONTEXT(to_string(p)) {
      BOOST_TEST_REQUIRE((c.r.result.shape() == Shape(s.begin(), s.end())));
      BOOST_TEST(values(c.r.result) == want, boost::test_tools::per_element());
    }
  }
}

// On real data the reference must equal the exact sum of the textbook's terms, rounded once.
BOOST_AUTO_TEST_CASE(forward_equals_textbook_exact_sum_on_real_data) {
  std::mt19937_64 rng(99);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 120; ++trial) {
    Problem p = random_conv(rng, Op::conv2d);
    p.dtype = kAllDTypes[trial % 4];  // f16, bf16, f32, f64
    auto real = [&](uint64_t seed) {
      return [seed, t = p.dtype](int64_t i) {
        std::mt19937_64 r(seed + static_cast<uint64_t>(i) * 7919);
        std::normal_distribution<double> nd;
        return round_into(nd(r), t);
      };
    };
    const Computed c = compute(p, real(trial), real(trial + 31));
    const std::vector<int64_t> s = textbook::output_shape(textbook_of(p));
    std::vector<ExactAccumulator> acc(s[0] * s[1] * s[2] * s[3]);
    textbook::for_each_term(textbook_of(p), values(c.a), values(c.b),
                            [&](int64_t o, double x, double w) { acc[o].add_product(x, w); });
    bool all = true;
    for (std::size_t i = 0; i < acc.size(); ++i) {
      const double want = acc[i].round_to(p.dtype), got = c.r.result.get(i);
      if (!(want == got && std::signbit(want) == std::signbit(got))) {
        all = false;
        BOOST_ERROR(to_string(p) << " element " << i << ": got " << got << ", exact " << want);
        break;
      }
    }
    BOOST_TEST(all);
  }
}

// <conv2d(x,w), dy> = <x, backprop_input(w,dy)> = <w, backprop_filter(x,dy)>, with conv2d from the
// textbook: a check of both backprop index laws against the independent forward. Small integers
// keep every sum exact in double.
BOOST_AUTO_TEST_CASE(backprop_laws_are_adjoints_of_the_textbook_forward) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    Problem p = random_conv(rng, Op::conv2d);
    const Geometry g = geometry(p);
    const Fill fx = small_ints(3 * trial), fw = small_ints(3 * trial + 1),
               fdy = small_ints(3 * trial + 2);
    const Tensor x = make_operand(p, g, Role::input, fx), w = make_operand(p, g, Role::filter, fw),
                 dy = make_operand(p, g, Role::out_backprop, fdy);
    const std::vector<double> y = textbook::conv2d(textbook_of(p), values(x), values(w));
    Problem bi = p, bf = p;
    bi.op = Op::conv2d_backprop_input;
    bf.op = Op::conv2d_backprop_filter;
    const std::vector<double> dx = values(run_reference(bi, w, dy).result);
    const std::vector<double> dw = values(run_reference(bf, x, dy).result);
    auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
      double s = 0;
      for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
      return s;
    };
    const double lhs = dot(y, values(dy)), mid = dot(values(x), dx), rhs = dot(values(w), dw);
    BOOST_TEST_CONTEXT(to_string(p)) {
      BOOST_TEST(lhs == mid);
      BOOST_TEST(lhs == rhs);
    }
  }
}

// Depthwise is grouped conv2d with G = C (spec B §3.5): the RSCM filter buffer is the HWIO filter
// [KH,KW,1,C*M] of that grouped conv, byte for byte.
BOOST_AUTO_TEST_CASE(depthwise_equals_grouped_conv) {
  std::mt19937_64 rng(11);
  const std::pair<Op, Op> pairs[] = {
      {Op::depthwise_conv2d, Op::conv2d},
      {Op::depthwise_conv2d_backprop_input, Op::conv2d_backprop_input},
      {Op::depthwise_conv2d_backprop_filter, Op::conv2d_backprop_filter}};
  for (int trial = 0; trial < 60; ++trial) {
    for (auto [dw_op, conv_op] : pairs) {
      Problem conv = random_conv(rng, conv_op);
      const int64_t c = conv.input[3], m = 1 + trial % 3;
      conv.filter[2] = 1;
      conv.filter[3] = c * m;
      Problem dw = conv;
      dw.op = dw_op;
      dw.filter[2] = c;
      dw.filter[3] = m;
      dw.dtype = conv.dtype = trial % 2 ? DType::f32 : DType::f64;
      const Computed a = compute(dw, small_ints(trial), small_ints(trial + 1));
      const Computed b = compute(conv, small_ints(trial), small_ints(trial + 1));
      BOOST_TEST_CONTEXT(to_string(dw)) {
        BOOST_TEST(values(a.r.result) == values(b.r.result), boost::test_tools::per_element());
      }
    }
  }
}

// NCHW is NHWC transposed, and conv2d_transpose is backprop input, on real data, every op.
BOOST_AUTO_TEST_CASE(nchw_and_transpose_relations) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < 40; ++trial) {
    for (Op op : {Op::conv2d, Op::conv2d_backprop_input, Op::conv2d_backprop_filter}) {
      Problem p = random_conv(rng, op);
      p.dtype = DType::f32;
      const Geometry g = geometry(p);
      std::normal_distribution<double> normal;
      std::vector<double> noise(4096);
      for (double& v : noise) v = static_cast<float>(normal(rng));
      const Fill fa = [&](int64_t i) { return noise[i % 4096]; };
      const Fill fb = [&](int64_t i) { return noise[(i * 7 + 13) % 4096]; };
      const Computed nhwc = compute(p, fa, fb);
      Problem q = p;
      q.format = Format::NCHW;
      const OpIO io = op_io(op);
      auto to_nchw = [&](const Tensor& t, Role r) {
        if (r == Role::filter) return t;
        const auto v = nhwc_to_nchw(values(t), logical_shape(g, r));
        return make_operand(q, g, r, [&](int64_t i) { return v[i]; });
      };
      const ReferenceResult nchw = run_reference(q, to_nchw(nhwc.a, io.a), to_nchw(nhwc.b, io.b));
      BOOST_TEST(same_bits(nchw.result, to_nchw(nhwc.r.result, io.result_like)), to_string(q));
      if (op == Op::conv2d_backprop_input) {
        Problem t = p;
        t.op = Op::conv2d_transpose;
        BOOST_TEST(same_bits(run_reference(t, nhwc.a, nhwc.b).result, nhwc.r.result));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(rounding_and_accumulation)

// Three terms 1 + 2^-11 + 2^-40 (2^-40 = 2^-20 * 2^-20, subnormal f16 operands): the exact value is
// above the f16 midpoint 1 + 2^-11, so it rounds up to 1 + 2^-10; summing in f32 first would land
// on the midpoint and round to even (1.0). The reference rounds once.
BOOST_AUTO_TEST_CASE(f16_rounds_once_from_the_exact_value) {
  const double x[] = {1.0, std::ldexp(1.0, -11), std::ldexp(1.0, -20)};
  const double w[] = {1.0, 1.0, std::ldexp(1.0, -20)};
  const Computed c = compute(
      "conv2d:input=1x1x1x3,filter=1x1x3x1,dtype=f16", [&](int64_t i) { return x[i]; },
      [&](int64_t i) { return w[i]; });
  BOOST_TEST(c.r.result.as<uint16_t>()[0] == 0x3C01);
  BOOST_TEST(c.r.exact_hi[0] == 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  BOOST_TEST(c.r.terms[0] == 3);
  BOOST_TEST(c.r.magnitude[0] == c.r.exact_hi[0]);
}

// f64 operands far outside the fast path's range: 2^600 * 2^400 - 2^600 * 2^400 + 1 * 1 = 1
// exactly (plain double arithmetic overflows to Inf - Inf = NaN).
BOOST_AUTO_TEST_CASE(f64_huge_cancellation_is_exact) {
  const double x[] = {std::ldexp(1.0, 600), 1.0, -std::ldexp(1.0, 600)};
  const double w[] = {std::ldexp(1.0, 400), 1.0, std::ldexp(1.0, 400)};
  const Computed c = compute(
      "conv2d:input=1x1x1x3,filter=1x1x3x1,dtype=f64", [&](int64_t i) { return x[i]; },
      [&](int64_t i) { return w[i]; });
  BOOST_TEST(c.r.result.get(0) == 1.0);
  BOOST_TEST(c.r.exact_hi[0] == 1.0);
  BOOST_TEST(c.r.exact_lo[0] == 0.0);
  BOOST_TEST(c.r.exact_fallbacks == 1);
}

// Exact cancellation gives +0; a tiny f64 remainder survives where double summation loses it.
BOOST_AUTO_TEST_CASE(cancellation) {
  const double x[] = {1e17, 3.0, -1e17, 1e-30};
  const Computed c = compute(
      "conv2d:input=1x1x1x4,filter=1x1x4x1,dtype=f64", [&](int64_t i) { return x[i]; }, ones);
  BOOST_TEST(c.r.result.get(0) == 3.0 + 1e-30);
  BOOST_TEST(c.r.exact_hi[0] == 3.0);
  BOOST_TEST(c.r.exact_lo[0] == 1e-30);
  const double y[] = {0.1, -0.1, 0.7, -0.7};
  const Computed z = compute(
      "conv2d:input=1x1x1x4,filter=1x1x4x1,dtype=f32",
      [&](int64_t i) { return static_cast<float>(y[i]); }, ones);
  BOOST_TEST(z.r.result.get(0) == 0.0);
  BOOST_TEST(!std::signbit(z.r.result.get(0)));
}

BOOST_AUTO_TEST_CASE(int32_wraps_modulo_2_pow_32) {
  // 3 * 2^30 = 3221225472 -> 3221225472 - 2^32 = -1073741824; 4 * 2^30 -> 0.
  const Computed c = compute(
      "conv2d:input=1x1x2x4,filter=1x1x4x1,dtype=i32",
      [](int64_t i) { return i < 7 ? std::ldexp(1.0, 30) : 0.0; }, ones);
  BOOST_TEST(c.r.result.as<int32_t>()[0] == 0);            // elements 0..3: 4 * 2^30
  BOOST_TEST(c.r.result.as<int32_t>()[1] == -1073741824);  // elements 4..6: 3 * 2^30
  BOOST_TEST(c.r.exact_hi[0] == std::ldexp(1.0, 32));
  const Computed neg = compute(
      "conv2d_backprop_input:input=1x1x1x1,filter=1x1x1x3,dtype=i32",
      [](int64_t) { return -2147483648.0; }, ones);
  BOOST_TEST(neg.r.result.as<int32_t>()[0] == -2147483648);  // -3 * 2^31 mod 2^32
}

BOOST_AUTO_TEST_CASE(non_finite_operands) {
  const double inf = INFINITY;
  auto one_channel = [&](double a, double b, const char* dtype) {
    const std::string text = std::string("conv2d:input=1x1x1x2,filter=1x1x2x1,dtype=") + dtype;
    const double x[] = {a, b};
    return compute(
               text, [&](int64_t i) { return x[i]; }, ones)
        .r.result.get(0);
  };
  BOOST_TEST(std::isnan(one_channel(inf, -inf, "f32")));
  BOOST_TEST(one_channel(inf, 1.0, "f16") == inf);
  BOOST_TEST(one_channel(-inf, 1.0, "bf16") == -inf);
  BOOST_TEST(std::isnan(one_channel(NAN, 1.0, "f64")));
  // Inf * 0 is NaN (the weight 0 is a real term, not padding).
  const Computed z = compute(
      "conv2d:input=1x1x1x1,filter=1x1x1x1", [&](int64_t) { return inf; },
      [](int64_t) { return 0.0; });
  BOOST_TEST(std::isnan(z.r.result.get(0)));
  // f16 overflow of the exact value: 65504 + 16 = 65520 is the midpoint to Inf, ties to Inf.
  BOOST_TEST(one_channel(65504.0, 16.0, "f16") == inf);
  BOOST_TEST(one_channel(65504.0, 15.0, "f16") == 65504.0);
}

// Results are bit-identical for any thread count (each element's arithmetic is fixed).
BOOST_AUTO_TEST_CASE(thread_count_invariance) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  std::vector<double> noise(10007);
  for (double& v : noise) v = normal(rng);
  const Fill fa = [&](int64_t i) { return noise[i % noise.size()]; };
  const Fill fb = [&](int64_t i) { return noise[(i * 31 + 5) % noise.size()]; };
  for (const char* text :
       {"conv2d_backprop_input:input=2x9x9x8,filter=3x3x4x6,stride=2x2,padding=SAME,dtype=f16",
        "conv2d_backprop_filter:input=2x9x9x8,filter=3x3x8x6,dilation=2x1,padding=1:2:0:1",
        "depthwise_conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x2,stride=2x1,dtype=bf16"}) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    const Computed one = compute(text, fa, fb);
    omp_set_num_threads(3);
    const Computed three = compute(text, fa, fb);
    omp_set_num_threads(before);
    BOOST_TEST(same_bits(one.r.result, three.r.result), text);
    BOOST_TEST(one.r.exact_hi == three.r.exact_hi);
  }
}

BOOST_AUTO_TEST_SUITE_END()
