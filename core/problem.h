// The problem vocabulary shared by every backend, test, suite and report (design §2).
//
// A Problem is a plain value: op, forward input shape, filter shape, strides, dilations, padding,
// format, dtype. Everything derived from it (output size, resolved pads, groups, multiplier) comes
// from one function, geometry(), which also validates with TF's messages (spec Part A.3, A.4, B
// §2). Implementation knobs never live here.
//
// Text form (one shell word): <op>:<key>=<value>[,<key>=<value>]...
//   input=NxHxWxC  filter=RxSxCfxK (depthwise RxSxCxM)  stride=SHxSW  dilation=DHxDW
//   padding=VALID|SAME|T:B:L:R  format=NHWC|NCHW  dtype=f16|bf16|f32|f64|i32
// print() gives the canonical form, every key in that order; parse(print(p)) == p.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/dtype.h"
#include "core/op_traits.h"
#include "core/tensor.h"

namespace convcheck {

enum class PaddingKind { VALID, SAME, EXPLICIT };
enum class Format { NHWC, NCHW };
const char* format_name(Format f);

struct Padding {
  PaddingKind kind = PaddingKind::VALID;
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // used by EXPLICIT only
  bool operator==(const Padding& o) const;
  bool operator!=(const Padding& o) const { return !(*this == o); }
};

struct Problem {
  Op op = Op::conv2d;
  std::array<int64_t, 4> input{};   // forward input N, H, W, C (whatever the format)
  std::array<int64_t, 4> filter{};  // conv: KH, KW, Cf, K (HWIO); depthwise: KH, KW, C, M
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;  // TF's convention: 1 = no dilation
  Padding padding;
  Format format = Format::NHWC;
  DType dtype = DType::f32;

  bool operator==(const Problem& o) const;
  bool operator!=(const Problem& o) const { return !(*this == o); }
};

/// Parses a descriptor. Throws InvalidArgument naming the key and the rule. Only the grammar is
/// checked here; geometry() checks the semantics.
Problem parse_problem(std::string_view text);
/// Canonical descriptor: every key, in grammar order.
std::string to_string(const Problem& p);

/// Everything derived from a Problem. Names follow TF; the GEMM-ish letters stay in kernels.
struct Geometry {
  int64_t N, H, W, C;      // forward input
  int64_t KH, KW;          // filter taps
  int64_t Cf;              // input channels per group (1 for depthwise)
  int64_t O;               // forward output channels (K, or C*M for depthwise)
  int64_t G;               // groups: C / Cf (C for depthwise)
  int64_t M;               // depthwise multiplier (1 for conv)
  int64_t OH, OW;          // forward output (= out_backprop) spatial size
  int64_t sh, sw, dh, dw;  // strides and dilations
  int64_t pad_top, pad_bottom, pad_left, pad_right;  // resolved (SAME split, odd element after)
  int64_t eff_h, eff_w;                              // (K - 1) * d + 1

  // Logical shapes (N,H,W,C order for activations; filter as given).
  std::array<int64_t, 4> input_shape() const { return {N, H, W, C}; }
  std::array<int64_t, 4> output_shape() const { return {N, OH, OW, O}; }
  std::array<int64_t, 4> filter_shape() const { return {KH, KW, filter_in(), filter_out()}; }
  int64_t filter_in() const { return depthwise ? C : Cf; }
  int64_t filter_out() const { return depthwise ? M : O; }
  bool depthwise;  // depthwise ops: filter is RSCM and output channel k*M+m reads channel k
};

/// The largest stride, dilation, effective filter size ((K - 1) * d + 1) and padded input size
/// (H + pads) geometry() accepts: far beyond any tensor that fits in memory, and small enough that
/// kernels' index arithmetic (sums of a few of these) cannot overflow 64 bits.
inline constexpr int64_t kMaxExtent = int64_t{1} << 60;

/// Validates a problem and derives its geometry; throws InvalidArgument with TF's words and every
/// number ("conv2d_backprop_input: Computed output size would be negative: -1 [input_size: 1,
/// ..."). Sizes are computed in 64 bits with overflow checks: every role's element count (the
/// product of its nonzero dimensions) times 8 bytes fits in int64, and strides, dilations,
/// effective filter sizes and padded sizes are at most kMaxExtent; anything else is refused with a
/// message. Whether the tensors fit in memory is a separate question: core/limits.h.
Geometry geometry(const Problem& p);

/// A validated problem: a Problem together with its Geometry, derived once when it is built and
/// carried from there. Validity is a type rather than a comment ("precondition: g ==
/// geometry(p)"): the only ways to get one are to validate a problem (the constructor calls
/// geometry() and throws its InvalidArgument) or to copy one, so its geometry is always its
/// problem's. Backends take it (core/backend.h), and so never derive or validate again.
class CheckedProblem {
 public:
  /// Validates `p` (geometry()); throws InvalidArgument with geometry()'s message.
  explicit CheckedProblem(const Problem& p) : problem_(p), geometry_(convcheck::geometry(p)) {}
  /// The same, by name: CheckedProblem::check(parse_problem(text)).
  static CheckedProblem check(const Problem& p) { return CheckedProblem(p); }

  const Problem& problem() const { return problem_; }
  const Geometry& geometry() const { return geometry_; }

 private:
  Problem problem_;
  Geometry geometry_;
};

/// A role's shape in logical order: [N,H,W,C] for activations (out_backprop = the forward output
/// [N,OH,OW,O]), the filter as given.
std::array<int64_t, 4> logical_shape(const Geometry& g, Role r);

/// Storage-order shape and layout of a role's tensor (activations follow the format; filters are
/// HWIO / RSCM).
Shape storage_shape(const Problem& p, const Geometry& g, Role r);
Layout storage_layout(const Problem& p, Role r);

/// Checks an operand tensor's storage shape against the problem, with TF's messages where TF has
/// them ("Size of out_backprop doesn't match computed: actual = 4, computed = 3 spatial_dim: 1
/// ..."). Throws InvalidArgument.
void check_operand_shape(const Problem& p, const Geometry& g, Role r, const Shape& got,
                         const std::string& source);

/// Byte and element sizes of a problem's three roles, computed with overflow checks.
int64_t role_elements(const Geometry& g, Role r);

}  // namespace convcheck
