// The micro-kernels, written once against the vector traits of simd.h (see kernels.h for what
// each computes and the GEMM-letter mapping). Included by each kernels_<isa>.cpp inside its own
// namespace, after simd.h; no include guard for that reason.
//
// Register tiles: an implicit-GEMM or filter tile keeps MR x NV vectors of accumulators (AVX-512
// f32: 6 x 4 zmm = 6 x 64 floats) and per reduction step loads NV vectors of the vector side and
// broadcasts MR scalars of the other side. The loops over m and v have constant bounds and are
// fully unrolled, so the accumulators live in registers.

// ---- implicit GEMM (conv2d, backprop input) ---------------------------------------------------

// PF: the kernel also issues IgemmTile::pf's lines, one per pf_pace reduction steps (the call has
// some).
template <class S, int MR, int NV, bool PF>
void igemm_kernel_fixed(const IgemmTile<typename S::T>& p) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  constexpr int NR = NV * W;
  V acc[MR][NV];
#pragma GCC unroll 64
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 64
    for (int v = 0; v < NV; ++v) acc[m][v] = S::zero();
  }
  PieceLines pf{p.pf, p.pf_off, p.pf_last, p.pf_lines};
  // A line every `pace` reduction steps (kernels.h, L2Prefetch): runs of pace steps, each after
  // its line (without lines, a tap's steps are one run).
  const int64_t pace = PF ? p.pf_pace : INT64_MAX;
  for (int64_t t = 0; t < p.taps; ++t) {
    const T* b = p.b + (p.tap ? p.tap[t] : t) * p.kc * NR;
    const T* a[MR];
#pragma GCC unroll 64
    for (int m = 0; m < MR; ++m) a[m] = p.a[t * MR + m] + p.a_off;
    for (int64_t k = 0; k < p.kc;) {
      if constexpr (PF) pf.step();
      const int64_t k_end = p.kc - k < pace ? p.kc : k + pace;
      for (; k < k_end; ++k) {
        V bv[NV];
#pragma GCC unroll 64
        for (int v = 0; v < NV; ++v) bv[v] = S::load(b + v * W);
#pragma GCC unroll 64
        for (int m = 0; m < MR; ++m) {
          const V am = S::bcast(a[m] + k);
#pragma GCC unroll 64
          for (int v = 0; v < NV; ++v) acc[m][v] = S::fma(am, bv[v], acc[m][v]);
        }
        b += NR;
      }
    }
  }
  if constexpr (PF) pf.rest();  // lines beyond the call's reduction steps
  // The tile's fields in locals before the first store (the vector stores' may_alias types could
  // alias p: the compiler reloaded them after every store).
  const int mr = static_cast<int>(p.mr);
  const int64_t nr = p.nr;
  const bool accumulate = p.accumulate;
  const bool stream = p.stream;
  T* c_rows[MR];
#pragma GCC unroll 64
  for (int m = 0; m < MR; ++m) c_rows[m] = m < mr ? p.c[m] + p.c_off : nullptr;
#pragma GCC unroll 64
  for (int m = 0; m < MR; ++m) {
    if (m < mr) {
      T* c = c_rows[m];
#pragma GCC unroll 64
      for (int v = 0; v < NV; ++v) {
        const int64_t n = nr - v * W;
        if (n >= W) {
          V r = acc[m][v];
          if (accumulate) r = S::add(S::load(c + v * W), r);
          if (stream)
            S::stream(c + v * W, r);
          else
            S::store(c + v * W, r);
        } else if (n > 0) {
          V r = acc[m][v];
          if (accumulate) r = S::add(S::load_n(c + v * W, n), r);
          S::store_n(c + v * W, r, n);
        }
      }
    }
  }
}

template <class S, int MR, int NV>
void igemm_kernel(const IgemmTile<typename S::T>& p) {
  if (p.pf_lines > 0)
    igemm_kernel_fixed<S, MR, NV, true>(p);
  else
    igemm_kernel_fixed<S, MR, NV, false>(p);
}

// ---- backprop filter --------------------------------------------------------------------------

// PF / TILE: the kernel also issues the call's prefetches: FilterTile::pf's lines, one every
// pf_pace pixels (PF), and the later tile's rows, next_c, one a pixel (TILE). PACK: it also stores
// what it reads into FilterTile::pack_x / pack_dy where they are set (backprop_filter.cpp,
// packed_runs). A call takes the kernel with the code for what it has only (filter_kernel_for):
// present even unused, next_c's state cost DCGAN g2's 4-pixel segments 12-29 % on AVX2
// (bench/xeon-2026-11-29c).
template <class S, int MR, int NV, bool FULL, bool PF, bool TILE, bool PACK>
void filter_kernel_fixed(const FilterTile<typename S::T>& p) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  // The tile's fields in locals: the vector stores below (may_alias types) could alias p, which
  // made the compiler reload them after every store: each pixel's steps in the packing variant,
  // each vector's address and stream flag at the end.
  T* const c0 = p.c;
  const int64_t ldc = p.ldc, nr = p.nr, x_step = p.x_step, dy_step = p.dy_step, x_slot = p.x_slot;
  const int64_t x_avail = p.x_avail;
  const bool stream = p.stream;
  const auto* const seg = p.seg;
  const int64_t nseg = p.nseg;
  const T* const x0 = p.x;
  const T* const dy0 = p.dy;
  const T* const from = p.c_from != nullptr ? p.c_from : c0;
  const int64_t ld_from = p.c_from != nullptr ? p.ld_from : ldc;
  V acc[MR][NV];
#pragma GCC unroll 64
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 64
    for (int v = 0; v < NV; ++v) {
      const T* c = from + m * ld_from + v * W;
      acc[m][v] = !p.accumulate ? S::zero() : FULL ? S::load(c) : S::load_n(c, nr - v * W);
    }
  }
  PieceLines pf{p.pf, p.pf_off, p.pf_last, p.pf_lines};
  RowLines next_c;  // the later tile's lines (backprop_filter.cpp, kAhead)
  if constexpr (TILE)
    next_c = RowLines(p.next_c, p.next_mr, nr * static_cast<int64_t>(sizeof(T)),
                      ldc * static_cast<int64_t>(sizeof(T)));
  T* pack_x = p.pack_x;
  T* pack_dy = p.pack_dy;
  // A line every `pace` pixels, not a burst (kernels.h, L2Prefetch): runs of pace pixels, each
  // after its line (without lines, a segment is one run).
  const int64_t pace = PF ? p.pf_pace : INT64_MAX;
  for (int64_t s = 0; s < nseg; ++s) {
    const T* x = x0 + seg[s].x;
    const T* dy = dy0 + seg[s].dy;
    for (int64_t t = seg[s].count; t > 0;) {
      if constexpr (PF) pf.step();
      const int64_t run = t < pace ? t : pace;
      t -= run;
      for (int64_t u = run; u > 0; --u) {
        if constexpr (TILE) next_c.step();
        V d[NV];
#pragma GCC unroll 64
        for (int v = 0; v < NV; ++v)
          d[v] = FULL ? S::load(dy + v * W) : S::load_n(dy + v * W, nr - v * W);
        if constexpr (PACK) {
          if (pack_dy != nullptr) {
#pragma GCC unroll 64
            for (int v = 0; v < NV; ++v) S::store(pack_dy + v * W, d[v]);
            pack_dy += NV * W;
          }
          if (pack_x != nullptr) {  // this tile's MR' channels, in a slot of the table's MR
#pragma GCC unroll 64
            for (int c = 0; c < MR; c += W)
              S::store(pack_x + c,
                       MR - c >= W || x_avail - c >= W ? S::load(x + c) : S::load_n(x + c, MR - c));
            pack_x += x_slot;
          }
        }
#pragma GCC unroll 64
        for (int m = 0; m < MR; ++m) {
          const V xm = S::bcast(x + m);
#pragma GCC unroll 64
          for (int v = 0; v < NV; ++v) acc[m][v] = S::fma(xm, d[v], acc[m][v]);
        }
        x += x_step;
        dy += dy_step;
      }
    }
  }
  // Lines beyond the tile's pixels (a tile of few pixels) are issued; a later tile's lines left
  // (next_c) are not: it loads them itself, and a burst would hold the fill buffers (L2Prefetch).
  if constexpr (PF) pf.rest();
