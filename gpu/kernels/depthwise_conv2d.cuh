// DepthwiseConv2dNative (spec B §3.5, with real dilation, spec A.7), direct path: a memory-bound
// gather, one thread per output element, output channels fastest (coalesced NHWC reads of the
// input and RSCM reads of the filter).
//
// Index law, written once (output channel o = k*M + m reads input channel k):
//   y[n,i,j,k*M+m] = sum_{a<KH} sum_{b<KW} x[n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, k]
//                                         * w[a,b,k,m];
// a tap whose input position is padding is no term.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

template <class T>
struct DepthwiseConv2dDirect {
  ConvShape s;
  const T* x;  // NHWC
  const T* w;  // RSCM = [KH, KW, C*M] with channel k*M + m
  T* y;        // NHWC [N, OH, OW, C*M]
  CONVCHECK_HD void operator()(int64_t idx) const {
    const int64_t o = idx % s.O, pix = idx / s.O;
    const int64_t j = pix % s.OW, ni = pix / s.OW;
    const int64_t i = ni % s.OH, n = ni / s.OH;
    const int64_t k = o / s.M;
    T acc = T(0);
    for (int64_t a = 0; a < s.KH; ++a) {
      const int64_t h = i * s.sh + a * s.dh - s.pad_top;
      if (h < 0 || h >= s.H) continue;
      for (int64_t b = 0; b < s.KW; ++b) {
        const int64_t wc = j * s.sw + b * s.dw - s.pad_left;
        if (wc < 0 || wc >= s.W) continue;
        acc = mul_add(x[((n * s.H + h) * s.W + wc) * s.C + k], w[(a * s.KW + b) * s.O + o], acc);
      }
    }
    y[idx] = acc;
  }
};

}  // namespace convcheck::gpu::k
