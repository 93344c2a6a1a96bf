// The implicit GEMM's blocking, packing and threading (the maths is kernels.h's igemm tile).
//
// Packing: the filter is packed once per call into panels of NR result channels (the kernel
// variant that covers the group's channel count), zero beyond the last channel; the packing pass
// also checks that the filter is finite (else the caller takes its direct path).
// Blocking, from the cache sizes the OS reports (internal.h: cache_sizes()):
//  - the reduction (taps x kc) in chunks whose packed panel fits half of L2 (whole taps, or slices
//    of one tap's channels when a tap alone is larger);
//  - result pixels in tiles of MR, and tiles in blocks whose source rows fit a quarter of L2;
//  - panels in groups whose packed panels together fit half of L2: a block of tiles runs through
//    every panel of its group (and each panel's chunks) before the next block, so the block's
//    source rows (out_backprop for backprop input) are read from memory once per group, not once
//    per panel. When the whole filter fits (a 1x1 or small 3x3 layer) that is once per call: a
//    plain packed GEMM with each out_backprop panel reused across all result channels.
//  - a block's row pointers (result rows, source rows per tap) are worked out once and reused by
//    every panel and chunk: worked out per tile call they cost AVX2's 6 x 16 tiles about 10 %
//    (four panels on a 64-channel layer; measured 2026-11-25, backprop input 0.83-0.88 -> 0.92-1.0
//    of oneDNN on ResNet's layers, 1 thread).
// A tile's first chunk stores, later chunks add: each result element is the sum of its chunk sums
// in reduction order. Only the chunks change the arithmetic, and they depend on the problem and
// the cache sizes alone.
// Threads: each (phase, group) splits its pixel tiles into contiguous ranges, one per thread; a
// tile's arithmetic does not depend on which thread computes it, so results are the same for
// every thread count.
#include "optimized/implicit_gemm.h"

#include <algorithm>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "optimized/internal.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