#pragma GCC unroll 64
  for (int m = 0; m < MR; ++m) {
#pragma GCC unroll 64
    for (int v = 0; v < NV; ++v) {
      T* c = c0 + m * ldc + v * W;
      if (FULL && stream) {
        S::stream(c, acc[m][v]);
      } else if (FULL) {
        S::store(c, acc[m][v]);
      } else {
        S::store_n(c, acc[m][v], nr - v * W);
      }
    }
  }
}

// Dispatches on the tile's row count (a compile-time MR' <= MR, so that no broadcast reads past
// the tile's channels), on whether the tile has all NR columns, on which prefetches the call
// has (PF, TILE above) and whether it packs (PACK).
template <class S, int MR, int NV, bool FULL, bool PF, bool TILE, bool PACK = false>
struct FilterKernels {
  using Fn = void (*)(const FilterTile<typename S::T>&);
  static constexpr Fn fn[8] = {
      nullptr,
      &filter_kernel_fixed<S, (MR >= 1 ? 1 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 2 ? 2 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 3 ? 3 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 4 ? 4 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 5 ? 5 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 6 ? 6 : MR), NV, FULL, PF, TILE, PACK>,
      &filter_kernel_fixed<S, (MR >= 7 ? 7 : MR), NV, FULL, PF, TILE, PACK>,
  };
};

// The kernel a call takes: its row count's, with the prefetch code for what it has (PF: lines;
// TILE: a later tile, asked for only with wide panels, so one-line panels are not given it).
template <class S, int MR, int NV, bool FULL>
auto filter_kernel_for(const FilterTile<typename S::T>& p) {
  constexpr bool kWide = wide_panel(NV * S::W * static_cast<int64_t>(sizeof(typename S::T)));
  const bool pf = p.pf_lines > 0, tile = kWide && p.next_c != nullptr;
  // Packing on first use: with the lines' prefetch only (packed_runs asks for no other).
  if (p.pack_x != nullptr || p.pack_dy != nullptr)
    return pf ? FilterKernels<S, MR, NV, FULL, true, false, true>::fn[p.mr]
              : FilterKernels<S, MR, NV, FULL, false, false, true>::fn[p.mr];
  const auto* fn = pf ? (tile ? FilterKernels<S, MR, NV, FULL, true, kWide>::fn
                              : FilterKernels<S, MR, NV, FULL, true, false>::fn)
                      : (tile ? FilterKernels<S, MR, NV, FULL, false, kWide>::fn
                              : FilterKernels<S, MR, NV, FULL, false, false>::fn);
  return fn[p.mr];
}

// FilterTile::panels > 1 (never with packing or next_c): the tiles one after another, the lines
// spread evenly, each tile's from where the last one's ended. Out of line, so that filter_kernel
// stays a leaf that jumps to its kernel for the one-tile calls (tap_runs': no difference measured
// either way).
template <class S, int MR, int NV>
__attribute__((noinline)) void filter_kernel_panels(const FilterTile<typename S::T>& p) {
  const auto fn = p.nr == NV * S::W ? filter_kernel_for<S, MR, NV, true>(p)
                                    : filter_kernel_for<S, MR, NV, false>(p);
  FilterTile<typename S::T> q = p;
  for (int64_t i = 0; i < p.panels; ++i) {
    q.pf_lines = p.pf_lines * (i + 1) / p.panels - p.pf_lines * i / p.panels;
    fn(q);
    q.pf_off += q.pf_lines * kLine;
    q.x += p.x_panel;
    q.c += p.c_panel;
  }
}

template <class S, int MR, int NV>
void filter_kernel(const FilterTile<typename S::T>& p) {
  static_assert(MR >= 1 && MR <= 7, "filter tiles have 1 to 7 rows");
  if (p.mr <= 0 || p.mr > MR || p.nr <= 0) return;
  if (p.panels > 1) {
    filter_kernel_panels<S, MR, NV>(p);
  } else if (p.nr == NV * S::W) {
    filter_kernel_for<S, MR, NV, true>(p)(p);
  } else {
    filter_kernel_for<S, MR, NV, false>(p)(p);
  }
}

// ---- depthwise --------------------------------------------------------------------------------

// Taps of one run, as source and filter pointers at channel 0 and t = 0.
template <class T>
struct RunTaps {
  static constexpr int kMax = kDepthwiseGroupTaps;  // a run with more is summed in groups
  const T* src[kMax];
  const T* w[kMax];
  int n = 0;
};

// TB result columns at a time (independent accumulator chains), NB vectors of channels each.
template <class S, int TB, int NB, bool FULL>
inline void depthwise_run_tile(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                               const RunTaps<typename S::T>& taps, bool first, int64_t t0,
                               int64_t ch0, int64_t nch) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const int64_t step = p.src_step * p.C;
  // The result's addresses and the stream flag in locals: the vector stores (may_alias types)
  // could alias p and run, which made the compiler reload them, with two multiplications, for
  // every stored vector.
  T* const out0 = p.out + (run.v0 + t0 * p.v_step) * p.C + ch0;
  const int64_t out_step = p.v_step * p.C;  // a result column's step
  const bool stream = FULL && first && p.stream;
  V acc[TB][NB];
#pragma GCC unroll 16
  for (int c = 0; c < TB; ++c) {
    const T* out = out0 + c * out_step;
#pragma GCC unroll 16
    for (int u = 0; u < NB; ++u) {
      acc[c][u] = first  ? S::zero()
                  : FULL ? S::load(out + u * W)
                         : S::load_n(out + u * W, nch - u * W);
    }
  }
  for (int i = 0; i < taps.n; ++i) {
    const T* s = taps.src[i] + t0 * step + ch0;
    const T* w = taps.w[i] + ch0;
    V wv[NB];
#pragma GCC unroll 16
    for (int u = 0; u < NB; ++u)
      wv[u] = FULL ? S::load(w + u * W) : S::load_n(w + u * W, nch - u * W);
#pragma GCC unroll 16
    for (int c = 0; c < TB; ++c) {
      // Column c's source pixel as an opaque base, so that its NB vectors are that register plus
      // constant displacements. Left to itself GCC folds t0 * step + c * step + u * W into TB * NB
      // loop-invariant index registers (16 for AVX-512's 2 x 8 tile), spills most of them and
      // reloads them from the stack on every tap (one thread, a forward layer held in L2: 71 ->
      // 64 us; with the prefetch removal at depthwise_run, 48 us).
      const T* sr = s + c * step;
      __asm__("" : "+r"(sr));
#pragma GCC unroll 16
      for (int u = 0; u < NB; ++u) {
        const T* sc = sr + u * W;
        acc[c][u] = S::fma(FULL ? S::load(sc) : S::load_n(sc, nch - u * W), wv[u], acc[c][u]);
      }
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < TB; ++c) {
    T* out = out0 + c * out_step;
#pragma GCC unroll 16
    for (int u = 0; u < NB; ++u) {
      if (stream) {  // final sums (DepthwiseRow::stream)
        S::stream(out + u * W, acc[c][u]);
      } else if (FULL) {
        S::store(out + u * W, acc[c][u]);
      } else {
        S::store_n(out + u * W, acc[c][u], nch - u * W);
      }
    }
  }
}

