// Forward Conv2D (spec B §3.1): cross-correlation with strides, dilations, padding and groups.
#include "reference/ops.h"

namespace convcheck::ref {

namespace {

// Index law, written once:
//   y[n,i,j,o] = sum_{a<KH} sum_{b<KW} sum_{q<Cf}
//                X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q) * w[a,b,q,o]
// where X is x inside [0,H) x [0,W) and 0 outside (padding terms are not terms), and output
// channel o belongs to group g(o) = o / (O/G).
struct Conv2dLaw {
  const Geometry& g;
  const double* x;  // [N,H,W,C]
  const double* w;  // [KH,KW,Cf,O]

  int64_t count() const { return g.N * g.OH * g.OW * g.O; }

  template <class F>
  void terms(int64_t e, F&& f) const {
    const int64_t o = e % g.O, j = e / g.O % g.OW, i = e / (g.O * g.OW) % g.OH,
                  n = e / (g.O * g.OW * g.OH);
    const int64_t group = o / (g.O / g.G);
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t r = i * g.sh + a * g.dh - g.pad_top;
      if (r < 0 || r >= g.H) continue;
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t c = j * g.sw + b * g.dw - g.pad_left;
        if (c < 0 || c >= g.W) continue;
        const double* xs = x + ((n * g.H + r) * g.W + c) * g.C + group * g.Cf;
        const double* ws = w + (a * g.KW + b) * g.Cf * g.O + o;
        for (int64_t q = 0; q < g.Cf; ++q) f(xs[q], ws[q * g.O]);
      }
    }
  }
};

}  // namespace

void conv2d(const Geometry& g, DType t, const Canonical& c, Mode mode, Outputs& out) {
  evaluate(Conv2dLaw{g, c.input.data(), c.filter.data()}, t, c, mode, out);
}

}  // namespace convcheck::ref
