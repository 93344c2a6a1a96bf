// Conv2DBackpropFilter (spec B §3.3).
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once (the adjoint of the forward law in w):
//   dw[a,b,q,o] = sum_n sum_{i<OH} sum_{j<OW}
//                 dy[n,i,j,o] * X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q)
// with g(o) = o / (O/G); padding positions are not terms.
struct BackpropFilterLaw {
  const Geometry& g;
  const double* x;   // [N,H,W,C]
  const double* dy;  // [N,OH,OW,O]

  int64_t count() const { return g.KH * g.KW * g.Cf * g.O; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t o = e % g.O, q = e / g.O % g.Cf, b = e / (g.O * g.Cf) % g.KW,
                  a = e / (g.O * g.Cf * g.KW);
    const int64_t channel = o / (g.O / g.G) * g.Cf + q;
    for (int64_t n = 0; n < g.N; ++n) {
      for (int64_t i = 0; i < g.OH; ++i) {
        const int64_t r = i * g.sh + a * g.dh - g.pad_top;
        if (r < 0 || r >= g.H) continue;
        for (int64_t j = 0; j < g.OW; ++j) {
          const int64_t c = j * g.sw + b * g.dw - g.pad_left;
          if (c < 0 || c >= g.W) continue;
          f(dy[((n * g.OH + i) * g.OW + j) * g.O + o],
            x[((n * g.H + r) * g.W + c) * g.C + channel]);
        }
      }
    }
  }
};

}  // namespace

void backprop_filter(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out) {
  evaluate(BackpropFilterLaw{g, c.input.data(), c.out_backprop.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
