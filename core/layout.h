// Where an element lives: the one home of the storage layout law (issue 14, item 3).
//
// Every op computes on canonical order: activations N,H,W,C and filters HWIO (RSCM for
// depthwise), whatever the problem's format. In storage, an NCHW problem's activations (input,
// out_backprop, an input-shaped result) are N,C,H,W; filters are stored canonically in every
// format. The reference, the mutants, the optimized backend's conversions and the oracle's
// relations all take their indices from here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"

namespace convcheck {

/// Whether role r's tensor is stored N,C,H,W: the activations of an NCHW problem.
inline bool stored_nchw(const Problem& p, Role r) {
  return r != Role::filter && p.format == Format::NCHW;
}

/// The index law of NCHW storage, in flattened form: offset of the activation element at image n,
/// spatial position hw (= h * W + w, of HW) and channel c (of C).
inline int64_t nchw_offset(int64_t n, int64_t hw, int64_t c, int64_t HW, int64_t C) {
  return (n * C + c) * HW + hw;
}

/// Offset of activation element (n, h, w, c) of logical shape s = [N, H, W, C] stored in `f`.
inline int64_t activation_offset(const std::array<int64_t, 4>& s, Format f, int64_t n, int64_t h,
                                 int64_t w, int64_t c) {
  return f == Format::NCHW ? nchw_offset(n, h * s[2] + w, c, s[1] * s[2], s[3])
                           : ((n * s[1] + h) * s[2] + w) * s[3] + c;
}

/// Storage offset of canonical element e (row-major in s = [N, H, W, C] or the filter's
/// [KH, KW, in, out]); the identity unless `nchw`.
inline int64_t storage_offset(int64_t e, const std::array<int64_t, 4>& s, bool nchw) {
  if (!nchw) return e;
  const int64_t c = e % s[3], hw = e / s[3] % (s[1] * s[2]), n = e / (s[3] * s[2] * s[1]);
  return nchw_offset(n, hw, c, s[1] * s[2], s[3]);
}

/// Operand `v` of role r checked (given, dtype, storage shape: messages name `label`, e.g. the op
/// or "mutant:x: op") and read into canonical order as doubles (exact for every dtype). `nchw`:
/// how the storage is read (stored_nchw(p, r) but for a mutant that misreads it).
std::vector<double> load_canonical(const Problem& p, const Geometry& g, Role r,
                                   const ConstTensorView* v, const std::string& label, bool nchw);

/// Writes canonical values (rounded once into the view's dtype) into storage read as `nchw`.
void store_canonical(const std::vector<double>& values, const std::array<int64_t, 4>& s, bool nchw,
                     TensorView out);

}  // namespace convcheck
