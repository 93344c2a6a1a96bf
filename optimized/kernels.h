// The optimized backend's kernels: maths only (no validation, layouts, threads or allocation).
//
// GEMM letters are used here and in implicit_gemm.cpp only; everything else speaks TF's words.
// The mapping, written once:
//
//   C[m, n] (+)= sum_k A[m, k] * B[k, n]   (m: broadcast side, n: vector side, k: reduction)
//
//   op                    m                          n                        k
//   conv2d                output pixel (n,i,j)       output channel o of g    tap (a,b) x q < Cf
//   backprop_input        input pixel (n,r,c) of     input channel q of g     tap (a,b) x o < O/G
//     (= transpose)       one stride phase
//   backprop_filter       filter row q (tap fixed)   output channel o of g    output pixel (n,i,j)
//
//   A is read in place through row pointers (conv2d: input rows, backprop_input: out_backprop
//   rows; a pointer to zeros stands for a padding tap), B is the filter packed into panels of NR
//   columns ([tap][k][NR], zero beyond the last column), C rows are written in place. Backprop
//   filter reads both sides in place: A from input rows (MR consecutive channels broadcast), B from
//   out_backprop rows, over runs of output pixels ("segments") that lie in one output row and
//   whose tap is inside the input (padding taps are never visited).
//
// Depthwise kernels are direct loops vectorised over channels (multiplier 1): a gather of taps per
// result row (forward and backprop input) and a tap-wise reduction over output pixels (backprop
// filter).
//
// Every kernel sums each result element in a fixed order that depends only on its arguments, so
// results do not depend on how the callers split work across threads.
#pragma once

#include <algorithm>
#include <cstdint>

