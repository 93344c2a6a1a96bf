// DepthwiseConv2dNative (spec B §3.5 with real dilation, spec A.7).
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once: output channel k*M + m reads input channel k only,
//   y[n,i,j,k*M+m] = sum_{a<KH} sum_{b<KW} X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, k)
//                                          * w[a,b,k,m]
struct DepthwiseLaw {
  const Geometry& g;
  const double* x;  // [N,H,W,C]
  const double* w;  // [KH,KW,C,M]

  int64_t count() const { return g.N * g.OH * g.OW * g.O; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t oc = e % g.O, j = e / g.O % g.OW, i = e / (g.O * g.OW) % g.OH,
                  n = e / (g.O * g.OW * g.OH);
    const int64_t k = oc / g.M, m = oc % g.M;
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t r = i * g.sh + a * g.dh - g.pad_top;
      if (r < 0 || r >= g.H) continue;
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t c = j * g.sw + b * g.dw - g.pad_left;
        if (c < 0 || c >= g.W) continue;
        f(x[((n * g.H + r) * g.W + c) * g.C + k], w[((a * g.KW + b) * g.C + k) * g.M + m]);
      }
    }
  }
};

}  // namespace

void depthwise_conv2d(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out) {
  evaluate(DepthwiseLaw{g, c.input.data(), c.filter.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
