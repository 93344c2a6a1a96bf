// The implicit GEMM's blocking, packing and threading (the maths is kernels.h's igemm tile).
//
// Packing: the filter is packed once per call into panels of NR result channels (the kernel
// variant that covers the group's channel count), zero beyond the last channel; the packing pass
// also checks that the filter is finite (else the caller takes its direct path). A filter much
// larger than the source is instead packed a chunk at a time, panel-major (see run_implicit_gemm).
// Blocking, from the cache sizes the OS reports (internal.h: cache_sizes()):
//  - the reduction (taps x kc) in chunks whose packed panel fits half of L2 (a quarter in
//    panel-major order), whole taps, or slices of one tap's channels when a tap alone is larger;
//  - result pixels in tiles of MR (in border-class order: PixelOrder), and tiles in blocks
//    whose source rows fit a quarter of L2;
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
// Threads: each (phase, group) splits its pixel tiles into contiguous ranges, one per thread (in
// panel-major order threads take (phase, group, panel) items, split into parts of tiles); a
// tile's arithmetic does not depend on which thread computes it, so results are the same for
// every thread count.
#include "optimized/implicit_gemm.h"

#include <algorithm>
#include <atomic>
#include <type_traits>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "optimized/internal.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

namespace {

std::atomic<int64_t> g_next_chunk_prefetches{0};  // next_chunk_prefetches_for_tests
std::atomic<int64_t> g_threaded_ahead{0};         // threaded_ahead_blocks_for_tests
std::atomic<int64_t> g_streamed_tiles{0};         // streamed_igemm_tiles_for_tests
std::atomic<int64_t> g_pace{0};                   // igemm_pace_for_tests

// Packs taps [tap0, tap1) of phase i, group g, panel nb (channels [k0, k0 + kc) of each) into dst
// as [tap][kc][NR], zero beyond the group's last result channel; false when an element packed is
// Inf or NaN.
template <class T>
bool pack_chunk(const ImplicitGemm<T>& p, const KernelTable<T>& kt, std::size_t i, int64_t g,
                int64_t nb, int64_t NR, int64_t tap0, int64_t tap1, int64_t k0, int64_t kc,
                T* dst) {
  const Phase& ph = p.phases[i];
  const int64_t ntb = static_cast<int64_t>(ph.tap_cols.size());
  const int64_t j0 = nb * NR;
  bool finite = true;
  for (int64_t t = tap0; t < tap1; ++t) {
    const int64_t a = ph.tap_rows[t / ntb], b = ph.tap_cols[t % ntb];
    const T* wt = p.w + (a * p.KW + b) * p.Cf * p.O + g * p.Og;  // w[a, b, 0, g*Og]
    PackPanel<T> pp;
    // forward: B[k][j] = w[a, b, k, g*Og + j0 + j]; transposed: w[a, b, j0 + j, g*Og + k]
    pp.src = p.transposed ? wt + j0 * p.O + k0 : wt + k0 * p.O + j0;
    pp.ld = p.O;
    pp.kc = kc;
    pp.nj = std::min(NR, p.cols - j0);
    pp.NR = NR;
    pp.transposed = p.transposed;
    pp.dst = dst + (t - tap0) * kc * NR;
    finite &= kt.pack(pp);
  }
  return finite;
}

// The reduction in chunks (see the blocking above): chunk ch takes taps [tap0, tap0 + taps) of
// the phase's `ntaps`, channels [k0, k0 + kc) of each; the first chunk of a tile stores, the
// later ones add.
struct Chunks {
  int64_t chunk_taps = 1, slices = 1, slice_k = 0, kc = 0;
  // Groups of whole taps (a phase without taps still has one, which writes zeros); each group
  // runs in `slices` chunks.
  int64_t tap_groups(int64_t ntaps) const {
    return std::max<int64_t>(1, (ntaps + chunk_taps - 1) / chunk_taps);
  }
  int64_t count(int64_t ntaps) const { return tap_groups(ntaps) * slices; }
  // Sets the tile's taps, kc, a_off and accumulate for chunk ch; returns its first tap.
  template <class T>
  int64_t apply(int64_t ch, int64_t ntaps, IgemmTile<T>* tile) const {
    const int64_t tap0 = ch / slices * chunk_taps;
    const int64_t k0 = ch % slices * slice_k;
    tile->taps = std::min(ntaps, tap0 + chunk_taps) - tap0;
    tile->kc = std::min(slice_k, kc - k0);
    tile->a_off = k0;
    tile->accumulate = ch > 0;
    return tap0;
  }
};

// The filter rows that pack_chunk reads for chunk `ch` of phase ph's item (group g, panel nb),
// added to *pf to be prefetched into L2 while the chunk before it runs: one range per tap (a
// panel's rows are a filter row apart; L2Prefetch takes the first kMax), and only where the range
// is at most twice what the pack reads (the backprop input's transposed panels of a whole tap's
// channels are contiguous; the forward one's rows, NR elements of each O-element filter row, only
// where O is at most about twice NR: otherwise left to the hardware).
template <class T>
void next_chunk_rows(const ImplicitGemm<T>& p, const Phase& ph, const Chunks& chunks, int64_t ch,
                     int64_t ntaps, int64_t g, int64_t nb, int64_t NR, L2Prefetch* pf) {
  IgemmTile<T> t;
  const int64_t tap0 = chunks.apply(ch, ntaps, &t);
  const int64_t ntb = static_cast<int64_t>(ph.tap_cols.size());
  const int64_t j0 = nb * NR, nj = std::min(NR, p.cols - j0);
  // As pack_chunk: rows of kc elements, p.O apart (transposed), or of nj (forward).
  const int64_t rows = p.transposed ? nj : t.kc, row = p.transposed ? t.kc : nj;
  const int64_t span = (rows - 1) * p.O + row;
  if (rows <= 0 || row <= 0 || span > 2 * rows * row) return;
  for (int64_t tt = tap0; tt < tap0 + t.taps; ++tt) {
    const int64_t a = ph.tap_rows[tt / ntb], b = ph.tap_cols[tt % ntb];
    const T* wt = p.w + (a * p.KW + b) * p.Cf * p.O + g * p.Og;
    const T* src = p.transposed ? wt + j0 * p.O + t.a_off : wt + t.a_off * p.O + j0;
    pf->add(src, span * static_cast<int64_t>(sizeof(T)));
  }
}

// The order in which a phase's result pixels are cut into tiles: grouped by which of the
// phase's taps are padding for them (a pixel near the border has fewer taps than one inside),
// classes with more taps first, so that nearly every tile's pixels share their taps and the tile
// skips the ones that are padding for all of them (BlockTables). A pixel's result does not depend
// on its tile, and a skipped tap would only have added products of the zeros row (+-0), so this
// changes no result value; on the fused (FMA) kernels only the sign of a zero result can differ
// (a product that underflows to -0 is no longer turned into +0 by a later padding product; -0 is
// then the correctly rounded sum). Compared against the plain order on DCGAN g2, ResNet conv5,
// the dilated layer and g4 with random operands: identical bytes. DCGAN g2's backprop input (5x5
// taps, stride 2, 4x4 phase grids) formed 29 % padding products in the plain order, 5 % in this
// one (MR = 6); ResNet conv5 15 % -> 3 %. Classes are taken per run of images (not across the
// whole batch): across it, ResNet conv4 and the dilated layer read their border source rows back
// from L3 and ran 2-4 % slower than the plain order instead of faster. Measured 2026-11-25, 2
// threads, optimized's medians against the previous build interleaved: g2 4.7-4.8 -> 3.7-4.1 ms
// (AVX-512), 5.3-5.7 -> 4.6-4.8 ms (AVX2); conv5 8.9-9.3 -> 7.6-7.9 ms, 9.7-9.9 -> 8.5-8.8 ms;
// conv4 8.6 -> 8.1 ms, 9.0 -> 8.4-8.7 ms; dilated 2.2 -> 2.0-2.1 ms.
// Every run of images has the same classes, so the order keeps one image's pixels, class by
// class (O(rows x cols), not O(N x rows x cols)), and maps a position to its pixel arithmetically.
class PixelOrder {
 public:
  template <class T>
  PixelOrder(const ImplicitGemm<T>& p, const Phase& ph, int64_t mr)
      : N_(p.N), per_image_(ph.rows * ph.cols), rows_(ph.rows), cols_(ph.cols) {
    if (N_ <= 0 || per_image_ <= 0) return;  // nothing to order
    // Each grid row's (column's) tap rows (columns) inside the source, as a class id. A row's
    // valid taps form an interval whose ends move monotonically, so there are at most about
    // twice as many classes as tap rows.
    auto classes = [](int64_t n, int64_t step, const std::vector<int64_t>& off, int64_t size,
                      std::vector<std::vector<char>>* valid) {
      std::vector<int64_t> id(static_cast<std::size_t>(n));
      for (int64_t u = 0; u < n; ++u) {
        std::vector<char> v(off.size());
        for (std::size_t a = 0; a < off.size(); ++a) {
          const int64_t s = u * step + off[a];
          v[a] = s >= 0 && s < size;
        }
        const auto it = std::find(valid->begin(), valid->end(), v);
        id[u] = it - valid->begin();
        if (it == valid->end()) valid->push_back(std::move(v));
      }
      return id;
    };
    std::vector<std::vector<char>> rv, cv;
    const std::vector<int64_t> rid = classes(ph.rows, ph.src_row_step, ph.row_off, p.src_h, &rv);
    const std::vector<int64_t> cid = classes(ph.cols, ph.src_col_step, ph.col_off, p.src_w, &cv);
    if (rv.size() <= 1 && cv.size() <= 1) return;  // every pixel has every tap: the plain order
    struct Class {
      int64_t taps, r, c;
    };
    std::vector<Class> cls;
    auto count = [](const std::vector<char>& v) { return std::count(v.begin(), v.end(), 1); };
    for (std::size_t r = 0; r < rv.size(); ++r)
      for (std::size_t c = 0; c < cv.size(); ++c)
        cls.push_back(
            {count(rv[r]) * count(cv[c]), static_cast<int64_t>(r), static_cast<int64_t>(c)});
    // More taps first; among equals, by the validity patterns (neighbouring classes share taps).
    std::sort(cls.begin(), cls.end(), [&](const Class& x, const Class& y) {
      if (x.taps != y.taps) return x.taps > y.taps;
      if (rv[x.r] != rv[y.r]) return rv[x.r] > rv[y.r];
      return cv[x.c] > cv[y.c];
    });
    // Images in runs that each hold many tiles per class, so that a tile rarely straddles two
    // classes, while a run's source pixels are read close together in time.
    run_ = std::clamp<int64_t>(
        (static_cast<int64_t>(cls.size()) * mr * 8 + per_image_ - 1) / per_image_, 1, N_);
    std::vector<std::vector<int64_t>> rows(rv.size()), cols(cv.size());
    for (int64_t u = 0; u < ph.rows; ++u) rows[rid[u]].push_back(u);
    for (int64_t v = 0; v < ph.cols; ++v) cols[cid[v]].push_back(v);
    pu_.reserve(static_cast<std::size_t>(per_image_));
    pv_.reserve(static_cast<std::size_t>(per_image_));
    for (const Class& k : cls) {
      start_.push_back(static_cast<int64_t>(pu_.size()));
      for (int64_t u : rows[k.r])
        for (int64_t v : cols[k.c]) pu_.push_back(u), pv_.push_back(v);
    }
    start_.push_back(per_image_);
  }

