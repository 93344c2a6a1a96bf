// DepthwiseConv2dNativeBackpropFilter (spec B §3.5 with real dilation; zero-filled when
// out_backprop is empty, spec A.6).
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once:
//   dw[a,b,k,m] = sum_n sum_{i<OH} sum_{j<OW}
//                 dy[n,i,j,k*M+m] * X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, k)
struct DepthwiseBackpropFilterLaw {
  const Geometry& g;
  const double* x;   // [N,H,W,C]
  const double* dy;  // [N,OH,OW,C*M]

  int64_t count() const { return g.KH * g.KW * g.C * g.M; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t m = e % g.M, k = e / g.M % g.C, b = e / (g.M * g.C) % g.KW,
                  a = e / (g.M * g.C * g.KW);
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t i = 0; i < g.OH; ++i) {
        const int64_t r = i * g.sh + a * g.dh - g.pad_top;
        if (r < 0 || r >= g.H) continue;
        for (int64_t j = 0; j < g.OW; ++j) {
          const int64_t c = j * g.sw + b * g.dw - g.pad_left;
          if (c < 0 || c >= g.W) continue;
          f(dy[((n * g.OH + i) * g.OW + j) * g.O + k * g.M + m],
            x[((n * g.H + r) * g.W + c) * g.C + k]);
        }
      }
    }
  }
};

}  // namespace

void depthwise_backprop_filter(const Geometry& g, DType t, const Canonical& c, Mode mode,
                               Outputs& out) {
  evaluate(DepthwiseBackpropFilterLaw{g, c.input.data(), c.out_backprop.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