namespace convcheck::opt {

/// Bytes per cache line (every x86-64 CPU): the unit of packing and prefetch decisions.
inline constexpr int64_t kLine = 64;

/// Whether a panel of `bytes` per row is wider than a cache line: the backprop filter sizes its
/// sub-blocks by it, and only wide panels prefetch a later filter tile (backprop_filter.cpp,
/// kAhead; the kernels carry that code only where it can be asked for, kernels_impl.h).
constexpr bool wide_panel(int64_t bytes) {
  return bytes > kLine;
}

/// Orders this thread's non-temporal stores (FilterTile::stream, IgemmTile::stream,
/// DepthwiseRow::stream), which are weakly ordered, before its later stores and the threads'
/// barrier that publishes the result.
inline void store_fence() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

/// Issues `lines` prefetches into L2 of base + off, base + off + kLine, ..., each offset clamped to
/// `last` (the range's last byte), so that no address leaves the range.
inline void prefetch_lines(const char* base, int64_t off, int64_t last, int64_t lines) {
  for (; lines > 0; --lines, off += kLine) __builtin_prefetch(base + std::min(off, last), 0, 2);
}

/// A piece of lines handed out by L2Prefetch::take (IgemmTile::pf, FilterTile::pf): the work
/// issues one per step() (a line every pf_pace reduction steps or pixels, counted afresh in each
/// tap or segment; not a burst: see L2Prefetch) and, where its steps ran out first, the rest at its
/// end (rest()), as the caller counts them issued.
struct PieceLines {
  const char* base;
  int64_t off, last, lines;
  void step() {
    if (lines <= 0) return;
    prefetch_lines(base, off, last, 1);
    off += kLine;
    --lines;
  }
  void rest() {
    prefetch_lines(base, off, last, lines);
    lines = 0;
  }
};

/// The lines of `rows` rows of `row_bytes` bytes each, `ld` bytes apart from `first` on, prefetched
/// into L2 (into L1: step<true>) one per step() (a row's first line at its first byte, then each
/// following line's start: every address inside a row). Addresses are integers until issued, so no
/// pointer leaves its array.
struct RowLines {
  uintptr_t row = 0, at = 0, end = 0, ld = 0, row_bytes = 0;
  int64_t rows = 0;
  RowLines() = default;
  RowLines(const void* first, int64_t rows_, int64_t row_bytes_, int64_t ld_)
      : row(reinterpret_cast<uintptr_t>(first)),
        at(row),
        end(row + row_bytes_),
        ld(static_cast<uintptr_t>(ld_)),
        row_bytes(static_cast<uintptr_t>(row_bytes_)),
        rows(first != nullptr && row_bytes_ > 0 ? rows_ : 0) {}
  // (L1: prefetcht0, into L1, where the caller asks for it: depthwise_input_rows_to_l1.)
  template <bool L1 = false>
  void step() {
    if (rows <= 0) return;
    __builtin_prefetch(reinterpret_cast<const void*>(at), 0, L1 ? 3 : 2);
    at = (at | (kLine - 1)) + 1;
    if (at < end) return;
    if (--rows == 0) return;
    row += ld;
    at = row;
    end = row + row_bytes;
  }
  /// Up to n steps (fewer where the lines run out).
  template <bool L1 = false>
  void steps(int64_t n) {
    for (; n > 0 && rows > 0; --n) step<L1>();
  }
  /// The steps left in the current row (all of a one-row walk's before its first step).
  int64_t row_lines_left() const {
    return rows <= 0 ? 0 : static_cast<int64_t>((end - 1) / kLine - at / kLine) + 1;
  }
};

/// Memory to bring into L2 a few lines at a time while other work runs (the next block of a loop,
/// whose first reads would otherwise wait on memory): add() up to kMax ranges, spread() them over
/// a number of work units, then take(u) before each piece of work of u units: it hands out the
/// lines due by then, in proportion to the units done, as a piece for the work itself to issue
/// one line at a time (FilterTile::pf); issue_due() after the work issues, at once, what the piece
/// left due (it stops at the end of a range). Only lines inside the ranges are touched.
///
/// Why the work issues them: prefetches into L2 hold an L1 fill buffer on Intel cores until their
/// line arrives, so a burst of them (the 77 lines per tile call of ResNet's 1x1 backprop filter)
/// leaves the work's own loads waiting, and the fetch no longer overlaps the arithmetic
/// (backprop_filter.cpp, next_block, has the figures). And not even one a step where steps are a
/// few cycles: on a Zen 3 guest prefetches issued within ~15 TSC cycles of each other are mostly
/// lost (their lines later read at up to two thirds of a cold line's cost; 24 apart, they arrive:
/// bench/zen3-2026-12-07d/l2probe.cpp), so the kernels pace them (pace(): FilterTile::pf_pace,
/// IgemmTile::pf_pace).
struct L2Prefetch {
  // (16: a panel-major chunk's taps, one range each, implicit_gemm.cpp's next_chunk_rows; 8 of
  // DCGAN g2's under AVX2 on a 1 MiB L2)
  static constexpr int kMax = 16;
  const char* base[kMax] = {};
  int64_t bytes[kMax] = {};
  int64_t next[kMax] = {};  // the next line's offset into the range (done at bytes + kLine)
  int n = 0, cur = 0;
  int64_t total = 0, issued = 0, units = 1, done = 0;