  // Pixels q0, q0 + 1, ..., q0 + count - 1 as (n, u, v). Within a run of images: class by class,
  // and within a class image by image, each image's pixels of the class in row-major order.
  // Steps from pixel to pixel, dividing and searching the classes once per class the range
  // crosses (the fill used to, three to five divisions and a search per pixel). Filling the
  // tables cost about 10 % of ResNet conv2's 3x3 backprop input on AVX-512, where one panel
  // takes all 64 channels and uses each table once (a build that filled each table twice:
  // 1.22-1.30 -> 1.10-1.13 of oneDNN, 2026-11-27).
  void pixels(int64_t q0, int64_t count, int64_t* n, int64_t* u, int64_t* v) const {
    if (start_.empty()) {                        // the plain order: row-major over the batch
      const int64_t rows = rows_, cols = cols_;  // locals: the outputs may alias members
      int64_t nn = q0 / per_image_, uu = q0 % per_image_ / cols, vv = q0 % cols;
      for (int64_t i = 0; i < count; ++i) {
        n[i] = nn;
        u[i] = uu;
        v[i] = vv;
        if (++vv == cols) {
          vv = 0;
          if (++uu == rows) uu = 0, ++nn;
        }
      }
      return;
    }
    for (int64_t i = 0; i < count;) {
      const int64_t q = q0 + i;
      const int64_t n0 = q / (run_ * per_image_) * run_, nr = std::min(run_, N_ - n0);
      const int64_t o = q - n0 * per_image_;
      // The class k with nr * start[k] <= o < nr * start[k + 1] (empty classes never match).
      const auto k = std::upper_bound(start_.begin(), start_.end(), o / nr) - start_.begin() - 1;
      const int64_t size = start_[k + 1] - start_[k];
      int64_t in_class = o - nr * start_[k], img = in_class / size, idx = in_class % size;
      for (; i < count && in_class < nr * size; ++i, ++in_class) {
        n[i] = n0 + img;
        u[i] = pu_[start_[k] + idx];
        v[i] = pv_[start_[k] + idx];
        if (++idx == size) idx = 0, ++img;
      }
    }
  }

