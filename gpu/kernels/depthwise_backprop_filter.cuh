// DepthwiseConv2dNativeBackpropFilter (spec B §3.5, real dilation), direct path, deterministic:
// the same fixed chunking of the N*OH*OW sum as backprop filter (gpu/plan.h), one thread per
// (chunk, filter element) with output channels fastest (coalesced out_backprop and input reads),
// then ReduceChunks (backprop_filter.cuh) adds the partials in chunk order.
//
// Index law, written once:
//   dw[a,b,k,m] = sum_n sum_{i<OH} sum_{j<OW} dy[n,i,j,k*M+m] * x[n, i*sh + a*dh - pad_top,
//                                                            j*sw + b*dw - pad_left, k];
// a term whose input position is padding is no term.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

/// Partial sum of chunk `chunk` for filter element e = (a*KW + b)*C*M + k*M + m, over
/// t in [chunk*chunk_len, min(reduce_len, (chunk+1)*chunk_len)), in increasing t.
template <class T>
CONVCHECK_HD T depthwise_backprop_filter_chunk(const ConvShape& s, const T* x, const T* dy,
                                               int64_t e, int64_t chunk, int64_t chunk_len,
                                               int64_t reduce_len) {
  const int64_t o = e % s.O, tap = e / s.O;
  const int64_t b = tap % s.KW, a = tap / s.KW;
  const int64_t k = o / s.M;
  const int64_t t0 = chunk * chunk_len, t1 = min64(reduce_len, t0 + chunk_len);
  const int64_t row_off = a * s.dh - s.pad_top, col_off = b * s.dw - s.pad_left;
  T acc = T(0);
  if (t0 >= t1) return acc;  // no terms (an empty out_backprop): 0
  int64_t j = t0 % s.OW, ni = t0 / s.OW;
  int64_t i = ni % s.OH, n = ni / s.OH;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t h = i * s.sh + row_off, wc = j * s.sw + col_off;
    if (h >= 0 && h < s.H && wc >= 0 && wc < s.W)
      acc = mul_add(dy[t * s.O + o], x[((n * s.H + h) * s.W + wc) * s.C + k], acc);
    if (++j == s.OW) {
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
struct DepthwiseBackpropFilterChunks {
  ConvShape s;
  const T* x;   // NHWC
  const T* dy;  // NHWC [N, OH, OW, C*M]
  T* out;       // [chunks][E]: partials, or dw (RSCM) when there is one chunk
  int64_t E, chunk_len, reduce_len;
  CONVCHECK_HD void operator()(int64_t idx) const {
    out[idx] = depthwise_backprop_filter_chunk(s, x, dy, idx % E, idx / E, chunk_len, reduce_len);
  }
};

}  // namespace convcheck::gpu::k
