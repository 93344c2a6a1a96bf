// DepthwiseConv2dNativeBackpropInput (spec B §3.5, real dilation), direct path: a memory-bound
// gather, one thread per input_backprop element, channels fastest, visiting only the taps of the
// element's stride phase (common.cuh tap_range; no inserted zero is multiplied).
//
// Index law, written once:
//   dx[n,h,w,k] = sum_{m<M} sum_{a<KH} sum_{b<KW} dy[n,i,j,k*M+m] * w[a,b,k,m],
//   i = (h + pad_top - a*dh) / sh, j = (w + pad_left - b*dw) / sw;
// a term exists only when both divisions are exact and 0 <= i < OH, 0 <= j < OW.
#pragma once

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

template <class T>
struct DepthwiseBackpropInputDirect {
  ConvShape s;
  const T* w;   // RSCM
  const T* dy;  // NHWC [N, OH, OW, C*M]
  T* dx;        // NHWC [N, H, W, C]
  CONVCHECK_HD void operator()(int64_t idx) const {
    const int64_t k = idx % s.C, pix = idx / s.C;
    const int64_t wc = pix % s.W, nh = pix / s.W;
    const int64_t h = nh % s.H, n = nh / s.H;
    const TapRange rows = tap_range(h + s.pad_top, s.dh, s.sh, s.KH, s.OH);
    const TapRange cols = tap_range(wc + s.pad_left, s.dw, s.sw, s.KW, s.OW);
    T acc = T(0);
    for (int64_t ta = 0; ta < rows.count; ++ta) {
      const int64_t a = rows.first + ta * rows.step, i = rows.i_first - ta * rows.i_step;
      for (int64_t tb = 0; tb < cols.count; ++tb) {
        const int64_t b = cols.first + tb * cols.step, j = cols.i_first - tb * cols.i_step;
        const T* dys = dy + ((n * s.OH + i) * s.OW + j) * s.O + k * s.M;
        const T* ws = w + (a * s.KW + b) * s.O + k * s.M;
        for (int64_t m = 0; m < s.M; ++m) acc = mul_add(dys[m], ws[m], acc);
      }
    }
    dx[idx] = acc;
  }
};

}  // namespace convcheck::gpu::k
