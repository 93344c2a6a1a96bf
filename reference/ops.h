// The reference's ops: each op's entry point (defined in its own file, which holds its index law)
// and the one op -> entry point dispatch. Adding an op to the reference: its file (reference/*.cpp
// is compiled by glob) and two lines here. Internal to reference/.
#pragma once

#include "core/op_traits.h"
#include "reference/engine.h"

namespace convcheck::ref {

void conv2d(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out);
/// Also conv2d_transpose (the same maths, spec A.8).
void backprop_input(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out);
void backprop_filter(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out);
void depthwise_conv2d(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out);
void depthwise_backprop_input(const Geometry& g, DType t, const Canonical& c, Mode mode,
                              Outputs& out);
void depthwise_backprop_filter(const Geometry& g, DType t, const Canonical& c, Mode mode,
                               Outputs& out);

/// Evaluates op on canonical operands. A switch rather than a table: -Wswitch (an error under
/// -Werror) names every op added to Op and missing here.
inline void run_op(Op op, const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out) {
  switch (op) {
    case Op::conv2d:
      return conv2d(g, t, c, mode, out);
    case Op::conv2d_backprop_input:
    case Op::conv2d_transpose:
      return backprop_input(g, t, c, mode, out);
    case Op::conv2d_backprop_filter:
      return backprop_filter(g, t, c, mode, out);
    case Op::depthwise_conv2d:
      return depthwise_conv2d(g, t, c, mode, out);
    case Op::depthwise_conv2d_backprop_input:
      return depthwise_backprop_input(g, t, c, mode, out);
    case Op::depthwise_conv2d_backprop_filter:
      return depthwise_backprop_filter(g, t, c, mode, out);
  }
}

}  // namespace convcheck::ref