template <class T>
bool run_implicit_gemm(const ImplicitGemm<T>& p) {
  const KernelTable<T>& kt = kernels<T>();
  const int variant = kt.variant_for(p.cols);
  const int64_t NR = kt.nr(variant), MR = kt.mr;
  const int64_t nblocks = (p.cols + NR - 1) / NR;
  if (nblocks == 0 || p.N == 0) return true;
  auto kernel = kt.igemm[variant];

  // Packed filter: per phase, per group, per panel: [taps][kc][NR].
  const std::size_t nph = p.phases.size();
  std::vector<int64_t> base(nph), size(nph), ntaps(nph);
  int64_t total = 0;
  for (std::size_t i = 0; i < nph; ++i) {
    ntaps[i] = static_cast<int64_t>(p.phases[i].tap_rows.size() * p.phases[i].tap_cols.size());
    size[i] = ntaps[i] * p.kc * NR;
    base[i] = total;
    total += size[i] * p.groups * nblocks;
  }
  T* const packed = scratch_array<T>(ScratchSlot::packed_filter, total);
  struct Item {
    std::size_t phase;
    int64_t g, nb;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < nph; ++i)
    if (size[i] > 0)
      for (int64_t g = 0; g < p.groups; ++g)
        for (int64_t nb = 0; nb < nblocks; ++nb) items.push_back({i, g, nb});
  const int threads = thread_count();
  const int64_t nitems = static_cast<int64_t>(items.size());
  int nonfinite = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic) \
    reduction(|                                                 \
              : nonfinite) if (threads > 1 && nitems > 1)
  for (int64_t it = 0; it < nitems; ++it) {
    const Item& x = items[it];
    const Phase& ph = p.phases[x.phase];
    const int64_t ntb = static_cast<int64_t>(ph.tap_cols.size());
    const int64_t j0 = x.nb * NR;
    T* dst = packed + base[x.phase] + (x.g * nblocks + x.nb) * size[x.phase];
    for (int64_t t = 0; t < ntaps[x.phase]; ++t) {
      const int64_t a = ph.tap_rows[t / ntb], b = ph.tap_cols[t % ntb];
      const T* wt = p.w + (a * p.KW + b) * p.Cf * p.O + x.g * p.Og;  // w[a, b, 0, g*Og]
      PackPanel<T> pp;
      // forward: B[k][j] = w[a, b, k, g*Og + j0 + j]; transposed: w[a, b, j0 + j, g*Og + k]
      pp.src = p.transposed ? wt + j0 * p.O : wt + j0;
      pp.ld = p.O;
      pp.kc = p.kc;
      pp.nj = std::min(NR, p.cols - j0);
      pp.NR = NR;
      pp.transposed = p.transposed;
      pp.dst = dst + t * p.kc * NR;
      nonfinite |= !kt.pack(pp);
    }
  }
  if (nonfinite) return false;

  Buffer<T> zeros(std::max<int64_t>(p.kc, 1));
  zeros.zero();
  const CacheSizes& cache = cache_sizes();
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  const int64_t panel_bytes = cache.l2 / 2;
  // Reduction chunks: whole taps while a tap's panel slice (kc * NR) fits panel_bytes, else
  // slices of one tap's channels; either way the chunk's panel fits panel_bytes.
  const int64_t budget = std::max<int64_t>(1, panel_bytes / (NR * elem));  // k per chunk
  const int64_t chunk_taps =
      p.kc <= budget ? std::max<int64_t>(1, budget / std::max<int64_t>(p.kc, 1)) : 1;
  const int64_t slices = p.kc <= budget ? 1 : (p.kc + budget - 1) / budget;
  const int64_t slice_k = (p.kc + slices - 1) / slices;
  int64_t max_taps = 0;
  for (int64_t t : ntaps) max_taps = std::max(max_taps, t);
  // Panels per group: as many whole panels (every tap, all kc) as fit panel_bytes together, in
  // groups of near-equal size; one when a panel alone is larger.
  const int64_t panel_size = std::max<int64_t>(1, max_taps * p.kc * NR * elem);
  const int64_t max_group = std::clamp<int64_t>(panel_bytes / panel_size, 1, nblocks);
  const int64_t ngroups = (nblocks + max_group - 1) / max_group;
  const int64_t group_size = (nblocks + ngroups - 1) / ngroups;
  // Tiles per block: the block's source rows (MR rows of a chunk's k per tap) fit a quarter of L2.
  const int64_t tile_bytes =
      std::max<int64_t>(1, MR * std::min(max_taps, chunk_taps) * std::min(p.kc, slice_k) * elem);
  const int64_t tiles_per_block = std::clamp<int64_t>(cache.l2 / 4 / tile_bytes, 4, 64);

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int tid = 0, nt = 1;
#endif
    // A block's row pointers, worked out once per block and reused by every panel and chunk:
    // result rows [tile][MR], source rows [tile][tap][MR] at k = 0 (a padding tap: zeros); two
    // such tables, this block's and the next one's. A table holds one chunk's taps (ctaps): a
    // filter of more taps than a chunk takes (a huge or very thin one) refills it per chunk, so
    // the tables stay within a few times what the block's source rows take in L2.
    const int64_t ctaps = std::min(max_taps, chunk_taps);
    std::vector<T*> c(static_cast<std::size_t>(2 * tiles_per_block * MR));
    std::vector<const T*> a(static_cast<std::size_t>(2 * tiles_per_block * ctaps * MR));
    std::vector<int64_t> pn(MR), pu(MR), pv(MR);
    for (std::size_t i = 0; i < nph; ++i) {
      const Phase& ph = p.phases[i];
      const int64_t M = p.N * ph.rows * ph.cols;
      if (M == 0) continue;
      const int64_t ntb = static_cast<int64_t>(ph.tap_cols.size());
      const int64_t taps = ntaps[i];
      const int64_t tiles = (M + MR - 1) / MR;
      int64_t t0, t1;
      split_range(tiles, nt, tid, &t0, &t1);
      const int64_t tap_groups = std::max<int64_t>(1, (taps + chunk_taps - 1) / chunk_taps);
      for (int64_t g = 0; g < p.groups; ++g) {
        const T* src_g = p.src + g * p.kc;
        for (int64_t nb0 = 0; nb0 < nblocks; nb0 += group_size) {
          const int64_t nb1 = std::min(nblocks, nb0 + group_size);
          // Fills table `slot` with the row pointers of tiles [bb, be), taps [tap0, tap0 +
          // ctaps).
          auto fill = [&](int64_t bb, int64_t be, int slot, int64_t tap0) {
            for (int64_t t = bb; t < be; ++t) {
              const int64_t m0 = t * MR, mr = std::min(MR, M - m0);
              T** ct = c.data() + (slot * tiles_per_block + t - bb) * MR;
              const T** at = a.data() + (slot * tiles_per_block + t - bb) * ctaps * MR;
              for (int64_t m = 0; m < MR; ++m) {
                const int64_t pix = m0 + std::min(m, mr - 1);  // rows past mr repeat the last
                pn[m] = pix / (ph.rows * ph.cols);
                pu[m] = pix / ph.cols % ph.rows;
                pv[m] = pix % ph.cols;
                ct[m] = p.result +
                        ((pn[m] * p.res_h + ph.row0 + pu[m] * ph.row_step) * p.res_w + ph.col0 +
                         pv[m] * ph.col_step) *
                            p.res_c +
                        g * p.cols;
              }
              for (int64_t tt = tap0; tt < std::min(taps, tap0 + ctaps); ++tt) {
                const int64_t ro = ph.row_off[tt / ntb], co = ph.col_off[tt % ntb];
                for (int64_t m = 0; m < MR; ++m) {
                  const int64_t sr = pu[m] * ph.src_row_step + ro;
                  const int64_t sc = pv[m] * ph.src_col_step + co;
                  at[(tt - tap0) * MR + m] =
                      (sr >= 0 && sr < p.src_h && sc >= 0 && sc < p.src_w)
                          ? src_g + ((pn[m] * p.src_h + sr) * p.src_w + sc) * p.src_c
                          : zeros.data();
                }
              }
            }
          };
          // With one chunk of taps (nearly every layer) a block's table serves all its panels
          // and the next block's is filled ahead; with several, each chunk refills it.
          const bool one_chunk = tap_groups == 1;
          int cur = 0;
          if (one_chunk && t0 < t1) fill(t0, std::min(t1, t0 + tiles_per_block), cur, 0);
          for (int64_t tb = t0; tb < t1; tb += tiles_per_block) {
            const int64_t te = std::min(t1, tb + tiles_per_block);
            const int64_t ne = std::min(t1, te + tiles_per_block);
            // One tap (a 1x1 layer, a stride phase with one tap): each source row is read from
            // memory by one tile of the block's first panel, too little of a stream for the
            // hardware prefetcher; that pass prefetches the next block's rows into L2 (measured
            // ResNet's 1x1 backprop input 0.93 -> 1.10 of oneDNN on AVX2, 1.03 -> 1.10 on AVX-512,
            // 1 thread, 2026-11-25; with several taps, and prefetching the result rows, no gain).
            const bool pf = ne > te && taps == 1;
            if (one_chunk && ne > te) fill(te, ne, 1 - cur, 0);
            for (int64_t nb = nb0; nb < nb1; ++nb) {
              const T* panel = packed + base[i] + (g * nblocks + nb) * size[i];
              IgemmTile<T> tile;
              tile.nr = std::min(NR, p.cols - nb * NR);
              tile.c_off = nb * NR;
              for (int64_t ch = 0; ch < tap_groups * slices; ++ch) {
                const int64_t tap0 = ch / slices * chunk_taps;
                const int64_t tap1 = std::min(taps, tap0 + chunk_taps);
                const int64_t k0 = ch % slices * slice_k;
                tile.taps = tap1 - tap0;
                tile.kc = std::min(slice_k, p.kc - k0);
                tile.a_off = k0;
                tile.b = panel + (tap0 * p.kc + k0) * NR;
                tile.accumulate = ch > 0;
                if (!one_chunk && ch % slices == 0) fill(tb, te, cur, tap0);
                for (int64_t t = tb; t < te; ++t) {
                  tile.a = a.data() + (cur * tiles_per_block + t - tb) * ctaps * MR;  // at tap0
                  tile.c = c.data() + (cur * tiles_per_block + t - tb) * MR;
                  tile.mr = std::min(MR, M - t * MR);
                  kernel(tile);
                  if (pf && nb == nb0 && ch == 0 && te + (t - tb) < ne) {
                    const int64_t nx = (1 - cur) * tiles_per_block + t - tb;
                    const T* const* an = a.data() + nx * ctaps * MR;
                    for (int64_t q = 0; q < taps * MR; ++q) {
                      const char* r = reinterpret_cast<const char*>(an[q]);
                      for (int64_t l = 0; l < p.kc * elem; l += kLine)
                        __builtin_prefetch(r + l, 0, 2);
                    }
                  }
                }
              }
            }
            if (one_chunk) cur = 1 - cur;
          }
        }
      }
    }
  }
  return true;
}

template bool run_implicit_gemm<float>(const ImplicitGemm<float>&);
template bool run_implicit_gemm<double>(const ImplicitGemm<double>&);
template bool run_implicit_gemm<uint32_t>(const ImplicitGemm<uint32_t>&);

}  // namespace convcheck::opt
