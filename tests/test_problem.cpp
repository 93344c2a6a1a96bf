// The problem vocabulary: descriptor grammar, TF's shape arithmetic and validation messages, TF
// admission. Tables are grouped by the rule they exercise; expected messages are TF's words (spec
// B §2.1, §2.5, §2.6) with the numbers worked out by hand from the shapes.
#define BOOST_TEST_MODULE problem
#include <boost/test/unit_test.hpp>
#include <iterator>
#include <random>
#include <string>

#include "core/admission.h"
#include "core/error.h"
#include "core/problem.h"

using namespace convcheck;

namespace {

// Runs f, which must throw InvalidArgument whose message contains `needle`.
template <class F>
void expect_error(F&& f, const std::string& needle, const std::string& context) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos,
               context << ": message '" << e.what() << "' lacks '" << needle << "'");
    return;
  }
  BOOST_ERROR(context << ": no error, expected one containing '" << needle << "'");
}

void expect_invalid(const std::string& descriptor, const std::string& needle) {
  expect_error([&] { geometry(parse_problem(descriptor)); }, needle, descriptor);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(grammar)

BOOST_AUTO_TEST_CASE(canonical_form_has_every_key_in_order) {
  const Problem p = parse_problem(
      "conv2d_backprop_input:input=2x7x7x128,filter=3x3x128x64,stride=2x2,padding=SAME");
  BOOST_TEST(to_string(p) ==
             "conv2d_backprop_input:input=2x7x7x128,filter=3x3x128x64,stride=2x2,dilation=1x1,"
             "padding=SAME,format=NHWC,dtype=f32");
  BOOST_TEST(p.input[3] == 128);
  BOOST_TEST(p.filter[3] == 64);
  BOOST_TEST(p.stride_h == 2);
}

BOOST_AUTO_TEST_CASE(keys_in_any_order_and_tf_dtype_names) {
  const Problem a = parse_problem(
      "depthwise_conv2d:dtype=bfloat16,format=NCHW,padding=1:2:3:4,filter=3x3x8x2,input=1x9x9x8,"
      "dilation=2x1,stride=1x3");
  BOOST_TEST(to_string(a) ==
             "depthwise_conv2d:input=1x9x9x8,filter=3x3x8x2,stride=1x3,dilation=2x1,"
             "padding=1:2:3:4,format=NCHW,dtype=bf16");
  BOOST_TEST((parse_problem("conv2d:input=1x1x1x1,filter=1x1x1x1,dtype=half").dtype == DType::f16));
  BOOST_TEST(
      (parse_problem("conv2d:input=1x1x1x1,filter=1x1x1x1,dtype=float64").dtype == DType::f64));
  BOOST_TEST(
      (parse_problem("conv2d:input=1x1x1x1,filter=1x1x1x1,dtype=int32").dtype == DType::i32));
}

BOOST_AUTO_TEST_CASE(round_trip_on_random_problems) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 2000; ++i) {
    Problem p;
    p.op = kAllOps[pick(0, 6)];
    for (auto& d : p.input) d = pick(0, 300);
    for (auto& d : p.filter) d = pick(0, 300);
    p.stride_h = pick(-2, 9);
    p.stride_w = pick(-2, 9);
    p.dilation_h = pick(-2, 9);
    p.dilation_w = pick(-2, 9);
    p.padding.kind = static_cast<PaddingKind>(pick(0, 2));
    if (p.padding.kind == PaddingKind::EXPLICIT) {
      p.padding = {PaddingKind::EXPLICIT, pick(-3, 20), pick(0, 20), pick(0, 20), pick(0, 20)};
    }
    p.format = pick(0, 1) ? Format::NCHW : Format::NHWC;
    p.dtype = kAllDTypes[pick(0, 4)];
    const std::string text = to_string(p);
    BOOST_TEST_REQUIRE((parse_problem(text) == p), text);
    BOOST_TEST(to_string(parse_problem(text)) == text);
  }
}

