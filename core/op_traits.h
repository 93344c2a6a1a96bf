// Every fact about an op that more than one folder needs, one row per op (issue 14 item 2).
//
// Adding an op: a row here (kOpTraits), its enum value at the end of Op (the enum value is the
// plugin ABI's CONVCHECK_OP_* code, plugins/convcheck_plugin.h, asserted in plugins/abi.cpp), its
// shape rule in geometry() (core/problem.cpp) and TF admission (core/admission.cpp), and a kernel
// per backend (reference/, optimized/, gpu/; a comparator maps it by `kind` alone). The oracle's
// adjoint triple, the depthwise=grouped relation, the mutants and both comparators read this table
// and need nothing new. README "How to add" lists the files.
//
// Vocabulary (TF's): an op reads two of the three roles (input, filter, out_backprop) and writes a
// result shaped like the third. Its `kind` is the convolution a library implements it with
// (forward, backward data, backward filter): the role its result is shaped like.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "core/dtype.h"

namespace convcheck {

enum class Op {
  conv2d,
  conv2d_backprop_input,
  conv2d_backprop_filter,
  conv2d_transpose,
  depthwise_conv2d,
  depthwise_conv2d_backprop_input,
  depthwise_conv2d_backprop_filter,
};
inline constexpr Op kAllOps[] = {Op::conv2d,
                                 Op::conv2d_backprop_input,
                                 Op::conv2d_backprop_filter,
                                 Op::conv2d_transpose,
                                 Op::depthwise_conv2d,
                                 Op::depthwise_conv2d_backprop_input,
                                 Op::depthwise_conv2d_backprop_filter};

/// The three operand roles, in TF's words (design §3).
enum class Role { input, filter, out_backprop };
/// "input", "filter", "out_backprop".
const char* role_name(Role r);
/// The role's command-line option ("input", "filter", "out-backprop": `--out-backprop FILE`).
const char* role_option(Role r);

/// One T per role (canonical operands, filled tensors, ...), reached by role.
template <class T>
struct ByRole {
  T input, filter, out_backprop;
  T& get(Role r) { return r == Role::input ? input : r == Role::filter ? filter : out_backprop; }
  const T& get(Role r) const {
    return r == Role::input ? input : r == Role::filter ? filter : out_backprop;
  }
};

/// What an op reads and writes: two roles in, one result whose shape is that of `result_like`.
struct OpIO {
  Role a, b;
  Role result_like;
};
/// Which of the three convolutions an op is, i.e. which library call implements it (oneDNN's and
/// cuDNN's forward / backward data / backward weights): the role its result is shaped like.
enum class OpKind { forward, backward_data, backward_filter };

struct OpTraits {
  Op op;
  const char* name;         // the descriptor's spelling
  const char* tf_name;      // TF's op name, for messages about TF
  const char* result_name;  // what the result is called ("output", "input_backprop", ...)
  OpIO io;
  OpKind kind;
  bool depthwise;  // filter RSCM [KH, KW, C, M]; output channel c*M+m reads channel c
  Op grouped;      // the dense op with the same maths (groups G = C, RSCM read as HWIO
                   // [KH, KW, 1, C*M]); the op itself when dense
  Op forward;      // the forward op of its adjoint triple (forward, backward data, backward filter)
  bool takes_i32;  // TF registers int32 kernels only for Conv2D and Conv2DBackpropInput
};

// clang-format off
inline constexpr OpTraits kOpTraits[] = {
  // op                                    name                                tf_name                                 result_name        reads, reads, result shaped like                          kind                       depthwise grouped                       forward               int32
  {Op::conv2d,                           "conv2d",                           "Conv2D",                               "output",          {Role::input,  Role::filter,       Role::out_backprop}, OpKind::forward,          false, Op::conv2d,                    Op::conv2d,           true},
  {Op::conv2d_backprop_input,            "conv2d_backprop_input",            "Conv2DBackpropInput",                  "input_backprop",  {Role::filter, Role::out_backprop, Role::input},        OpKind::backward_data,    false, Op::conv2d_backprop_input,     Op::conv2d,           true},
  {Op::conv2d_backprop_filter,           "conv2d_backprop_filter",           "Conv2DBackpropFilter",                 "filter_backprop", {Role::input,  Role::out_backprop, Role::filter},       OpKind::backward_filter,  false, Op::conv2d_backprop_filter,    Op::conv2d,           false},
  {Op::conv2d_transpose,                 "conv2d_transpose",                 "conv2d_transpose",                     "input_backprop",  {Role::filter, Role::out_backprop, Role::input},        OpKind::backward_data,    false, Op::conv2d_transpose,          Op::conv2d,           true},
  {Op::depthwise_conv2d,                 "depthwise_conv2d",                 "DepthwiseConv2dNative",                "output",          {Role::input,  Role::filter,       Role::out_backprop}, OpKind::forward,          true,  Op::conv2d,                    Op::depthwise_conv2d, false},
  {Op::depthwise_conv2d_backprop_input,  "depthwise_conv2d_backprop_input",  "DepthwiseConv2dNativeBackpropInput",   "input_backprop",  {Role::filter, Role::out_backprop, Role::input},        OpKind::backward_data,    true,  Op::conv2d_backprop_input,     Op::depthwise_conv2d, false},
  {Op::depthwise_conv2d_backprop_filter, "depthwise_conv2d_backprop_filter", "DepthwiseConv2dNativeBackpropFilter",  "filter_backprop", {Role::input,  Role::out_backprop, Role::filter},       OpKind::backward_filter,  true,  Op::conv2d_backprop_filter,    Op::depthwise_conv2d, false},
};
// clang-format on

namespace op_traits_detail {
constexpr bool rows_in_enum_order() {
  std::size_t i = 0;
  for (const OpTraits& t : kOpTraits) {
    if (static_cast<std::size_t>(t.op) != i++) return false;
  }
  return i == sizeof(kAllOps) / sizeof(kAllOps[0]);
}
}  // namespace op_traits_detail
static_assert(op_traits_detail::rows_in_enum_order(), "kOpTraits: one row per Op, in enum order");

constexpr const OpTraits& op_traits(Op op) {
  return kOpTraits[static_cast<std::size_t>(op)];
}

inline const char* op_name(Op op) {
  return op_traits(op).name;
}
/// TF's op name ("Conv2DBackpropInput", ...), for messages about TF.
inline const char* op_tf_name(Op op) {
  return op_traits(op).tf_name;
}
std::optional<Op> parse_op(std::string_view s);
inline bool is_depthwise(Op op) {
  return op_traits(op).depthwise;
}
/// Whether TF's op definition takes this dtype (int32: conv2d, backprop input, transpose only).
inline bool op_takes_dtype(Op op, DType t) {
  return t != DType::i32 || op_traits(op).takes_i32;
}
inline OpIO op_io(Op op) {
  return op_traits(op).io;
}
/// A short name for the result ("output", "input_backprop", "filter_backprop").
inline const char* result_name(Op op) {
  return op_traits(op).result_name;
}
inline OpKind op_kind(Op op) {
  return op_traits(op).kind;
}
/// The dense op with the same maths as a depthwise op; a dense op itself.
inline Op grouped_equivalent(Op op) {
  return op_traits(op).grouped;
}
/// The op of `op`'s adjoint triple that is of kind `kind` (conv2d_transpose, having the same maths
/// as conv2d_backprop_input, is never chosen: the first row of the kind wins).
Op triple_member(Op op, OpKind kind);

}  // namespace convcheck
