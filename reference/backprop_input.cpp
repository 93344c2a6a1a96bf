// Conv2DBackpropInput (spec B §3.2), and conv2d_transpose, which is exactly this op (spec A.8).
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once (the adjoint of the forward law, as a gather):
//   dx[n,r,c,ch] = sum_{o in group g} sum_{a<KH} sum_{b<KW} dy[n,i,j,o] * w[a,b,q,o]
//   with g = ch / Cf, q = ch mod Cf, i = (r + pad_top - a*dh) / sh, j = (c + pad_left - b*dw) / sw;
// a term exists only when both divisions are exact and 0 <= i < OH, 0 <= j < OW. Input positions
// no window reads get no terms (and so 0).
struct BackpropInputLaw {
  const Geometry& g;
  const double* w;   // [KH,KW,Cf,O]
  const double* dy;  // [N,OH,OW,O]

  int64_t count() const { return g.N * g.H * g.W * g.C; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t ch = e % g.C, c = e / g.C % g.W, r = e / (g.C * g.W) % g.H,
                  n = e / (g.C * g.W * g.H);
    const int64_t group = ch / g.Cf, q = ch % g.Cf, per_group = g.O / g.G;
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t ti = r + g.pad_top - a * g.dh;
      if (ti < 0 || ti % g.sh != 0 || ti / g.sh >= g.OH) continue;
      const int64_t i = ti / g.sh;
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t tj = c + g.pad_left - b * g.dw;
        if (tj < 0 || tj % g.sw != 0 || tj / g.sw >= g.OW) continue;
        const int64_t j = tj / g.sw;
        const double* dys = dy + ((n * g.OH + i) * g.OW + j) * g.O + group * per_group;
        const double* ws = w + ((a * g.KW + b) * g.Cf + q) * g.O + group * per_group;
        for (int64_t o = 0; o < per_group; ++o) f(dys[o], ws[o]);
      }
    }
  }
};

}  // namespace

void backprop_input(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out) {
  evaluate(BackpropInputLaw{g, c.filter.data(), c.out_backprop.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
