// Conv2D (spec B §3.1), direct path: one thread per output element, output channels fastest (so a
// warp reads consecutive filter elements and one input pixel, broadcast).
//
// Index law, written once:
//   y[n,i,j,o] = sum_{a<KH} sum_{b<KW} sum_{q<Cf} x[n, i*sh + a*dh - pad_top, j*sw + b*dw -
//   pad_left,
//                                                  g*Cf + q] * w[a,b,q,o],   g = o / (O/G);
// a tap whose input position is outside [0,H) x [0,W) (padding) is no term.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

template <class T>
struct Conv2dDirect {
  ConvShape s;
  const T* x;  // NHWC
  const T* w;  // HWIO
  T* y;        // NHWC [N, OH, OW, O]
  CONVCHECK_HD void operator()(int64_t idx) const {
    const int64_t o = idx % s.O, pix = idx / s.O;
    const int64_t j = pix % s.OW, ni = pix / s.OW;
    const int64_t i = ni % s.OH, n = ni / s.OH;
    const int64_t c0 = o / (s.O / s.G) * s.Cf;
    T acc = T(0);
    for (int64_t a = 0; a < s.KH; ++a) {
      const int64_t h = i * s.sh + a * s.dh - s.pad_top;
      if (h < 0 || h >= s.H) continue;
      for (int64_t b = 0; b < s.KW; ++b) {
        const int64_t wc = j * s.sw + b * s.dw - s.pad_left;
        if (wc < 0 || wc >= s.W) continue;
        const T* xs = x + ((n * s.H + h) * s.W + wc) * s.C + c0;
        const T* ws = w + (a * s.KW + b) * s.Cf * s.O + o;
        for (int64_t q = 0; q < s.Cf; ++q) acc = mul_add(xs[q], ws[q * s.O], acc);
      }
    }
    y[idx] = acc;
  }
};

}  // namespace convcheck::gpu::k
