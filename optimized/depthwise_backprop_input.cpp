// DepthwiseConv2dNativeBackpropInput (spec B §3.5 with real dilation and unequal strides, A.7): a
// direct gather over the taps that reach each input position, vectorised over channels
// (multiplier 1), or scalar loops over (channel, multiplier) otherwise. Memory-bound: one pass
// over out_backprop and the result, the filter in L1.
#include <algorithm>
#include <atomic>
#include <vector>

#include "optimized/kernels.h"
#include "optimized/ops.h"

namespace convcheck::opt {

namespace {
std::atomic<int64_t> g_prefetching_rows{0};  // prefetching_depthwise_rows_for_tests
std::atomic<int64_t> g_window_runs{0};       // window_depthwise_runs_for_tests
std::atomic<int> g_window_override{-1};      // override_depthwise_row_window
}  // namespace

int64_t prefetching_depthwise_rows_for_tests() {
  return g_prefetching_rows.exchange(0, std::memory_order_relaxed);
}

int64_t window_depthwise_runs_for_tests() {
  return g_window_runs.exchange(0, std::memory_order_relaxed);
}

bool depthwise_row_window(bool kernels_have_it, bool by_rule, int64_t pixel_bytes) {
  const int forced = g_window_override.load(std::memory_order_relaxed);
  if (!kernels_have_it || forced == 0) return false;
  return forced == 1 ||
         (by_rule && 3 * (kDepthwiseWindowColumns + 2) * pixel_bytes <= cache_sizes().l1d);
}

void override_depthwise_row_window(int window) {
  g_window_override.store(window < 0 ? -1 : window != 0, std::memory_order_relaxed);
}

// Index law, written once:
//   dx[n,r,c,k] = sum_{m<M} sum_{a<KH} sum_{b<KW} dy[n,i,j,k*M+m] * w[a,b,k,m]
//   with i = (r + pad_top - a*dh) / sh and j = (c + pad_left - b*dw) / sw exact and in range.
// Row taps of input row r: those a (with their i). Columns by stride phase gamma = c mod sw:
// c = gamma + t*sw sees the filter columns b with (gamma + pad_left - b*dw) divisible by sw, at
// j = t + (gamma + pad_left - b*dw) / sw when inside [0, OW) (runs of columns with the same taps,
// kernels.h). Each element sums its taps in (a, b[, m]) order; positions no tap reaches are 0.

template <class T>
void depthwise_backprop_input(const Geometry& g, const T* w, const T* dy, T* dx, bool may_stream) {
  std::vector<ColumnRun> runs;
  std::vector<int64_t> col_taps;
  for (int64_t gamma = 0; gamma < std::min(g.sw, g.W); ++gamma) {
    std::vector<int64_t> cand_b, cand_off;
    for (int64_t b = 0; b < g.KW; ++b) {
      const int64_t t = gamma + g.pad_left - b * g.dw;
      if (floor_div(t, g.sw) * g.sw != t) continue;
      cand_b.push_back(b);
      cand_off.push_back(t / g.sw);
    }
    append_column_runs(gamma, g.sw, ceil_div(g.W - gamma, g.sw), 1, g.OW, cand_b, cand_off, &runs,
                       &col_taps);
  }
  const KernelTable<T>& kt = kernels<T>();
  const int64_t rows = g.N * g.H;
  // Streamed stores (stream_depthwise_rows, internal.h): a plain store first reads the result's
  // line from memory (or L3) only to overwrite it; a non-temporal one writes the whole line.
  // Faster on both ISAs, 1 and 2 threads, in L3 and past it (the README, bench/xeon-2026-11-29e).
  const bool stream =
      stream_depthwise_rows(g, kt.isa, dx, rows * g.W * g.C, int64_t{sizeof(T)}, may_stream);
  const int threads = thread_count();
  // Pairs (a, out_backprop row) of the filter rows that reach input row `row`.
  auto row_taps = [&](int64_t row, std::vector<int64_t>* rt) {
    const int64_t n = row / g.H, r = row % g.H;
    rt->clear();
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t ti = r + g.pad_top - a * g.dh;
      if (ti < 0 || ti % g.sh != 0 || ti / g.sh >= g.OH) continue;
      rt->push_back(a);
      rt->push_back(n * g.OH + ti / g.sh);
    }
  };
  const int64_t dy_row = g.OW * g.O;  // an out_backprop row's elements
  const bool prefetch = prefetch_next_rows(g.N * g.OH * dy_row * int64_t{sizeof(T)},
                                           dy_row * int64_t{sizeof(T)}, threads);
  const bool to_l1 =
      depthwise_input_rows_to_l1() && dy_row * int64_t{sizeof(T)} <= cache_sizes().l1d;
  const bool window = depthwise_row_window(kt.depthwise_row_window, kt.depthwise_row_window_by_rule,
                                           g.C * int64_t{sizeof(T)});
  auto run_rows = [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> rt, next;  // row taps of this row and of the next
    int64_t prefetching = 0, windows = 0;
    for (int64_t row = r0; row < r1; ++row) {
      row_taps(row, &rt);
      const int64_t nrt = static_cast<int64_t>(rt.size() / 2);
      T* out = dx + row * g.W * g.C;
      if (g.M == 1) {
        // Tile-major (kernels_impl.h, depthwise_run): one pass over the row, which the hardware
        // prefetcher follows, and where out_backprop comes from L3 or memory, the next input
        // row's highest out_backprop row prefetched into L2 by software (prefetch_next_rows;
        // into L1 where depthwise_input_rows_to_l1); runs whose taps suit it through the window
        // where it fits (depthwise_row_window).
        DepthwiseRow<T> dr;
        dr.src = dy;
        dr.src_w = g.OW;
        dr.C = g.C;
        dr.KW = g.KW;
        dr.w = w;
        dr.row_taps = rt.data();
        dr.nrow_taps = nrt;
        dr.runs = runs.data();
        dr.nruns = static_cast<int64_t>(runs.size());
        dr.col_taps = col_taps.data();
        dr.v_step = g.sw;
        dr.src_step = 1;
        dr.out = out;
        dr.stream = stream;
        dr.window = window;
        dr.slid = &windows;
        // The next input row's highest out_backprop row, where new (row_taps lists it first).
        if (prefetch && nrt > 0 && (row + 1) % g.H != 0) {
          row_taps(row + 1, &next);
          if (!next.empty()) set_next_rows(&dr, dy, dy_row, rt[1], next[1]);
          dr.next_to_l1 = to_l1;
          prefetching += dr.next_src != nullptr;
        }
        kt.depthwise_row(dr);
        continue;
      }
      std::fill(out, out + g.W * g.C, T(0));
      for (const ColumnRun& run : runs) {
        for (int64_t t = 0; t < run.count; ++t) {
          T* oc = out + (run.v0 + t * g.sw) * g.C;
          for (int64_t e = 0; e < nrt; ++e) {
            const int64_t a = rt[2 * e];
            const T* dr = dy + rt[2 * e + 1] * g.OW * g.O;
            for (int64_t k = run.tap_begin; k < run.tap_end; ++k) {
              const int64_t b = col_taps[2 * k];
              const T* ds = dr + (col_taps[2 * k + 1] + t) * g.O;
              const T* ws = w + (a * g.KW + b) * g.C * g.M;
              for (int64_t c = 0; c < g.C; ++c) {
                T acc = oc[c];
                for (int64_t m = 0; m < g.M; ++m) acc += ds[c * g.M + m] * ws[c * g.M + m];
                oc[c] = acc;
              }
            }
          }
        }
      }
    }
    if (prefetching > 0) g_prefetching_rows.fetch_add(prefetching, std::memory_order_relaxed);
    if (windows > 0) g_window_runs.fetch_add(windows, std::memory_order_relaxed);
  };
  depthwise_row_pieces(threads, rows, stream, run_rows);
}

template void depthwise_backprop_input<float>(const Geometry&, const float*, const float*, float*,
                                              bool);
template void depthwise_backprop_input<double>(const Geometry&, const double*, const double*,
                                               double*, bool);
template void depthwise_backprop_input<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*,
                                                 uint32_t*, bool);

}  // namespace convcheck::opt