// Malformed descriptors: each names the key and the rule.
BOOST_AUTO_TEST_CASE(malformed_descriptors) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"conv2d", "no ':' found"},
      {"conv3d:input=1x1x1x1,filter=1x1x1x1", "unknown op 'conv3d'"},
      {"conv2d:", "no keys after ':'"},
      {"conv2d:input=1x1x1x1,,filter=1x1x1x1", "empty item"},
      {"conv2d:input=1x1x1x1,filter", "'filter' is not key=value"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,strides=1x1", "unknown key 'strides'"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,input=1x1x1x1", "key 'input' given twice"},
      {"conv2d:filter=1x1x1x1", "missing required key 'input'"},
      {"conv2d:input=1x1x1x1", "missing required key 'filter' (RxSxCfxK)"},
      {"depthwise_conv2d:input=1x1x1x1", "missing required key 'filter' (RxSxCxM)"},
      {"conv2d:input=1x1x1,filter=1x1x1x1", "input=1x1x1: expected NxHxWxC (4 integers"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,stride=2", "expected SHxSW"},
      {"conv2d:input=1xAx1x1,filter=1x1x1x1", "expected an integer, got 'A'"},
      {"conv2d:input=1x99999999999999999999x1x1,filter=1x1x1x1", "overflows 64 bits"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,padding=FULL", "expected VALID, SAME or T:B:L:R"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,padding=1:1:1", "expected VALID, SAME or T:B:L:R"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,format=NDHWC", "expected NHWC or NCHW"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,dtype=f8", "dtype=f8: expected f16, bf16"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,dtype=", "key 'dtype' has an empty value"},
      {"conv2d:input=1x1x1x1,filter=1x1x1x1,stride=1x 1", "expected an integer, got ' 1'"},
  };
  for (const Case& c : cases) expect_error([&] { parse_problem(c.text); }, c.needle, c.text);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(shape_arithmetic)

struct SizeCase {
  const char* text;
  int64_t oh, ow, top, bottom, left, right;
};

// Spec B §2.1-2.3, worked by hand: truncating division, SAME's odd element after.
BOOST_AUTO_TEST_CASE(output_sizes_and_pads) {
  const SizeCase cases[] = {
      // VALID: (in - eff + s) / s
      {"conv2d:input=1x7x7x1,filter=2x2x1x1,stride=3x3", 2, 2, 0, 0, 0, 0},
      // filter wider than input but numerator > -s: out 0, not an error (T1
      // DegenerateBackpropInput)
      {"conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2", 1, 0, 0, 0, 0, 0},
      // in=1, k=4, s=2: (-1)/2 truncates to 0
      {"conv2d:input=1x1x1x1,filter=4x4x1x1,stride=2x2", 0, 0, 0, 0, 0, 0},
      // SAME: ceil(in/s); P = (out-1)s + eff - in, before = P/2
      {"conv2d:input=1x4x4x1,filter=2x2x1x1,stride=3x3,padding=SAME", 2, 2, 0, 1, 0, 1},
      {"conv2d:input=1x5x6x1,filter=3x4x1x1,padding=SAME", 5, 6, 1, 1, 1, 2},
      {"conv2d:input=1x4x4x1,filter=1x1x1x1,stride=2x2,padding=SAME", 2, 2, 0, 0, 0, 0},
      // SAME with dilation: eff = (3-1)*2+1 = 5, P = 4
      {"conv2d:input=1x28x28x1,filter=3x3x1x1,dilation=2x2,padding=SAME", 28, 28, 2, 2, 2, 2},
      // EXPLICIT: (in + pads - eff + s) / s
      {"conv2d:input=1x2x3x1,filter=2x2x1x1,padding=1:8:4:2", 10, 8, 1, 8, 4, 2},
      {"conv2d:input=1x0x2x1,filter=1x1x1x1,padding=1:1:1:1", 2, 4, 1, 1, 1, 1},
      // stride with dilation: eff = 3, (9 - 3 + 2) / 2 = 4
      {"conv2d:input=1x9x9x1,filter=2x2x1x1,stride=2x2,dilation=2x2", 4, 4, 0, 0, 0, 0},
  };
  for (const SizeCase& c : cases) {
    const Geometry g = geometry(parse_problem(c.text));
    BOOST_TEST_CONTEXT(c.text) {
      BOOST_TEST(g.OH == c.oh);
      BOOST_TEST(g.OW == c.ow);
      BOOST_TEST(g.pad_top == c.top);
      BOOST_TEST(g.pad_bottom == c.bottom);
      BOOST_TEST(g.pad_left == c.left);
      BOOST_TEST(g.pad_right == c.right);
    }
  }
}

BOOST_AUTO_TEST_CASE(groups_and_multipliers) {
  const Geometry g = geometry(parse_problem("conv2d_backprop_filter:input=2x5x4x4,filter=3x3x2x6"));
  BOOST_TEST(g.G == 2);
  BOOST_TEST(g.Cf == 2);
  BOOST_TEST(g.O == 6);
  const Geometry d = geometry(parse_problem("depthwise_conv2d:input=1x5x5x3,filter=3x3x3x4"));
  BOOST_TEST(d.G == 3);
  BOOST_TEST(d.M == 4);
  BOOST_TEST(d.O == 12);
  BOOST_TEST(d.Cf == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(validation)

// Spec B §2.1, §2.5 and §2.6 rules that apply under Part A, with TF's words.
BOOST_AUTO_TEST_CASE(problem_rules) {
  expect_invalid(
      "conv2d_backprop_input:input=1x4x4x1,filter=2x2x1x1,stride=0x1",
      "conv2d_backprop_input: Row and column strides should be larger than 0, got stride = 0x1");
  expect_invalid(
      "conv2d_backprop_filter:input=1x4x4x1,filter=2x2x1x1,dilation=1x0",
      "conv2d_backprop_filter: Dilated rates should be larger than 0, got dilation = 1x0");
  // T1 testOpEdgeCases: a negative explicit padding.
  expect_invalid("conv2d_backprop_input:input=32x20x20x3,filter=18x18x3x2,padding=0:0:-1:0",
                 "All elements of explicit_paddings must be nonnegative, got padding = 0:0:-1:0");
  expect_invalid("conv2d_backprop_input:input=1x4x4x2,filter=2x2x0x1",
                 "conv2d_backprop_input: filter depth must be strictly greated than zero, got 0");
  expect_invalid("conv2d:input=1x4x4x2,filter=2x2x0x1",
                 "conv2d: filter depth must be stricly positive");
  // T1 testShapeFunctionEdgeCases: C=3 vs Cf=2.
  expect_invalid("conv2d_backprop_filter:input=1x4x4x3,filter=2x2x2x2",
                 "input depth must be evenly divisible by filter depth: 3 vs 2");
  expect_invalid("conv2d:input=1x4x4x4,filter=2x2x2x3",
                 "output depth must be evenly divisible by number of groups: 3 vs 2");
  // T1 testOpEdgeCases: forward filter [1,0,1,1].
  expect_invalid("conv2d:input=1x4x4x1,filter=1x0x1x1",
                 "filter must not have zero elements (i.e. all dimensions must be non-zero)");
  // in=1, k=3, s=1: (1 - 3 + 1) / 1 = -1.
  expect_invalid(
      "conv2d_backprop_input:input=1x1x5x1,filter=3x1x1x1",
      "conv2d_backprop_input: Computed output size would be negative: -1 [input_size: 1, "
      "effective_filter_size: 3, stride: 1]");
  // Dilation enters the effective size: eff = (2-1)*4+1 = 5 > 3 + 0.
  expect_invalid(
      "conv2d_backprop_filter:input=1x3x3x1,filter=2x2x1x1,dilation=4x1",
      "Computed output size would be negative: -1 [input_size: 3, effective_filter_size: 5");
  expect_invalid("depthwise_conv2d_backprop_input:input=1x4x4x3,filter=2x2x2x1",
                 "input and filter must have the same depth: 3 vs 2");
  expect_invalid(
      "conv2d_backprop_filter:input=1x4x4x1,filter=2x2x1x1,dtype=i32",
      "conv2d_backprop_filter: dtype i32 is not allowed: TF's Conv2DBackpropFilter takes T");
  expect_invalid("depthwise_conv2d:input=1x4x4x1,filter=2x2x1x1,dtype=int32",
                 "dtype i32 is not allowed");
  expect_invalid("conv2d:input=1x-4x4x1,filter=2x2x1x1",
                 "Dimension 1 (H) of input must be >= 0, got -4");
  expect_invalid("conv2d:input=1x4x4x0,filter=2x2x1x1", "input depth 0 gives zero groups");
  expect_invalid("conv2d:input=1x4611686018427387904x4x1,filter=1x1x1x1",
                 "tensor's size overflows 64 bits");
  expect_invalid("conv2d:input=1x4x4x1,filter=4611686018427387904x1x1x1,dilation=4x1",
                 "effective filter size");
}

// Operand shape checks (what `compute` applies to .npy operands), TF's messages.
BOOST_AUTO_TEST_CASE(operand_shapes) {
  auto check = [](const char* text, Role r, Shape got, const std::string& needle) {
    const Problem p = parse_problem(text);
    const Geometry g = geometry(p);
    expect_error([&] { check_operand_shape(p, g, r, got, "dy.npy"); }, needle, text);
  };
  // Spec A.4's example: input 7, filter 3, stride 2 (VALID): computed (7-3+2)/2 = 3.
  check(
      "conv2d_backprop_input:input=1x7x7x1,filter=3x3x1x1,stride=2x2", Role::out_backprop,
      {1, 4, 3, 1},
      "conv2d_backprop_input: Size of out_backprop doesn't match computed: actual = 4, computed = "
      "3 spatial_dim: 1 input: 7 filter: 3 output: 4 stride: 2 dilation: 1");
  // NCHW: spatial_dim counts in the format's order (W is dim 3).
  check("conv2d_backprop_filter:input=1x7x7x1,filter=3x3x1x1,stride=2x2,dilation=1x2,format=NCHW",
        Role::out_backprop, {1, 1, 3, 5},
        "Size of out_backprop doesn't match computed: actual = 5, computed = 2 spatial_dim: 3 "
        "input: 7 filter: 3 output: 5 stride: 2 dilation: 2");
  check("conv2d_backprop_input:input=2x7x7x1,filter=3x3x1x1", Role::out_backprop, {3, 5, 5, 1},
        "input and out_backprop must have the same batch size. Input batch: 2, outbackprop batch: "
        "3, batch_dim: 0");
  check("conv2d_backprop_input:input=1x7x7x1,filter=3x3x1x4", Role::out_backprop, {1, 5, 5, 3},
        "filter and out_backprop must have the same out_depth: 4 vs 3");
  check("conv2d_backprop_input:input=1x7x7x1,filter=3x3x1x4", Role::out_backprop, {1, 5, 5},
        "out_backprop must be 4-dimensional, got shape [1, 5, 5]");
  check("depthwise_conv2d_backprop_filter:input=1x7x7x2,filter=3x3x2x2", Role::out_backprop,
        {1, 6, 5, 4},
        "Number of rows of out_backprop doesn't match computed: actual = 6, computed = 5");
  check("depthwise_conv2d_backprop_filter:input=1x7x7x2,filter=3x3x2x2", Role::out_backprop,
        {1, 5, 4, 4},
        "Number of cols of out_backprop doesn't match computed: actual = 4, computed = 5");
  check("depthwise_conv2d_backprop_input:input=1x7x7x2,filter=3x3x2x2", Role::out_backprop,
        {1, 5, 5, 2}, "depth_multiplier * in_depth not equal to out_depth: 2 * 2 != 2");
  check("conv2d_backprop_filter:input=1x7x7x2,filter=3x3x2x2", Role::input, {1, 7, 7, 3},
        "input from dy.npy has shape [1, 7, 7, 3], expected [1, 7, 7, 2] (NHWC)");
  check("conv2d_backprop_input:input=1x7x7x2,filter=3x3x2x2", Role::filter, {3, 3, 2, 3},
        "expected [3, 3, 2, 2] (HWIO)");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(tf_admission_report)

struct AdmissionCase {
  const char* text;
  Admission::Kind cpu;
  const char* cpu_message;
  Admission::Kind gpu;
  const char* gpu_message;
};

BOOST_AUTO_TEST_CASE(cpu_and_gpu_kernels) {
  using K = Admission::Kind;
  const AdmissionCase cases[] = {
      {"conv2d_backprop_input:input=1x4x4x2,filter=2x2x2x2", K::accepted, "", K::accepted, ""},
      {"conv2d:input=1x4x4x2,filter=2x2x2x2,format=NCHW", K::refused,
       "The Conv2D op currently only supports the NHWC tensor format on the CPU. The op was given "
       "the format: NCHW",
       K::accepted, ""},
      {"conv2d:input=1x4x4x4,filter=2x2x2x2,dtype=i32", K::accepted, "", K::refused,
       "The Conv2D op currently does not support grouped convolutions for integer types. A grouped "
       "convolution was attempted to be run because the input depth of 4 does not match the filter "
       "input depth of 2"},
      {"conv2d_backprop_input:input=1x4x4x2,filter=2x2x2x2,format=NCHW", K::refused,
       "Conv2DCustomBackpropInputOp only supports NHWC.", K::accepted, ""},
      {"conv2d_transpose:input=1x8x8x2,filter=2x2x2x2,dilation=2x2", K::refused,
       "Current CPU implementations do not yet support dilation rates larger than 1.", K::accepted,
       ""},
      {"conv2d_backprop_input:input=1x5x4x4,filter=3x3x2x6", K::refused,
       "Gradients for grouped convolutions are not supported on CPU. Please file a feature request "
       "if you run into this issue. Computed input depth 4 doesn't match filter input depth 2",
       K::accepted, ""},
      {"conv2d_backprop_input:input=1x8x8x2,filter=2x2x2x2,dilation=2x1,dtype=i32", K::refused,
       "Current CPU implementations do not yet support dilation rates larger than 1.", K::refused,
       "Conv2DBackpropInputOp [CPU or GPU(int32)] not yet support dilation rates larger than 1."},
      {"conv2d_backprop_filter:input=2x5x4x4,filter=3x3x2x6", K::refused,
       "filter_size does not have enough elements, requested 216, got 108", K::accepted, ""},
      {"conv2d_backprop_filter:input=2x5x4x4,filter=3x3x4x6,format=NCHW", K::refused,
       "Conv2DCustomBackpropFilterOp only supports NHWC.", K::accepted, ""},
      {"depthwise_conv2d_backprop_input:input=1x8x8x2,filter=3x3x2x1,stride=1x2", K::refused,
       "Current implementation only supports equal length strides in the row and column "
       "dimensions.",
       K::refused,
       "Current implementation only supports equal length strides in the row and column "
       "dimensions."},
      {"depthwise_conv2d_backprop_filter:input=1x8x8x2,filter=3x3x2x1,format=NCHW", K::refused,
       "Depthwise convolution on CPU is only supported for NHWC format", K::accepted, ""},
      // VALID with dilation 2: TF recomputes rows without dilation, (8-3+1) = 6 vs ours (8-5+1)
      // = 4.
      {"depthwise_conv2d_backprop_input:input=1x8x8x2,filter=3x3x2x1,dilation=2x2", K::refused,
       "DepthwiseConv2DBackpropInput: Number of rows of out_backprop doesn't match computed: "
       "actual "
       "= 4, computed = 6",
       K::refused,
       "DepthwiseConv2DBackpropInput: Number of rows of out_backprop doesn't match computed: "
       "actual "
       "= 4, computed = 6"},
      // SAME hides the dilation from the size check: TF runs it, without dilation.
      {"depthwise_conv2d_backprop_filter:input=1x8x8x2,filter=3x3x2x1,dilation=2x2,padding=SAME",
       K::differs, "ignore dilations", K::differs, "ignore dilations"},
      {"depthwise_conv2d:input=1x8x8x2,filter=3x3x2x1,dilation=2x2", K::refused,
       "Current kernel implementation does not support dilations, received [1, 2, 2, 1]",
       K::refused,
       "Current kernel implementation does not support dilations, received [1, 2, 2, 1]"},
  };
  for (const AdmissionCase& c : cases) {
    const TfAdmission a = tf_admission(parse_problem(c.text));
    BOOST_TEST_CONTEXT(c.text) {
      BOOST_TEST(admission_kind_name(a.cpu.kind) == admission_kind_name(c.cpu));
      BOOST_TEST(a.cpu.message.find(c.cpu_message) != std::string::npos, a.cpu.message);
      BOOST_TEST(admission_kind_name(a.gpu.kind) == admission_kind_name(c.gpu));
      BOOST_TEST(a.gpu.message.find(c.gpu_message) != std::string::npos, a.gpu.message);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

// Which library call implements each op, the grouped op each depthwise op equals and the adjoint
// triple it belongs to (spec A: <conv2d(x,w),dy> = <x,bpi(w,dy)> = <w,bpf(x,dy)>; depthwise =
// grouped conv with G = C), written out per op rather than read back from core/op_traits.h.
BOOST_AUTO_TEST_CASE(op_kind_grouped_equivalent_and_triple) {
  struct Row {
    Op op;
    OpKind kind;
    Op grouped;
    Op fwd, bpi, bpf;  // its adjoint triple
  };
  constexpr Op c = Op::conv2d, ci = Op::conv2d_backprop_input, cf = Op::conv2d_backprop_filter;
  constexpr Op d = Op::depthwise_conv2d, di = Op::depthwise_conv2d_backprop_input,
               df = Op::depthwise_conv2d_backprop_filter;
  // clang-format off
  const Row rows[] = {
      {c,                    OpKind::forward,         c,                    c, ci, cf},
      {ci,                   OpKind::backward_data,   ci,                   c, ci, cf},
      {cf,                   OpKind::backward_filter, cf,                   c, ci, cf},
      {Op::conv2d_transpose, OpKind::backward_data,   Op::conv2d_transpose, c, ci, cf},
      {d,                    OpKind::forward,         c,                    d, di, df},
      {di,                   OpKind::backward_data,   ci,                   d, di, df},
      {df,                   OpKind::backward_filter, cf,                   d, di, df},
  };
  // clang-format on
  BOOST_TEST(std::size(rows) == std::size(kAllOps));
  for (const Row& r : rows) {
    BOOST_TEST((op_kind(r.op) == r.kind), op_name(r.op));
    BOOST_TEST((grouped_equivalent(r.op) == r.grouped), op_name(r.op));
    BOOST_TEST((triple_member(r.op, OpKind::forward) == r.fwd), op_name(r.op));
    BOOST_TEST((triple_member(r.op, OpKind::backward_data) == r.bpi), op_name(r.op));
    BOOST_TEST((triple_member(r.op, OpKind::backward_filter) == r.bpf), op_name(r.op));
    BOOST_TEST((parse_op(op_name(r.op)).value_or(Op::conv2d) == r.op), op_name(r.op));
  }
}