 private:
  int64_t N_, per_image_, rows_, cols_, run_ = 1;
  std::vector<int64_t> pu_, pv_;  // one image's pixels (row u, column v), class by class
  std::vector<int64_t> start_;    // class k's: [start_[k], start_[k + 1]); empty: plain order
};

// A thread's row-pointer tables, worked out once per block of tiles and reused by every panel
// and chunk: result rows [tile][MR], and per tile the chunk's taps that are not padding for
// all of its pixels, with their source rows [tap][MR] at k = 0 (the zeros row for a pixel the
// tap is padding for); in `slots` tables of `tiles` tiles and `ctaps` taps (one chunk's).
template <class T>
class BlockTables {
 public:
  BlockTables(const ImplicitGemm<T>& p, const T* zeros, int64_t MR, int64_t tiles, int64_t ctaps,
              int slots)
      : p_(p),
        zeros_(zeros),
        MR_(MR),
        tiles_(tiles),
        ctaps_(ctaps),
        c_(static_cast<std::size_t>(slots * tiles * MR)),
        a_(static_cast<std::size_t>(slots * tiles * ctaps * MR)),
        tap_(static_cast<std::size_t>(slots * tiles * ctaps)),
        ntap_(static_cast<std::size_t>(slots * tiles)),
        pn_(MR),
        pu_(MR),
        pv_(MR),
        su_(MR),
        sv_(MR),
        base_(MR),
        ro_(ctaps),
        co_(ctaps),
        off_(ctaps) {}

