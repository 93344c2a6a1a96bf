// The exact reference (design §5): the executable spec of the seven ops.
//
// Every result element is the exact mathematical value rounded once, to nearest-even, into the
// problem's dtype (int32: the exact sum modulo 2^32). Beside it, per element, the exact value as a
// double-double, the magnitude M_i (the same op on |operands|) and the count n_i of non-padding
// terms: what the oracle's error bounds are built from.
//
// How: literal loop nests (one file per op, the index law written once in a comment) enumerate the
// terms of each output element. A certified fast path accumulates them error-free in double-double
// (TwoProduct + TwoSum) with a running error bound, and keeps its result only when that bound
// proves the rounding into the dtype; otherwise the element is recomputed with the exact Kulisch
// accumulator (reference/exact_accumulator.h). Either way the rounded result is the same, so
// results are bit-identical for any thread count and any term order. OpenMP parallelises over
// output elements.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"
#include "core/tensor.h"

namespace convcheck {

struct ReferenceResult {
  Tensor result;  // the problem's dtype, storage layout of the result role
  std::vector<double> exact_hi,
      exact_lo;                   // exact value = hi + lo (hi = RN64(exact)); storage order
  std::vector<double> magnitude;  // M_i = op(|operands|), summed in double
  std::vector<int64_t> terms;     // n_i, the non-padding terms of element i
  int64_t exact_fallbacks = 0;    // elements the fast path could not certify
};

/// Computes op(operands) exactly. Validates the problem (geometry()) and the operands' dtypes and
/// shapes (check_operand_shape); throws InvalidArgument on any mismatch.
ReferenceResult reference_compute(const Problem& p, const Operands& operands);
/// The same for a problem whose geometry the caller holds (g = geometry(p), not derived again).
ReferenceResult reference_compute(const Problem& p, const Geometry& g, const Operands& operands);

/// The same loop nests accumulating in plain double, rounded into the dtype at the end: the
/// "naive loop" the exact reference's cost is measured against (bench/reference_cost). Not exact.
Tensor naive_double_compute(const Problem& p, const Operands& operands);

/// Registers the "reference" backend.
void register_reference_backend(Registry& registry);

}  // namespace convcheck