// Columns per tile for NB channel vectors: as many accumulator chains as the registers hold beside
// NB filter vectors and NB source loads.
template <class S, int NB>
inline constexpr int kDepthwiseTB = (S::kRegs - 2 * NB) / NB > 8 ? 8 : (S::kRegs - 2 * NB) / NB;

// Every channel of TB columns from t: blocks of NB vectors (NB the widest that fits, whose tile
// width TB is), then the narrower remainders.
template <class S, int TB, int NB>
inline void depthwise_tile_channels(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                                    const RunTaps<typename S::T>& taps, bool first, int64_t t) {
  constexpr int64_t W = S::W;
  int64_t ch = 0;
  for (; ch + NB * W <= p.C; ch += NB * W)
    depthwise_run_tile<S, TB, NB, true>(p, run, taps, first, t, ch, NB * W);
  if constexpr (NB > 4) {
    if (ch + 4 * W <= p.C) {
      depthwise_run_tile<S, TB, 4, true>(p, run, taps, first, t, ch, 4 * W);
      ch += 4 * W;
    }
  }
  if constexpr (NB > 2) {
    if (ch + 2 * W <= p.C) {
      depthwise_run_tile<S, TB, 2, true>(p, run, taps, first, t, ch, 2 * W);
      ch += 2 * W;
    }
  }
  if constexpr (NB > 1) {
    if (ch + W <= p.C) {
      depthwise_run_tile<S, TB, 1, true>(p, run, taps, first, t, ch, W);
      ch += W;
    }
  }
  if (ch < p.C) depthwise_run_tile<S, TB, 1, false>(p, run, taps, first, t, ch, p.C - ch);
}

// A run's columns in tiles of TB (`tile(t)`), then one at a time (`column(t)`), with the next
// row's lines (DepthwiseRow::next_src) spread over the tiles, the rest after them.
template <int TB, class T, class Tile, class Column>
inline void depthwise_tile_loop(const DepthwiseRow<T>& p, const ColumnRun& run, RowLines* next,
                                int64_t next_lines, Tile tile, Column column) {
  static_assert(TB >= 1, "a tile has at least one column");
  const int64_t tiles = run.count / TB;
  const int64_t per_tile = next != nullptr && tiles > 0 ? (next_lines + tiles - 1) / tiles : 0;
  int64_t t = 0;
  // (Into L1 where p.next_to_l1: RowLines::step<true>; its other users keep no such branch.)
  auto issue = [&](int64_t n) __attribute__((always_inline)) {
    if (next == nullptr) return;
    if (p.next_to_l1)
      next->steps<true>(n);
    else
      next->steps(n);
  };
  for (; t + TB <= run.count; t += TB) {
    issue(per_tile);
    tile(t);
  }
  issue(next_lines);
  for (; t < run.count; ++t) column(t);
}

template <class S, int NB>
inline void depthwise_tiles(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                            const RunTaps<typename S::T>& taps, bool first, RowLines* next,
                            int64_t next_lines) {
  depthwise_tile_loop<kDepthwiseTB<S, NB>>(
      p, run, next, next_lines,
      [&](int64_t t) __attribute__((always_inline)) {
        depthwise_tile_channels<S, kDepthwiseTB<S, NB>, NB>(p, run, taps, first, t);
      },
      [&](int64_t t) __attribute__((always_inline)) {
        depthwise_tile_channels<S, 1, NB>(p, run, taps, first, t);
      });
}

// Runs of three column taps on consecutive, descending source columns (depthwise_window_taps),
// the source slid through registers: each source vector is loaded once and serves up to three
// result columns, where depthwise_run_tile loads it once per tap (a row tap: (TB + 2) NB source
// loads and 3 NB filter loads for 3 TB NB multiply-adds, against 3 TB NB and 3 NB). Column c of
// the tile adds column tap j from source column c - j (relative to tap 0's of column 0); the
// source columns are visited descending, so that every c takes its taps j ascending: each
// element sums its taps in the same (row tap, column tap) order as depthwise_run_tile, the same
// bits. One group of taps (the sums are final); `taps` lists a row tap's three column taps
// together (src[3r + j], w[3r + j]).
template <class S, int TB, int NB, bool FULL>
inline void depthwise_window_tile(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                                  const RunTaps<typename S::T>& taps, int64_t t0, int64_t ch0,
                                  int64_t nch) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const int64_t C = p.C;
  T* const out0 = p.out + (run.v0 + t0 * p.v_step) * C + ch0;
  const int64_t out_step = p.v_step * C;
  V acc[TB][NB];