  T* const* c(int slot, int64_t tile) const { return c_.data() + (slot * tiles_ + tile) * MR_; }
  const T* const* a(int slot, int64_t tile) const {
    return a_.data() + (slot * tiles_ + tile) * ctaps_ * MR_;
  }
  // The tile's taps (indices into the chunk's), and how many.
  const int32_t* tap(int slot, int64_t tile) const {
    return tap_.data() + (slot * tiles_ + tile) * ctaps_;
  }
  int64_t taps(int slot, int64_t tile) const { return ntap_[slot * tiles_ + tile]; }
  // Sets the tile's a, tap, taps and c from table `slot`.
  void set(int slot, int64_t tile, IgemmTile<T>* x) const {
    x->a = a(slot, tile);
    x->tap = tap(slot, tile);
    x->taps = taps(slot, tile);
    x->c = c(slot, tile);
  }

  // Fills table `slot` with tiles [bb, be) (at most `tiles`) of phase ph, its pixels taken in
  // `order`, group g, for taps [tap0, tap0 + ctaps) of the phase's.
  void fill(const Phase& ph, const PixelOrder& order, int64_t g, int64_t bb, int64_t be, int slot,
            int64_t tap0) {
    const int64_t M = p_.N * ph.rows * ph.cols;
    const int64_t ntb = static_cast<int64_t>(ph.tap_cols.size());
    const int64_t taps = static_cast<int64_t>(ph.tap_rows.size()) * ntb;
    const T* src_g = p_.src + g * p_.kc;
    // Each of the chunk's taps: its source offsets, and its element offset from the pixel's.
    const int64_t tap1 = std::min(taps, tap0 + ctaps_);
    for (int64_t tt = tap0; tt < tap1; ++tt) {
      const int64_t ro = ph.row_off[tt / ntb], co = ph.col_off[tt % ntb];
      ro_[tt - tap0] = ro;
      co_[tt - tap0] = co;
      off_[tt - tap0] = (ro * p_.src_w + co) * p_.src_c;
    }
    for (int64_t t = bb; t < be; ++t) {
      const int64_t m0 = t * MR_, mr = std::min(MR_, M - m0);
      T** ct = c_.data() + (slot * tiles_ + t - bb) * MR_;
      const T** at = a_.data() + (slot * tiles_ + t - bb) * ctaps_ * MR_;
      int32_t* tt_list = tap_.data() + (slot * tiles_ + t - bb) * ctaps_;
      order.pixels(m0, mr, pn_.data(), pu_.data(), pv_.data());
      for (int64_t m = 0; m < MR_; ++m) {
        const int64_t i = std::min(m, mr - 1);  // rows past mr repeat the last
        ct[m] = p_.result +
                ((pn_[i] * p_.res_h + ph.row0 + pu_[i] * ph.row_step) * p_.res_w + ph.col0 +
                 pv_[i] * ph.col_step) *
                    p_.res_c +
                g * p_.cols;
        su_[m] = pu_[i] * ph.src_row_step;
        sv_[m] = pv_[i] * ph.src_col_step;
        base_[m] = ((pn_[i] * p_.src_h + su_[m]) * p_.src_w + sv_[m]) * p_.src_c;
      }
      int64_t listed = 0;
      for (int64_t tt = 0; tt < tap1 - tap0; ++tt) {
        bool inside = false;
        for (int64_t m = 0; m < MR_; ++m) {
          const int64_t sr = su_[m] + ro_[tt], sc = sv_[m] + co_[tt];
          const bool in = sr >= 0 && sr < p_.src_h && sc >= 0 && sc < p_.src_w;
          inside |= in;
          at[listed * MR_ + m] = in ? src_g + (base_[m] + off_[tt]) : zeros_;
        }
        if (inside) tt_list[listed++] = static_cast<int32_t>(tt);
      }
      ntap_[slot * tiles_ + t - bb] = listed;
    }
  }

 private:
  const ImplicitGemm<T>& p_;
  const T* zeros_;
  int64_t MR_, tiles_, ctaps_;
  std::vector<T*> c_;
  std::vector<const T*> a_;
  std::vector<int32_t> tap_;
  std::vector<int64_t> ntap_;
  // Per tile row: its pixel, its source row and column and element offset before the tap's;
  // per chunk tap: the tap's source row and column offsets, and its element offset.
  std::vector<int64_t> pn_, pu_, pv_, su_, sv_, base_;
  std::vector<int64_t> ro_, co_, off_;
};

}  // namespace

int64_t streamed_igemm_tiles_for_tests() {
  return g_streamed_tiles.exchange(0, std::memory_order_relaxed);
}

int64_t igemm_pace_for_tests() {
  return g_pace.exchange(0, std::memory_order_relaxed);
}

