// DepthwiseConv2dNativeBackpropInput (spec B §3.5 with real dilation and unequal strides, A.7).
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once:
//   dx[n,r,c,k] = sum_{m<M} sum_{a<KH} sum_{b<KW} dy[n,i,j,k*M+m] * w[a,b,k,m]
//   with i = (r + pad_top - a*dh) / sh and j = (c + pad_left - b*dw) / sw exact and in range.
struct DepthwiseBackpropInputLaw {
  const Geometry& g;
  const double* w;   // [KH,KW,C,M]
  const double* dy;  // [N,OH,OW,C*M]

  int64_t count() const { return g.N * g.H * g.W * g.C; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t k = e % g.C, c = e / g.C % g.W, r = e / (g.C * g.W) % g.H,
                  n = e / (g.C * g.W * g.H);
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t ti = r + g.pad_top - a * g.dh;
      if (ti < 0 || ti % g.sh != 0 || ti / g.sh >= g.OH) continue;
      const int64_t i = ti / g.sh;
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t tj = c + g.pad_left - b * g.dw;
        if (tj < 0 || tj % g.sw != 0 || tj / g.sw >= g.OW) continue;
        const int64_t j = tj / g.sw;
        const double* dys = dy + ((n * g.OH + i) * g.OW + j) * g.O + k * g.M;
        const double* ws = w + ((a * g.KW + b) * g.C + k) * g.M;
        for (int64_t m = 0; m < g.M; ++m) f(dys[m], ws[m]);
      }
    }
  }
};

}  // namespace

void depthwise_backprop_input(const Geometry& g, DType t, const Canonical& c, Mode mode,
                              Outputs& out) {
  evaluate(DepthwiseBackpropInputLaw{g, c.filter.data(), c.out_backprop.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
