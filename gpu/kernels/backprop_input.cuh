// Conv2DBackpropInput (spec B §3.2) and conv2d_transpose, which is exactly this op (spec A.8),
// direct path: one thread per input_backprop element, channels fastest; a gather that visits only
// the taps of the element's stride phase (closed form, common.cuh tap_range), so no product with
// an inserted zero of the strided out_backprop is ever formed.
//
// Index law, written once (the adjoint of the forward law, as a gather):
//   dx[n,h,w,c] = sum_{o in group g} sum_{a<KH} sum_{b<KW} dy[n,i,j,o] * w[a,b,q,o],
//   g = c / Cf, q = c mod Cf, i = (h + pad_top - a*dh) / sh, j = (w + pad_left - b*dw) / sw;
// a term exists only when both divisions are exact and 0 <= i < OH, 0 <= j < OW.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

template <class T>
struct BackpropInputDirect {
  ConvShape s;
  const T* w;   // HWIO
  const T* dy;  // NHWC [N, OH, OW, O]
  T* dx;        // NHWC [N, H, W, C]
  CONVCHECK_HD void operator()(int64_t idx) const {
    const int64_t c = idx % s.C, pix = idx / s.C;
    const int64_t wc = pix % s.W, nh = pix / s.W;
    const int64_t h = nh % s.H, n = nh / s.H;
    const int64_t Og = s.O / s.G, o0 = c / s.Cf * Og, q = c % s.Cf;
    const TapRange rows = tap_range(h + s.pad_top, s.dh, s.sh, s.KH, s.OH);
    const TapRange cols = tap_range(wc + s.pad_left, s.dw, s.sw, s.KW, s.OW);
    T acc = T(0);
    for (int64_t ta = 0; ta < rows.count; ++ta) {
      const int64_t a = rows.first + ta * rows.step, i = rows.i_first - ta * rows.i_step;
      for (int64_t tb = 0; tb < cols.count; ++tb) {
        const int64_t b = cols.first + tb * cols.step, j = cols.i_first - tb * cols.i_step;
        const T* dys = dy + ((n * s.OH + i) * s.OW + j) * s.O + o0;
        const T* ws = w + ((a * s.KW + b) * s.Cf + q) * s.O + o0;
        for (int64_t o = 0; o < Og; ++o) acc = mul_add(dys[o], ws[o], acc);
      }
    }
    dx[idx] = acc;
  }
};

}  // namespace convcheck::gpu::k
