// The optimized backend's ops: each op's entry point (defined in its own file, instantiated for
// float, double and uint32_t) and the one op -> entry point dispatch. Adding an op to the backend:
// its file (optimized/*.cpp is compiled by glob) and two lines here. Internal to optimized/.
//
// Operands are canonical (activations NHWC, filters HWIO / RSCM) in the compute type T.
#pragma once

#include "core/op_traits.h"
#include "optimized/internal.h"

namespace convcheck::opt {

/// may_stream: the result is not read back right after the op (stream_result, internal.h), so an
/// op may store it non-temporally where it chooses to.
template <class T>
void conv2d(const Geometry& g, const T* input, const T* filter, T* output, bool may_stream);
/// Also conv2d_transpose (the same maths, spec A.8).
template <class T>
void backprop_input(const Geometry& g, const T* filter, const T* out_backprop, T* input_backprop,
                    bool may_stream);
template <class T>
void backprop_filter(const Geometry& g, const T* input, const T* out_backprop, T* filter_backprop,
                     bool may_stream);
template <class T>
void depthwise_conv2d(const Geometry& g, const T* input, const T* filter, T* output,
                      bool may_stream);
template <class T>
void depthwise_backprop_input(const Geometry& g, const T* filter, const T* out_backprop,
                              T* input_backprop, bool may_stream);
template <class T>
void depthwise_backprop_filter(const Geometry& g, const T* input, const T* out_backprop,
                               T* filter_backprop);

/// Runs op on canonical operands a, b (op_io order). A switch rather than a table: -Wswitch (an
/// error under -Werror) names every op added to Op and missing here.
template <class T>
void run_op(Op op, const Geometry& g, const T* a, const T* b, T* out, bool may_stream) {
  switch (op) {
    case Op::conv2d:
      return conv2d<T>(g, a, b, out, may_stream);
    case Op::conv2d_backprop_input:
    case Op::conv2d_transpose:
      return backprop_input<T>(g, a, b, out, may_stream);
    case Op::conv2d_backprop_filter:
      return backprop_filter<T>(g, a, b, out, may_stream);
    case Op::depthwise_conv2d:
      return depthwise_conv2d<T>(g, a, b, out, may_stream);
    case Op::depthwise_conv2d_backprop_input:
      return depthwise_backprop_input<T>(g, a, b, out, may_stream);
    case Op::depthwise_conv2d_backprop_filter:
      return depthwise_backprop_filter<T>(g, a, b, out);
  }
}

}  // namespace convcheck::opt
