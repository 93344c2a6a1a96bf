// DepthwiseConv2dNative (spec B §3.5 with real dilation and unequal strides, spec A.7): a direct
// gather of the non-padding taps, vectorised over channels (multiplier 1), or scalar loops over
// (channel, multiplier) otherwise.
#include <algorithm>
#include <vector>

#include "optimized/kernels.h"
#include "optimized/ops.h"

namespace convcheck::opt {

// Index law, written once: output channel k*M + m reads input channel k only,
//   y[n,i,j,k*M+m] = sum_{a<KH} sum_{b<KW} X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, k)
//                                          * w[a,b,k,m]
// Row taps of output row i: a with input row r = i*sh + a*dh - pad_top inside; column taps of
// output column j: b with input column j*sw + b*dw - pad_left inside (runs of columns with the
// same taps, kernels.h). Each element sums its taps in (a, b) order.

template <class T>
void depthwise_conv2d(const Geometry& g, const T* x, const T* w, T* y, bool may_stream) {
  std::vector<int64_t> cand_b, cand_off;
  for (int64_t b = 0; b < g.KW; ++b) {
    cand_b.push_back(b);
    cand_off.push_back(b * g.dw - g.pad_left);
  }
  std::vector<ColumnRun> runs;
  std::vector<int64_t> col_taps;
  append_column_runs(0, 1, g.OW, g.sw, g.W, cand_b, cand_off, &runs, &col_taps);
  const KernelTable<T>& kt = kernels<T>();
  const int64_t rows = g.N * g.OH;
  // Streamed stores as depthwise backprop input's (its file says why), but not under AVX-512,
  // where MobileNet's stride-1 layers read slower with them (why is not known; figures in
  // bench/xeon-2026-11-29e).
  const bool stream =
      kt.isa != Isa::avx512 &&
      stream_depthwise_rows(g, kt.isa, y, rows * g.OW * g.O, int64_t{sizeof(T)}, may_stream);
  const int threads = thread_count();
  auto run_rows = [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> rt;  // pairs (a, input row) of the current row
    for (int64_t row = r0; row < r1; ++row) {
      const int64_t n = row / g.OH, i = row % g.OH;
      rt.clear();
      for (int64_t a = 0; a < g.KH; ++a) {
        const int64_t r = i * g.sh + a * g.dh - g.pad_top;
        if (r < 0 || r >= g.H) continue;
        rt.push_back(a);
        rt.push_back(n * g.H + r);
      }
      const int64_t nrt = static_cast<int64_t>(rt.size() / 2);
      T* out = y + row * g.OW * g.O;
      if (g.M == 1) {
        DepthwiseRow<T> dr;
        dr.src = x;
        dr.src_w = g.W;
        dr.C = g.C;
        dr.KW = g.KW;
        dr.w = w;
        dr.row_taps = rt.data();
        dr.nrow_taps = nrt;
        dr.runs = runs.data();
        dr.nruns = static_cast<int64_t>(runs.size());
        dr.col_taps = col_taps.data();
        dr.v_step = 1;
        dr.src_step = g.sw;
        dr.out = out;
        dr.stream = stream;
        kt.depthwise_row(dr);
        continue;
      }
      std::fill(out, out + g.OW * g.O, T(0));
      for (const ColumnRun& run : runs) {
        for (int64_t t = 0; t < run.count; ++t) {
          T* oj = out + (run.v0 + t) * g.O;
          for (int64_t e = 0; e < nrt; ++e) {
            const int64_t a = rt[2 * e];
            const T* xr = x + rt[2 * e + 1] * g.W * g.C;
            for (int64_t k = run.tap_begin; k < run.tap_end; ++k) {
              const int64_t b = col_taps[2 * k];
              const T* xs = xr + (col_taps[2 * k + 1] + t * g.sw) * g.C;
              const T* ws = w + (a * g.KW + b) * g.C * g.M;
              for (int64_t c = 0; c < g.C; ++c) {
                const T xv = xs[c];
                for (int64_t m = 0; m < g.M; ++m) oj[c * g.M + m] += xv * ws[c * g.M + m];
              }
            }
          }
        }
      }
    }
  };
  depthwise_row_pieces(threads, rows, stream, run_rows);
}

template void depthwise_conv2d<float>(const Geometry&, const float*, const float*, float*, bool);
template void depthwise_conv2d<double>(const Geometry&, const double*, const double*, double*,
                                       bool);
template void depthwise_conv2d<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*,
                                         uint32_t*, bool);

}  // namespace convcheck::opt