#pragma GCC unroll 16
  for (int c = 0; c < TB; ++c) {
#pragma GCC unroll 16
    for (int u = 0; u < NB; ++u) acc[c][u] = S::zero();
  }
  for (int r = 0; r < taps.n; r += 3) {
    V wv[3][NB];
#pragma GCC unroll 4
    for (int j = 0; j < 3; ++j) {
#pragma GCC unroll 16
      for (int u = 0; u < NB; ++u) {
        const T* w = taps.w[r + j] + ch0 + u * W;
        wv[j][u] = FULL ? S::load(w) : S::load_n(w, nch - u * W);
      }
    }
    // Source column TB - 1, stepped down to -2 (not past it: no pointer leaves the array).
    const T* s = taps.src[r] + (t0 + TB - 1) * C + ch0;
#pragma GCC unroll 16
    for (int q = TB - 1; q >= -2; --q) {
      if (q < TB - 1) s -= C;
      const T* sq = s;
      __asm__("" : "+r"(sq));  // one pointer stepped, not TB + 2 index registers (as above)
#pragma GCC unroll 16
      for (int u = 0; u < NB; ++u) {
        const V v = FULL ? S::load(sq + u * W) : S::load_n(sq + u * W, nch - u * W);
#pragma GCC unroll 4
        for (int j = 0; j < 3; ++j) {
          const int c = q + j;
          if (c >= 0 && c < TB) acc[c][u] = S::fma(v, wv[j][u], acc[c][u]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < TB; ++c) {
#pragma GCC unroll 16
    for (int u = 0; u < NB; ++u) {
      T* out = out0 + c * out_step + u * W;
      if (FULL && p.stream) {
        S::stream(out, acc[c][u]);
      } else if (FULL) {
        S::store(out, acc[c][u]);
      } else {
        S::store_n(out, acc[c][u], nch - u * W);
      }
    }
  }
}

// Every channel of TB window columns from t: blocks of NB vectors, then one vector, then the tail.
template <class S, int TB, int NB>
inline void depthwise_window_channels(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                                      const RunTaps<typename S::T>& taps, int64_t t) {
  constexpr int64_t W = S::W;
  int64_t ch = 0;
  for (; ch + NB * W <= p.C; ch += NB * W)
    depthwise_window_tile<S, TB, NB, true>(p, run, taps, t, ch, NB * W);
  if constexpr (NB > 1) {
    for (; ch + W <= p.C; ch += W) depthwise_window_tile<S, TB, 1, true>(p, run, taps, t, ch, W);
  }
  if (ch < p.C) depthwise_window_tile<S, TB, 1, false>(p, run, taps, t, ch, p.C - ch);
}

// A window run (depthwise_window_tile) in tiles of 4 columns of 2 vectors (a line of f32 or f64
// channels under AVX2): 8 accumulators beside 6 filter vectors and a source vector, 15 of 16
// registers. On a Zen 3 (AVX2, 32 KiB L1; in-process pairs against the tap runs, 202 pairs a set,
// bench/zen3-2026-12-07b/pairs), depthwise backprop input's time with it, at 1 / 2 threads:
// MobileNet dw1 (112x112x32) 0.85-0.92 / 0.84-0.86, dw3 (56x56x128) 0.86-0.96 / 0.83-0.87,
// 28x28x256 0.80 / 0.84-0.88, 56x56x64 0.90-1.02 / 0.89-0.92; 14x14x512, whose tile's source
// (36 KiB) outgrows L1, 1.09-1.16 / 0.99-1.10 (depthwise_row_window, internal.h, keeps it off
// there). The forward op, its taps ascending, with the window mirrored: dw1 0.81-0.97 but dw3
// 1.20-1.41 at 1 thread and 1.02-1.27 at 2, 14x14x512 1.00-1.12; it keeps the tap runs (why it
// lost is not known; it prefetches no rows by software). Tiles of one vector stream half lines
// whose other halves come a pass later: 6 x 1 read 0.94-1.05 of 4 x 2's time but once 1.43
// (dw1, 2 threads, a whole set), 8 x 1 1.29-1.84 and 12 x 1 1.95 of the tap runs' (8 or 12 half
// lines pending in the write-combining buffers).
// With 32 registers (AVX-512) the tiles are 4 columns of 4 vectors (again a line per pixel for
// f32): 16 accumulators, 12 filter vectors and a source vector, 29 of 32; unmeasured (the
// table's depthwise_row_window_by_rule is off there).
template <class S>
inline void depthwise_window_run(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                                 const RunTaps<typename S::T>& taps, RowLines* next,
                                 int64_t next_lines) {
  constexpr int NB = S::kRegs >= 32 ? 4 : 2, TB = kDepthwiseWindowColumns;
  depthwise_tile_loop<TB>(
      p, run, next, next_lines,
      [&](int64_t t)
          __attribute__((always_inline)) { depthwise_window_channels<S, TB, NB>(p, run, taps, t); },
      [&](int64_t t)
          __attribute__((always_inline)) { depthwise_window_channels<S, 1, NB>(p, run, taps, t); });
}

// A run in tiles of columns, each tile through all its channels before the next (tile-major):
// a pixel's channels are read together, one contiguous stretch of the source rows, which the
// hardware prefetcher follows. Until 2026-11-28 the run was swept once per channel block of at
// most 4 vectors (128- or 256-byte slices of every pixel per sweep), with the next row prefetched
// into L2 by software where there were several sweeps. Tile-major, with 8-vector blocks where
// there are 32 registers and no L2 prefetch, against that build (Xeon guest, 2 threads, paired
// ratios against oneDNN, medians of 8 interleaved rounds; bench/xeon-2026-11-28/
// depthwise-tile-major.txt, set 8), backprop input: MobileNet dw3 (128 channels) 1.71 -> 2.03 on
// AVX-512 and 1.75 -> 1.92 on AVX2, dw4s2 (256) 2.18 -> 2.18 and 2.08 -> 2.15, 14x14x512
// 1.63 -> 1.71 and 1.63 -> 1.82, 7x7x1024 1.18 -> 1.69 and 1.93 -> 2.05; forward dw3 0.73 ->
// 0.80 and 1.86 -> 1.84, but forward 14x14x512 on AVX-512 0.88 -> 0.75 (there each 2-column tile
// reloads the 18 KB of filter taps; channel groups of 256 floats read 0.83 there and within noise
// elsewhere, 6 rounds, not adopted; 4-vector blocks 0.91 there but 7x7x1024 0.64 -> 0.51). One-
// block layers (dw1's 32 channels) run as before.
//
// No per-tile prefetch into L1. Until 2026-11-29 each tile prefetched every tap's source lines and
// its result lines into L1 three tiles ahead (pixels of at most 512 bytes; the channel sweeps of
// 2026-11-25 had needed it: AVX2 0.68-0.77 of oneDNN without, 1.4-1.8 with). Tile-major, with
// the addressing fix in depthwise_run_tile and 64-byte aligned tensors, it cost time on both ISAs:
// one thread on a 1x24x56x128 forward layer held in L2, 71 -> 48 us with both changes, 64 us with
// the addressing fix alone; 2 threads, whole MobileNet layers, 4-21 % (Xeon guest;
// bench/xeon-2026-11-29/depthwise-codegen.txt). Against oneDNN (paired, 2 threads), both changes:
// forward dw3 0.76 -> 0.97 on AVX-512, 1.81 -> 2.21 on AVX2. Not measured on a Zen. No gain from
// tiles of 3 columns of 8 vectors (AVX-512; 14x14x512 7 % slower) nor from 4-vector blocks from
// 256 channels on (7x7x1024 18 % slower). Each element sums its taps in the same order either way
// (bitwise the same results).
//
// The next rows, prefetched. On a Zen 4 guest (2026-12-03), MobileNet's backprop input layers whose
// out_backprop streams from memory ran at 45-52 % of the memory triad: the hardware prefetcher
// alone did not keep up. With the out_backprop row that the next input row adds (stride 1)
// prefetched into L2, spread over this row's longest run, dw1 (112x112x32) went from 2.56 to 3.36
// of oneDNN and dw3 (56x56x128) from 2.58 to 4.10 (2 threads, paired medians of 12 rounds),
// 2.30 -> 3.28 and 2.21 -> 3.18 at 1 thread (8 rounds; bench/zen4-2026-12-03, dw-d and dw-e;
// again with the final code, dw-f: 2.45 -> 3.24 and 2.50 -> 3.39, 1 thread 2.00 -> 2.81 and
// 1.95 -> 3.01); the same lines issued at the row's start (a burst) read 3.23 and 3.18. Layers
// whose out_backprop stays in the threads' L2s do not take it (prefetch_next_rows, internal.h):
// 14x14x512 read 8 % slower with it at 2 threads. The forward op, where the same rows would be
// the input's, read level (dw1, dw3) and does not take it. Not measured on the Xeon guests, whose
// L3 holds these layers. Since 2026-12-04 into L1 on AMD cores (depthwise_input_rows_to_l1).
template <class S>
inline void depthwise_run(const DepthwiseRow<typename S::T>& p, const ColumnRun& run,
                          const RunTaps<typename S::T>& taps, bool first, RowLines* next,
                          int64_t next_lines) {
  constexpr int64_t W = S::W;
  if constexpr (S::kRegs >= 32) {
    if (p.C >= 8 * W) {
      depthwise_tiles<S, 8>(p, run, taps, first, next, next_lines);
      return;
    }
  }
  if (p.C >= 4 * W) {
    depthwise_tiles<S, 4>(p, run, taps, first, next, next_lines);
  } else if (p.C >= 2 * W) {
    depthwise_tiles<S, 2>(p, run, taps, first, next, next_lines);
  } else {
    depthwise_tiles<S, 1>(p, run, taps, first, next, next_lines);
  }
}

template <class S>
void depthwise_row(const DepthwiseRow<typename S::T>& p) {
  using T = typename S::T;
  // The next rows' lines go with the longest run's first group of taps.
  int64_t longest = -1, next_lines = 0;
  RowLines next;
  if (p.next_src != nullptr && p.nruns > 0) {
    longest = 0;
    for (int64_t r = 1; r < p.nruns; ++r)
      if (p.runs[r].count > p.runs[longest].count) longest = r;
    const int64_t bytes = p.next_src_elements * static_cast<int64_t>(sizeof(T));
    next = RowLines(p.next_src, 1, bytes, bytes);
    next_lines = next.row_lines_left();
  }
  for (int64_t r = 0; r < p.nruns; ++r) {
    const ColumnRun& run = p.runs[r];
    RunTaps<T> taps;
    bool first = true;
    RowLines* const nx = r == longest ? &next : nullptr;
    for (int64_t rt = 0; rt < p.nrow_taps; ++rt) {
      const int64_t a = p.row_taps[2 * rt], sr = p.row_taps[2 * rt + 1];
      for (int64_t k = run.tap_begin; k < run.tap_end; ++k) {
        if (taps.n == RunTaps<T>::kMax) {
          depthwise_run<S>(p, run, taps, first, first ? nx : nullptr, next_lines);
          first = false;
          taps.n = 0;
        }
        const int64_t b = p.col_taps[2 * k], col0 = p.col_taps[2 * k + 1];
        taps.src[taps.n] = p.src + (sr * p.src_w + col0) * p.C;
        taps.w[taps.n] = p.w + (a * p.KW + b) * p.C;
        ++taps.n;
      }
    }
    if (p.window && depthwise_window_taps(p, run)) {
      depthwise_window_run<S>(p, run, taps, nx, next_lines);
      if (p.slid != nullptr) ++*p.slid;
      continue;
    }
    if (first || taps.n > 0)
      depthwise_run<S>(p, run, taps, first, first ? nx : nullptr, next_lines);
  }
}

// Row entries per group (depthwise_filter_block): G input rows of NB vectors each beside one
// out_backprop row's NB, in the registers.
template <int NB>
constexpr int depthwise_filter_max_group() {
  return NB >= 4 ? 3 : 4;
}

// The next row group's rows that depthwise_filter_group and depthwise_filter_taps3 prefetch into
// L2 while this group (entries [e0, e0 + g)) runs, where p.prefetch_next: next[0] its out_backprop
// row where it is not this group's, next[1] its last input row where it reads beyond this group's
// (stride 1: the row it adds). The next group as the caller's walk forms it: up to max_group
// entries of one out_backprop row; after the last, the next chunk's first (p.nahead). Returns
// whether there is a next group to prefetch.
template <class T>
inline bool depthwise_filter_next_rows(const DepthwiseFilterRows<T>& p, int64_t e0, int64_t g,
                                       int64_t max_group, RowLines next[2]) {
  const int64_t end = p.nrows + p.nahead;
  if (!p.prefetch_next || e0 + g >= end) return false;
  const int64_t ne = e0 + g;
  int64_t last = ne;
  while (last + 1 < end && last + 1 - ne < max_group && p.rows[3 * (last + 1)] == p.rows[3 * ne])
    ++last;
  constexpr int64_t elem = static_cast<int64_t>(sizeof(T));
  if (p.rows[3 * ne] != p.rows[3 * e0])  // (a row of more taps than a group: being read)
    next[0] = RowLines(p.dy + p.rows[3 * ne] * p.OW * p.C, 1, p.OW * p.C * elem, 0);
  if (p.rows[3 * last + 2] > p.rows[3 * (e0 + g - 1) + 2])
    next[1] = RowLines(p.x + p.rows[3 * last + 2] * p.W * p.C, 1, p.W * p.C * elem, 0);
  return true;
}

// G consecutive row entries that share their out_backprop row (filter rows a_0..a_{G-1}): each
// out_backprop vector is loaded once for all G.
template <class S, int G, int NB, bool FULL>
inline void depthwise_filter_group(const DepthwiseFilterRows<typename S::T>& p, int64_t e0,
                                   int64_t ch0, int64_t nch, int64_t span) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const T* dyr = p.dy + p.rows[3 * e0] * p.OW * p.C + ch0;
  const T* xr[G];
  int64_t a[G];
#pragma GCC unroll 8
  for (int k = 0; k < G; ++k) {
    a[k] = p.rows[3 * (e0 + k) + 1];
    xr[k] = p.x + p.rows[3 * (e0 + k) + 2] * p.W * p.C + ch0;
  }
  const int64_t s_step = p.sw * p.C;
  // The next group's out_backprop row and, where it reads one beyond this group's, its last input
  // row (stride 1: the row it adds), prefetched into L2 block by block during the first channel
  // block's pass; later blocks find the rows in L2. On a Zen 4 guest (2026-12-03, paired against
  // oneDNN, bench/zen4-2026-12-03/dw-f-*.txt): MobileNet dw1 2.75 -> 3.51 at 2 threads (14
  // rounds), 2.20 -> 2.78 at 1 (8 rounds); dw3 2.24 -> 2.88 and 2.11 -> 2.51; into L1 instead
  // (dwf-a.txt) lower than without. Not measured on the Xeon guests.
  RowLines next[2];
  int64_t per_block[2] = {0, 0};
  if (ch0 == 0 && depthwise_filter_next_rows(p, e0, G, depthwise_filter_max_group<NB>(), next)) {
    const int64_t blocks = (p.OW + span - 1) / span;
#pragma GCC unroll 2
    for (int r = 0; r < 2; ++r) per_block[r] = (next[r].row_lines_left() + blocks - 1) / blocks;
  }
  for (int64_t jb = 0; jb < p.OW; jb += span) {
    next[0].steps(per_block[0]);
    next[1].steps(per_block[1]);
    for (int64_t b = 0; b < p.KW; ++b) {
      const int64_t lo = p.j_lo[b] > jb ? p.j_lo[b] : jb;
      const int64_t hi = p.j_hi[b] < jb + span ? p.j_hi[b] : jb + span;
      if (lo >= hi) continue;
      V acc[G][NB];
      T* accp[G];
#pragma GCC unroll 8
      for (int k = 0; k < G; ++k) {
        accp[k] = p.acc + (a[k] * p.KW + b) * p.C + ch0;
#pragma GCC unroll 16
        for (int u = 0; u < NB; ++u)
          acc[k][u] = FULL ? S::load(accp[k] + u * W) : S::load_n(accp[k] + u * W, nch - u * W);
      }
      const T* d = dyr + lo * p.C;
      const int64_t s_off = (lo * p.sw + p.col_off[b]) * p.C;
      for (int64_t j = lo; j < hi; ++j, d += p.C) {
        V dv[NB];
#pragma GCC unroll 16
        for (int u = 0; u < NB; ++u)
          dv[u] = FULL ? S::load(d + u * W) : S::load_n(d + u * W, nch - u * W);
        const int64_t off = s_off + (j - lo) * s_step;
#pragma GCC unroll 8
        for (int k = 0; k < G; ++k) {
#pragma GCC unroll 16
          for (int u = 0; u < NB; ++u) {
            const T* s = xr[k] + off + u * W;
            acc[k][u] = S::fma(dv[u], FULL ? S::load(s) : S::load_n(s, nch - u * W), acc[k][u]);
          }
        }
      }
#pragma GCC unroll 8
      for (int k = 0; k < G; ++k) {
#pragma GCC unroll 16
        for (int u = 0; u < NB; ++u) {
          if (FULL) {
            S::store(accp[k] + u * W, acc[k][u]);
          } else {
            S::store_n(accp[k] + u * W, acc[k][u], nch - u * W);
          }
        }
      }
    }
  }
}

// Each group walks its row entries in blocks of `span` output columns, every filter column b over
// a block before the next block, so that a block's out_backprop slice and its G input slices (sw
// times as wide) stay in L1 over the KW passes (block_bytes: the driver gives a quarter of L1).
// Over whole rows MobileNet's dw1 or dw3 group (four 14 KiB slices) outgrew a 48 KiB L1 and was
// streamed from L2 on every pass, at about 15 % of the FMA peak (the README and
// bench/xeon-2026-11-29f have the figures). Each element still sums its terms in the same order
// (columns ascending within a row entry), so blocking does not change the result. Returns 1
// where the channel block took several column blocks (a test hook's count), else 0.
template <class S, int NB, bool FULL>
inline int64_t depthwise_filter_block(const DepthwiseFilterRows<typename S::T>& p, int64_t ch0,
                                      int64_t nch) {
  constexpr int kMaxGroup = depthwise_filter_max_group<NB>();
  // (A stride wider than the input row reads one column: clamped, so that it cannot overflow.
  // Ternaries, not std::min: an inline library template instantiated here could be the copy the
  // linker keeps for another ISA's code.)
  const int64_t sw = p.sw < p.W ? p.sw : (p.W > 1 ? p.W : 1);
  const int64_t col_bytes =
      nch * static_cast<int64_t>(sizeof(typename S::T)) * (1 + kMaxGroup * sw);
  const int64_t fit = p.block_bytes / col_bytes;
  const int64_t span = p.block_bytes <= 0 ? p.OW : fit > 4 ? fit : 4;
  for (int64_t e = 0; e < p.nrows;) {
    int64_t g = 1;
    while (g < kMaxGroup && e + g < p.nrows && p.rows[3 * (e + g)] == p.rows[3 * e]) ++g;
    switch (g) {
      case 1:
        depthwise_filter_group<S, 1, NB, FULL>(p, e, ch0, nch, span);
        break;
      case 2:
        depthwise_filter_group<S, 2, NB, FULL>(p, e, ch0, nch, span);
        break;
      case 3:
        depthwise_filter_group<S, 3, NB, FULL>(p, e, ch0, nch, span);
        break;
      default:
        depthwise_filter_group<S, (kMaxGroup >= 4 ? 4 : 3), NB, FULL>(p, e, ch0, nch, span);
        break;
    }
    e += g;
  }
  return span < p.OW ? 1 : 0;
}

// Three filter columns (KW = 3: MobileNet's layers and most depthwise ones): G row entries' 3G
// taps of NB channel vectors (a cache line: AVX-512 1, AVX2 2) stay in registers over the whole
// out_backprop row, each out_backprop vector loaded once for all of them; with `WINDOW` (stride
// 1, no column dilation: the taps read three consecutive input columns) each input vector is
// loaded once, into a window of three registers per row slid one column each step, so a step is
// (1 + G) NB loads for 3G NB multiply-adds (depthwise_filter_group: G + 1 loads per G, plus its
// accumulators' loads and stores per block of columns). Columns where some tap reads padding
// (the edges) go tap by tap. Every element sums its terms in the same order as
// depthwise_filter_group (row entries in order, columns ascending), so the two give the same
// bits. `next` (depthwise_filter_next_rows) steps a line of each next row per interior column.
template <class S, int G, int NB, bool FULL, bool WINDOW>
inline void depthwise_filter_taps3(const DepthwiseFilterRows<typename S::T>& p, int64_t e0,
                                   int64_t ch, const int64_t cols[4], RowLines next[2]) {
  using T = typename S::T;
  using V = typename S::V;
  constexpr int W = S::W;
  const int64_t C = p.C, nch = C - ch, s_step = p.sw * C;
  const T* d = p.dy + p.rows[3 * e0] * p.OW * C + ch;
  const T* xr[G];
  T* accp[G];
  V acc[G][3][NB];
#pragma GCC unroll 4
  for (int k = 0; k < G; ++k) {
    xr[k] = p.x + p.rows[3 * (e0 + k) + 2] * p.W * C + ch;
    accp[k] = p.acc + p.rows[3 * (e0 + k) + 1] * 3 * C + ch;
#pragma GCC unroll 3
    for (int b = 0; b < 3; ++b) {
#pragma GCC unroll 4
      for (int u = 0; u < NB; ++u) {
        const T* a = accp[k] + b * C + u * W;
        acc[k][b][u] = FULL ? S::load(a) : S::load_n(a, nch - u * W);
      }
    }
  }
  const int64_t off[3] = {p.col_off[0] * C, p.col_off[1] * C, p.col_off[2] * C};
  // Columns [cols[0], cols[1]) and [cols[2], cols[3]): some tap outside the input row. Each tap
  // over its own columns there (an element's terms stay in column order: left edge, interior,
  // right edge).
  const int64_t j_lo[3] = {p.j_lo[0], p.j_lo[1], p.j_lo[2]};
  const int64_t j_hi[3] = {p.j_hi[0], p.j_hi[1], p.j_hi[2]};
  auto edge = [&](int64_t j0, int64_t j1) __attribute__((always_inline)) {
#pragma GCC unroll 3
    for (int b = 0; b < 3; ++b) {
      const int64_t lo = j_lo[b] > j0 ? j_lo[b] : j0, hi = j_hi[b] < j1 ? j_hi[b] : j1;
      for (int64_t j = lo; j < hi; ++j) {
#pragma GCC unroll 4
        for (int u = 0; u < NB; ++u) {
          const T* dp = d + j * C + u * W;
          const V dv = FULL ? S::load(dp) : S::load_n(dp, nch - u * W);
#pragma GCC unroll 4
          for (int k = 0; k < G; ++k) {
            const T* s = xr[k] + (j * s_step + off[b] + u * W);
            acc[k][b][u] = S::fma(dv, FULL ? S::load(s) : S::load_n(s, nch - u * W), acc[k][b][u]);
          }
        }
      }
    }
  };
  // (The walks' state in locals: through `next` it went to memory and back each column.)
  RowLines next0 = next[0], next1 = next[1];
  edge(cols[0], cols[1]);
  const int64_t j0 = cols[1], j1 = cols[2] > cols[1] ? cols[2] : cols[1];
  if (WINDOW && j0 < j1) {
    // (Offsets added whole, not pointers stepped past the last column or before the first: no
    // pointer leaves its array.)
    V w0[G][NB], w1[G][NB];
#pragma GCC unroll 4
    for (int k = 0; k < G; ++k) {
      const T* s0 = xr[k] + (j0 * C + off[0]);
#pragma GCC unroll 4
      for (int u = 0; u < NB; ++u) {
        w0[k][u] = FULL ? S::load(s0 + u * W) : S::load_n(s0 + u * W, nch - u * W);
        w1[k][u] = FULL ? S::load(s0 + C + u * W) : S::load_n(s0 + C + u * W, nch - u * W);
      }
    }
    for (int64_t j = j0; j < j1; ++j) {
      const T* dj = d + j * C;
      const int64_t at = (j + 2) * C + off[0];
#pragma GCC unroll 4
      for (int u = 0; u < NB; ++u) {
        const V dv = FULL ? S::load(dj + u * W) : S::load_n(dj + u * W, nch - u * W);
#pragma GCC unroll 4
        for (int k = 0; k < G; ++k) {
          const T* s2 = xr[k] + (at + u * W);
          const V w2 = FULL ? S::load(s2) : S::load_n(s2, nch - u * W);
          acc[k][0][u] = S::fma(dv, w0[k][u], acc[k][0][u]);
          acc[k][1][u] = S::fma(dv, w1[k][u], acc[k][1][u]);
          acc[k][2][u] = S::fma(dv, w2, acc[k][2][u]);
          w0[k][u] = w1[k][u];
          w1[k][u] = w2;
        }
      }
      next0.step();
      next1.step();
    }
  } else {
    for (int64_t j = j0; j < j1; ++j) {
      const T* dj = d + j * C;
      const int64_t o = j * s_step;
#pragma GCC unroll 4
      for (int u = 0; u < NB; ++u) {
        const V dv = FULL ? S::load(dj + u * W) : S::load_n(dj + u * W, nch - u * W);
#pragma GCC unroll 3
        for (int b = 0; b < 3; ++b) {
#pragma GCC unroll 4
          for (int k = 0; k < G; ++k) {
            const T* x = xr[k] + (o + off[b] + u * W);
            acc[k][b][u] = S::fma(dv, FULL ? S::load(x) : S::load_n(x, nch - u * W), acc[k][b][u]);
          }
        }
      }
      next0.step();
      next1.step();
    }
  }
  edge(j1, cols[3]);
  next[0] = next0;
  next[1] = next1;
#pragma GCC unroll 4
  for (int k = 0; k < G; ++k) {
#pragma GCC unroll 3
    for (int b = 0; b < 3; ++b) {
#pragma GCC unroll 4
      for (int u = 0; u < NB; ++u) {
        T* a = accp[k] + b * C + u * W;
        if (FULL) {
          S::store(a, acc[k][b][u]);
        } else {
          S::store_n(a, acc[k][b][u], nch - u * W);
        }
      }
    }
  }
}

// The channels of G row entries, NB vectors at a time.
template <class S, int G, int NB, bool WINDOW>
inline void depthwise_filter_taps3_group(const DepthwiseFilterRows<typename S::T>& p, int64_t e0,
                                         const int64_t cols[4], RowLines next[2]) {
  constexpr int64_t step = NB * S::W;
  int64_t ch = 0;
  for (; ch + step <= p.C; ch += step)
    depthwise_filter_taps3<S, G, NB, true, WINDOW>(p, e0, ch, cols, next);
  if (ch < p.C) depthwise_filter_taps3<S, G, NB, false, WINDOW>(p, e0, ch, cols, next);
}

// KW = 3 over the row entries in groups of up to 3 that share their out_backprop row (the
// prefetch's unit), each walked in parts of up to GMAX entries (the registers' limit).
template <class S, int NB, int GMAX, bool WINDOW>
inline void depthwise_filter_rows3(const DepthwiseFilterRows<typename S::T>& p) {
  // Columns every tap reads inside the input row: [max j_lo, min j_hi); the edges around them.
  int64_t cols[4] = {p.j_lo[0], p.j_lo[0], p.j_hi[0], p.j_hi[0]};
  for (int b = 1; b < 3; ++b) {
    cols[0] = p.j_lo[b] < cols[0] ? p.j_lo[b] : cols[0];
    cols[1] = p.j_lo[b] > cols[1] ? p.j_lo[b] : cols[1];
    cols[2] = p.j_hi[b] < cols[2] ? p.j_hi[b] : cols[2];
    cols[3] = p.j_hi[b] > cols[3] ? p.j_hi[b] : cols[3];
  }
  cols[1] = cols[1] < cols[3] ? cols[1] : cols[3];  // (no interior: one guarded walk)
  for (int64_t e = 0; e < p.nrows;) {
    int64_t g = 1;
    while (g < 3 && e + g < p.nrows && p.rows[3 * (e + g)] == p.rows[3 * e]) ++g;
    RowLines next[2];
    depthwise_filter_next_rows(p, e, g, 3, next);
    for (int64_t part = e; part < e + g;) {
      const int64_t n = e + g - part < GMAX ? e + g - part : GMAX;
      if (n == 1) {
        depthwise_filter_taps3_group<S, 1, NB, WINDOW>(p, part, cols, next);
      } else if (n == 2) {
        depthwise_filter_taps3_group<S, (GMAX >= 2 ? 2 : 1), NB, WINDOW>(p, part, cols, next);
      } else {
        depthwise_filter_taps3_group<S, (GMAX >= 3 ? 3 : 1), NB, WINDOW>(p, part, cols, next);
      }
      part += n;
    }
    e += g;
  }
}

template <class S>
int64_t depthwise_filter(const DepthwiseFilterRows<typename S::T>& p) {
  constexpr int64_t W = S::W;
  int64_t ch = 0, blocked = 0;
  if (p.three_tap_rows) {
    // Channels per pass and entries as the registers hold: AVX-512 (32 registers, a vector a
    // line) a line of channels, 3 entries' 9 accumulators, with the window (the driver's
    // three_tap_window) 6 more and 2. AVX2 (16 registers, two vectors a line): two lines per
    // pass, one entry's 12 accumulators, no window. Until 2026-12-07 a line per pass with 2
    // entries' 12 accumulators: on the Zen 3 guest (in-process pairs of calls, each set's median
    // time ratio of 202 pairs, bench/zen3-2026-12-07/pairs/dw-shapes.txt) two lines and one entry
    // read MobileNet dw1 0.94-0.95 at 2 threads and 0.93 at 1, dw3 0.95-0.96 and 0.945, dw4s2
    // 0.86 and 0.945 (a pass now reads two adjacent lines of each pixel, where a line per
    // pass read every other line of a row and the next pass the rest, though out_backprop's
    // lines are now loaded once per entry, not once per two); a vector per pass with 3 entries
    // read 1.12-1.37. On a Zen 4 (bench/zen4-2026-12-03b/avx2-*.txt) one entry with its window, 14
    // registers, had taken as long as two entries a line or longer (its 6 accumulators leave the
    // FMA latency exposed); on the Zen 3 against two lines, 1.23-1.30x the time, and a vector with
    // two entries' windows 1.55-1.64x (bench/zen3-2026-12-07b/pairs/filter-window.txt).
    constexpr int kNB = S::W * static_cast<int64_t>(sizeof(typename S::T)) >= kLine ? 1 : 2;
    if constexpr (S::kRegs < 32) {
      depthwise_filter_rows3<S, 2 * kNB, 1, false>(p);
    } else if (p.three_tap_window) {
      depthwise_filter_rows3<S, kNB, 3, true>(p);
    } else {
      depthwise_filter_rows3<S, kNB, 3, false>(p);
    }
    return 0;
  }
  for (; ch + 4 * W <= p.C; ch += 4 * W)
    blocked += depthwise_filter_block<S, 4, true>(p, ch, 4 * W);
  if (ch + 2 * W <= p.C) {
    blocked += depthwise_filter_block<S, 2, true>(p, ch, 2 * W);
    ch += 2 * W;
  }
  if (ch + W <= p.C) {
    blocked += depthwise_filter_block<S, 1, true>(p, ch, W);
    ch += W;
  }
  if (ch < p.C) blocked += depthwise_filter_block<S, 1, false>(p, ch, p.C - ch);
  return blocked;
}

// ---- filter packing ----------------------------------------------------------------------------

// KernelTable::copy_rows. A row's tail (n not a multiple of the width) element by element: AVX2's
// masked stores are slow on some AMD cores.
template <class S>
void copy_rows(const typename S::T* src, int64_t ld, int64_t n, int64_t count, typename S::T* dst,
               int64_t ldd) {
  for (int64_t r = 0; r < count; ++r, src += ld, dst += ldd) {
    int64_t i = 0;
    for (; i + S::W <= n; i += S::W) S::store(dst + i, S::load(src + i));
    for (; i < n; ++i) dst[i] = src[i];
  }
}

// KernelTable::sum_into.
template <class S>
void sum_into(typename S::T* dst, const typename S::T* src, int64_t stride, int64_t count,
              int64_t n) {
  constexpr int64_t kBlock = 1024;  // elements: 4-8 KiB of dst
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    typename S::T* const d = dst + b;
    for (int64_t c = 0; c < count; ++c) {
      const typename S::T* const s = src + c * stride + b;
      int64_t i = 0;
      for (; i + S::W <= m; i += S::W) S::store(d + i, S::add(S::load(d + i), S::load(s + i)));
      for (; i < m; ++i) d[i] += s[i];
    }
  }
}

template <class S>
bool pack_panel(const PackPanel<typename S::T>& p) {
  using T = typename S::T;
  uint32_t nonfinite = 0;  // v - v is 0 for every finite v, NaN for Inf and NaN
  if (!p.transposed) {
    for (int64_t k = 0; k < p.kc; ++k) {
      const T* s = p.src + k * p.ld;
      T* d = p.dst + k * p.NR;
      for (int64_t j = 0; j < p.nj; ++j) {
        d[j] = s[j];
        nonfinite |= !(s[j] - s[j] == T(0));
      }
      for (int64_t j = p.nj; j < p.NR; ++j) d[j] = T(0);
    }
    return nonfinite == 0;
  }
  // Blocks of B x B: the ISA's transpose where the block is whole, element by element elsewhere.
  // Until 2026-11-27 only AVX-512 f32 had a transpose: AVX2 packed at 1.1 ns a float on the Xeon
  // (0.33 with its 8 x 8 one), about a third of DCGAN g2's backprop input at 2 threads, whose 13 MB
  // filter is packed once per call (1.39-1.48 -> 1.70-1.88 of oneDNN, paired, 3 runs each).
  // Each block reads a line or half of one from each of NR rows a filter row apart (2 KiB for 512
  // channels): too many streams for the hardware prefetcher, so every line waited on L3 or
  // memory. Each row's line kAhead lines on is prefetched into L2 as its block starts a line:
  // DCGAN g2's backprop input and transpose (13 MB of filter packed per call) 1.39-1.40 ->
  // 1.52-1.63 of oneDNN (AVX-512, 2 threads, paired, 7 rounds; 2 lines ahead and into L1 gained
  // less, 8 and 16 lines about as much or less: bench/zen4-2026-12-03c/pack-prefetch.txt).
  constexpr int64_t B = S::kTranspose > 0 ? S::kTranspose : 8;
  constexpr int64_t kLineElements = kLine / static_cast<int64_t>(sizeof(T));
  constexpr int64_t kAhead = 4 * kLineElements;
  for (int64_t k0 = 0; k0 < p.kc; k0 += B) {
    const int64_t k1 = p.kc < k0 + B ? p.kc : k0 + B;
    if (k0 % kLineElements == 0 && k0 + kAhead < p.kc)
      for (int64_t j = 0; j < p.nj; ++j) __builtin_prefetch(p.src + j * p.ld + k0 + kAhead, 0, 2);
    for (int64_t j0 = 0; j0 < p.NR; j0 += B) {
      const int64_t j1 = p.NR < j0 + B ? p.NR : j0 + B;
      if constexpr (S::kTranspose > 0) {
        if (k1 - k0 == B && j0 + B <= p.nj) {
          S::transpose_block(p.src + j0 * p.ld + k0, p.ld, p.dst + k0 * p.NR + j0, p.NR,
                             &nonfinite);
          continue;
        }
      }
      for (int64_t j = j0; j < j1; ++j) {
        if (j < p.nj) {
          const T* s = p.src + j * p.ld;
          for (int64_t k = k0; k < k1; ++k) {
            p.dst[k * p.NR + j] = s[k];
            nonfinite |= !(s[k] - s[k] == T(0));
          }
        } else {
          for (int64_t k = k0; k < k1; ++k) p.dst[k * p.NR + j] = T(0);
        }
      }
    }
  }
  return nonfinite == 0;
}

// ---- 16-bit storage conversions
// ------------------------------------------------------------------

// Exact; a signalling NaN comes out quiet (as every arithmetic use would make it).
inline void widen_bf16(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
    const uint32_t q = (u & 0x7FFFFFFFu) > 0x7F800000u ? u | 0x00400000u : u;
    std::memcpy(dst + i, &q, sizeof q);
  }
}

