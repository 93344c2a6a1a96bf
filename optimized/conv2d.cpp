// Conv2D (spec B §3.1), forward: an implicit GEMM over output pixels (implicit_gemm.h), or, when
// the filter holds NaN or Inf, a direct loop nest that visits only the non-padding taps.
#include <algorithm>
#include <vector>

#include "optimized/implicit_gemm.h"
#include "optimized/ops.h"

namespace convcheck::opt {

// Index law, written once:
//   y[n,i,j,o] = sum_{a<KH} sum_{b<KW} sum_{q<Cf}
//                X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q) * w[a,b,q,o]
// with X = 0 (no term) outside the input and g(o) = o / (O/G).
//
// As an implicit GEMM: one phase, the grid of output pixels; tap (a, b) reads input pixel
// (i*sh + a*dh - pad_top, j*sw + b*dw - pad_left). A padding tap reads a row of zeros, which is
// the same as skipping it only for a finite filter (0 * Inf = NaN): the direct loops handle the
// rest.

namespace {

template <class T>
void conv2d_direct(const Geometry& g, const T* x, const T* w, T* y) {
  const int64_t Og = g.O / g.G, rows = g.N * g.OH;
  const int threads = thread_count();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t n = row / g.OH, i = row % g.OH;
    for (int64_t j = 0; j < g.OW; ++j) {
      T* out = y + ((n * g.OH + i) * g.OW + j) * g.O;
      std::fill(out, out + g.O, T(0));
      for (int64_t a = 0; a < g.KH; ++a) {
        const int64_t r = i * g.sh + a * g.dh - g.pad_top;
        if (r < 0 || r >= g.H) continue;
        for (int64_t b = 0; b < g.KW; ++b) {
          const int64_t c = j * g.sw + b * g.dw - g.pad_left;
          if (c < 0 || c >= g.W) continue;
          const T* xs = x + ((n * g.H + r) * g.W + c) * g.C;
          const T* ws = w + (a * g.KW + b) * g.Cf * g.O;
          for (int64_t grp = 0; grp < g.G; ++grp) {
            for (int64_t q = 0; q < g.Cf; ++q) {
              const T xv = xs[grp * g.Cf + q];
              const T* wq = ws + q * g.O + grp * Og;
              T* og = out + grp * Og;
              for (int64_t o = 0; o < Og; ++o) og[o] += xv * wq[o];
            }
          }
        }
      }
    }
  }
}

}  // namespace

template <class T>
void conv2d(const Geometry& g, const T* x, const T* w, T* y, bool may_stream) {
  ImplicitGemm<T> p;
  p.may_stream = may_stream;
  p.N = g.N;
  p.src = x;
  p.src_h = g.H;
  p.src_w = g.W;
  p.src_c = g.C;
  p.result = y;
  p.res_h = g.OH;
  p.res_w = g.OW;
  p.res_c = g.O;
  p.groups = g.G;
  p.kc = g.Cf;
  p.cols = g.O / g.G;
  p.w = w;
  p.KW = g.KW;
  p.Cf = g.Cf;
  p.O = g.O;
  p.Og = g.O / g.G;
  p.transposed = false;
  Phase ph;
  ph.rows = g.OH;
  ph.cols = g.OW;
  ph.src_row_step = g.sh;
  ph.src_col_step = g.sw;
  // Taps that no output pixel reads inside the input add nothing: leave them out.
  for (int64_t a = 0; a < g.KH; ++a) {
    const int64_t off = a * g.dh - g.pad_top;
    if (g.OH > 0 && off + (g.OH - 1) * g.sh >= 0 && off < g.H) {
      ph.tap_rows.push_back(a);
      ph.row_off.push_back(off);
    }
  }
  for (int64_t b = 0; b < g.KW; ++b) {
    const int64_t off = b * g.dw - g.pad_left;
    if (g.OW > 0 && off + (g.OW - 1) * g.sw >= 0 && off < g.W) {
      ph.tap_cols.push_back(b);
      ph.col_off.push_back(off);
    }
  }
  p.phases.push_back(std::move(ph));
  if (!run_implicit_gemm(p)) conv2d_direct(g, x, w, y);
}

template void conv2d<float>(const Geometry&, const float*, const float*, float*, bool);
template void conv2d<double>(const Geometry&, const double*, const double*, double*, bool);
template void conv2d<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*, uint32_t*, bool);

}  // namespace convcheck::opt
