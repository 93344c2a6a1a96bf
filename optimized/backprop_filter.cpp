// Conv2DBackpropFilter (spec B §3.3): per tap, a GEMM of the shifted input's transpose with
// out_backprop, summed over every output pixel, reading both in place (kernels.h, FilterTile).
#include <algorithm>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "optimized/kernels.h"
#include "optimized/ops.h"

namespace convcheck::opt {

// Index law, written once (the adjoint of the forward law in w):
//   dw[a,b,q,o] = sum_n sum_{i<OH} sum_{j<OW}
//                 dy[n,i,j,o] * X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q)
// with g(o) = o / (O/G); padding positions are not terms.
//
// For tap (a, b) and output row (n, i), the terms come from input row r = i*sh + a*dh - pad_top
// (none when r is outside the input) and from the output columns j whose input column
// j*sw + b*dw - pad_left is inside: one interval [j_lo, j_hi), a "segment". Padding is never
// visited, so no padding zero is ever multiplied (a NaN or Inf in out_backprop reaches exactly the
// elements the law connects it to).
//
// Work: tiles of MR filter rows q x NR output channels o of one tap and group. Output rows are
// walked in blocks whose input and out_backprop rows fit in L2; every tile of a thread runs over
// the block before the next block. When the filter is small beside the activations, the output
// rows are also split into a fixed number of chunks (a function of the problem alone), each
// summed into its own partial filter, and the partials are added in chunk order at the end; so
// each thread streams only its share of the activations. Threads take (chunk, tile range) items;
// a tile accumulates its terms in output-row order, then column order, so results do not depend
// on the thread count.

namespace {

// Bytes of input and out_backprop rows a thread walks per block, from the L2 size the OS reports
// (internal.h: cache_sizes()): about the L2 when every tap re-reads the block (measured best for
// 3x3 and 5x5 filters on a 1 MiB L2); an eighth of it for 1x1 filters, whose single tap sweeps
// each block fewer times (measured best for ResNet's 1x1).
int64_t block_bytes(int64_t taps) {
  const int64_t l2 = cache_sizes().l2;
  return taps == 1 ? l2 / 8 : l2;
}

// Chunks: kMaxChunks (a multiple of the usual thread counts, for balance) when the activations are
// at least kChunkRatio times the partial filters, else 1.
constexpr int64_t kMaxChunks = 8;
constexpr int64_t kChunkRatio = 16;

}  // namespace

template <class T>
void backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw) {
  const int64_t taps = g.KH * g.KW, Og = g.O / g.G, rows = g.N * g.OH;
  if (rows == 0 || g.OW == 0 || Og == 0 || taps == 0) {
    std::fill(dw, dw + taps * g.Cf * g.O, T(0));  // no terms
    return;
  }

  // Segments of every (tap, output row), in that order.
  std::vector<Segment> seg(static_cast<std::size_t>(taps * rows));
  for (int64_t a = 0; a < g.KH; ++a) {
    for (int64_t b = 0; b < g.KW; ++b) {
      const int64_t off = b * g.dw - g.pad_left;  // input column of output column j: j*sw + off
      const int64_t j_lo = std::clamp<int64_t>(ceil_div(-off, g.sw), 0, g.OW);
      const int64_t j_hi = std::clamp<int64_t>(floor_div(g.W - 1 - off, g.sw) + 1, j_lo, g.OW);
      for (int64_t row = 0; row < rows; ++row) {
        const int64_t n = row / g.OH, i = row % g.OH;
        const int64_t r = i * g.sh + a * g.dh - g.pad_top;
        Segment& s = seg[static_cast<std::size_t>((a * g.KW + b) * rows + row)];
        if (r < 0 || r >= g.H || j_lo >= j_hi) {
          s = {0, 0, 0};
          continue;
        }
        s.x = ((n * g.H + r) * g.W + j_lo * g.sw + off) * g.C;
        s.dy = (row * g.OW + j_lo) * g.O;
        s.count = j_hi - j_lo;
      }
    }
  }

  const KernelTable<T>& kt = kernels<T>();
  const int variant = kt.variant_for(Og);
  const int64_t NR = kt.nr(variant), MR = kt.mr;
  const int64_t qblocks = (g.Cf + MR - 1) / MR, oblocks = (Og + NR - 1) / NR;
  const int64_t tiles = g.G * taps * qblocks * oblocks;
  // Input rows one output row spans: the stride, but never more than the input has (a stride up to
  // 2^60 times a row would overflow, issue 8).
  const int64_t span_rows = std::min(g.sh, g.H);
  const int64_t row_bytes =
      (g.OW * g.O + span_rows * g.W * g.C) * static_cast<int64_t>(sizeof(T)) + 1;
  const int64_t block_rows = std::max<int64_t>(1, block_bytes(taps) / row_bytes);
  auto kernel = kt.filter[variant];
  const int threads = thread_count();

  const int64_t filter_elements = taps * g.Cf * g.O;
  const int64_t activation_elements = rows * (g.OW * g.O + span_rows * g.W * g.C);
  const int64_t chunks =
      activation_elements >= kChunkRatio * kMaxChunks * filter_elements && rows >= kMaxChunks
          ? kMaxChunks
          : 1;
  // Chunk 0 sums into dw itself, chunk c > 0 into partial + (c - 1) * filter_elements.
  T* const partial =
      chunks > 1 ? scratch_array<T>(ScratchSlot::partial_sums, (chunks - 1) * filter_elements)
                 : nullptr;
  const int64_t parts = std::max<int64_t>(1, ceil_div(threads, chunks));
  const int64_t items = chunks * parts;

#pragma omp parallel num_threads(threads) if (threads > 1 && items * tiles > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int tid = 0, nt = 1;
#endif
    int64_t i0, i1;
    split_range(items, nt, tid, &i0, &i1);
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t chunk = item / parts, part = item % parts;
      int64_t r0, r1, t0, t1;
      split_range(rows, static_cast<int>(chunks), static_cast<int>(chunk), &r0, &r1);
      split_range(tiles, static_cast<int>(parts), static_cast<int>(part), &t0, &t1);
      T* const out = chunk == 0 ? dw : partial + (chunk - 1) * filter_elements;
      for (int64_t row0 = r0; row0 < r1; row0 += block_rows) {
        const int64_t nrow = std::min(block_rows, r1 - row0);
        for (int64_t t = t0; t < t1; ++t) {
          // Tile t = ((grp * taps + tap) * oblocks + ob) * qblocks + qb.
          const int64_t qb = t % qblocks, ob = t / qblocks % oblocks;
          const int64_t tap = t / (oblocks * qblocks) % taps, grp = t / (oblocks * qblocks * taps);
          const int64_t q0 = qb * MR, o0 = grp * Og + ob * NR;
          FilterTile<T> ft;
          ft.x = x + grp * g.Cf + q0;
          // A segment with two or more columns has sw < W; otherwise the step is never taken, and
          // clamping keeps a huge stride's sw * C from overflowing.
          ft.x_step = std::min(g.sw, std::max<int64_t>(g.W, 1)) * g.C;
          ft.dy = dy + o0;
          ft.dy_step = g.O;
          ft.seg = seg.data() + tap * rows + row0;
          ft.nseg = nrow;
          ft.c = out + (tap * g.Cf + q0) * g.O + o0;
          ft.ldc = g.O;
          ft.mr = std::min(MR, g.Cf - q0);
          ft.nr = std::min(NR, Og - ob * NR);
          ft.accumulate = row0 > r0;  // the chunk's first block stores (every tile covers its C)
          kernel(ft);
        }
      }
    }
    if (chunks > 1) {
      // Partials in chunk order.
#pragma omp barrier
      int64_t e0, e1;
      split_range(filter_elements, nt, tid, &e0, &e1);
      for (int64_t c = 1; c < chunks; ++c) {
        const T* src = partial + (c - 1) * filter_elements;
        for (int64_t e = e0; e < e1; ++e) dw[e] += src[e];
      }
    }
  }
}

template void backprop_filter<float>(const Geometry&, const float*, const float*, float*);
template void backprop_filter<double>(const Geometry&, const double*, const double*, double*);
template void backprop_filter<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*,
                                        uint32_t*);

}  // namespace convcheck::opt