int64_t threaded_ahead_blocks_for_tests() {
  return g_threaded_ahead.exchange(0, std::memory_order_relaxed);
}

int64_t next_chunk_prefetches_for_tests() {
  return g_next_chunk_prefetches.exchange(0, std::memory_order_relaxed);
}

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
  const int threads = thread_count();

  Buffer<T> zeros(std::max<int64_t>(p.kc, 1));
  zeros.zero();
  const CacheSizes& cache = cache_sizes();
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  // Panel-major order (below) where the packed filter is large beside the source. Its chunks take
  // a quarter of L2, not half: each chunk's filter rows are prefetched into L2 while the chunk
  // before it runs, beside it (next_chunk_rows).
  const int64_t src_bytes = p.N * p.src_h * p.src_w * p.src_c * elem;
  const bool panel_major = total * elem > 4 * src_bytes;
  const int64_t panel_bytes = cache.l2 / (panel_major ? 4 : 2);
  // Reduction chunks: whole taps while a tap's panel slice (kc * NR) fits panel_bytes, else
  // slices of one tap's channels; either way the chunk's panel fits panel_bytes.
  const int64_t budget = std::max<int64_t>(1, panel_bytes / (NR * elem));  // k per chunk
  const int64_t chunk_taps =
      p.kc <= budget ? std::max<int64_t>(1, budget / std::max<int64_t>(p.kc, 1)) : 1;
  const int64_t slices = p.kc <= budget ? 1 : (p.kc + budget - 1) / budget;
  const int64_t slice_k = (p.kc + slices - 1) / slices;
  const Chunks chunks{chunk_taps, slices, slice_k, p.kc};
  int64_t max_taps = 0;
  for (int64_t t : ntaps) max_taps = std::max(max_taps, t);
  const int64_t ctaps = std::min(max_taps, chunk_taps);  // taps of the largest chunk
  // Panels per group: as many whole panels (every tap, all kc) as fit panel_bytes together, in
  // groups of near-equal size; one when a panel alone is larger.
  const int64_t panel_size = std::max<int64_t>(1, max_taps * p.kc * NR * elem);
  const int64_t max_group = std::clamp<int64_t>(panel_bytes / panel_size, 1, nblocks);
  const int64_t ngroups = (nblocks + max_group - 1) / max_group;
  const int64_t group_size = (nblocks + ngroups - 1) / ngroups;
  // Tiles per block: the block's source rows (MR rows of a chunk's k per tap) fit a quarter of L2.
  const int64_t tile_bytes = std::max<int64_t>(1, MR * ctaps * std::min(p.kc, slice_k) * elem);
  const int64_t tiles_per_block = std::clamp<int64_t>(cache.l2 / 4 / tile_bytes, 4, 64);

  // The (phase, group, panel) items, packed in parallel.
  struct Item {
    std::size_t phase;
    int64_t g, nb;
  };
  std::vector<Item> items;
  for (std::size_t i = 0; i < nph; ++i)
    if (p.phases[i].rows * p.phases[i].cols > 0)  // a phase without taps: zeros to write
      for (int64_t g = 0; g < p.groups; ++g)
        for (int64_t nb = 0; nb < nblocks; ++nb) items.push_back({i, g, nb});
  // Largest first (taps x pixels): threads take items in this order (schedule(dynamic)), so the
  // last ones taken are the smallest and the threads finish close together. In phase order,
  // DCGAN g2's panel-major items (2x2, 2x3, 3x2 and 3x3 taps, four panels each) ended with the
  // four 3x3 ones, each 9 % of the work. An item writes its own results: no value changes.
  // Measured 1 -> 2 threads on g2 (AVX-512, 8 rounds, medians of per-round speedups): backprop
  // input 1.83x -> 1.96x, transpose 1.88x -> 1.89x (bench/zen4-2026-12-03c/items-threads.txt).
  auto item_work = [&](const Item& x) {
    const Phase& ph = p.phases[x.phase];
    return std::max<int64_t>(1, ntaps[x.phase]) * ph.rows * ph.cols;
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Item& a, const Item& b) { return item_work(a) > item_work(b); });
  const int64_t nitems = static_cast<int64_t>(items.size());
  std::vector<PixelOrder> order;
  for (const Phase& ph : p.phases) order.emplace_back(p, ph, MR);

  // Panel-major order, when the packed filter is large beside the source (DCGAN's g2: 13 MB of
  // filter for 256 KB of out_backprop; ResNet's conv5: 9.4 MB for 800 KB): each item packs one
  // chunk of its panel at a time into a buffer that stays in L2 and runs every result pixel
  // tile of its phase through it, so the filter is read once and never written out packed, and
  // only the small source is read once per panel. Items split their tiles into a few parts where
  // they are too few to keep every thread busy (each part packs its chunks itself). Measured
  // 2026-11-25, 2 threads, optimized's medians with the same binary's old order interleaved:
  // DCGAN g2 backprop input and conv2d_transpose 4.8-5.9 -> 4.4-4.8 ms on AVX-512, 5.7 ->
  // 5.2-5.5 ms on AVX2; ResNet conv5 9.0 -> 8.6-8.9 ms on AVX-512, unchanged on AVX2; ResNet
  // conv4 (2.4 MB beside 1.6 MB) slower, so the rule asks for a filter four times the source.
  // Each chunk's kernel calls prefetch the next chunk's filter rows into L2 (next_chunk_rows),
  // paced since 2026-12-07 (a line every few reduction steps, L2Prefetch::pace; a line every step
  // before: ResNet conv5's and DCGAN g2's backprop input then took 0.74 / 0.74 and 0.71 / 0.81 of
  // the time at 2 / 1 threads, Zen 3 guest, alternate calls of one process,
  // bench/zen3-2026-12-07d/pairs/igemm-pace.txt): g2's packing, streamed from memory, was a quarter
  // of the layer (0.6-1.2 ms of 3.4-4.3 at 2 threads, kernels alone 2.8-3.0). With chunks of a
  // quarter of L2 and the prefetch, g2's backprop input and transpose 1.60 / 1.56 -> 1.64 / 1.65 of
  // oneDNN; the quarter alone 1.53 / 1.52 (AVX-512, 2 threads, paired, 9 rounds; a set of 7: 1.54
  // / 1.59 -> 1.64 / 1.69, ResNet conv5 level: bench/zen4-2026-12-03c/next-chunk-kernel-*.txt). An
  // item's first chunk is not prefetched (the next item is not known under schedule(dynamic)).
  if (panel_major) {
    int64_t max_tiles = 1;
    for (const Phase& ph : p.phases)
      max_tiles = std::max(max_tiles, (p.N * ph.rows * ph.cols + MR - 1) / MR);
    const int64_t parts =
        std::clamp<int64_t>((4 * threads + nitems - 1) / std::max<int64_t>(nitems, 1), 1,
                            std::max<int64_t>(1, max_tiles / tiles_per_block));
    const int64_t nwork = nitems * parts;
    int nonfinite = 0;
#pragma omp parallel num_threads(threads) reduction(| : nonfinite) if (threads > 1 && nwork > 1)
    {
      // Each thread's own scratch (kept between calls: no fresh pages per call).
      T* const chunk =
          scratch_array<T>(ScratchSlot::packed_filter, ctaps * std::min(p.kc, slice_k) * NR);
      BlockTables<T> tables(p, zeros.data(), MR, tiles_per_block, ctaps, 1);
#pragma omp for schedule(dynamic)
      for (int64_t w = 0; w < nwork; ++w) {
        const Item& x = items[w / parts];
        const Phase& ph = p.phases[x.phase];
        const int64_t M = p.N * ph.rows * ph.cols, taps = ntaps[x.phase];
        int64_t t0, t1;
        split_range((M + MR - 1) / MR, static_cast<int>(parts), static_cast<int>(w % parts), &t0,
                    &t1);
        if (t0 >= t1) continue;
        IgemmTile<T> tile;
        tile.nr = std::min(NR, p.cols - x.nb * NR);
        tile.c_off = x.nb * NR;
        tile.b = chunk;
        for (int64_t ch = 0; ch < chunks.count(taps); ++ch) {
          const int64_t tap0 = chunks.apply(ch, taps, &tile);
          nonfinite |= !pack_chunk(p, kt, x.phase, x.g, x.nb, NR, tap0, tap0 + tile.taps,
                                   tile.a_off, tile.kc, chunk);
          L2Prefetch next;
          if (ch + 1 < chunks.count(taps))
            next_chunk_rows(p, ph, chunks, ch + 1, taps, x.g, x.nb, NR, &next);
          next.spread(t1 - t0);
          tile.pf_pace = next.pace(tile.kc * tile.taps);  // (the chunk's calls alike)
          if (next.total > 0) {
            g_next_chunk_prefetches.fetch_add(1, std::memory_order_relaxed);
            note_max(&g_pace, tile.pf_pace);
          }
          for (int64_t tb = t0; tb < t1; tb += tiles_per_block) {
            const int64_t te = std::min(t1, tb + tiles_per_block);
            tables.fill(ph, order[x.phase], x.g, tb, te, 0, tap0);
            for (int64_t t = tb; t < te; ++t) {
              tables.set(0, t - tb, &tile);
              tile.mr = std::min(MR, M - t * MR);
              next.take(1, &tile.pf, &tile.pf_off, &tile.pf_last, &tile.pf_lines);
              kernel(tile);
              next.issue_due();
            }
          }
        }
      }
    }
    return nonfinite == 0;  // when false, the caller's direct path overwrites every result
  }

  T* const packed = scratch_array<T>(ScratchSlot::packed_filter, total);
  int nonfinite = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic) \
    reduction(|                                                 \
              : nonfinite) if (threads > 1 && nitems > 1)
  for (int64_t it = 0; it < nitems; ++it) {
    const Item& x = items[it];
    T* dst = packed + base[x.phase] + (x.g * nblocks + x.nb) * size[x.phase];
    nonfinite |= !pack_chunk(p, kt, x.phase, x.g, x.nb, NR, 0, ntaps[x.phase], 0, p.kc, dst);
  }
  if (nonfinite) return false;

  // The result tiles of each (phase, group, panel group), split among the threads and handed
  // out in blocks (internal.h's StealingRanges: a thread done early finishes a slowed one's
  // blocks). A tile's operations are the same in any block, so results do not depend on which
  // thread ran it.
  std::vector<StealingRanges> work;  // [phase][group][panel group]
  const int64_t panel_groups = (nblocks + group_size - 1) / group_size;
  std::vector<int64_t> phase_tiles(nph);
  for (std::size_t i = 0; i < nph; ++i)
    phase_tiles[i] = (p.N * p.phases[i].rows * p.phases[i].cols + MR - 1) / MR;
  // Streamed stores (stream_result): in a phase of one chunk, where each tile's one store is
  // final, a result over twice L2 is written with non-temporal stores, which write whole lines
  // without first reading them from memory; so every result row, group and panel must start on a
  // line and hold whole lines (a non-temporal vector store off its alignment faults). On a Zen 4
  // guest (2 threads, paired against oneDNN, 8-10 rounds, 2026-12-03, bench/zen4-2026-12-03d):
  // ResNet's 1x1 backprop input (a 6.4 MB result) AVX-512 1.14 -> 1.17, AVX2 1.08 -> 1.14; conv3
  // stride 2 1.16 -> 1.21, 1.06 -> 1.13; its 3x3 layers of one chunk level.
  const int64_t result_bytes = p.N * p.res_h * p.res_w * p.res_c * elem;
  const bool stream =
      std::is_floating_point_v<T> && stream_result(p.may_stream, kt.isa, p.result, result_bytes) &&
      (NR * elem) % kLine == 0 && (p.cols * elem) % kLine == 0 && (p.res_c * elem) % kLine == 0;
  const bool threaded_bursts = threaded_prefetch_bursts();  // (below: the next block's prefetch)
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int tid = 0, nt = 1;
#endif
#pragma omp single
    for (std::size_t i = 0; i < nph; ++i)
      for (int64_t k = 0; k < p.groups * panel_groups; ++k)
        work.emplace_back(phase_tiles[i], nt, tiles_per_block);
    // (the single's barrier: every thread sees `work` whole)
    // Two tables, this block's and the next one's. A table holds one chunk's taps (ctaps): a
    // filter of more taps than a chunk takes (a huge or very thin one) refills it per chunk, so
    // the tables stay within a few times what the block's source rows take in L2.
    BlockTables<T> tables(p, zeros.data(), MR, tiles_per_block, ctaps, 2);
    int64_t streamed = 0;  // this thread's streamed tile calls
    for (std::size_t i = 0; i < nph; ++i) {
      const Phase& ph = p.phases[i];
      const int64_t M = p.N * ph.rows * ph.cols;
      const int64_t taps = ntaps[i];
      for (int64_t g = 0; g < p.groups; ++g) {
        for (int64_t nb0 = 0; nb0 < nblocks; nb0 += group_size) {
          const int64_t nb1 = std::min(nblocks, nb0 + group_size);
          StealingRanges& blocks =
              work[(static_cast<int64_t>(i) * p.groups + g) * panel_groups + nb0 / group_size];
          // With one chunk of taps (nearly every layer) a block's table serves all its panels;
          // with several, each chunk refills it.
          const bool one_chunk = chunks.tap_groups(taps) == 1;
          int cur = 0;
          int64_t ahead_b = -1, ahead_e = -1;  // the block table `cur` was filled ahead for
          int64_t tb, te;
          while (blocks.next(tid, &tb, &te)) {
            if (one_chunk && !(tb == ahead_b && te == ahead_e))
              tables.fill(ph, order[i], g, tb, te, cur, 0);
            // The thread's next block is filled ahead, for the prefetch below: the one after this
            // block, up to the end of the thread's own range (one thread: the next block). It is
            // checked when a block is taken: another thread may have taken it (StealingRanges),
            // and after a block taken from another thread's range it is a guess, mostly wrong (a
            // wasted table and prefetch, a few blocks at the end of a call).
            const bool ahead = nt == 1 || (taps == 1 && threaded_bursts);
            const int64_t ne = ahead ? std::min(blocks.part_end(tid), te + tiles_per_block) : te;
            // One tap (a 1x1 layer, a stride phase with one tap): each source row is read from
            // memory by one tile of the block's first panel, too little of a stream for the
            // hardware prefetcher; that pass prefetches the next block's rows into L2 (measured
            // ResNet's 1x1 backprop input 0.93 -> 1.10 of oneDNN on AVX2, 1.03 -> 1.10 on AVX-512,
            // 1 thread, 2026-11-25; with several taps, and prefetching the result rows, no gain).
            // With more threads only where threaded_prefetch_bursts(): with two, on the Xeon
            // guest, the same layer ran at 0.90 of oneDNN with the prefetch and 0.99 without on
            // AVX-512, 0.94 and 1.02 on AVX2 (paired medians, 6-8 interleaved rounds, 2026-11-27;
            // spread through the kernel's reduction steps instead of a burst per tile, 0.91); one
            // thread 1.00 / 1.00 and 1.04 / 1.02 there. On the Zen 4 guest, 2 threads, 8 rounds:
            // AVX2 1.01 -> 1.08, AVX-512 1.10 -> 1.13 (2026-12-03, bench/zen4-2026-12-03d).
            const bool filled = one_chunk && ne > te;
            const bool pf = filled && taps == 1;  // (reads the next block's table)
            const bool stream_block = stream && chunks.count(taps) == 1;
            if (filled) tables.fill(ph, order[i], g, te, ne, 1 - cur, 0);
            ahead_b = filled ? te : -1;
            ahead_e = filled ? ne : -1;
            if (pf && nt > 1) g_threaded_ahead.fetch_add(1, std::memory_order_relaxed);
            // The next block's rows go out paced through every panel's kernel calls (a line
            // every rows_pace reduction steps: kernels.h, L2Prefetch), contiguous rows merged
            // into ranges (a 1x1 layer's backprop input block: one or a few; the zeros row of a
            // padding pixel is not a row). Where they make more ranges than L2Prefetch holds (a
            // strided forward 1x1 or groups: rows apart), the first panel's pass prefetches each
            // next tile's rows in a burst after its call, as every block did until 2026-12-07.
            // Paced (Zen 3 guest, 2 threads / 1, alternate calls of one process,
            // bench/zen3-2026-12-07d/pairs/igemm-pace.txt): ResNet's 1x1 backprop input 0.83 /
            // 0.87 of the time of the bursts, A/A 1.00 / 1.00.
            L2Prefetch rows;
            bool paced = false;
            if (pf) {
              const int64_t row_bytes = p.kc * elem;
              const char* lo = nullptr;
              const char* hi = nullptr;
              paced = true;
              auto close = [&] {
                if (lo == nullptr) return;
                if (rows.n == L2Prefetch::kMax) paced = false;
                rows.add(lo, hi - lo);
              };
              for (int64_t t = 0; t < ne - te && paced; ++t) {
                const T* const* an = tables.a(1 - cur, t);
                for (int64_t q = 0; q < tables.taps(1 - cur, t) * MR && paced; ++q) {
                  if (an[q] == zeros.data()) continue;
                  const char* r = reinterpret_cast<const char*>(an[q]);
                  if (r == hi) {
                    hi += row_bytes;
                    continue;
                  }
                  close();
                  lo = r;
                  hi = r + row_bytes;
                }
              }
              close();
              rows.spread((nb1 - nb0) * (te - tb) * chunks.count(taps));  // (calls: slices too)
            }
            const int64_t rows_pace = rows.pace(std::max<int64_t>(1, p.kc / chunks.count(taps)));
            if (paced) note_max(&g_pace, rows_pace);
            for (int64_t nb = nb0; nb < nb1; ++nb) {
              const T* panel = packed + base[i] + (g * nblocks + nb) * size[i];
              IgemmTile<T> tile;
              tile.nr = std::min(NR, p.cols - nb * NR);
              tile.c_off = nb * NR;
              tile.stream = stream_block;
              if (stream_block) streamed += te - tb;
              for (int64_t ch = 0; ch < chunks.count(taps); ++ch) {
                const int64_t tap0 = chunks.apply(ch, taps, &tile);
                tile.b = panel + (tap0 * p.kc + tile.a_off) * NR;
                if (!one_chunk && ch % slices == 0) tables.fill(ph, order[i], g, tb, te, cur, tap0);
                for (int64_t t = tb; t < te; ++t) {
                  tables.set(cur, t - tb, &tile);  // the chunk's taps, from tap0
                  tile.mr = std::min(MR, M - t * MR);
                  if (paced) {
                    rows.take(1, &tile.pf, &tile.pf_off, &tile.pf_last, &tile.pf_lines);
                    tile.pf_pace = rows_pace;
                  }
                  kernel(tile);
                  if (paced) {
                    rows.issue_due();
                  } else if (pf && nb == nb0 && ch == 0 && te + (t - tb) < ne) {
                    const T* const* an = tables.a(1 - cur, t - tb);
                    for (int64_t q = 0; q < tables.taps(1 - cur, t - tb) * MR; ++q) {
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
    if (streamed > 0) {
      store_fence();  // before the region's closing barrier publishes the result
      g_streamed_tiles.fetch_add(streamed, std::memory_order_relaxed);
    }
  }
  return true;
}

template bool run_implicit_gemm<float>(const ImplicitGemm<float>&);
template bool run_implicit_gemm<double>(const ImplicitGemm<double>&);
template bool run_implicit_gemm<uint32_t>(const ImplicitGemm<uint32_t>&);

}  // namespace convcheck::opt
