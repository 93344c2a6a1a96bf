#include "core/admission.h"

#include <string>

namespace convcheck {

namespace {

using Kind = Admission::Kind;

Admission refused(std::string m) {
  return {Kind::refused, std::move(m)};
}
Admission differs(std::string m) {
  return {Kind::differs, std::move(m)};
}

std::string num(int64_t v) {
  return std::to_string(v);
}

bool dilated(const Geometry& g) {
  return g.dh > 1 || g.dw > 1;
}
bool grouped(const Geometry& g) {
  return !g.depthwise && g.G > 1;
}

// TF's output size along one dimension (GetWindowedOutputSize) with dilation 1, for a problem that
// is valid with its dilation. Dropping the dilation only shrinks the filter's extent, so this
// cannot overflow or go negative, where geometry() of the undilated problem may refuse it: its
// larger out_backprop can overflow 64 bits (found by fuzz/,
// regressions/descriptor/undilated_too_large). SAME's output size does not depend on the filter.
int64_t undilated_out(int64_t in, int64_t k, int64_t s, const Padding& pad, int64_t before,
                      int64_t after, int64_t same_out) {
  if (pad.kind == PaddingKind::SAME) return same_out;
  const int64_t diff = in + before + after - k;  // in + pads <= kMaxExtent
  return diff >= 0 ? diff / s + 1 : (diff + s) / s;
}

// Conv2D (S10 conv_ops_impl.h / conv_ops_int32.cc).
TfAdmission conv2d(const Problem& p, const Geometry& g) {
  TfAdmission a;
  if (p.format == Format::NCHW) {
    a.cpu = refused(
        "The Conv2D op currently only supports the NHWC tensor format on the CPU. The op was given "
        "the format: NCHW");
  }
  if (p.dtype == DType::i32) {
    if (p.format == Format::NCHW) {
      a.gpu = refused(
          "The Conv2D op currently only supports the NHWC tensor format for integer types. The op "
          "was given the format: NCHW");
    } else if (grouped(g)) {
      a.gpu = refused(
          "The Conv2D op currently does not support grouped convolutions for integer types. A "
          "grouped convolution was attempted to be run because the input depth of " +
          num(g.C) + " does not match the filter input depth of " + num(g.Cf));
    }
  }
  return a;
}

// Conv2DBackpropInput and conv2d_transpose (S4: the default CPU kernel is
// Conv2DCustomBackpropInputOp; GPU int32 takes the Eigen Conv2DBackpropInputOp path).
TfAdmission backprop_input(const Problem& p, const Geometry& g) {
  TfAdmission a;
  if (p.format == Format::NCHW) {
    a.cpu = refused("Conv2DCustomBackpropInputOp only supports NHWC.");
  } else if (dilated(g)) {
    a.cpu = refused("Current CPU implementations do not yet support dilation rates larger than 1.");
  } else if (grouped(g)) {
    a.cpu = refused(
        "Gradients for grouped convolutions are not supported on CPU. Please file a feature "
        "request "
        "if you run into this issue. Computed input depth " +
        num(g.C) + " doesn't match filter input depth " + num(g.Cf));
  }
  if (p.dtype == DType::i32) {
    if (p.format == Format::NCHW) {
      a.gpu = refused("Conv2DBackpropInputOp [CPU or GPU(int32)] only supports NHWC data format.");
    } else if (dilated(g)) {
      a.gpu = refused(
          "Conv2DBackpropInputOp [CPU or GPU(int32)] not yet support dilation rates larger than "
          "1.");
    } else if (grouped(g)) {
      // TF has no message here: its Eigen int32 path contracts over C, not C / G.
      a.gpu = refused(
          "(convcheck) TF's int32 GPU backprop input (Eigen) has no grouped "
          "convolution: input depth " +
          num(g.C) + " vs filter input depth " + num(g.Cf));
    }
  }
  return a;
}

// Conv2DBackpropFilter (S7: default CPU kernel Conv2DCustomBackpropFilterOp).
TfAdmission backprop_filter(const Problem& p, const Geometry& g) {
  TfAdmission a;
  if (p.format == Format::NCHW) {
    a.cpu = refused("Conv2DCustomBackpropFilterOp only supports NHWC.");
  } else if (dilated(g)) {
    a.cpu = refused("Current CPU implementations do not yet support dilation rates larger than 1.");
  } else if (grouped(g)) {
    a.cpu = refused("filter_size does not have enough elements, requested " +
                    num(g.KH * g.KW * g.C * g.O) + ", got " + num(g.KH * g.KW * g.Cf * g.O));
  }
  return a;
}

// Depthwise ops (S11, S12): equal strides required on every device; the dilations attribute is
// never read, so sizes are computed without it; CPU is NHWC only.
TfAdmission depthwise(const Problem& p, const Geometry& g) {
  const bool forward = p.op == Op::depthwise_conv2d;
  const std::string label = p.op == Op::depthwise_conv2d_backprop_input
                                ? "DepthwiseConv2DBackpropInput"
                                : "DepthwiseConv2DBackpropFilter";
  Admission both;
  if (g.sh != g.sw) {
    both = refused(
        "Current implementation only supports equal length strides in the row and column "
        "dimensions.");
  } else if (dilated(g)) {
    if (forward) {
      both = refused("Current kernel implementation does not support dilations, received [1, " +
                     num(g.dh) + ", " + num(g.dw) + ", 1]");
    } else {
      // TF recomputes the out_backprop size with dilation 1 and compares.
      const int64_t uh = undilated_out(g.H, g.KH, g.sh, p.padding, g.pad_top, g.pad_bottom, g.OH);
      const int64_t uw = undilated_out(g.W, g.KW, g.sw, p.padding, g.pad_left, g.pad_right, g.OW);
      if (uh != g.OH) {
        both =
            refused(label + ": Number of rows of out_backprop doesn't match computed: actual = " +
                    num(g.OH) + ", computed = " + num(uh));
      } else if (uw != g.OW) {
        both =
            refused(label + ": Number of cols of out_backprop doesn't match computed: actual = " +
                    num(g.OW) + ", computed = " + num(uw));
      } else {
        both = differs(
            "TF's depthwise kernels ignore dilations: TF computes this problem as if "
            "dilation were 1x1 (spec B 4.4)");
      }
    }
  }
  TfAdmission a{both, both};
  if (a.cpu.kind == Kind::accepted && p.format == Format::NCHW) {
    a.cpu = refused("Depthwise convolution on CPU is only supported for NHWC format");
  }
  return a;
}

}  // namespace

const char* admission_kind_name(Admission::Kind k) {
  switch (k) {
    case Kind::accepted:
      return "accepted";
    case Kind::refused:
      return "refused";
    case Kind::differs:
      return "differs";
  }
  return "?";
}

TfAdmission tf_admission(const Problem& p) {
  return tf_admission(p, geometry(p));
}

TfAdmission tf_admission(const Problem& p, const Geometry& g) {
  if (is_depthwise(p.op)) return depthwise(p, g);
  switch (op_kind(p.op)) {
    case OpKind::forward:
      return conv2d(p, g);
    case OpKind::backward_data:
      return backprop_input(p, g);
    case OpKind::backward_filter:
      return backprop_filter(p, g);
  }
  return {};
}

}  // namespace convcheck
