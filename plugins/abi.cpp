#include "plugins/abi.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/error.h"

namespace convcheck::plugin_abi {

namespace {

// The ABI's constants are fixed; core's enums are ordered the same way (checked here).
static_assert(static_cast<int>(Op::conv2d) == CONVCHECK_OP_CONV2D);
static_assert(static_cast<int>(Op::conv2d_backprop_input) == CONVCHECK_OP_CONV2D_BACKPROP_INPUT);
static_assert(static_cast<int>(Op::conv2d_backprop_filter) == CONVCHECK_OP_CONV2D_BACKPROP_FILTER);
static_assert(static_cast<int>(Op::conv2d_transpose) == CONVCHECK_OP_CONV2D_TRANSPOSE);
static_assert(static_cast<int>(Op::depthwise_conv2d) == CONVCHECK_OP_DEPTHWISE_CONV2D);
static_assert(static_cast<int>(Op::depthwise_conv2d_backprop_input) ==
              CONVCHECK_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT);
static_assert(static_cast<int>(Op::depthwise_conv2d_backprop_filter) ==
              CONVCHECK_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER);
static_assert(static_cast<int>(DType::f16) == CONVCHECK_DTYPE_F16);
static_assert(static_cast<int>(DType::bf16) == CONVCHECK_DTYPE_BF16);
static_assert(static_cast<int>(DType::f32) == CONVCHECK_DTYPE_F32);
static_assert(static_cast<int>(DType::f64) == CONVCHECK_DTYPE_F64);
static_assert(static_cast<int>(DType::i32) == CONVCHECK_DTYPE_I32);
static_assert(static_cast<int>(Format::NHWC) == CONVCHECK_FORMAT_NHWC);
static_assert(static_cast<int>(Format::NCHW) == CONVCHECK_FORMAT_NCHW);
static_assert(static_cast<int>(PaddingKind::VALID) == CONVCHECK_PADDING_VALID);
static_assert(static_cast<int>(PaddingKind::SAME) == CONVCHECK_PADDING_SAME);
static_assert(static_cast<int>(PaddingKind::EXPLICIT) == CONVCHECK_PADDING_EXPLICIT);

}  // namespace

convcheck_problem to_abi(const Problem& p, const Geometry& g, const std::string& descriptor) {
  convcheck_problem a{};
  a.op = static_cast<int32_t>(p.op);
  a.dtype = static_cast<int32_t>(p.dtype);
  a.format = static_cast<int32_t>(p.format);
  a.padding = static_cast<int32_t>(p.padding.kind);
  a.n = g.N;
  a.h = g.H;
  a.w = g.W;
  a.c = g.C;
  a.kh = g.KH;
  a.kw = g.KW;
  a.filter_in = g.filter_in();
  a.filter_out = g.filter_out();
  a.oh = g.OH;
  a.ow = g.OW;
  a.oc = g.O;
  a.stride_h = g.sh;
  a.stride_w = g.sw;
  a.dilation_h = g.dh;
  a.dilation_w = g.dw;
  a.pad_top = g.pad_top;
  a.pad_bottom = g.pad_bottom;
  a.pad_left = g.pad_left;
  a.pad_right = g.pad_right;
  a.groups = g.G;
  a.multiplier = g.M;
  a.input_elements = role_elements(g, Role::input);
  a.filter_elements = role_elements(g, Role::filter);
  a.out_backprop_elements = role_elements(g, Role::out_backprop);
  a.result_elements = role_elements(g, op_io(p.op).result_like);
  a.descriptor = descriptor.c_str();
  return a;
}

CheckedProblem from_abi(const convcheck_problem& a) {
  auto range = [](int32_t v, int32_t hi, const char* what) {
    if (v < 0 || v > hi)
      throw InvalidArgument(std::string("plugin ABI: ") + what + " " + std::to_string(v) +
                            " is out of range");
    return v;
  };
  Problem p;
  p.op = static_cast<Op>(range(a.op, CONVCHECK_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, "op"));
  p.dtype = static_cast<DType>(range(a.dtype, CONVCHECK_DTYPE_I32, "dtype"));
  p.format = static_cast<Format>(range(a.format, CONVCHECK_FORMAT_NCHW, "format"));
  p.padding.kind =
      static_cast<PaddingKind>(range(a.padding, CONVCHECK_PADDING_EXPLICIT, "padding"));
  if (p.padding.kind == PaddingKind::EXPLICIT) {
    p.padding.top = a.pad_top;
    p.padding.bottom = a.pad_bottom;
    p.padding.left = a.pad_left;
    p.padding.right = a.pad_right;
  }
  p.input = {a.n, a.h, a.w, a.c};
  p.filter = {a.kh, a.kw, a.filter_in, a.filter_out};
  p.stride_h = a.stride_h;
  p.stride_w = a.stride_w;
  p.dilation_h = a.dilation_h;
  p.dilation_w = a.dilation_w;
  const CheckedProblem checked(p);  // validates
  const Geometry& g = checked.geometry();
  if (g.pad_top != a.pad_top || g.pad_bottom != a.pad_bottom || g.pad_left != a.pad_left ||
      g.pad_right != a.pad_right || g.OH != a.oh || g.OW != a.ow)
    throw InvalidArgument("plugin ABI: the problem's resolved pads or output size disagree with " +
                          to_string(p));
  return checked;
}

convcheck_contract to_abi(const NumericContract& k) {
  convcheck_contract c{};
  std::snprintf(c.name, sizeof c.name, "%s", k.name.c_str());
  c.u_in = k.u_in;
  c.u_acc = k.u_acc;
  c.u_out = k.u_out;
  c.block = k.block;
  c.chain = k.chain == NumericContract::Chain::exact    ? CONVCHECK_CHAIN_EXACT
            : k.chain == NumericContract::Chain::linear ? CONVCHECK_CHAIN_LINEAR
                                                        : CONVCHECK_CHAIN_BLOCKED;
  c.flush_subnormals = k.flush_subnormals;
  c.deterministic = k.deterministic;
  return c;
}

NumericContract from_abi(const convcheck_contract& c) {
  NumericContract k;
  k.name = sanitize(c.name, sizeof c.name);
  for (double u : {c.u_in, c.u_acc, c.u_out})
    if (!(u >= 0 && u < 1))
      throw InvalidArgument("plugin contract '" + k.name +
                            "': unit roundoffs must lie in [0, 1), got u_in " +
                            std::to_string(c.u_in) + ", u_acc " + std::to_string(c.u_acc) +
                            ", u_out " + std::to_string(c.u_out));
  k.u_in = c.u_in;
  k.u_acc = c.u_acc;
  k.u_out = c.u_out;
  switch (c.chain) {
    case CONVCHECK_CHAIN_EXACT:
      k.chain = NumericContract::Chain::exact;
      break;
    case CONVCHECK_CHAIN_LINEAR:
      k.chain = NumericContract::Chain::linear;
      break;
    case CONVCHECK_CHAIN_BLOCKED:
      k.chain = NumericContract::Chain::blocked;
      if (c.block <= 0)
        throw InvalidArgument("plugin contract '" + k.name + "': a blocked chain needs block > 0");
      break;
    default:
      throw InvalidArgument("plugin contract '" + k.name + "': unknown chain " +
                            std::to_string(c.chain));
  }
  k.block = c.block;
  k.flush_subnormals = c.flush_subnormals != 0;
  k.deterministic = c.deterministic != 0;
  return k;
}

std::string sanitize(const char* text, std::size_t max) {
  std::string s;
  if (!text) return s;
  const std::size_t n = strnlen(text, max);
  s.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    s += (ch < 0x20 || ch >= 0x7f) ? '?' : static_cast<char>(ch);
  }
  return s;
}

}  // namespace convcheck::plugin_abi
