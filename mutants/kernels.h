// The mutants' maths: the seven ops over canonical operands, with one bug planted (or none).
//
// Canonical means what the reference's loop nests read: activations in N,H,W,C order as doubles
// (exact for every dtype), filters as stored (HWIO, RSCM for depthwise). Layouts, validation and
// the result buffer are the driver's business (mutant_backend.cpp); the bugs that live there
// (nchw_as_nhwc, nan_to_zero, oob_write, unwritten_tail, padding_taps_unwritten, over_read_by_one,
// stale_cache) are invisible here.
#pragma once

#include <cstdint>
#include <vector>

#include "core/problem.h"
#include "mutants/internal.h"

namespace convcheck::mutants {

/// input [N,H,W,C], filter [KH,KW,Cf,O] or [KH,KW,C,M], out_backprop [N,OH,OW,O].
using CanonicalOperands = ByRole<std::vector<double>>;

/// The result of op p.op in canonical order (N,H,W,C for activations, the filter's storage order
/// for filters), each value already a value of p.dtype (as a double). Without a bug: the exact
/// value rounded once, to nearest-even, into the dtype (int32: the exact sum mod 2^32), i.e. the
/// reference's result. `run_seed` only matters to Bug::nondeterministic (its summation order).
std::vector<double> compute(const Problem& p, const Geometry& g, Bug bug,
                            const CanonicalOperands& operands, uint64_t run_seed);

/// v rounded to `bits` significant bits, to nearest (ties away from zero; silent_tf32), or toward
/// zero (truncate_16bit). Finite v only; exponent range unbounded.
double round_to_bits(double v, int bits, bool toward_zero = false);

}  // namespace convcheck::mutants
