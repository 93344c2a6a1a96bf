// DepthwiseConv2dNativeBackpropFilter (spec B §3.5 with real dilation; zero-filled when
// out_backprop is empty, spec A.6): tap-wise reductions over output pixels, vectorised over
// channels (multiplier 1), in fixed chunks of output rows whose partial sums are added in chunk
// order (deterministic for every thread count).
#include <algorithm>
#include <atomic>
#include <vector>

#include "optimized/kernels.h"
#include "optimized/ops.h"

namespace convcheck::opt {

// Index law, written once:
//   dw[a,b,k,m] = sum_n sum_{i<OH} sum_{j<OW}
//                 dy[n,i,j,k*M+m] * X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, k)
// For output row (n, i) and filter row a the input row is r = i*sh + a*dh - pad_top (no terms
// when outside); for filter column b the output columns with an inside input column form one
// interval [j_lo(b), j_hi(b)). Padding is never visited.

namespace {

// Chunks: at most kMaxChunks, as many as rows of kChunkElements out_backprop elements take (a
// function of the problem alone, so the summation order is too), chunk k holding rows
// [k * rows / chunks, (k + 1) * rows / chunks): sizes within one of each other, and any run of
// consecutive chunks (a thread's share under a static schedule) within one of its share of the
// rows. Cut at kChunkElements with a short last chunk, MobileNet's dw4s2 made 11 chunks of 10
// rows and one of 2, and at 2 threads one took 60 rows and the other 52 (56 and 56 now).
constexpr int64_t kMaxChunks = 64;
constexpr int64_t kChunkElements = 1 << 15;

std::atomic<int64_t> g_blocked{0};      // blocked_depthwise_filter_for_tests
std::atomic<int64_t> g_prefetching{0};  // prefetching_depthwise_filter_chunks_for_tests
std::atomic<int64_t> g_three_tap{0};    // three_tap_depthwise_filter_chunks_for_tests
std::atomic<int64_t> g_window{0};       // three_tap_window_chunks_for_tests
std::atomic<bool> g_three_tap_allowed{true};

int64_t chunk_begin(int64_t rows, int64_t chunks, int64_t k) {
  return k * rows / chunks;
}

}  // namespace

int64_t blocked_depthwise_filter_for_tests() {
  return g_blocked.exchange(0, std::memory_order_relaxed);
}

int64_t prefetching_depthwise_filter_chunks_for_tests() {
  return g_prefetching.exchange(0, std::memory_order_relaxed);
}

void allow_three_tap_rows(bool allow) {
  g_three_tap_allowed.store(allow, std::memory_order_relaxed);
}

int64_t three_tap_depthwise_filter_chunks_for_tests() {
  return g_three_tap.exchange(0, std::memory_order_relaxed);
}

int64_t three_tap_window_chunks_for_tests() {
  return g_window.exchange(0, std::memory_order_relaxed);
}

template <class T>
void depthwise_backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw) {
  const int64_t taps = g.KH * g.KW, size = taps * g.C * g.M, rows = g.N * g.OH;
  std::fill(dw, dw + size, T(0));
  if (rows == 0 || g.OW == 0 || size == 0) return;
  std::vector<int64_t> j_lo(g.KW), j_hi(g.KW), col_off(g.KW);
  for (int64_t b = 0; b < g.KW; ++b) {
    col_off[b] = b * g.dw - g.pad_left;
    j_lo[b] = std::clamp<int64_t>(ceil_div(-col_off[b], g.sw), 0, g.OW);
    j_hi[b] = std::clamp<int64_t>(floor_div(g.W - 1 - col_off[b], g.sw) + 1, j_lo[b], g.OW);
  }
  const int64_t row_elements = std::max<int64_t>(1, g.OW * g.O);
  const int64_t rows_per_chunk =
      std::max(ceil_div(rows, kMaxChunks), ceil_div(kChunkElements, row_elements));
  const int64_t chunks = ceil_div(rows, rows_per_chunk);
  // Each chunk's partial is zeroed by the thread that runs the chunk, just before its sums (not
  // serially here: up to a few percent of a small layer's 2-thread time).
  Buffer<T> partial(chunks * size);
  const KernelTable<T>& kt = kernels<T>();
  const int threads = thread_count();
  // Rows prefetched a group ahead where out_backprop outgrows the threads' L2s (as backprop input's
  // rule; gated on the larger operand instead, MobileNet dw4s2, whose 6.4 MB input beside a 1.6 MB
  // out_backprop stays in L3 between rounds, read 1.94 -> 1.89 of oneDNN with the prefetch: Zen 4,
  // 2 threads, 14 rounds, bench/zen4-2026-12-03/dw-f-2t.txt).
  const int64_t elem = int64_t{sizeof(T)};
  const bool prefetch =
      prefetch_next_rows(rows * g.OW * g.O * elem, std::max(g.W * g.C, g.OW * g.O) * elem, threads);
  // 3-tap rows whole, a group's taps in registers (kernels_impl.h, depthwise_filter_rows3), under
  // the vector kernels. On a Zen 4 guest (bench/zen4-2026-12-03b, optimized's medians, ms):
  // AVX-512 at 2 threads MobileNet dw1 1.19 -> 1.11, dw3 1.68 -> 1.34, dw4s2 0.26 -> 0.24,
  // 14x14x512 0.30 -> 0.25, and lower at 1 thread on all four; AVX2 at 2 threads 1.32 -> 1.29,
  // 1.66 -> 1.27, 0.41 -> 0.32, 0.43 -> 0.38, lower at 1 thread too but for dw4s2 (stride 2):
  // 0.90 -> 0.96, and 0.019 -> 0.021 in L2 (a trade taken for the 2-thread gain).
  const bool three_tap_rows =
      g.KW == 3 && kt.width > 1 && g_three_tap_allowed.load(std::memory_order_relaxed);
  const bool three_tap_window = three_tap_rows && kt.depthwise_window && g.sw == 1 && g.dw == 1;
  auto run_chunks = [&](int64_t c0, int64_t c1) {
    for (int64_t ch = c0; ch < c1; ++ch) {
      const int64_t row0 = chunk_begin(rows, chunks, ch), row1 = chunk_begin(rows, chunks, ch + 1);
      T* acc = partial.data() + ch * size;
      std::fill(acc, acc + size, T(0));
      // Triples (out_backprop row, a, input row) of the chunk, in row order; then, where the
      // rows are prefetched, those of the next chunk's first row, which this thread runs next
      // unless its share ends here: without them each chunk's first group waited on memory (a
      // seventh of MobileNet dw3's rows: Zen 4, AVX-512, 2 threads, 10 rounds, 1.40 -> 1.30 ms;
      // bench/zen4-2026-12-03b/ahead-2t.txt).
      std::vector<int64_t> list;
      auto add_row = [&](int64_t row) {
        const int64_t n = row / g.OH, i = row % g.OH;
        for (int64_t a = 0; a < g.KH; ++a) {
          const int64_t r = i * g.sh + a * g.dh - g.pad_top;
          if (r < 0 || r >= g.H) continue;
          list.insert(list.end(), {row, a, n * g.H + r});
        }
      };
      for (int64_t row = row0; row < row1; ++row) add_row(row);
      const int64_t nlist = static_cast<int64_t>(list.size() / 3);
      if (prefetch && row1 < rows) add_row(row1);
      const int64_t nahead = static_cast<int64_t>(list.size() / 3) - nlist;
      if (g.M == 1) {
        DepthwiseFilterRows<T> f;
        f.dy = dy;
        f.x = x;
        f.C = g.C;
        f.OW = g.OW;
        f.W = g.W;
        f.KW = g.KW;
        f.sw = g.sw;
        f.rows = list.data();
        f.nrows = nlist;
        f.nahead = nahead;
        f.j_lo = j_lo.data();
        f.j_hi = j_hi.data();
        f.col_off = col_off.data();
        f.acc = acc;
        // Column blocks whose slices take a quarter of L1 (kernels_impl.h, depthwise_filter_block;
        // measured best beside an eighth and a sixteenth on AVX-512, a half and an eighth on AVX2).
        f.block_bytes = cache_sizes().l1d / 4;
        f.prefetch_next = prefetch;
        if (prefetch) g_prefetching.fetch_add(1, std::memory_order_relaxed);
        f.three_tap_rows = three_tap_rows;
        f.three_tap_window = three_tap_window;
        if (three_tap_rows) g_three_tap.fetch_add(1, std::memory_order_relaxed);
        if (three_tap_window) g_window.fetch_add(1, std::memory_order_relaxed);
        if (const int64_t blocked = kt.depthwise_filter(f); blocked > 0)
          g_blocked.fetch_add(blocked, std::memory_order_relaxed);
        continue;
      }
      for (int64_t e = 0; e < nlist; ++e) {
        const T* dyr = dy + list[3 * e] * g.OW * g.O;
        const int64_t a = list[3 * e + 1];
        const T* xr = x + list[3 * e + 2] * g.W * g.C;
        for (int64_t b = 0; b < g.KW; ++b) {
          T* ab = acc + (a * g.KW + b) * g.C * g.M;
          for (int64_t j = j_lo[b]; j < j_hi[b]; ++j) {
            const T* d = dyr + j * g.O;
            const T* xs = xr + (j * g.sw + col_off[b]) * g.C;
            for (int64_t k = 0; k < g.C; ++k) {
              const T xv = xs[k];
              for (int64_t m = 0; m < g.M; ++m) ab[k * g.M + m] += d[k * g.M + m] * xv;
            }
          }
        }
      }
    }
  };
  // Chunks through StealingRanges (internal.h): a thread done early takes a slowed one's last
  // chunks. Each chunk sums into its own partial, whoever runs it.
  parallel_pieces(threads, chunks, 1, run_chunks);
  // Chunk sums in chunk order.
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, size / 1024));
#pragma omp parallel for num_threads(threads) schedule(static) if (parts > 1)
  for (int64_t part = 0; part < parts; ++part) {
    int64_t e0, e1;
    split_range(size, static_cast<int>(parts), static_cast<int>(part), &e0, &e1);
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const T* src = partial.data() + ch * size;
      for (int64_t e = e0; e < e1; ++e) dw[e] += src[e];
    }
  }
}

template void depthwise_backprop_filter<float>(const Geometry&, const float*, const float*, float*);
template void depthwise_backprop_filter<double>(const Geometry&, const double*, const double*,
                                                double*);
template void depthwise_backprop_filter<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*,
                                                  uint32_t*);

}  // namespace convcheck::opt