  // Lines at offsets 0, kLine, ... below `bytes` + kLine (the last one clamped to the range's last
  // byte): every address is inside the range.
  void add(const void* begin, int64_t size) {
    if (size <= 0 || n == kMax) return;
    base[n] = static_cast<const char*>(begin);
    bytes[n] = size;
    next[n] = 0;
    total += (size + kLine - 1) / kLine + 1;
    ++n;
  }
  void spread(int64_t work_units) { units = work_units > 0 ? work_units : 1; }
  // Steps of work (pixels, reduction steps) per line where each unit has `unit_steps` of them:
  // the lines evenly over the work (FilterTile::pf_pace), 1 where they outnumber the steps.
  int64_t pace(int64_t unit_steps) const {
    return total > 0 ? std::max<int64_t>(1, unit_steps * units / total) : 1;
  }
  // The lines due once `done` units are: all of them at the end, in proportion (one ahead) before.
  int64_t target() const {
    return done >= units ? total
                         : static_cast<int64_t>(static_cast<double>(done) / units * total) + 1;
  }
  // Counts `work` more units done and hands out lines due: *lines of them, from offset *off of
  // range *base, each offset clamped to *last (prefetch_lines). One range per piece: what is due
  // beyond the range's end stays due (issue_due).
  void take(int64_t work, const char** range, int64_t* off, int64_t* last, int64_t* lines) {
    *lines = 0;
    if (cur >= n) return;
    done += work;
    const int64_t due = target() - issued;
    if (due <= 0) return;
    const int64_t size = bytes[cur];
    *range = base[cur];
    *off = next[cur];
    *last = size - 1;
    *lines = std::min(due, (size + kLine - 1 - *off) / kLine + 1);  // offsets below size + kLine
    issued += *lines;
    next[cur] += *lines * kLine;
    if (next[cur] >= size + kLine) ++cur;
  }
  // Issues what is due and was not handed out (a piece that met the end of a range); the cursor
  // moves once per piece, not per line (a loop that updated it per line kept it in memory, a chain
  // of dependent loads and stores that once cost the 1x1 backprop filter its whole gain).
  void issue_due() {
    const char* range;
    int64_t off, last, lines;
    for (take(0, &range, &off, &last, &lines); lines > 0; take(0, &range, &off, &last, &lines))
      prefetch_lines(range, off, last, lines);
  }
};

/// Instruction sets with their own kernels. Selected at run time (dispatch.cpp).
enum class Isa { generic, avx2, avx512 };
const char* isa_name(Isa isa);

/// One MR x NR tile of an implicit GEMM: C[m][n] (+)= sum_t sum_k a[t*MR + m][a_off + k] *
/// b[(tap(t)*kc + k)*NR + n], with C[m] at c[m] + c_off, for m < mr, n < nr, where tap(t) is
/// tap[t] (or t when tap is null).
template <class T>
struct IgemmTile {
  int64_t taps = 0, kc = 0;
  const T* const* a = nullptr;  // [taps][MR] row pointers
  int64_t a_off = 0;            // the reduction slice's first element in every a row
  const T* b = nullptr;         // packed panel [panel taps][kc][NR]
  // Which of the panel's taps a's rows are for, in order (a tile skips a tap that is padding
  // for every one of its pixels); null: taps 0, 1, ..., taps - 1.
  const int32_t* tap = nullptr;
  T* const* c = nullptr;  // [MR] result row pointers (rows >= mr unused)
  int64_t c_off = 0;      // the panel's first column in every c row
  int64_t mr = 0, nr = 0;
  bool accumulate = false;  // C += sum (else C = sum)
  // Full vectors stored non-temporally where the tile stores (not accumulate): every c row and
  // c_off on a cache line and nr whole vectors (implicit_gemm.cpp, stream).
  bool stream = false;
  // Lines to prefetch into L2 (L2Prefetch::take), one per pf_pace reduction steps, the rest at the
  // end: pf + pf_off, pf + pf_off + kLine, ..., each offset clamped to pf_last (as FilterTile's).
  const char* pf = nullptr;
  int64_t pf_off = 0, pf_last = 0, pf_lines = 0;
  int64_t pf_pace = 1;  // reduction steps per line (>= 1; L2Prefetch::pace)
};

/// A run of `count` output pixels in one output row whose tap lies inside the input: the first
/// pixel's element offsets into input and out_backprop.
struct Segment {
  int64_t x, dy, count;
};

/// One tile of backprop filter: C[m][n] (+)= sum_s sum_{t<count_s} x[s.x + t*x_step + m] *
/// dy[s.dy + t*dy_step + n] for m < mr, n < nr (mr <= MR, nr <= NR).
template <class T>
struct FilterTile {
  const T* x = nullptr;  // input, already offset to the tile's first channel
  int64_t x_step = 0;
  const T* dy = nullptr;  // out_backprop, already offset to the tile's first output channel
  int64_t dy_step = 0;
  const Segment* seg = nullptr;
  int64_t nseg = 0;
  T* c = nullptr;  // C[m][n] at c[m * ldc + n]
  int64_t ldc = 0;
  int64_t mr = 0, nr = 0;
  bool accumulate = true;  // C += sum (else C = sum)
  // Where not null, the sums accumulated so far are read from here (rows ld_from apart), not
  // from c: a tile staged in scratch for its earlier pixels (backprop_filter.cpp, stage).
  const T* c_from = nullptr;
  int64_t ld_from = 0;
  // Lines to prefetch into L2 (L2Prefetch::take), one per pf_pace pixels, the rest at the end:
  // pf + pf_off, pf + pf_off + kLine, ..., each offset clamped to pf_last.
  const char* pf = nullptr;
  int64_t pf_off = 0, pf_last = 0, pf_lines = 0;
  int64_t pf_pace = 1;  // pixels per line (>= 1; backprop_filter.cpp, packed_runs' pace)
  // The filter tile of a later call (its first element, at ldc like c, and its rows; nr columns),
  // prefetched into L2 a line per pixel (backprop_filter.cpp, tap_runs); none when null.
  const T* next_c = nullptr;
  int64_t next_mr = 0;
  // C written with non-temporal stores (full tiles; c and ldc aligned to a line): the call's sums
  // are final and not read again soon (backprop_filter.cpp, stream).
  bool stream = false;
  // Packed on first use (backprop_filter.cpp, packed_runs): where not null, each pixel's mr
  // channels of x and NR of dy are also stored, pixel after pixel, at pack_x + k * x_slot and
  // pack_dy + k * NR, as whole vectors: a slot's last vector may pass its end by up to a vector
  // less one element (into the next slot, written after it, or the panel's padding).
  T* pack_x = nullptr;
  T* pack_dy = nullptr;
  int64_t x_slot = 0;  // pack_x's step per pixel (the table's MR)
  // Elements readable at each pixel's x (from the tile's first channel to the pixel's last): where
  // a whole vector is, pack_x reads one, not a masked vector of the tile's mr (on Zen 1 a masked
  // AVX2 load per pixel cost ResNet's 64 -> 256 1x1 layer 3.5 %: packed_runs).
  int64_t x_avail = 0;
  // Several tiles in one call: `panels` tiles of the same dy, pixels and mr, the i-th reading x +
  // i * x_panel and writing c + i * c_panel, each with its share of the prefetch lines
  // (packed_runs: a block's fully packed tiles, which saves the driver's set-up and dispatch per
  // tile). No packing, no later tile (next_c), no c_from with panels > 1.
  int64_t panels = 1, x_panel = 0, c_panel = 0;
};

/// A run of result columns v = v0 + t*v_step (t < count) of one row that share their column
/// taps: taps [tap_begin, tap_end) of DepthwiseRow::col_taps, tap k reading source column
/// col0_k + t*src_step.
struct ColumnRun {
  int64_t v0 = 0, count = 0, tap_begin = 0, tap_end = 0;
};

/// Depthwise gather of one result row (multiplier 1): for every run and t < count,
///   out[(v0 + t*v_step)*C + ch] = sum_{row taps (a, sr)} sum_{run's col taps (b, col0)}
///       src[(sr*src_w + col0 + t*src_step)*C + ch] * w[(a*KW + b)*C + ch]
/// summed in that order (row taps outer). A run's taps are summed in groups of at most
/// kDepthwiseGroupTaps (the first group stores, the later ones add to what it stored).
inline constexpr int kDepthwiseGroupTaps = 32;
template <class T>
struct DepthwiseRow {
  const T* src = nullptr;
  int64_t src_w = 0, C = 0, KW = 0;
  const T* w = nullptr;
  const int64_t* row_taps = nullptr;  // pairs (a, source row index into src)
  int64_t nrow_taps = 0;
  const ColumnRun* runs = nullptr;
  int64_t nruns = 0;
  const int64_t* col_taps = nullptr;  // pairs (b, source column at t = 0)
  int64_t v_step = 1, src_step = 1;
  T* out = nullptr;  // the result row, [columns][C]
  // Full vectors stored non-temporally (S::stream): set only where every run's taps are one group
  // (so the first group's sums are final) and every pixel's channels start on a line
  // (stream_depthwise_rows, internal.h).
  bool stream = false;
  // The highest source row the next result row reads, where this row does not (set_next_rows,
  // internal.h), prefetched into L2 (L1 where next_to_l1) across this row's longest run; null:
  // none.
  const T* next_src = nullptr;
  int64_t next_src_elements = 0;
  bool next_to_l1 = false;  // into L1 (depthwise_input_rows_to_l1, internal.h; RowLines::step)
  // Runs whose taps suit it (depthwise_window_taps) slide their source through registers in
  // tiles of kDepthwiseWindowColumns (kernels_impl.h, depthwise_window_tile); only where
  // KernelTable::depthwise_row_window: the driver's choice (depthwise_row_window, internal.h).
  // The same bits either way.
  bool window = false;
  int64_t* slid = nullptr;  // where set, counts the runs that slid the window (a test hook)
};
inline constexpr int kDepthwiseWindowColumns = 4;  // result columns a window tile

// Whether a run's taps suit the window: three, on consecutive source columns descending (tap k
// + 1 a column left of tap k: backprop input's 3 wide taps at stride 1 without column dilation;
// also a stride phase's three of 5 wide taps at stride 2, or of 3 wide taps at stride 2 and
// dilation 2), src_step 1, and one group.
template <class T>
inline bool depthwise_window_taps(const DepthwiseRow<T>& p, const ColumnRun& run) {
  if (p.src_step != 1 || run.tap_end - run.tap_begin != 3 || p.nrow_taps < 1 ||
      p.nrow_taps * 3 > kDepthwiseGroupTaps)
    return false;
  const int64_t* col0 = p.col_taps + 2 * run.tap_begin + 1;  // col0 of tap k at col0[2k]
  return col0[2] == col0[0] - 1 && col0[4] == col0[2] - 1;
}

/// Depthwise backprop filter over some output rows (multiplier 1):
///   acc[(a*KW + b)*C + ch] += sum_{rows (dy_row, a, x_row)} sum_{j in [j_lo[b], j_hi[b])}
///       dy[(dy_row*OW + j)*C + ch] * x[(x_row*W + j*sw + col_off[b])*C + ch]
/// summed in that order (rows, then j ascending) into each element, however the columns are
/// blocked.
template <class T>
struct DepthwiseFilterRows {
  const T* dy = nullptr;
  const T* x = nullptr;
  int64_t C = 0, OW = 0, W = 0, KW = 0, sw = 1;
  const int64_t* rows = nullptr;  // triples (dy_row, a, x_row)
  int64_t nrows = 0;
  // Triples after the nrows, of the rows the caller reads next (the next chunk's first
  // out_backprop row): for prefetch_next only, never summed.
  int64_t nahead = 0;
  const int64_t* j_lo = nullptr;     // [KW]
  const int64_t* j_hi = nullptr;     // [KW]
  const int64_t* col_off = nullptr;  // [KW]
  T* acc = nullptr;                  // [KH*KW*C], accumulated
  // The bytes a block of output columns' out_backprop and input slices may take (0: whole rows):
  // each row entry is walked in column blocks, every filter column b over a block before the
  // next block (depthwise_filter_block).
  int64_t block_bytes = 0;
  // Whether the first channel block prefetches each next row group's out_backprop row and new
  // input row into L2 (depthwise_filter_group; prefetch_next_rows, internal.h).
  bool prefetch_next = false;
  // KW = 3 walked by depthwise_filter_rows3 (whole rows, a group's taps in registers) instead of
  // depthwise_filter_block (the driver's choice: vector kernels). Same bits either way.
  bool three_tap_rows = false;
  // With three_tap_rows: the input columns slid through registers (stride 1, no column
  // dilation, and KernelTable::depthwise_window).
  bool three_tap_window = false;
};

/// Packs one filter panel for the implicit GEMM: dst[k*NR + j] = src[k*ld + j] (forward) or
/// src[j*ld + k] (transposed) for k < kc, j < nj, and 0 for nj <= j < NR. Returns whether every
/// element it read is finite.
template <class T>
struct PackPanel {
  const T* src = nullptr;
  int64_t ld = 0, kc = 0, nj = 0, NR = 0;
  bool transposed = false;
  T* dst = nullptr;
};

/// The kernels of one ISA for one element type.
template <class T>
struct KernelTable {
  Isa isa = Isa::generic;
  bool fused = false;  // multiply-adds round once (FMA)
  int mr = 1;          // MR of both GEMM kernels
  int width = 1;       // elements per vector
  static constexpr int kMaxVariants = 3;
  int variants = 0;
  int nv[kMaxVariants] = {};  // vectors per tile row of each variant (NR = nv * width), ascending
  void (*igemm[kMaxVariants])(const IgemmTile<T>&) = {};
  void (*filter[kMaxVariants])(const FilterTile<T>&) = {};
  bool (*pack)(const PackPanel<T>&) = nullptr;
  // Copies `count` rows of n elements, src's ld apart, to dst's ldd apart (backprop filter's
  // out_backprop slice, a panel of channels per pixel): in the ISA's vectors, as the driver
  // (built for the baseline ISA) copied a 64-float AVX-512 panel in 16 SSE moves a pixel.
  void (*copy_rows)(const T* src, int64_t ld, int64_t n, int64_t count, T* dst,
                    int64_t ldd) = nullptr;
  // dst[e] += src[c * stride + e] for c = 0, 1, ..., count - 1 in that order, e < n: each
  // element's sum in the same order as count passes (backprop filter's partial filters in chunk
  // order), in blocks that keep dst's in L1 while each partial's is read once.
  void (*sum_into)(T* dst, const T* src, int64_t stride, int64_t count, int64_t n) = nullptr;
  void (*depthwise_row)(const DepthwiseRow<T>&) = nullptr;
  // 16-bit storage <-> f32 (KernelTable<float> only): widening is exact, narrowing rounds to
  // nearest even (overflow to Inf, subnormals kept, NaN quieted with its sign), as core/half.h.
  void (*widen_f16)(const uint16_t* src, float* dst, int64_t n) = nullptr;
  void (*widen_bf16)(const uint16_t* src, float* dst, int64_t n) = nullptr;
  void (*narrow_f16)(const float* src, uint16_t* dst, int64_t n) = nullptr;
  void (*narrow_bf16)(const float* src, uint16_t* dst, int64_t n) = nullptr;
  // (returns the channel blocks it walked in more than one column block: a test hook's count)
  int64_t (*depthwise_filter)(const DepthwiseFilterRows<T>&) = nullptr;
  bool depthwise_window = false;              // registers for DepthwiseFilterRows::three_tap_window
  bool depthwise_row_window = false;          // kernels for DepthwiseRow::window
  bool depthwise_row_window_by_rule = false;  // and the driver's rule may choose them (measured)

  /// The variant for n result columns: the narrowest that covers n, else the widest.
  int variant_for(int64_t n) const {
    for (int v = 0; v < variants; ++v)
      if (static_cast<int64_t>(nv[v]) * width >= n) return v;
    return variants - 1;
  }
  int64_t nr(int v) const { return static_cast<int64_t>(nv[v]) * width; }
};

/// The kernel tables of the ISA in use (dispatch.cpp). uint32_t (int32's wrapping arithmetic) is
/// always generic.
template <class T>
const KernelTable<T>& kernels();

// Per-ISA tables (kernels_<isa>.cpp); the vector ones exist only when compiled in.
void generic_tables(KernelTable<float>*, KernelTable<double>*, KernelTable<uint32_t>*);
void avx2_tables(KernelTable<float>*, KernelTable<double>*);
void avx512_tables(KernelTable<float>*, KernelTable<double>*);

}  // namespace convcheck::opt