// Round to nearest even on the upper 16 bits; a NaN keeps its sign and top payload bits and gets
// the quiet bit.
inline void narrow_bf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    const uint32_t nan = (u >> 16) | 0x40u;
    dst[i] = static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
  }
}

#if defined(__F16C__) || defined(__AVX512F__)
inline void widen_f16(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

inline void narrow_f16(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}
#else
inline void widen_f16(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_float(src[i]);
}

inline void narrow_f16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_from_float(src[i]);
}
#endif

// ---- the table ---------------------------------------------------------------------------------

template <class S, int MR, int... NV>
void fill_table(KernelTable<typename S::T>* t, Isa isa, bool fused) {
  static_assert(sizeof...(NV) <= KernelTable<typename S::T>::kMaxVariants, "too many variants");
  t->isa = isa;
  t->fused = fused;
  t->mr = MR;
  t->width = S::W;
  t->variants = 0;
  ((t->nv[t->variants] = NV, t->igemm[t->variants] = &igemm_kernel<S, MR, NV>,
    t->filter[t->variants] = &filter_kernel<S, MR, NV>, ++t->variants),
   ...);
  t->pack = &pack_panel<S>;
  t->copy_rows = &copy_rows<S>;
  t->sum_into = &sum_into<S>;
  t->depthwise_row = &depthwise_row<S>;
  t->depthwise_filter = &depthwise_filter<S>;
  t->depthwise_window = S::kRegs >= 32;
  // The row window on by the rule where there are 16 registers (AVX2; generic, measured:
  // depthwise_window_run); AVX-512's (4 columns of 4 vectors) is written and tested (under
  // emulation too: CONVCHECK_OPTIMIZED_ISA=avx512-emulated) but unmeasured, so off by default:
  // AVX-512 keeps the tap runs until a machine with it times the two.
  t->depthwise_row_window = true;
  t->depthwise_row_window_by_rule = S::kRegs < 32;
  if constexpr (std::is_same_v<typename S::T, float>) {
    t->widen_f16 = &widen_f16;
    t->widen_bf16 = &widen_bf16;
    t->narrow_f16 = &narrow_f16;
    t->narrow_bf16 = &narrow_bf16;
  }
}
