// Conv2DBackpropFilter (spec B §3.3), direct path, deterministic (no atomics): the sum over
// t = (n*OH + i)*OW + j < N*OH*OW is cut into fixed chunks (gpu/plan.h); pass 1 computes each
// chunk's partial as one sequential FMA chain, one thread per (chunk, filter element), output
// channels fastest; pass 2 (ReduceChunks) adds the partials of each element in chunk order.
//
// Index law, written once:
//   dw[a,b,q,o] = sum_n sum_{i<OH} sum_{j<OW} dy[n,i,j,o] * x[n, i*sh + a*dh - pad_top,
//                                                          j*sw + b*dw - pad_left, g*Cf + q],
//   g = o / (O/G); a term whose input position is padding is no term.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

/// Partial sum of chunk `chunk` for filter element e = ((a*KW + b)*Cf + q)*O + o, over
/// t in [chunk*chunk_len, min(reduce_len, (chunk+1)*chunk_len)), in increasing t.
template <class T>
CONVCHECK_HD T backprop_filter_chunk(const ConvShape& s, const T* x, const T* dy, int64_t e,
                                     int64_t chunk, int64_t chunk_len, int64_t reduce_len) {
  const int64_t o = e % s.O, r1 = e / s.O;
  const int64_t q = r1 % s.Cf, r2 = r1 / s.Cf;
  const int64_t b = r2 % s.KW, a = r2 / s.KW;
  const int64_t c = o / (s.O / s.G) * s.Cf + q;
  const int64_t t0 = chunk * chunk_len, t1 = min64(reduce_len, t0 + chunk_len);
  const int64_t row_off = a * s.dh - s.pad_top, col_off = b * s.dw - s.pad_left;
  T acc = T(0);
  if (t0 >= t1) return acc;  // no terms (an empty out_backprop): 0
  int64_t j = t0 % s.OW, ni = t0 / s.OW;
  int64_t i = ni % s.OH, n = ni / s.OH;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t h = i * s.sh + row_off, wc = j * s.sw + col_off;
    if (h >= 0 && h < s.H && wc >= 0 && wc < s.W)
      acc = mul_add(dy[t * s.O + o], x[((n * s.H + h) * s.W + wc) * s.C + c], acc);
    if (++j == s.OW) {  // next (n, i, j) in t order
      j = 0;
      if (++i == s.OH) {
        i = 0;
        ++n;
      }
    }
  }
  return acc;
}

/// Pass 1: idx = chunk * E + e. With one chunk it writes the result itself.
template <class T>
struct BackpropFilterChunks {
  ConvShape s;
  const T* x;   // NHWC
  const T* dy;  // NHWC [N, OH, OW, O]
  T* out;       // [chunks][E]: partials, or dw (HWIO) when there is one chunk
  int64_t E, chunk_len, reduce_len;
  CONVCHECK_HD void operator()(int64_t idx) const {
    out[idx] = backprop_filter_chunk(s, x, dy, idx % E, idx / E, chunk_len, reduce_len);
  }
};

/// Pass 2 (shared with depthwise backprop filter): out[e] = ((p_0 + p_1) + p_2) + ... in chunk
/// order, partials[c * E + e] = p_c.
template <class T>
struct ReduceChunks {
  const T* partials;
  T* out;
  int64_t E, chunks;
  CONVCHECK_HD void operator()(int64_t e) const {
    T acc = partials[e];
    for (int64_t c = 1; c < chunks; ++c) acc = add(acc, partials[c * E + e]);
    out[e] = acc;
  }
};

}  // namespace convcheck::gpu::k
