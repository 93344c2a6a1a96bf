// Conv2DBackpropInput (spec B §3.2) and conv2d_transpose, which is exactly this op (spec A.8):
// a stride-phase decomposition into implicit GEMMs (no product with an inserted zero is formed),
// or, when the filter holds NaN or Inf, a direct gather over the non-padding taps.
#include <algorithm>
#include <vector>

#include "optimized/implicit_gemm.h"
#include "optimized/ops.h"

namespace convcheck::opt {

// Index law, written once (the adjoint of the forward law, as a gather):
//   dx[n,r,c,ch] = sum_{o in group g} sum_{a<KH} sum_{b<KW} dy[n,i,j,o] * w[a,b,q,o]
//   with g = ch / Cf, q = ch mod Cf, i = (r + pad_top - a*dh) / sh, j = (c + pad_left - b*dw) / sw;
// a term exists only when both divisions are exact and 0 <= i < OH, 0 <= j < OW.
//
// Stride phases: input rows r = rho + u*sh (rho < sh) all see the same filter rows, those a with
// (rho + pad_top - a*dh) divisible by sh, and read out_backprop row i = u + (rho + pad_top -
// a*dh) / sh; likewise for columns. Each (rho, gamma) phase is an implicit GEMM over its input
// pixels with only its own taps; a phase with no taps is all zeros (input positions no window
// reads, spec B §2.2).

namespace {

template <class T>
void backprop_input_direct(const Geometry& g, const T* w, const T* dy, T* dx) {
  const int64_t Og = g.O / g.G, rows = g.N * g.H;
  const int threads = thread_count();
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t n = row / g.H, r = row % g.H;
    for (int64_t c = 0; c < g.W; ++c) {
      T* out = dx + ((n * g.H + r) * g.W + c) * g.C;
      std::fill(out, out + g.C, T(0));
      for (int64_t a = 0; a < g.KH; ++a) {
        const int64_t ti = r + g.pad_top - a * g.dh;
        if (ti < 0 || ti % g.sh != 0 || ti / g.sh >= g.OH) continue;
        const int64_t i = ti / g.sh;
        for (int64_t b = 0; b < g.KW; ++b) {
          const int64_t tj = c + g.pad_left - b * g.dw;
          if (tj < 0 || tj % g.sw != 0 || tj / g.sw >= g.OW) continue;
          const int64_t j = tj / g.sw;
          const T* dys = dy + ((n * g.OH + i) * g.OW + j) * g.O;
          const T* ws = w + (a * g.KW + b) * g.Cf * g.O;
          for (int64_t ch = 0; ch < g.C; ++ch) {
            const int64_t grp = ch / g.Cf, q = ch % g.Cf;
            const T* d = dys + grp * Og;
            const T* wq = ws + q * g.O + grp * Og;
            T acc = out[ch];
            for (int64_t o = 0; o < Og; ++o) acc += d[o] * wq[o];
            out[ch] = acc;
          }
        }
      }
    }
  }
}

// The filter taps of phase `rho` along one axis: a < K with (rho + pad - a*d) divisible by s,
// and the offset (rho + pad - a*d) / s of the out_backprop index; taps whose out_backprop index
// is outside [0, out) for every grid position are left out (they add nothing).
void phase_taps(int64_t rho, int64_t pad, int64_t K, int64_t d, int64_t s, int64_t grid,
                int64_t out, std::vector<int64_t>* taps, std::vector<int64_t>* offs) {
  for (int64_t a = 0; a < K; ++a) {
    const int64_t t = rho + pad - a * d;
    if (floor_div(t, s) * s != t) continue;
    const int64_t off = t / s;
    if (grid == 0 || off + grid - 1 < 0 || off >= out) continue;
    taps->push_back(a);
    offs->push_back(off);
  }
}

}  // namespace

template <class T>
void backprop_input(const Geometry& g, const T* w, const T* dy, T* dx, bool may_stream) {
  ImplicitGemm<T> p;
  p.may_stream = may_stream;
  p.N = g.N;
  p.src = dy;
  p.src_h = g.OH;
  p.src_w = g.OW;
  p.src_c = g.O;
  p.result = dx;
  p.res_h = g.H;
  p.res_w = g.W;
  p.res_c = g.C;
  p.groups = g.G;
  p.kc = g.O / g.G;
  p.cols = g.Cf;
  p.w = w;
  p.KW = g.KW;
  p.Cf = g.Cf;
  p.O = g.O;
  p.Og = g.O / g.G;
  p.transposed = true;
  for (int64_t rho = 0; rho < std::min(g.sh, g.H); ++rho) {
    for (int64_t gamma = 0; gamma < std::min(g.sw, g.W); ++gamma) {
      Phase ph;
      ph.rows = ceil_div(g.H - rho, g.sh);
      ph.cols = ceil_div(g.W - gamma, g.sw);
      ph.row0 = rho;
      ph.row_step = g.sh;
      ph.col0 = gamma;
      ph.col_step = g.sw;
      ph.src_row_step = 1;
      ph.src_col_step = 1;
      phase_taps(rho, g.pad_top, g.KH, g.dh, g.sh, ph.rows, g.OH, &ph.tap_rows, &ph.row_off);
      phase_taps(gamma, g.pad_left, g.KW, g.dw, g.sw, ph.cols, g.OW, &ph.tap_cols, &ph.col_off);
      p.phases.push_back(std::move(ph));
    }
  }
  if (!run_implicit_gemm(p)) backprop_input_direct(g, w, dy, dx);
}

template void backprop_input<float>(const Geometry&, const float*, const float*, float*, bool);
template void backprop_input<double>(const Geometry&, const double*, const double*, double*, bool);
template void backprop_input<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*, uint32_t*,
                                       bool);

}  // namespace convcheck::opt
