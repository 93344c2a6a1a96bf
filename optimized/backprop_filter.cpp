// Conv2DBackpropFilter (spec B §3.3): per tap, a GEMM of the shifted input's transpose with
// out_backprop, summed over every output pixel, reading both in place (kernels.h, FilterTile), or
// for most 1x1 filters packed on first use (packed_runs); where the filter is at least the
// activations, the input is packed once per call into panels of MR channels (pack_input), and
// where its output rows are also short, gathered per tap instead, each tap's pixels contiguous
// (gathered_runs).
#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <numeric>
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
// walked in blocks whose input and out_backprop rows fit in L2 (one block when the filter is the
// larger side and has several taps). Where a filter over twice L2 is summed in one chunk of one
// block, its final sums are stored non-temporally (stream; with wide panels carried between the
// block's sub-blocks in a scratch stage first: stage); where it is summed in several chunks or
// blocks, with wide panels, each kernel call prefetches the filter tile of a later call (kAhead).
// Inside a block, the tiles of one out_backprop panel (group and NR channels; every tap and q,
// fewer when their filter tiles would not fit half of L2) form a run (with the input gathered per
// tap, the tiles of one tap and panel: gathered_runs). With several taps and
// out_backprop wider than a panel, a run walks the block in sub-blocks of rows whose panel slice
// sits in L1, and packs the slice NR apart first: read in place, its rows are out_backprop's
// channel stride apart (1 or 2 KiB for 256 or 512 channels), which maps them to a few L1 sets, so
// every tile streamed them from L2. A wide panel (more than a cache line per pixel: AVX-512's 32 or
// 64 floats, 16 or 32 doubles) is walked in sub-blocks even where it is all of out_backprop (read
// in place then). Where a block's input takes more than half of L2, the next sub-block's input rows
// are prefetched into L2 during the current one (backprop_filter, prefetch_sub); where it stays in
// L2 and the slice is packed, only on the block's first pass, with its out_backprop rows
// (prefetch_fill). A kernel call continues its tile's sum from memory, so blocks, runs and
// sub-blocks do not change the arithmetic.
//
// A 1x1 filter (one group) with fewer input than output channels, at least a panel (NR) of them,
// is computed mirrored where it is not packed (below; on AVX-512, a panel of input channels, as
// ResNet's 64 -> 256): the tiles broadcast MR out_backprop channels and load NR input channels,
// into dw's transpose (scratch), transposed into dw at the end. Either way every element sums the
// same products in the same pixel and chunk order (a product x * dy is dy * x), so the result is
// bitwise the same; what changes is which tensor the run's panel comes from: the narrower one, as
// whole pixels (ResNet's 64 -> 256 1x1: one input panel of 64 channels, 43 out_backprop tiles
// reusing it, instead of 4 out_backprop panels strided 1 KiB apart, 11 tiles each, that each
// re-read the input). Measured 2026-11-26 (Xeon guest, against oneDNN, interleaved, 3 rounds):
// AVX-512 0.90-0.91 -> 0.95-1.05 of oneDNN at 2 threads, 0.79-0.91 -> 0.85-0.93 at 1; N = 1
// 0.79-0.82 -> 0.89-0.92; AVX2 within the noise (0.86-0.98 both ways). The same layer the other way
// round (256 -> 64) was already at 1.08-1.24.
//
// Since 2026-12-02 most of those 1x1 layers, and 1x1 layers whose filter is large beside the
// activations, run as a packed GEMM instead (packed_runs; which layers: backprop_filter, packed):
// both operands packed on first use, in blocks of pixels, every tile of a block reading them
// contiguously; the threads' units split out_backprop's panels, or the input's where it has more
// channels and out_backprop several panels, so that each unit re-reads only the other side. On
// ResNet's 64 -> 256 layer (AVX2 Zen 3, 2 threads, paired against oneDNN, 14 interleaved rounds)
// 0.87 mirrored -> 0.94 packed; its 256 -> 512 stride-2 layer 0.88 -> 0.99 (6 rounds); on AVX-512
// (Xeon guest, the rule of backprop_filter, packed) the stride-2 layer 0.84 mirrored -> 1.07
// packed, 2048 -> 512 at 7x7 0.52-0.56 in place -> 0.70, 512 -> 2048 0.41 mirrored -> 0.90-0.93. A
// first packed GEMM (2026-11-24) packed in a pass of its own and measured slower (0.59-0.69 of
// oneDNN against 0.78-0.83, AVX2, 1 thread): the pass takes the memory misses that the kernel
// otherwise overlaps with its arithmetic; so did a pass here (run alone, 4.8-5.4 ms of the
// layer's 12.9 at one thread, bench/zen3-2026-12-02/README.md).
//
// When the filter is small beside the activations, the output rows are also split into a fixed
// number of chunks (a function of the problem alone), each summed into its own partial filter, and
// the partials are added in chunk order at the end; so each thread streams only its share of the
// activations. Threads take (chunk, tile range) items; a tile accumulates its terms in output-row
// order, then column order, so results do not depend on the thread count.

namespace {

/// The input lines a backprop filter sub-block's taps read per output pixel, as the rows grow
/// long: along each axis, of the input coordinates i * s + a * d (a < K taps), a run of output
/// coordinates reaches a new one for each residue a * d takes mod s, min(K, s / gcd(s, d)) of them
/// (1 at stride 1; 2 per axis for 3x3 stride 2, so 4; 1 for taps dilated 2 at stride 2, all on
/// rows of one parity). The product of the two axes: a tile reads a line per input pixel.
/// Saturated at `cap` (a count above it gives the same sub-blocks: one row).
int64_t input_lines_per_pixel(const Geometry& g, int64_t cap) {
  const int64_t rows = std::min(g.KH, g.sh / std::gcd(g.sh, g.dh));
  const int64_t cols = std::min(g.KW, g.sw / std::gcd(g.sw, g.dw));
  return rows > cap / cols ? cap : rows * cols;
}

bool g_allow_mirrored = true;                          // allow_mirrored_filter (tests)
bool g_allow_packed = true;                            // allow_packed_filter (tests)
InputPacking g_input_packing = InputPacking::by_rule;  // set_input_packing_for_tests
InputPacking g_tap_gather = InputPacking::by_rule;     // set_tap_gather_for_tests
std::atomic<int64_t> g_packed_input_calls{0};
std::atomic<int64_t> g_gathered_calls{0};  // gathered_filter_calls_for_tests
std::atomic<int64_t> g_streamed_calls{0};
std::atomic<int64_t> g_staged_calls{0};     // staged_filter_calls_for_tests
std::atomic<int64_t> g_packed_passes{0};    // packed_filter_passes_for_tests
std::atomic<int64_t> g_split_passes{0};     // packed_filter_split_passes_for_tests
std::atomic<int64_t> g_panel_calls{0};      // packed_filter_panel_calls_for_tests
std::atomic<int64_t> g_pace{0};             // filter_pace_for_tests
std::atomic<int64_t> g_sub_blocks{0};       // filter_sub_blocks_for_tests
std::atomic<int64_t> g_fill_prefetches{0};  // fill_prefetch_sub_blocks_for_tests

// Chunks: the largest power of two up to kMaxChunks with a row per chunk and the chunks - 1
// partial filters taking no more memory than the activations, half of them for a 1x1 filter (a
// mirrored 1x1 layer takes one filter more, its transpose). ResNet's 1x1 layers at 14x14 (N = 8,
// activations 7.6 times the filter) ran at 0.72-0.75 of oneDNN in 8 chunks, 0.78-0.86 in 4 or 2
// (256 -> 1024 packed, 1024 -> 256 in place; Xeon guest, AVX-512, 2 threads, 8 rounds, 2026-12-02,
// bench/xeon-2026-12-02/chunks-512-2t.txt); the 3x3 layers' rule below is older and measured. Until
// 2026-11-26 chunks were 8 only from 128 times the filter, else 1: split over tiles instead, every
// thread streamed all of the activations, and at 2 threads (Xeon, AVX-512, against oneDNN) ResNet
// conv3 3x3 (11 times its filter, now 8 chunks) ran at 0.83-0.97, 0.99-1.03 chunked; DCGAN g4 (3.8
// times, then 2 chunks) 0.90-1.06, 1.14-1.21 chunked; one thread unchanged. Until 2026-11-27 the
// rule asked for chunks times the filter (stricter than its reason): ResNet conv4 3x3
// (activations 1.36 times its filter) ran in one chunk, 1.24-1.85x from 1 to 2 threads where
// oneDNN's went 1.5-2.0x, at 0.85-0.93 of oneDNN; with 2 chunks 0.94-1.02 (paired ratios, 1 and 2
// threads interleaved, 4 runs each, 2026-11-27); DCGAN g4 (now 4 chunks) unchanged at 1.17-1.31 (6
// runs each way).
constexpr int64_t kMaxChunks = 8;

// A 1x1 filter's blocks: in place or mirrored, at least this many pixels in whole output rows
// (within a quarter of L2); packed, packed_runs' kc of at most this many (fewer where L1 limits
// it). A C tile is loaded and stored once per block: 1-2 % of its loads at 128 pixels.
constexpr int64_t kBlockPixels = 128;

// What every work item needs: the problem, its segments, the tiling and the kernel.
template <class T>
struct Plan {
  const Geometry* g = nullptr;
  const T* x = nullptr;
  const T* dy = nullptr;
  const Segment* seg = nullptr;  // [tap][row], Segment::x and ::dy swapped when mirrored
  // The kernel's two sides (kernels.h, FilterTile): it broadcasts MR channels of `bside` and
  // loads NR of `vside`, and writes C[m][n] at c[m * ldc + n]. Normally bside = input (rows: Cf
  // filter rows per group), vside = out_backprop (cols: Og channels per group), C = dw; mirrored,
  // the reverse, and C = dw's transpose (mirrored, below).
  bool mirrored = false;
  const T* bside = nullptr;
  const T* vside = nullptr;
  int64_t x_step = 0;              // an output column's step in the input
  int64_t b_step = 0, v_step = 0;  // a pixel's step in each side
  int64_t Mrows = 0, cols = 0;     // C's rows and columns per group and tap
  int64_t ldc = 0;                 // C's row stride
  int64_t c_elements = 0;          // C's size (a filter: dw, a partial or dw's transpose)
  int64_t taps = 0, rows = 0, MR = 0, NR = 0, qblocks = 0, oblocks = 0;
  int64_t block_rows = 0, sub_rows = 0, run_tiles = 0;
  void (*kernel)(const FilterTile<T>&) = nullptr;
  void (*copy_rows)(const T*, int64_t, int64_t, int64_t, T*, int64_t) = nullptr;  // KernelTable's
  bool pack = true;
  bool prefetch_next = false;   // prefetch the next block while this one runs (next_block)
  bool prefetch_sub = false;    // prefetch the next sub-block's input (tap_runs)
  bool prefetch_fill = false;   // the same and its out_backprop rows, on a block's first pass
  bool prefetch_tiles = false;  // prefetch the filter tile kAhead calls later (tap_runs)
  bool stream = false;          // final sums stored non-temporally (backprop_filter, stream)
  bool stage = false;           // streamed sums staged over sub-blocks (backprop_filter, stage)
  int64_t kc = 0;               // packed: pixels per packed block (packed_runs); 0: tap_runs
  // tap_runs with the input packed (backprop_filter, pack_input): q block qb's q_rows(qb)
  // channels of every input pixel in a slot of MR at xpack + qb * xpack_panel + pixel * MR;
  // Segment::x and b_step are then offsets into a panel (pixel * MR). Null: the input in place.
  const T* xpack = nullptr;
  int64_t xpack_panel = 0;
  // The input gathered per tap (gathered_runs; xpack is then the gathered input): tap t's pixels
  // (its segments' columns, row after row) contiguous, q block qb's q_rows(qb) channels of its
  // k-th pixel in a slot of MR at xpack + gather_x[t] + (qb * K + k) * MR, where K = gather_pre[t *
  // (rows + 1) + rows] and gather_pre[t * (rows + 1) + r] counts its pixels in the output rows
  // before r. Null: not gathered.
  const int64_t* gather_pre = nullptr;
  const int64_t* gather_x = nullptr;
  int64_t lda = 0;       // packed: the input panels' stride (out_backprop's: kc * NR)
  int64_t q_panels = 0;  // packed: input panels (q blocks) per range at most
  // packed: units hold ranges of input panels (tiles t = qb * oblocks + ob), each passing every
  // out_backprop panel, rather than out_backprop panels (t = ob * qblocks + qb)
  bool split_q = false;
  // Tiles a unit of work holds whole, in whole panels of one side (backprop_filter, grain): 1
  // for tap_runs; packed, a panel's tiles.
  int64_t grain() const { return kc == 0 ? 1 : split_q ? oblocks : qblocks; }
  // Q block qb's first row of C (a channel of bside) and its rows: MR each, except where the last
  // block would be a thin tile of at most MR / 2 rows: then the last two share MR plus its rows
  // (filter_q_shift: 4 + 4 for 6 + 2), the last starting q_shift rows early.
  int64_t q_shift = 0;
  int64_t q_first(int64_t qb) const { return qb * MR - (qb == qblocks - 1 ? q_shift : 0); }
  int64_t q_rows(int64_t qb) const {
    return (qb + 1 < qblocks ? q_first(qb + 1) : Mrows) - q_first(qb);
  }
};

// The input elements [*lo, *hi) that taps [tap0, tap1) read for output rows [r0, r1); *lo = -1
// when they read none.
template <class T>
void input_span(const Plan<T>& P, int64_t tap0, int64_t tap1, int64_t r0, int64_t r1, int64_t* lo,
                int64_t* hi) {
  *lo = -1;
  *hi = -1;
  for (int64_t tap = tap0; tap < tap1; ++tap) {
    for (int64_t r = r0; r < r1; ++r) {
      const Segment& sg = P.seg[tap * P.rows + r];
      if (sg.count == 0) continue;
      const int64_t sx = P.mirrored ? sg.dy : sg.x;
      if (*lo < 0 || sx < *lo) *lo = sx;
      *hi = std::max(*hi, sx + (sg.count - 1) * P.x_step + P.g->C);
    }
  }
}

// Copies n (a tile's width: a few to a few dozen) elements; an inline loop, as a library call per
// pixel cost more than the copy.
template <class T>
inline void copy_short(const T* src, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
}

// The next block's out_backprop and input rows, prefetched into L2 a few lines during each tile
// call of the current block (where both blocks fit in L2 together: a 1x1 filter's blocks are an
// eighth of L2, and each out_backprop line is read from memory by one tile only, too few reads
// per row for the hardware prefetcher to run ahead; measured ResNet's 1x1 at 0.83-0.93 of oneDNN
// without, 0.94-1.12 with, AVX-512, 1 and 2 threads, 2026-11-25). Until 2026-11-29 each tile call
// was followed by a burst of its share of the lines; on the Xeon guest (1 thread, ResNet's 1x1,
// fastest rounds) that took 6.0 ms, as did no prefetch at all (paired medians 0.89 and 0.80 of
// oneDNN), where the prefetches alone (kernels skipped) took 1.0 and the arithmetic needs 5.0 at
// the rate of a cache-resident tile: the fetch did not overlap the arithmetic (kernels.h,
// L2Prefetch). Issued by the kernel, a line per pixel: 5.2 ms; 0.89 -> 1.07 of oneDNN at 1 thread,
// 0.92 -> 1.02 at 2 (AVX2 0.94 -> 0.99); stride-2 conv3 (the sub-block prefetch) 1.22 -> 1.28 at 2
// (interleaved rounds, bench/xeon-2026-11-29c).
template <class T>
L2Prefetch next_block(const Plan<T>& P, int64_t rows_begin, int64_t rows_end, int64_t calls) {
  L2Prefetch nb;
  const Geometry& g = *P.g;
  if (!P.prefetch_next || rows_begin >= rows_end) return nb;
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  nb.add(P.dy + rows_begin * g.OW * g.O, (rows_end - rows_begin) * g.OW * g.O * elem);
  // The input span of the first tap's segments (the only tap where blocks are this small).
  int64_t lo, hi;
  input_span(P, 0, 1, rows_begin, rows_end, &lo, &hi);
  if (lo >= 0) nb.add(P.x + lo, (hi - lo) * elem);
  nb.spread(calls);
  return nb;
}

// Each kernel call prefetches into L2, a line per pixel, the filter tile of the call kAhead later
// in its run: where the filter (or a chunk's partial) outgrows L2, each call's first loads and
// its stores otherwise waited on L3 or memory for its tile, a fifth to a quarter of the time of
// DCGAN g2 and ResNet conv5 (README). Two calls ahead, so that the lines have a whole call to
// arrive (one ahead measured about the same). Where it applies, each a measured choice
// (bench/xeon-2026-11-29c/README.md has the A/B sets and the nine-run tables):
// - wide panels only (wide_panel, kernels.h): AVX-512 g2 and conv5 gained (g2 about 1.6 -> 1.8-1.9
//   of oneDNN); capped to AVX2, whose tile rows are one line, every layer read lower, and still
//   did with the kernels split (g2 1.37 -> 1.34, conv5 1.16 -> 1.06, bench/xeon-2026-11-29d);
// - filters over twice L2 only (DCGAN g2's 13 MB, ResNet conv5's 9 MB): conv2/conv3 3x3, whose
//   filters fit L2, and conv4 (2.25 MiB, just over it) read lower with it.
// Not for layers whose sums are streamed (backprop_filter, stream: DCGAN g2 and ResNet conv5 on a
// line-aligned result), whose tile lines it read only to be overwritten (g2 1.58 of oneDNN with
// it, 2.04 without, bench/xeon-2026-11-29d); nor, since 2026-12-07, for any call of a staged layer
// (stage: its earlier sub-blocks sum into the stage, in L2, and even a tail panel's unstreamed
// tiles go without); it serves filters over twice L2 that are summed in several chunks or blocks
// (those layers with N larger than 8) or whose result is off its lines. Not tried: prefetching only
// in a run's first sub-block (the later ones find the run's tiles in L2 already).
//
// A first filter-tile prefetch (c8e5ffd, 2026-11-25: a burst of each tile's rows two calls
// ahead, credited with conv5 54 -> 39 ms on a Zen 3) never ran: GCC's pure-const pass marked its
// helper, whose only effect was __builtin_prefetch, "looping pure", and dead-code elimination
// deleted the calls at -O1 and above (shown 2026-11-28 with -fdump-tree-all). Made to run, it
// showed no consistent gain on the Xeon (bench/xeon-2026-11-28c/prefetch-live.txt: AVX-512 paired
// medians higher on g2 and conv5, AVX2's lower): a burst holds the L1 fill buffers (kernels.h,
// L2Prefetch). The Zen 3 figures in this file and the tables before 2026-11-29 ran without one.
// A run's first kAhead tiles are not prefetched.
constexpr int kAhead = 2;

// A tile's position in its panel, t = (... * taps + tap) * qblocks + qb, stepped tile by tile.
struct Cursor {
  int64_t qb, tap, qblocks, taps;
  Cursor(int64_t t, int64_t qblocks_, int64_t taps_)
      : qb(t % qblocks_), tap(t / qblocks_ % taps_), qblocks(qblocks_), taps(taps_) {}
  void step() {
    if (++qb < qblocks) return;
    qb = 0;
    if (++tap == taps) tap = 0;
  }
};

// Per-thread packing buffers.
template <class T>
struct Packs {
  std::vector<T> b;  // the out_backprop panel's slice
  std::vector<Segment> seg;
  // packed_runs: the input's panels of one range, out_backprop's panels of the block (one slot,
  // or each of the unit's panels where there are several ranges)
  std::vector<T> pa, pb;
  // packed_runs: a block's pieces, both in place or one side packed
  std::vector<Segment> seg_in_place, seg_x, seg_dy;
  int64_t packed_passes = 0;  // packed_runs' (block, input range) passes (for tests)
  int64_t split_passes = 0;   // those of units that split the input's panels (split_q)
  int64_t panel_calls = 0;    // packed_runs' calls of several tiles (FilterTile::panels)
  int64_t pace = 0;           // the largest prefetch pace (FilterTile::pf_pace)
  int64_t streamed = 0;    // tile calls that streamed their sums (streamed_filter_calls_for_tests)
  int64_t staged = 0;      // tile calls that stored their sums in the stage (for tests)
  int64_t sub_blocks = 0;  // tap_runs' (run, sub-block) passes (filter_sub_blocks_for_tests)
  int64_t fills = 0;       // those that prefetched by prefetch_fill (for tests)
  int64_t rows_begin = -1, rows_end = -1;  // tap_runs: the output rows of the thread's last unit
  T* stage = nullptr;  // the thread's slots for a run's tiles, MR x NR each (Plan::stage)
};

// Tile i of a run, in sub-block s of nsubs, sums into c (its filter tile) or, where the plan
// stages its sums (backprop_filter, stage) and this is not the last sub-block, into slot i of the
// thread's stage (NR apart); after the first sub-block it continues from the slot.
template <class T>
void aim(const Plan<T>& P, Packs<T>* pk, int64_t s, int64_t nsubs, int64_t i, T* c,
         FilterTile<T>* ft) {
  const bool staged = P.stage && nsubs > 1;
  // (A staged layer is one chunk of one block, so that a tile's first sub-block stores.)
  assert(!staged || (pk->stage != nullptr && i < P.run_tiles && P.stream));
  T* const slot = staged ? pk->stage + i * P.MR * P.NR : nullptr;
  const bool last = s + 1 == nsubs;
  ft->c = staged && !last ? slot : c;
  pk->staged += staged && !last ? 1 : 0;
  ft->ldc = staged && !last ? P.NR : P.ldc;
  ft->c_from = staged && s > 0 ? slot : nullptr;
  ft->ld_from = P.NR;
}

// The tiles [t0, t1) over output rows [r0, r1), in blocks, runs and sub-blocks (above).
template <class T>
void tap_runs(const Plan<T>& P, int64_t r0, int64_t r1, int64_t t0, int64_t t1, T* out,
              Packs<T>* pk) {
  const Geometry& g = *P.g;
  const int64_t NR = P.NR, qblocks = P.qblocks, taps = P.taps;
  // As few blocks and sub-blocks as their limits allow, of near-equal lengths (a short last one
  // would cost every tile a pass of its own).
  const int64_t nblocks = ceil_div(r1 - r0, P.block_rows);
  assert(!P.stage || nblocks == 1);  // (aim: a staged tile's first sub-block stores)
  const EvenSplit blocks(r1 - r0, nblocks);
  // One block that this thread's last unit passed too: its rows are in L2 already (prefetch_fill).
  const bool warm = nblocks == 1 && pk->rows_begin == r0 && pk->rows_end == r1;
  pk->rows_begin = r0;
  pk->rows_end = r1;
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t row0 = r0 + blocks.begin(b), row_end = row0 + blocks.size(b);
    const int64_t next_end = b + 1 < nblocks ? row_end + blocks.size(b + 1) : row_end;
    const int64_t nsubs = ceil_div(row_end - row0, P.sub_rows);
    const EvenSplit subs(row_end - row0, nsubs);
    L2Prefetch next = next_block(P, row_end, next_end, (t1 - t0) * nsubs);
    // Runs: t = ((grp * oblocks + ob) * taps + tap) * qblocks + qb.
    for (int64_t ta = t0; ta < t1;) {
      const int64_t tb =
          std::min({t1, (ta / (taps * qblocks) + 1) * (taps * qblocks), ta + P.run_tiles});
      const int64_t grp = ta / (qblocks * taps * P.oblocks), ob = ta / (qblocks * taps) % P.oblocks;
      const int64_t o0 = grp * P.cols + ob * NR, nr = std::min(NR, P.cols - ob * NR);
      for (int64_t s = 0; s < nsubs; ++s) {
        const int64_t sub0 = row0 + subs.begin(s), nsub = subs.size(s);
        ++pk->sub_blocks;
        const bool pack = P.pack;
        if (pack) {  // the panel's slice NR apart, and the segments re-addressed to it
          P.copy_rows(P.dy + sub0 * g.OW * g.O + o0, g.O, nr, nsub * g.OW, pk->b.data(), NR);
          // (A tap's segments start at one output column j_lo in every row, so one division a
          // tap finds it: one a segment was the driver's hottest loop in a profile of DCGAN g4, a
          // 64-bit division per 16-pixel segment.)
          for (int64_t tap = 0; tap < taps; ++tap) {
            int64_t j_lo = -1;
            for (int64_t r = 0; r < nsub; ++r) {
              Segment sg = P.seg[tap * P.rows + sub0 + r];
              if (sg.count > 0 && j_lo < 0) j_lo = sg.dy / g.O - (sub0 + r) * g.OW;
              assert(sg.count == 0 || sg.dy == ((sub0 + r) * g.OW + j_lo) * g.O);
              sg.dy = sg.count > 0 ? (r * g.OW + j_lo) * NR : 0;
              pk->seg[static_cast<std::size_t>(tap * nsub + r)] = sg;
            }
          }
        }
        // The input rows the next sub-block of this item reads (this block's next, else the next
        // run's first, else the next block's first), prefetched into L2 over this one's calls
        // (prefetch_sub); with prefetch_fill, only rows this unit has not read yet (this block's
        // next sub-block in its first run, the next block's first in its last), and their
        // out_backprop rows too (every panel's: the later runs read them from L2).
        L2Prefetch next_sub;
        const bool fill =
            P.prefetch_fill && !warm && (s + 1 < nsubs ? ta == t0 : tb == t1 && row_end < next_end);
        if (P.prefetch_sub || fill) {
          int64_t n0 = row_end, n1 = row_end;
          if (s + 1 < nsubs) {
            n0 = row0 + subs.begin(s + 1);
            n1 = n0 + subs.size(s + 1);
          } else if (tb < t1) {
            if (nsubs > 1) {  // one sub-block: the next run's is this one, already in L2
              n0 = row0;
              n1 = row0 + subs.size(0);
            }
          } else {
            n1 = std::min(next_end, row_end + P.sub_rows);
          }
          const int64_t elem = static_cast<int64_t>(sizeof(T));
          int64_t lo, hi;
          input_span(P, 0, taps, n0, n1, &lo, &hi);
          if (lo >= 0) next_sub.add(P.x + lo, (hi - lo) * elem);
          if (fill) next_sub.add(P.dy + n0 * g.OW * g.O, (n1 - n0) * g.OW * g.O * elem);
          next_sub.spread(tb - ta);
          pk->fills += fill ? 1 : 0;
        }
        // The tile's (qb, tap), stepped rather than divided out of t per tile (64-bit
        // divisions beside calls of a few hundred FMAs where the layers are small); `ahead`, the
        // tile kAhead calls later's, whose filter lines the kernel prefetches (kAhead, above).
        Cursor cur(ta, qblocks, taps), ahead(ta, qblocks, taps);
        // The lines paced as packed_runs' (there: why), over a tile's pixels (at most the
        // sub-block's: nsub * OW). In alternate calls of one process against a line a pixel
        // (Zen 3 guest, bench/zen3-2026-12-07d/pairs/tap-pace.txt): ResNet conv2 3x3 0.97 of the
        // time at 1 and 2 threads, conv3 stride 2 0.94-0.98 / 0.97, DCGAN g4 0.96 / 0.97; the
        // layers whose tap runs prefetch nothing level.
        const int64_t pace_next = next.pace(nsub * g.OW), pace_sub = next_sub.pace(nsub * g.OW);
        pk->pace = std::max({pk->pace, pace_next, pace_sub});
        const bool final_sums = P.stream && nblocks == 1 && s + 1 == nsubs && row0 == r0;
        for (int i = 0; i < kAhead; ++i) ahead.step();
        // A tile's C (its first element; nr columns) and rows.
        auto tile_mr = [&](const Cursor& c) { return P.q_rows(c.qb); };
        auto tile_c = [&](const Cursor& c) {
          T* const first = out + (c.tap * P.Mrows + P.q_first(c.qb)) * P.ldc + o0;
          assert(first >= out && first + (tile_mr(c) - 1) * P.ldc + nr <= out + P.c_elements);
          return first;
        };
        // One tile value for the run, its fields set per call: constructed per call, with the
        // packed path's four fields more to default, it cost ResNet conv2 3x3, the dilated layer
        // and DCGAN g2 1.5-2 % on Zen 1 (bench/zen1-2026-12-05).
        FilterTile<T> ft;
        for (int64_t t = ta; t < tb; ++t, cur.step(), ahead.step()) {
          const int64_t qb = cur.qb, tap = cur.tap, q0 = P.q_first(qb);
          ft.x = P.xpack ? P.xpack + qb * P.xpack_panel : P.bside + grp * P.Mrows + q0;
          ft.x_step = P.b_step;
          ft.dy = pack ? pk->b.data() : P.vside + o0;
          ft.dy_step = pack ? NR : P.v_step;
          ft.seg = pack ? pk->seg.data() + tap * nsub : P.seg + tap * P.rows + sub0;
          ft.nseg = nsub;
          aim(P, pk, s, nsubs, t - ta, tile_c(cur), &ft);
          ft.mr = tile_mr(cur);
          ft.nr = nr;
          ft.accumulate = sub0 > r0;  // the chunk's first rows store (every tile covers its C)
          // Streamed where the call's sums are final (one block, its last sub-block: the
          // chunk's last pass over the tile) and its rows start on a line: the plan's gate
          // (stream) makes every full tile's do; checked again, as a misaligned one would fault.
          ft.stream = final_sums && nr == NR && reinterpret_cast<uintptr_t>(ft.c) % kLine == 0;
          pk->streamed += ft.stream ? 1 : 0;
          // (Not the later tile of a streamed call: its lines are overwritten, never read.)
          const bool later = P.prefetch_tiles && t + kAhead < tb && !ft.stream;
          ft.next_c = later ? tile_c(ahead) : nullptr;
          ft.next_mr = later ? tile_mr(ahead) : 0;
          // The kernel issues the lines due (kernels.h, L2Prefetch); at most one of the two
          // prefetches is on (backprop_filter, prefetch_sub, prefetch_fill).
          L2Prefetch& pf = P.prefetch_sub || P.prefetch_fill ? next_sub : next;
          pf.take(1, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          ft.pf_pace = &pf == &next ? pace_next : pace_sub;
          P.kernel(ft);
          pf.issue_due();
        }
      }
      ta = tb;
    }
  }
}

// The tiles [t0, t1) over output rows [r0, r1) with the input gathered per tap (Plan::gather_pre;
// one group): t = (tap * oblocks + ob) * qblocks + qb, a run the tiles of one tap and out_backprop
// panel (at most run_tiles), so that the tap's gathered input (all its q blocks' panels) stays in
// L2 while every out_backprop panel passes it; walked as tap_runs walks its runs (the tiles
// prefetch nothing but a later tile's filter rows: the input is packed, tap_runs' input
// prefetches are off). Per sub-block, the run's out_backprop slice is gathered as the tap's
// pixels are, NR apart, so that each tile walks one segment of the tap's pixels, both sides
// contiguous. With tap_runs' order (an out_backprop panel per run, every tap), each run would
// stream all of the gathered input, which outgrows L2 (DCGAN g2: 2.4 MB): a first version in that
// order read 7.48 -> 7.24 ms (AVX2, 1 thread, 8 rounds), this one 7.55 -> 6.33
// (bench/zen4-2026-12-06).
template <class T>
void gathered_runs(const Plan<T>& P, int64_t r0, int64_t r1, int64_t t0, int64_t t1, T* out,
                   Packs<T>* pk) {
  const Geometry& g = *P.g;
  const int64_t MR = P.MR, NR = P.NR, qblocks = P.qblocks, oblocks = P.oblocks;
  assert(g.G == 1 && !P.prefetch_next && !P.prefetch_sub && !P.prefetch_fill);
  const int64_t nblocks = ceil_div(r1 - r0, P.block_rows);
  assert(!P.stage || nblocks == 1);  // (aim: a staged tile's first sub-block stores)
  const EvenSplit blocks(r1 - r0, nblocks);
  for (int64_t b = 0; b < nblocks; ++b) {
    const int64_t row0 = r0 + blocks.begin(b), row_end = row0 + blocks.size(b);
    const int64_t nsubs = ceil_div(row_end - row0, P.sub_rows);
    const EvenSplit subs(row_end - row0, nsubs);
    for (int64_t ta = t0; ta < t1;) {
      const int64_t run = ta / qblocks;  // tap * oblocks + ob
      const int64_t tb = std::min({t1, (run + 1) * qblocks, ta + P.run_tiles});
      const int64_t tap = run / oblocks, o0 = run % oblocks * NR, nr = std::min(NR, P.cols - o0);
      const int64_t* const pre = P.gather_pre + tap * (P.rows + 1);
      const T* const x_tap = P.xpack + P.gather_x[tap];
      const int64_t K = pre[P.rows];  // the tap's pixels: a q block's panel is K * MR
      // A tile's C (its first element) and rows.
      auto tile_mr = [&](int64_t qb) { return P.q_rows(qb); };
      auto tile_c = [&](int64_t qb) {
        T* const first = out + (tap * P.Mrows + P.q_first(qb)) * P.ldc + o0;
        assert(first >= out && first + (tile_mr(qb) - 1) * P.ldc + nr <= out + P.c_elements);
        return first;
      };
      for (int64_t s = 0; s < nsubs; ++s) {
        const int64_t sub0 = row0 + subs.begin(s), sub_end = sub0 + subs.size(s);
        ++pk->sub_blocks;
        T* slot = pk->b.data();
        for (int64_t r = sub0; r < sub_end; ++r) {
          const Segment& sg = P.seg[tap * P.rows + r];
          P.copy_rows(P.dy + sg.dy + o0, g.O, nr, sg.count, slot, NR);
          slot += sg.count * NR;
        }
        assert(slot <= pk->b.data() + pk->b.size());
        const Segment pixels{pre[sub0] * MR, 0, pre[sub_end] - pre[sub0]};
        FilterTile<T> ft;
        ft.x_step = MR;
        ft.dy = pk->b.data();
        ft.dy_step = NR;
        ft.seg = &pixels;
        ft.nseg = 1;
        ft.nr = nr;
        ft.accumulate = sub0 > r0;  // the chunk's first rows store (every tile covers its C)
        const bool final_sums = P.stream && nblocks == 1 && s + 1 == nsubs && row0 == r0;
        for (int64_t t = ta; t < tb; ++t) {
          const int64_t qb = t % qblocks;
          ft.x = x_tap + qb * K * MR;
          aim(P, pk, s, nsubs, t - ta, tile_c(qb), &ft);
          ft.mr = tile_mr(qb);
          // Streamed where final (tap_runs).
          ft.stream = final_sums && nr == NR && reinterpret_cast<uintptr_t>(ft.c) % kLine == 0;
          pk->streamed += ft.stream ? 1 : 0;
          const bool later = P.prefetch_tiles && t + kAhead < tb && !ft.stream;
          ft.next_c = later ? tile_c(qb + kAhead) : nullptr;
          ft.next_mr = later ? tile_mr(qb + kAhead) : 0;
          P.kernel(ft);
        }
      }
      ta = tb;
    }
  }
}

// A 1x1 filter as a packed GEMM (backprop_filter, packed): the unit's pixels (its rows'
// segments, in order) in blocks of P.kc, and every tile of the unit over each block: its input
// panels in ranges of at most P.q_panels (that stay in L2 while its out_backprop panels pass
// them), and in each range out_backprop panel by panel (so that one stays in L1 while the range's
// input panels pass it). A unit holds whole out_backprop panels and every input panel, or where
// the input is the wider side and out_backprop has several panels (P.split_q), a range of input
// panels and every out_backprop panel: so that each unit re-reads the narrower tensor only. Both
// operands are packed, the input as MR-channel panels [kc][MR] and out_backprop as the unit's
// NR-channel panels [kc][NR], so that a tile reads them contiguously: in place they are a line per
// pixel, the channel strides apart, which maps them to a few L1 sets. They are packed on first use:
// the block's first tile of a panel reads it in place and stores it packed as it goes (FilterTile::
// pack_x, pack_dy), so the packing costs a store per vector (and for the input, whose elements the
// arithmetic broadcasts, a vector load per pixel); a separate packing pass took, run alone, 4.8-5.4
// ms of the 12.9 the layer took (ResNet's 1x1, AVX2, one thread, bench/zen3-2026-12-02). The next
// block's input and out_backprop are prefetched into L2 over the block's tile calls, each call's
// share paced, a line every few pixels (pace, below). Each tile continues its sum from memory,
// pixel after pixel: the same terms in the same order as tap_runs, so the bytes are the same.
// Measured and not taken (Zen 3, AVX2, ResNet's 64 -> 256, in-process pairs;
// bench/zen3-2026-12-07c): packing the next block during each block (a copy per pixel in the
// kernels, double buffers), 1.17-1.18x the time; the prefetch's lines spread evenly over a call's
// pixels with a prefetch instruction or a branch at every pixel, 1.12-1.27x (the pace's runs have
// neither: a line, then a run of pixels); every other line only, 1.15-1.16x. The same records
// bound this path's packing at 9-13 % of the time and the stream's prefetch at 14-17 % (both
// before the pace).
template <class T>
void packed_runs(const Plan<T>& P, int64_t r0, int64_t r1, int64_t t0, int64_t t1, T* out,
                 Packs<T>* pk) {
  const Geometry& g = *P.g;
  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;
  const int64_t grain = P.grain();
  assert(t0 % grain == 0 && t1 % grain == 0);
  // The unit's input panels [q0, q1) and out_backprop panels [ob0, ob1).
  const int64_t q0 = P.split_q ? t0 / grain : 0, q1 = P.split_q ? t1 / grain : P.qblocks;
  const int64_t ob0 = P.split_q ? 0 : t0 / grain, ob1 = P.split_q ? P.oblocks : t1 / grain;
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  T* const pa = pk->pa.data();
  T* const pb = pk->pb.data();
  const int64_t lda = P.lda;  // the packed input panels' stride
  // The block's pieces (one segment's run of pixels each) in the four forms a tile reads them:
  // x and dy in place, or either packed (offsets k * MR, k * NR into its panel).
  std::vector<Segment>& in_place = pk->seg_in_place;
  std::vector<Segment>& x_packed = pk->seg_x;
  std::vector<Segment>& dy_packed = pk->seg_dy;
  // A cursor over the item's pixels: row r, its t-th column of the segment.
  struct At {
    int64_t r, t;
  };
  auto skip_empty = [&](At a) {
    while (a.r < r1 && a.t >= P.seg[a.r].count) a = {a.r + 1, 0};
    return a;
  };
  // The pixels [a, a + n) (n <= kc, fewer at the end): calls f(x offset, dy offset, count) per
  // run of one segment; returns the cursor after them.
  auto walk = [&](At a, int64_t n, auto&& f) {
    for (a = skip_empty(a); n > 0 && a.r < r1; a = skip_empty(a)) {
      const Segment& sg = P.seg[a.r];
      const int64_t c = std::min(n, sg.count - a.t);
      f(sg.x + a.t * P.x_step, sg.dy + a.t * g.O, c);
      a.t += c;
      n -= c;
    }
    return a;
  };
  // (A chunk without pixels still runs its one block: its tiles store their zeros.)
  At at = skip_empty({r0, 0});
  for (int64_t block = 0; block == 0 || at.r < r1; ++block) {
    in_place.clear();
    x_packed.clear();
    dy_packed.clear();
    int64_t kb = 0;
    const At next = walk(at, kc, [&](int64_t xo, int64_t dyo, int64_t c) {
      in_place.push_back({xo, dyo, c});
      x_packed.push_back({kb * MR, dyo, c});
      dy_packed.push_back({xo, kb * NR, c});
      kb += c;
    });
    const Segment both_packed{0, 0, kb};
    // The next block's input and out_backprop spans, prefetched over this block's calls. (With
    // split_q a unit reads only its own input panels' channels, yet the whole span is prefetched:
    // prefetching none of the input there read lower, 2048 -> 512 at 7x7 0.97 -> 0.87 of oneDNN,
    // 1024 -> 256 0.84 -> 0.79, AVX2 lower too: bench/xeon-2026-12-02b/input-prefetch-*.txt.)
    L2Prefetch nb;
    {
      int64_t xlo = -1, xhi = -1, dlo = -1, dhi = -1;
      walk(next, kc, [&](int64_t xo, int64_t dyo, int64_t c) {
        if (xlo < 0) xlo = xo, dlo = dyo;
        xhi = xo + (c - 1) * P.x_step + g.C;
        dhi = dyo + c * g.O;
      });
      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);
      }
      nb.spread(t1 - t0);
    }
    // The lines paced: one every `pace` pixels of the block's tiles, so that they go out about
    // evenly over the block (kernels_impl.h, filter_kernel_fixed), not one every pixel from each
    // call's first (bursts of up to ~150 lines, 5-9 cycles apart). On the Zen 3 guest a prefetch
    // issued within ~15 TSC cycles of the last is mostly lost: its line is read later at up to
    // two thirds of a cold line's cost (bench/zen3-2026-12-07d/l2probe.cpp: 5-12 cycles a line,
    // cold 17, against 3.0 for lines prefetched 24 or more cycles apart). Paced by this rule
    // against a line a pixel, in alternate calls of one process
    // (bench/zen3-2026-12-07d/pairs/rule.txt), ResNet's 64 -> 256 layer took 0.92 of the time at 2
    // threads and 0.95 at 1 (A/A 1.00), its 128 -> 512 0.89 / 0.92, 256 -> 1024 0.93 / 0.95, 512 ->
    // 2048 0.97 / 0.99, 1024 -> 256 0.97 / 0.98; fixed paces of 4-64 pixels read 0.82-0.96
    // (pairs/pace.txt).
    const int64_t pace = nb.pace(kb);
    pk->pace = std::max(pk->pace, pace);
    // Input panels in ranges (each range's packed anew into pa); out_backprop's panels packed
    // once per block, by the first range, each into its own slot where there are several ranges.
    const int64_t nranges = ceil_div(q1 - q0, P.q_panels);
    const bool ranges = nranges > 1;
    const EvenSplit range(q1 - q0, nranges);
    for (int64_t rg = 0; rg < nranges; ++rg) {
      const int64_t q_lo = q0 + range.begin(rg), q_hi = q_lo + range.size(rg);
      for (int64_t ob = ob0; ob < ob1; ++ob) {
        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;
        assert(pbo + kc * NR <= pk->pb.data() + pk->pb.size());
        const int64_t o0 = ob * NR;
        for (int64_t qb = q_lo; qb < q_hi;) {
          // The range's input panels are packed by the unit's first out_backprop panel's tiles,
          // each out_backprop panel by its first tile (units hold whole panels of one side and
          // all of the other: backprop_filter, grain).
          const bool x_first = ob == ob0, dy_first = qb == q0;
          T* const pax = pa + (qb - q_lo) * lda;
          assert(pax + lda <= pk->pa.data() + pk->pa.size());
          FilterTile<T> ft;
          ft.x = x_first ? P.x + P.q_first(qb) : pax;
          ft.x_step = x_first ? P.x_step : MR;
          ft.dy = dy_first ? P.dy + o0 : pbo;
          ft.dy_step = dy_first ? g.O : NR;
          const std::vector<Segment>& pieces =
              x_first ? (dy_first ? in_place : dy_packed) : x_packed;
          ft.seg = x_first || dy_first ? pieces.data() : &both_packed;
          ft.nseg = x_first || dy_first ? static_cast<int64_t>(pieces.size()) : 1;
          if (x_first) {
            ft.pack_x = pax;
            ft.x_slot = MR;
            // (one group: a pixel's channels from the tile's first)
            ft.x_avail = g.C - P.q_first(qb);
          }
          if (dy_first) ft.pack_dy = pbo;
          ft.c = out + P.q_first(qb) * P.ldc + o0;
          ft.ldc = P.ldc;
          ft.mr = P.q_rows(qb);
          ft.nr = std::min(NR, P.cols - o0);
          ft.accumulate = block > 0;  // the unit's first block stores (every tile covers its C)
          // The packed tiles of whole panels from here to the range's last, in one call
          // (FilterTile::panels): on Zen 1 the driver's set-up and dispatch per tile were about 4 %
          // of ResNet's 64 -> 256 layer (bench/zen1-2026-12-04/1x1), and one call per run of
          // panels read 1.5-2 % faster (bench/zen1-2026-12-05).
          int64_t panels = 1;
          if (!x_first && !dy_first && ft.mr == MR) {
            while (qb + panels < q_hi && P.q_rows(qb + panels) == MR) ++panels;
            ft.panels = panels;
            ft.x_panel = lda;
            ft.c_panel = MR * P.ldc;
          }
          pk->panel_calls += panels > 1 ? 1 : 0;
          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          ft.pf_pace = pace;
          P.kernel(ft);
          nb.issue_due();
          qb += panels;
        }
      }
      ++pk->packed_passes;
      pk->split_passes += P.split_q ? 1 : 0;
    }
    at = next;
  }
}

}  // namespace

// A tile of r rows has r x NV accumulator chains: AVX2's 16-float panel (NV = 2) in a 2-row tile
// has 4, which keep one of the two FMA units busy at a 4-cycle latency. ResNet's 128 and 512
// channels were 21 and 85 tiles of 6 and one of 2; as 4 + 4 (the same tile count) every tile has
// 8 chains or more. On a busy Xeon guest (builds interleaved, beside oneDNN) a layer of 14 input
// channels (12 + 2 -> 6 + 4 + 4) read 3.5-9 % faster in its fastest rounds in four sets of 10-16
// rounds (AVX2 and AVX-512, 1 and 2 threads) and 16 % slower in one of 6; ResNet's layers moved
// within that spell's noise (bench/xeon-2026-12-06c). The rows of C are independent sums: the
// tiling does not change the arithmetic.
int64_t filter_q_shift(int64_t rows, int64_t mr) {
  const int64_t blocks = ceil_div(rows, mr), thin = rows - (blocks - 1) * mr;
  return blocks >= 2 && 2 * thin <= mr ? mr - ceil_div(mr + thin, 2) : 0;
}

void allow_mirrored_filter(bool allow) {
  g_allow_mirrored = allow;
}

void allow_packed_filter(bool allow) {
  g_allow_packed = allow;
}

int64_t packed_filter_passes_for_tests() {
  return g_packed_passes.exchange(0, std::memory_order_relaxed);
}

int64_t packed_filter_split_passes_for_tests() {
  return g_split_passes.exchange(0, std::memory_order_relaxed);
}

int64_t filter_pace_for_tests() {
  return g_pace.exchange(0, std::memory_order_relaxed);
}

int64_t packed_filter_panel_calls_for_tests() {
  return g_panel_calls.exchange(0, std::memory_order_relaxed);
}

void set_input_packing_for_tests(InputPacking packing) {
  g_input_packing = packing;
}

int64_t packed_input_filter_calls_for_tests() {
  return g_packed_input_calls.exchange(0, std::memory_order_relaxed);
}

void set_tap_gather_for_tests(InputPacking gather) {
  g_tap_gather = gather;
}

int64_t gathered_filter_calls_for_tests() {
  return g_gathered_calls.exchange(0, std::memory_order_relaxed);
}

int64_t filter_sub_blocks_for_tests() {
  return g_sub_blocks.exchange(0, std::memory_order_relaxed);
}

int64_t fill_prefetch_sub_blocks_for_tests() {
  return g_fill_prefetches.exchange(0, std::memory_order_relaxed);
}

int64_t streamed_filter_calls_for_tests() {
  return g_streamed_calls.exchange(0, std::memory_order_relaxed);
}

int64_t staged_filter_calls_for_tests() {
  return g_staged_calls.exchange(0, std::memory_order_relaxed);
}

template <class T>
void backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw, bool may_stream) {
  const int64_t taps = g.KH * g.KW, Og = g.O / g.G, rows = g.N * g.OH;
  if (rows == 0 || g.OW == 0 || Og == 0 || taps == 0) {
    std::fill(dw, dw + taps * g.Cf * g.O, T(0));  // no terms
    return;
  }

  // Input rows one output row spans: the stride, but never more than the input has (a stride up to
  // 2^60 times a row would overflow, issue 8).
  const int64_t span_rows = std::min(g.sh, g.H);
  const int64_t filter_elements = taps * g.Cf * g.O;
  // A row's elements are bounded by the tensors' sizes; rows x that can overflow where huge
  // padding makes many output rows of a few input rows (saturated: it is only compared).
  int64_t activation_elements = 0;
  if (__builtin_mul_overflow(rows, g.OW * g.O + span_rows * g.W * g.C, &activation_elements))
    activation_elements = INT64_MAX;
  // Row chunks (kMaxChunks).
  int64_t chunks = kMaxChunks;  // a function of the problem alone: the same for any thread count
  const int64_t partials_budget = taps == 1 ? activation_elements / 2 : activation_elements;
  while (chunks > 1 && (partials_budget / (chunks - 1) < filter_elements || rows < chunks))
    chunks /= 2;
  const int threads = thread_count();

  // Packed (packed_runs) or mirrored (header comment), for a 1x1 filter of one group with
  // out_backprop at least a panel (NR) wide:
  // - packed where it has fewer input than output channels and more than a panel of them (read
  //   mirrored in place, the input's panels would be a channel stride apart); with a panel or
  //   fewer a mirrored tile reads whole input pixels, contiguous in place (ResNet's 64 -> 256 on
  //   AVX-512: 1.03 of oneDNN mirrored, 0.83-0.97 packed);
  // - packed too where the filter is at least a quarter of the activations: in place, every block
  //   of a few rows loads and stores the whole filter (ResNet conv5's 2048 -> 512 at 7x7: 0.52-0.56
  //   of oneDNN in place, 0.70 packed; 512 -> 2048 mirrored 0.41, packed 0.90-0.93);
  // - where the input has more channels than out_backprop, which has several panels: units hold
  //   ranges of input panels and pass every out_backprop panel (split_q), so that each unit's
  //   tiles read only their own channels of the wider input, not all of it once per out_backprop
  //   panel (2048 -> 512 at 7x7: 8 times, 26 MB from L3 for about 2 ms of arithmetic); and packed
  //   from a sixteenth of the activations: with split_q, 1024 -> 256 at 14x14 (filter 1/7.7 of the
  //   activations) read 0.82-0.85 of oneDNN packed, 0.74-0.78 in place; 512 -> 128 at 28x28 (1/61)
  //   0.91-0.93 packed, 0.98-0.99 in place; 256 -> 64 (1/500) 1.16 packed, 1.24-1.35 in place
  //   (AVX-512, 8-10 rounds). Against the rule before (AVX-512, 10 rounds): 2048 -> 512 0.68 ->
  //   0.97, 1024 -> 256 0.77 -> 0.82; capped to AVX2 (8 rounds): 0.75 -> 0.92, 0.67 -> 0.90, and
  //   2048 -> 64 at 7x7 (four AVX2 panels) 0.64 -> 0.79; a classifier's 2048 -> 1000 on 32
  //   pixels 2.74 -> 2.53 (AVX-512), 1.31 -> 1.39 (AVX2) (bench/xeon-2026-12-02b). With one panel
  //   of out_backprop (2048 -> 64 on AVX-512), units hold that panel, and the quarter rule stands;
  // - mirrored where fewer input than output channels are at least a panel (and not packed).
  // Layers with more input than output channels and a small filter read both in place (256 ->
  // 64: 1.14-1.17 in place, 0.87-0.97 packed). Measured 2026-12-02 on the Xeon guest, AVX-512, 2
  // threads, paired against oneDNN, 6 rounds (bench/xeon-2026-12-02), the split_q rows 2026-12-02
  // too (bench/xeon-2026-12-02b).
  //
  // Packed blocks hold kc pixels: 128 (at most a chunk's), fewer where out_backprop's panel (kc x
  // NR), which every tile of a block re-reads, would outgrow L1. The input panels go in ranges of
  // q blocks taking half of L2 at most (below, where q_panels is set). A C tile is loaded and
  // stored once per block: at 128 pixels, 1-2 % of the call's loads. Measured (paired medians
  // against oneDNN, 10 rounds, bench/xeon-2026-12-02/kc-512-2t.txt): on AVX-512, 96, 128 and 160
  // pixels read 1.10 / 1.07 / 1.11 on ResNet's 256 -> 512 stride 2, 0.71 / 0.75 / 0.73 on 256 ->
  // 1024 and 0.89 / 0.96 / 0.96 on 512 -> 2048: 128 within the rounds' spread of the best on each,
  // with a 32 KiB panel of a 48 KiB L1; the rule before (all input panels in a sixteenth of L2:
  // 127, 127 and 63 pixels there, 496 for 64 channels) read 1.10, 0.75, 0.85 (8 rounds,
  // rule2-512-2t.txt). Capped to AVX2 (8 rounds): 128 pixels 0.96, 0.94, 0.79 on 64 -> 256,
  // 256 -> 512 stride 2 and 512 -> 2048; 64 pixels 0.89, 0.91, 0.73; 256 0.95, 0.91, 0.81; 384
  // 0.92, 0.89, 0.81. On the Zen 3
  // (AVX2, 512 KiB L2) 124 measured best beside 248 (0.94 against 0.89, bench/zen3-2026-12-02).
  const KernelTable<T>& kt = kernels<T>();
  const int64_t elem = static_cast<int64_t>(sizeof(T));
  const CacheSizes& cache = cache_sizes();
  const int64_t widest_nr = kt.nr(kt.variants - 1);
  const bool one_tap = taps == 1 && g.G == 1 && g.O >= widest_nr;
  const bool one_tap_wide = one_tap && g.Cf < g.O && g.Cf >= widest_nr;
  // Packed units hold whole panels of one side, chunk by chunk (packed_runs): out_backprop's, or
  // the input's where it has more channels and out_backprop several panels (split_q). A layer
  // packed for its filter's size, which has few chunks, also needs two such units a thread, or
  // threads idle.
  const bool split_q = g.Cf > g.O && g.O > widest_nr;
  const int64_t unit_panels = split_q ? ceil_div(g.Cf, kt.mr) : ceil_div(g.O, widest_nr);
  const bool big_one_tap = one_tap && g.Cf >= kt.mr &&
                           filter_elements >= activation_elements / (split_q ? 16 : 4) &&
                           chunks * unit_panels >= 2 * threads;
  const int64_t packed_kc = std::clamp<int64_t>(cache.l1d / (widest_nr * elem), 16, kBlockPixels);
  const bool packed = g_allow_packed && ((one_tap_wide && g.Cf > widest_nr) || big_one_tap);
  const bool mirrored = !packed && g_allow_mirrored && one_tap_wide;

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
        if (mirrored) std::swap(s.x, s.dy);
      }
    }
  }

  // A segment with two or more columns has sw < W; otherwise the step is never taken, and
  // clamping keeps a huge stride's sw * C from overflowing.
  const int64_t px_step = std::min(g.sw, std::max<int64_t>(g.W, 1));  // in input pixels
  const int64_t x_step = px_step * g.C;
  const int64_t cols = mirrored ? g.Cf : Og;  // C's columns per group
  const int variant = kt.variant_for(cols);
  Plan<T> P;
  P.g = &g;
  P.x = x;
  P.dy = dy;
  P.seg = seg.data();
  P.mirrored = mirrored;
  P.x_step = x_step;
  P.bside = mirrored ? dy : x;
  P.vside = mirrored ? x : dy;
  P.b_step = mirrored ? g.O : x_step;
  P.v_step = mirrored ? x_step : g.O;
  P.Mrows = mirrored ? g.O : g.Cf;
  P.cols = cols;
  P.ldc = mirrored ? g.Cf : g.O;
  P.taps = taps;
  P.rows = rows;
  P.NR = kt.nr(variant);
  P.MR = kt.mr;
  P.qblocks = (P.Mrows + P.MR - 1) / P.MR;
  P.q_shift = filter_q_shift(P.Mrows, P.MR);
  P.oblocks = (cols + P.NR - 1) / P.NR;
  P.kernel = kt.filter[variant];
  P.copy_rows = kt.copy_rows;
  const int64_t tiles = g.G * taps * P.qblocks * P.oblocks;
  // Blocks: the input and out_backprop rows fit L2 when every tap re-reads the block; an eighth of
  // it for one tap, which sweeps each block once per panel (measured best for ResNet's 1x1 while
  // it ran in place or mirrored, as it still does on AVX-512, before packed_runs).
  const int64_t row_bytes = (g.OW * g.O + span_rows * g.W * g.C) * elem + 1;
  P.block_rows = std::max<int64_t>(1, (taps == 1 ? cache.l2 / 8 : cache.l2) / row_bytes);
  // One tap: also at least kBlockPixels pixels, within a quarter of L2 (where both blocks fit
  // half of it, prefetch_next below). An eighth of the Xeon's 2 MiB L2 is 3 of ResNet's 56-pixel
  // rows, of the Zen 4's 1 MiB 1 row, whose C tiles were then loaded and stored every 56 pixels:
  // with 3 rows there (AVX-512, 2 threads, paired against oneDNN, three sets of 5-10 rounds,
  // bench/zen4-2026-12-03c) 64 -> 256 at 56x56 (mirrored) 0.94-1.02 -> 1.00-1.02, 256 -> 64 (in
  // place) 1.08-1.11 -> 1.13-1.16, 512 -> 128 at 28x28 (in place) 0.76-0.81 -> 0.83-0.85; at 1
  // thread and capped to AVX2 about level or higher (within that spell's 4 % noise). Not where
  // packed (packed_runs' own blocks), where block_rows would only change the units a thread
  // takes (chunk_one_block below).
  if (taps == 1 && !packed)
    P.block_rows = std::clamp<int64_t>(ceil_div(kBlockPixels, g.OW), P.block_rows,
                                       std::max<int64_t>(P.block_rows, cache.l2 / 4 / row_bytes));
  // A filter of several taps larger than the activations is one block: every block loads and
  // stores the whole filter, from memory once it exceeds the caches, while a block's activations
  // are read back from L3 (from memory where they exceed it too: a case not measured). The 4
  // blocks of ResNet conv5 (N = 8) cost about 5 %, DCGAN g2's 2 blocks 15-35 % (AVX2 Zen 3, 1
  // thread). Taking q tiles in ranges whose input slice fits L2 (so that each panel does not
  // stream the whole input from L3) gained nothing measurable there, 1 and 2 threads. 1x1 filters
  // keep their blocks of at least kBlockPixels (above) where they run in place or mirrored
  // (ResNet conv5's 1x1 layers, which the one-block rule would take, run packed: packed_runs' own
  // blocks).
  //
  // Filter tiles over twice L2 are streamed or prefetched by the kernel (stream below, kAhead),
  // not here.
  P.c_elements = filter_elements;
  const bool filter_dominated = filter_elements >= activation_elements;
  if (taps > 1 && filter_dominated) P.block_rows = rows;
  const int64_t chunk_rows = ceil_div(rows, chunks);  // the longest chunk's output rows
  // (filter_elements times 8 fits int64, core/problem.h)
  const bool big_filter = over_twice_l2(filter_elements * elem);
  // Streamed stores: where the filter is over twice L2 and summed in one chunk of one block (a
  // filter larger than the activations: DCGAN g2, ResNet conv5), each tile is summed in one call
  // and stored once, if the block is one sub-block; a plain store first reads each line from
  // memory, to be overwritten (and the tile prefetch, kAhead, read them for that). So such layers
  // take one sub-block (the out_backprop slice then read from L2, not L1; with wide panels, staged
  // sub-blocks since 2026-12-07, below) and store their sums with non-temporal stores, which
  // write whole lines without reading them (g2 about 1.8 -> 2.0
  // of oneDNN on AVX-512, a small gain on AVX2: figures in the README and bench/xeon-2026-11-29d;
  // the tile prefetch beside streaming lost there). stream_result (internal.h) says where a
  // result may be streamed; here also every full tile's rows must start on a line (a
  // non-temporal vector store off its alignment faults).
  P.stream = stream_result(may_stream, kt.isa, dw, filter_elements * elem) && chunks == 1 &&
             chunk_rows <= P.block_rows && !mirrored && (P.NR * elem) % kLine == 0 &&
             (P.ldc * elem) % kLine == 0 && (g.G == 1 || (cols * elem) % kLine == 0);
  // Sub-blocks: runs of pixels over which every tile of a run re-reads the panel's out_backprop
  // slice, sized so that the slice and the input's lines (below) fill about 1.5 L1 where a panel is
  // one cache line per pixel (AVX2's 16 floats: measured best between 1 and 2 L1 on ResNet's 3x3
  // layers, Zen 3/4), and 1 L1 where it is wider (AVX-512's 64 floats, 4 lines: best of 0.5,
  // 0.75, 1 and 1.5 L1 on a Xeon with two 512-bit FMA units, 1 thread, 2026-11-26; at 1.5 the
  // slice alone outgrows L1) on a core with 512-bit units. Where each 512-bit multiply-add is two
  // 256-bit halves (split_fma512: Zen 4), a tile needs half the operand bytes per cycle, which L2
  // keeps up with, and sub-blocks of 4 L1 cost fewer C tile loads and stores: on a Zen 4 guest
  // (32 KiB L1, 1 MiB L2; AVX-512, paired against oneDNN, 5 rounds, bench/zen4-2026-12-03c/
  // sub-blocks-*.txt) 1 L1 -> 4 L1 took ResNet conv2 3x3 1.15 -> 1.27, conv3 3x3 1.00 -> 1.05,
  // conv3 stride 2 1.11 -> 1.16, conv4 3x3 1.12 -> 1.21, the dilated layer 1.02 -> 1.10 and DCGAN
  // g4 1.07 -> 1.13 at 2 threads (1 thread: 1.13 -> 1.26, 1.02 -> 1.05, 1.09 -> 1.14, 1.13 ->
  // 1.17, 1.09 -> 1.10, 1.03 -> 1.05); 0.5 L1 read lower, 2, 3, 8 and 16 L1 about as 4.
  //
  // The input's term is the lines a sub-block's taps read per output pixel: one at stride 1, where
  // tap kw + 1 re-reads mostly the lines tap kw read; at stride 2 tap kw + 1 reads other lines than
  // tap kw (kw + 2 re-reads kw's, a pixel on), so a 3x3 filter's taps read 2 x 2 input pixels per
  // output pixel (input_lines_per_pixel). Counted so for line panels: on a Xeon (48 KiB L1, 2 MiB
  // L2, AVX2, bench/xeon-2026-12-06/) ResNet conv3 stride 2's sub-blocks went from 20 rows to 8
  // and DCGAN g4's from 36 to 14: paired against oneDNN at 2 threads conv3 stride 2 1.10 -> 1.20,
  // g4's medians 7.6 % lower (fastest rounds -1 %), at 1 thread 1.045 -> 1.090 and 0.969 ->
  // 0.998 (and against the rule before, interleaved, bench/xeon-2026-12-06b/: fastest rounds
  // -4.5 to -6 % on conv3 stride 2, -3.6 to -4.9 % on g4); stride-1 layers unchanged by
  // construction. Wide panels keep one line: there the count read level or lower (+3-6 % time, in
  // the noise). Unmeasured on a Zen 4 (conv3 stride 2's AVX2 sub-blocks there 13 -> 5 rows; g4's
  // 24 -> 9, which brings its cap under the fill prefetch's half-L2 gate there: below).
  const bool line_panel = !wide_panel(P.NR * elem);
  const int64_t per_pixel =
      P.NR * elem + kLine * (line_panel ? input_lines_per_pixel(g, cache.l1d) : 1);
  const int64_t wide_bytes = split_fma512() ? 4 * cache.l1d : cache.l1d;
  // Staged (stream above, wide panels): the sub-blocks keep their size, and a run's tiles carry
  // their sums from one sub-block to the next in a scratch stage of the thread's (a run's tiles fit
  // half of L2), streamed into the filter from the last (aim). Until 2026-12-07 a streamed layer
  // took one sub-block, its wide panel's slice read from L2 for every pixel of every tile: on the
  // Xeon guest (AVX-512, 2 threads) ResNet conv5 (3 sub-blocks of 18-19 rows staged) ran 3.1 %
  // faster staged, by the geomean of 11 sets of in-process pairs (each set's median of 202 pairs'
  // time ratios 0.94-1.00; at 1 thread 5.4 % over six sets; bench/xeon-2026-12-07b/README.md);
  // DCGAN g2, one sub-block, level.
  // Line panels (AVX2) keep one sub-block: staged with their own rule's sub-blocks (1.5 L1), on
  // the Zen 3 guest (32 KiB L1: ResNet conv5 in two sub-blocks of 28 rows) conv5 read 6.5-7 %
  // slower at 1 and 2 threads in four sets of paired calls, DCGAN g2 level
  // (bench/zen3-2026-12-07/pairs/stage-line.txt).
  P.stage = P.stream && !line_panel;
  P.sub_rows =
      P.stream && !P.stage
          ? P.block_rows  // one sub-block (stream, above)
          : std::max<int64_t>(1, (line_panel ? cache.l1d * 3 / 2 : wide_bytes) / per_pixel / g.OW);
  // Packing pays only where a panel is narrower than out_backprop's pixel and several taps reuse
  // it: read in place, the slice's rows are out_backprop's channel stride apart (1-2 KiB), which
  // maps them to a few L1 sets. A sub-block's slice too large for L2 (a row of millions of
  // columns) is read in place.
  P.pack = taps > 1 && g.O > P.NR && P.sub_rows * g.OW * P.NR * elem <= cache.l2;
  // Without packing, sub-blocks pay only for a wide panel read in place with several taps: with
  // one tap nothing re-reads the slice, and a one-line panel as wide as out_backprop (AVX2 on 16
  // channels) already ran from L2 at speed. Wide panels: a Xeon with two 512-bit FMA units needs
  // twice the operand bandwidth per FMA of one that splits each into two 256-bit halves (Zen 4,
  // where the whole-block order had measured best, 2026-11-25, and 4 L1 sub-blocks since
  // 2026-12-03, above). Sub-blocks of a wide panel took ResNet conv2-conv5 3x3,
  // the dilated layer and DCGAN g2/g4 from 0.80-0.97 of oneDNN to 0.92-1.19 on that Xeon
  // (1 thread; DCGAN g2 1.4 -> 1.8), packed where out_backprop is wider than a panel.
  if (!P.pack && (line_panel || taps == 1)) P.sub_rows = P.block_rows;
  P.prefetch_next = P.block_rows <= cache.l2 / 4 / row_bytes;  // both blocks in half of L2
  // (kAhead: a gain with wide panels only, where the filter is over twice L2)
  P.prefetch_tiles = !line_panel && big_filter && !P.stage;
  // Runs: at most what keeps the run's filter tiles in half of L2.
  P.run_tiles = std::max<int64_t>(1, cache.l2 / 2 / (P.MR * P.NR * elem));
  if (packed) {
    // (no more than a chunk's pixels: the buffers below are per thread and per call)
    P.kc = std::min(packed_kc, chunk_rows * g.OW);
    // Ranges take half of L2 at most: q_panels, the input buffer's capacity, is that budget
    // evened over all the q blocks (the ranges of all of them near-equal: a short last range
    // would pass the block for a few panels); a unit of fewer q blocks (split_q) evens its own
    // ranges within it (packed_runs, EvenSplit). Several ranges keep every out_backprop panel of
    // the block packed, a slot each (the block's out_backprop once more: 128 KB for ResNet's 64
    // -> 256 under AVX2, a quarter of a 512 KiB L2, beside the block in place and the next one
    // prefetched), and pass every panel once per range; one range packs each panel into one slot
    // that stays in L1. Until 2026-12-07 ranges took a sixteenth of L2: on the Zen 3 guest
    // (AVX2, 512 KiB L2, in-process pairs of calls, each set's median time ratio of 202 pairs,
    // bench/zen3-2026-12-07/pairs/) half of L2 against a sixteenth read ResNet's 64 -> 256 (two
    // ranges -> one) 0.98-1.01 over nine sets at 2 threads (geomean 0.99) and 0.98-0.99 over six
    // at 1; 128 -> 512 at 28x28 (three -> one, as L2 / 4 there) 0.96-0.98 at both; 256 -> 1024 at
    // 14x14 (five -> one) 0.978-0.994; 1024 -> 256 at 14x14 (split_q) 0.988-0.995; 512 -> 2048 at
    // 7x7 (nine ranges -> two, or one as L2 / 1) level. Unmeasured on the Xeon and Zen 4 guests,
    // whose larger L2s took one range for fewer channels already (under AVX2: 64 -> 256 on both,
    // 128 -> 512 on the Xeon).
    const int64_t budget_panels =
        std::clamp<int64_t>(cache.l2 / 2 / (P.kc * P.MR * elem), 1, P.qblocks);
    P.q_panels = ceil_div(P.qblocks, ceil_div(P.qblocks, budget_panels));
    P.split_q = split_q;
    // (An input slot's whole-vector stores may pass its end by a vector less one element:
    // FilterTile. out_backprop's slots are NR, whole vectors, wide.)
    P.lda = P.kc * P.MR + kt.width;
    P.pack = false;
    P.prefetch_next = false;
    P.stream = false;
    P.stage = false;
  }

  // Sub-block prefetch: where a block's input rows take more than half of L2, they do not stay
  // there from one run (out_backprop panel) to the next beside the run's filter tiles, and each
  // sub-block's first tiles waited on L3 for them: ResNet's stride-2 conv3 (1.6 MB of input per
  // block) went from 0.99-1.12 of oneDNN to 1.09-1.62 (medians 1.05 -> 1.23) on 1 thread, and
  // from 1.01-1.13 to 1.04-1.34 (medians 1.04 -> 1.19) on 2 (Xeon, AVX-512, paired ratios, three
  // A/B sets of 3-5 runs, 2026-11-27); AVX2 unchanged (0.96-1.03 both ways). Prefetching every
  // layer's measured no change on ResNet conv2-conv5 3x3, the dilated layer and DCGAN g4 (within
  // the noise), DCGAN g2 (0.5 MB of input) perhaps worse; so only blocks past half of L2.
  // Prefetching the next sub-block's out_backprop rows as well, on every pass, gained nothing
  // (Xeon, AVX-512; on a block's first pass only where it stays in L2: prefetch_fill, below).
  int64_t block_input = 0;  // saturated, as activation_elements
  if (__builtin_mul_overflow(std::min(P.block_rows, chunk_rows), span_rows * g.W * g.C * elem,
                             &block_input))
    block_input = INT64_MAX;
  // Never with prefetch_next (tap_runs issues one of them): implied today, as a block of
  // prefetch_next and so its input fit a quarter of L2, and kept so under any retuning.
  // (Not where the sums are streamed: one sub-block, or staged sub-blocks, whose input is packed
  // where the layer is one group; grouped staged layers take none, unmeasured.)
  P.prefetch_sub =
      !P.prefetch_next && !P.stream && !mirrored && taps > 1 && block_input > cache.l2 / 2;
  // Fill prefetch: where the block's rows stay in L2 from run to run (no prefetch_sub) and the
  // panel's out_backprop slice is packed per sub-block, a unit's first run reads each sub-block's
  // rows from L3 or memory, the packing copy waiting on its out_backprop lines (a profile of
  // ResNet conv2 3x3 under AVX2, 1 thread: 7.5 % of optimized's samples on that copy, none with
  // the AVX-512 kernels, which read the slice in place) and the first tiles on the input's; the
  // later runs find them in L2. So the first run prefetches the next sub-block's input and
  // out_backprop rows (every panel's), and the last the next block's first; not where the thread's
  // last unit passed the same one block (tap_runs, warm), nor where the sub-block cap's rows
  // (P.sub_rows of them; tap_runs splits a block evenly into sub-blocks of at most that many, so
  // the sub-blocks it makes can be smaller) take more than half of L2: a threshold set by
  // measurement on the Zen 4 (below), where it leaves out the two layers that read level or lower
  // with the prefetch; its reason, that the next sub-block's rows do not stay in L2 beside the
  // current one's, holds for the cap, not always for the split. Zen 4 guest, AVX2, paired
  // against oneDNN, builds interleaved (bench/zen4-2026-12-06b/): ResNet conv2 3x3 (a 6-row cap
  // of 172 KB) 9.42 -> 9.09 ms at 2 threads (1.20 -> 1.23, 6 rounds; 1.15 -> 1.21 in a first set
  // of 5 without the warm rule), 17.7 -> 17.3 at 1 (4 rounds); conv3 3x3 (373 KB) and the dilated
  // layer (186 KB) level or a little higher (conv3 at 2 threads 1.08 -> 1.11, 1.11 -> 1.12, 1.12
  // -> 1.16 in three sets). Over the half-L2 cap: ResNet conv4 3x3 (774 KB) and DCGAN g4 (590 KB),
  // which read level or lower with the prefetch (g4 at 1 thread 1.12 -> 1.04 paired in a 3-round
  // set, 1.12 -> 1.10 in a 4-round one, where the build with the cap, which leaves g4 alone, read
  // 1.09). AVX-512, packed on 128 channels and up: level on conv3, conv4 and g4. On a Xeon (48 KiB
  // L1, 2 MiB L2: g4's cap 885 KB takes the prefetch, conv4's 1.2 MB does not), AVX2, level to
  // about 3 % lower in 20 interleaved rounds (bench/xeon-2026-12-06/). Those caps are from before
  // the line panels counted a stride's input lines (above): since, g4's AVX2 cap is 9 rows (221 KB)
  // on the Zen 4 and 14 (344 KB) on the Xeon, so on the Zen 4 g4 now takes the prefetch, which is
  // unmeasured there (its loss was read with 590 KB sub-blocks, whose next one did not stay in L2).
  int64_t sub_bytes = 0;  // the sub-block cap's rows, both tensors (saturated: only compared)
  if (__builtin_mul_overflow(P.sub_rows, row_bytes, &sub_bytes)) sub_bytes = INT64_MAX;
  P.prefetch_fill = P.pack && !P.prefetch_next && !P.prefetch_sub && !P.stream && !mirrored &&
                    taps > 1 && sub_bytes <= cache.l2 / 2;

  // The input packed into panels of MR channels per pixel (Plan::xpack) where the filter is at
  // least the activations and the layer is one sub-block, or staged (the layers measured here,
  // before staging, were one sub-block): one chunk of one block (above), each input panel read
  // by every tap and out_backprop panel of the layer. In place, a tile's input
  // is a line per pixel, the channel stride apart: ResNet conv5's 2 KiB maps them to two L1 sets,
  // and each tile read its 392 lines from L2 or L3 for 6 channels of each; packed, 147
  // contiguous ones. Zen 1, paired against oneDNN (bench/zen1-2026-12-05): conv5 0.93 -> 1.25 at
  // 1 thread, 1.21 -> 1.67 at 2; DCGAN g2 1.53 -> 1.62 and 1.95 -> 1.98. Packed on every 3x3 /
  // 5x5 layer (a scratch build), the layers of several blocks or sub-blocks lost or stayed level:
  // conv3 stride 2 1.08 -> 0.99, DCGAN g4 1.18 -> 1.10, conv2 3x3 1.17 -> 1.13, dilated 1.49 ->
  // 1.45, conv3 and conv4 3x3 level (a pass per call, and no input prefetch for the next block or
  // sub-block), so they read in place, as does a filter-dominated layer of several sub-blocks
  // (conv5 where its sums are not streamed: unmeasured). On a Zen 4 guest (bench/zen4-2026-12-05,
  // 1 thread) the AVX2 kernels gained too (conv5 18.2 -> 15.1 ms, g2 8.3 -> 7.5), the AVX-512
  // ones read level (conv5 13.96 -> 13.84, g2 5.90 -> 5.97; not profiled: a 6 x 32 tile does
  // twice the multiply-adds per input line it reads), so until 2026-12-06 only the AVX2 kernels
  // packed. On the Xeon guest (two 512-bit FMA units, 48 KiB L1, 2 MiB L2) the AVX-512 ones gain:
  // paired against oneDNN, builds interleaved (bench/xeon-2026-12-06e/), conv5 1.19 -> 1.27 at 2
  // threads (16 rounds; 1.17 -> 1.22 in 20; level, 1.21 -> 1.21, in a first 6) and 1.11 -> 1.21
  // at 1 (10; 1.12 -> 1.23 in 10); g2 2.03 -> 2.10 (16; 1.90 -> 2.04 in 20; 2.00 -> 2.09 in 12)
  // and 1.95 -> 2.11 (10; level, 2.06 -> 2.05, in 12): so every vector ISA packs by the
  // rule (the gather's rule below then applies to AVX-512 too). The portable kernels are
  // unmeasured and read in place. The pass is a copy: the sums do not change.
  const bool one_sub_block = P.sub_rows >= std::min(P.block_rows, chunk_rows);
  const bool pack_input = taps > 1 && g.G == 1 && g.C > 0 && !packed && !mirrored &&
                          (g_input_packing == InputPacking::wherever_possible ||
                           (g_input_packing == InputPacking::by_rule && kt.isa != Isa::generic &&
                            filter_dominated && (one_sub_block || P.stage)));
  const int64_t input_pixels = g.N * g.H * g.W;

  // The input gathered per tap (Plan::gather_pre, gathered_runs), and out_backprop's slice with
  // it: each tile then walks one segment of the tap's pixels, both sides contiguous, not one
  // segment per output row with the input read a stride of pixels apart. By the rule where the
  // input is packed (its rule: the vector ISAs) and out_backprop's slice too, the segments are
  // short (under kGatherBelow pixels on average), the input is walked with a column stride, a pixel
  // has at least kGatherSlots input slots (q blocks x MR), the gathered input takes no more memory
  // than the filter (it is the input once per tap that reads it) and a tap's no more than half of
  // L2. Measured 2026-12-06 (Zen 4, AVX2, 1 thread, medians, builds interleaved, paired against
  // oneDNN; bench/zen4-2026-12-06/): DCGAN g2 (8x8, 5x5, stride 2, 256 -> 512) 7.55 -> 6.33 ms (8
  // rounds), 3.88 -> 3.30 at 2 threads (10 rounds), paired 1.51 -> 1.80 and 1.53 -> 1.82; with 2
  // or 4 images 2.44 -> 1.90 and 4.13 -> 3.38 ms; 3x3 taps at stride 2, 512 -> 256, 3.42 -> 2.78
  // (4 images: 1.55 -> 1.37). What the gain follows (4 rounds each): the stride, as 4-pixel rows
  // at stride 1 (4x4 maps, 3x3 taps, 256 -> 512) went 2.07 -> 2.17, 4.01 -> 4.15 and 8.21 -> 8.28
  // ms at 8, 16 and 32 images (32 channels: 0.30 -> 0.34); and the channels, as the per-run
  // out_backprop gather is shared by fewer multiply-adds: g2's shape with 16 input channels 0.47
  // -> 0.58 ms, 32 level (1.00 -> 0.98), 64 and 128 4 % faster (1.78 -> 1.70, 3.48 -> 3.33).
  // AVX-512's step is 4 times the multiply-adds per input pixel: with one segment per tile (a
  // scratch build) its g2 read 5.85 -> 5.81 ms on the Zen 4; on the Xeon guest, packed with and
  // without the gather, 2.05 / 2.15 at 1 thread and 2.09 / 2.02 at 2 (12 rounds each, paired
  // against oneDNN: within the rounds' noise), so the rule is the same for both vector ISAs.
  // The pixels and their order are the segments', so the sums are the same bytes.
  constexpr int64_t kGatherBelow = 5, kGatherSlots = 128;
  std::vector<int64_t> gather_pre, gather_x;
  bool gather = false;
  int64_t gathered_pixels = 0;
  if (pack_input && P.pack && g_tap_gather != InputPacking::never) {
    gather_pre.resize(static_cast<std::size_t>(taps * (rows + 1)));
    // (A tap's pixels are distinct input pixels, so the counts are bounded by taps x the input's
    // pixels; the sums below are checked all the same.)
    int64_t nonempty = 0, widest = 0;  // segments with pixels; the most pixels of a tap
    bool counted = true;               // gathered_pixels did not overflow
    for (int64_t tap = 0; tap < taps; ++tap) {
      int64_t* pre = gather_pre.data() + tap * (rows + 1);
      pre[0] = 0;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t count = seg[static_cast<std::size_t>(tap * rows + r)].count;
        pre[r + 1] = pre[r] + count;
        nonempty += count > 0 ? 1 : 0;
      }
      counted &= !__builtin_add_overflow(gathered_pixels, pre[rows], &gathered_pixels);
      widest = std::max(widest, pre[rows]);
    }
    // A pixel's slots: every q block's MR (a block of fewer rows uses part of its slot).
    const int64_t slots = P.qblocks * P.MR;
    int64_t gathered_elements = 0, tap_bytes = 0;
    const bool sized =
        counted && !__builtin_mul_overflow(gathered_pixels, slots, &gathered_elements);
    const bool fits = sized && gathered_elements <= filter_elements &&
                      !__builtin_mul_overflow(widest, slots * elem, &tap_bytes) &&
                      tap_bytes <= cache.l2 / 2;
    const bool strided = px_step > 1;
    gather =
        sized &&
        (g_tap_gather == InputPacking::wherever_possible ||
         (strided && slots >= kGatherSlots && gathered_pixels < kGatherBelow * nonempty && fits));
    if (gather) {
      gather_x.resize(static_cast<std::size_t>(taps));
      for (int64_t tap = 0, before = 0; tap < taps; ++tap) {
        gather_x[tap] = before * slots;  // (before <= gathered_pixels: no overflow)
        before += gather_pre[static_cast<std::size_t>(tap * (rows + 1) + rows)];
      }
      P.gather_pre = gather_pre.data();
      P.gather_x = gather_x.data();
    }
  }
  T* const xpack =
      pack_input ? scratch_array<T>(ScratchSlot::packed_input,
                                    P.qblocks * (gather ? gathered_pixels : input_pixels) * P.MR)
                 : nullptr;
  if (pack_input) {
    // Segment::x and the input's step as offsets into a panel (pixel * MR). The prefetches' input
    // spans are in the input's layout, so they are off (the rule's layers have no next block or
    // sub-block to prefetch).
    for (Segment& s : seg) s.x = s.x / g.C * P.MR;
    P.x_step = P.b_step = px_step * P.MR;
    P.xpack = xpack;
    P.xpack_panel = input_pixels * P.MR;
    P.prefetch_next = false;
    P.prefetch_sub = false;
    P.prefetch_fill = false;
  }

  // Chunk 0 sums into dw itself (mirrored: into the transpose, scratch like the partials), chunk
  // c > 0 into partial + (c - 1) * filter_elements.
  const int64_t scratch_filters = chunks - 1 + (mirrored ? 1 : 0);
  T* const sums = scratch_filters > 0 ? scratch_array<T>(ScratchSlot::partial_sums,
                                                         scratch_filters * filter_elements)
                                      : nullptr;
  T* const first = mirrored ? sums : dw;
  T* const partial = mirrored ? sums + filter_elements : sums;
  // Items (chunk, part of the tiles): a multiple of the thread count, so that threads get equal
  // shares of every chunk count (which alone decides the arithmetic).
  const int64_t parts = threads / std::gcd<int64_t>(threads, chunks);
  const int64_t items = chunks * parts;
  // Units: each item's tiles in near-equal runs, at least 4 or 16 units a thread (below; one
  // thread: whole items), handed out through StealingRanges (internal.h: a thread done early
  // takes a slowed one's last units). A thread takes its own units in order, so consecutive units
  // share the item's rows (still in its caches where the chunk is one block). A tile's terms do
  // not depend on the run it is in.
  //
  // Where a chunk's rows are one block (kept in L2 from one unit to the next; also where a filter
  // larger than the activations made the block all the rows, above, which holds them in L2 only
  // where they fit: ResNet conv5's 1.6 MB and DCGAN g2's 0.8 MB do on the Xeon's 2 MiB L2, not
  // on a 512 KiB one, unmeasured), 16 units a thread, not 4: with 4, the last unit a slowed thread
  // holds is an eighth of the work, and the other thread idles through it. Where they are several
  // blocks (ResNet's 1x1 layer), every unit streams them all again: 4 (with 16 there, the 1x1 layer
  // fell to 0.87 of oneDNN from 1.01). Measured 2026-11-28 on the Xeon guest, 2 threads, paired
  // ratios against oneDNN, builds interleaved (medians of 6-16 rounds; 64 units a thread was worse
  // than 4; the records: bench/xeon-2026-11-28/units-ab.txt). ResNet conv4, the floor layer: better
  // in all seven sets, AVX-512 +1 to +8 %, AVX2 +4.6 to +14 %. DCGAN g4: AVX2 +3.5 to +13.5 % (the
  // AVX2 floor), AVX-512 -7 to +3.5 %. The other bpf layers within the rounds' noise (about 5 %)
  // both ways; the 14-round AVX-512 set's geomean over the nine bpf layers moved by 0.1 %.
  // The gain is in rounds where a thread is slowed: the fastest 2-thread rounds of 8 read 2-3 %
  // slower on g2, g4 and conv5 (conv4 1.5 % faster).
  const bool chunk_one_block = chunk_rows <= P.block_rows;
  const int64_t units_per_thread = chunk_one_block ? 16 : 4;
  // Packed (packed_runs): items and units split the tiles at whole out_backprop panels (tiles
  // t = ob * qblocks + qb), or with split_q at whole input panels (t = qb * oblocks + ob), as every
  // unit packs the panels of its tiles (and all of the other side) for its rows.
  const int64_t grain = P.grain();
  const int64_t grains = tiles / grain;
  const int64_t runs_per_item =
      threads > 1 ? std::clamp<int64_t>(ceil_div(units_per_thread * threads, items), 1,
                                        std::max<int64_t>(1, grains))
                  : 1;
  // Each unit in up to kTailCuts pieces of whole grains, taken kTailCuts at a time (a unit) but
  // for a thread's last ones, which shrink to half of what is left (StealingRanges' shrink_tail):
  // a thread done first then waits on a fraction of a unit, not on half of one on average. A
  // thread's consecutive pieces of one item run as one range of tiles. Measured 2026-12-07 on the
  // Xeon guest (AVX-512, 2 threads, the nine bpf layers; bench/xeon-2026-12-07/README.md): the
  // time from the first thread's end of the units to the last's, over the loop's time, 2.1-4.6 %
  // with whole units, 0.8-1.9 % with 4 pieces a unit (ResNet's 1x1 layer, several blocks a
  // chunk: 9.5 and 18.9 % whole, 10.0 and 2.3 % in pieces, two rounds); whole calls, 4 pieces
  // against whole units in alternate calls of one process (three sets of 202 pairs a layer): 1.0,
  // 0.2 and 0.6 % faster by each set's geomean of the pairs' median time ratios, 0.6 % pooled (23
  // of the 27 layer readings faster, conv5 level), where whole units against themselves read 0.0
  // and 0.1 % slower (single layers 1.4 % faster to 1.1 % slower); 8 pieces against 4 level (0.1 %
  // slower).
  constexpr int64_t kTailCuts = 4;
  const int64_t cuts =
      threads > 1 ? std::clamp<int64_t>(grains / parts / runs_per_item, 1, kTailCuts) : 1;
  const int64_t pieces_per_item = runs_per_item * cuts;
  std::unique_ptr<StealingRanges> units;
  // Each thread's stage (Plan::stage; used where a block has several sub-blocks).
  const int64_t stage_slice = P.run_tiles * P.MR * P.NR;
  T* const stage =
      P.stage ? scratch_array<T>(ScratchSlot::staged_sums, threads * stage_slice) : nullptr;

#pragma omp parallel num_threads(threads) if (threads > 1 && items * tiles > 1)
  {
#ifdef _OPENMP
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
#else
    const int tid = 0, nt = 1;
#endif
    if (gather) {  // tap by tap and row by row, each pixel's channels into the q blocks' slots
#pragma omp for schedule(static)
      for (int64_t tr = 0; tr < taps * rows; ++tr) {
        const int64_t tap = tr / rows, r = tr % rows;
        const int64_t* pre = P.gather_pre + tap * (rows + 1);
        T* const dst = xpack + P.gather_x[tap] + pre[r] * P.MR;
        const Segment& s = seg[static_cast<std::size_t>(tr)];
        for (int64_t c = 0; c < s.count; ++c)
          for (int64_t qb = 0; qb < P.qblocks; ++qb)
            copy_short(x + (s.x / P.MR + c * px_step) * g.C + P.q_first(qb),  // (s.x: pixel * MR)
                       P.q_rows(qb), dst + (qb * pre[rows] + c) * P.MR);
      }
    } else if (pack_input) {  // pixel by pixel, each pixel's channels into the q blocks' slots
#pragma omp for schedule(static)
      for (int64_t px = 0; px < input_pixels; ++px)
        for (int64_t qb = 0; qb < P.qblocks; ++qb)
          copy_short(x + px * g.C + P.q_first(qb), P.q_rows(qb),
                     xpack + qb * P.xpack_panel + px * P.MR);
    }
#pragma omp single
    units = std::make_unique<StealingRanges>(items * pieces_per_item, nt, cuts, true);
    Packs<T> pk;
    if (stage) pk.stage = stage + tid * stage_slice;
    if (P.pack) {
      pk.b.resize(static_cast<std::size_t>(P.sub_rows * g.OW * P.NR));
      pk.seg.resize(static_cast<std::size_t>(taps * P.sub_rows));
    }
    if (P.kc > 0) {
      pk.pa.resize(static_cast<std::size_t>(P.lda * P.q_panels));
      pk.pb.resize(
          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));
    }
    int64_t u0, u1;
    while (units->next(tid, &u0, &u1)) {
      for (int64_t u = u0, ue; u < u1; u = ue) {  // the pieces [u, ue) of one item
        const int64_t item = u / pieces_per_item, chunk = item / parts, part = item % parts;
        ue = std::min(u1, (item + 1) * pieces_per_item);
        int64_t r0, r1, p0, p1, t0, t1, skip;
        split_range(rows, static_cast<int>(chunks), static_cast<int>(chunk), &r0, &r1);
        split_range(grains, static_cast<int>(parts), static_cast<int>(part), &p0, &p1);
        const int n = static_cast<int>(pieces_per_item);
        split_range(p1 - p0, n, static_cast<int>(u % pieces_per_item), &t0, &skip);
        split_range(p1 - p0, n, static_cast<int>((ue - 1) % pieces_per_item), &skip, &t1);
        p0 *= grain;
        t0 *= grain;
        t1 *= grain;
        T* const out = chunk == 0 ? first : partial + (chunk - 1) * filter_elements;
        if (t1 > t0 && P.kc > 0)
          packed_runs(P, r0, r1, p0 + t0, p0 + t1, out, &pk);
        else if (t1 > t0 && P.gather_pre)
          gathered_runs(P, r0, r1, p0 + t0, p0 + t1, out, &pk);
        else if (t1 > t0)
          tap_runs(P, r0, r1, p0 + t0, p0 + t1, out, &pk);
      }
    }
    if (pk.packed_passes > 0)
      g_packed_passes.fetch_add(pk.packed_passes, std::memory_order_relaxed);
    if (pk.split_passes > 0) g_split_passes.fetch_add(pk.split_passes, std::memory_order_relaxed);
    if (pk.panel_calls > 0) g_panel_calls.fetch_add(pk.panel_calls, std::memory_order_relaxed);
    note_max(&g_pace, pk.pace);
    if (pk.sub_blocks > 0) g_sub_blocks.fetch_add(pk.sub_blocks, std::memory_order_relaxed);
    if (pk.fills > 0) g_fill_prefetches.fetch_add(pk.fills, std::memory_order_relaxed);
    if (pk.staged > 0) g_staged_calls.fetch_add(pk.staged, std::memory_order_relaxed);
    if (pk.streamed > 0) {
      store_fence();  // before the region's closing barrier
      g_streamed_calls.fetch_add(pk.streamed, std::memory_order_relaxed);
    }
    if (chunks > 1) {
      // Partials in chunk order (in the ISA's vectors, each partial read once: KernelTable).
#pragma omp barrier
      int64_t e0, e1;
      split_range(filter_elements, nt, tid, &e0, &e1);
      kt.sum_into(first + e0, partial + e0, filter_elements, chunks - 1, e1 - e0);
    }
    if (mirrored) {  // dw[q][o] = first[o][q] (one tap, one group)
#pragma omp barrier
      int64_t q0, q1;
      split_range(g.Cf, nt, tid, &q0, &q1);
      for (int64_t q = q0; q < q1; ++q)
        for (int64_t o = 0; o < g.O; ++o) dw[q * g.O + o] = first[o * g.Cf + q];
    }
  }
  if (pack_input) g_packed_input_calls.fetch_add(1, std::memory_order_relaxed);
  if (gather) g_gathered_calls.fetch_add(1, std::memory_order_relaxed);
}

template void backprop_filter<float>(const Geometry&, const float*, const float*, float*, bool);
template void backprop_filter<double>(const Geometry&, const double*, const double*, double*, bool);
template void backprop_filter<uint32_t>(const Geometry&, const uint32_t*, const uint32_t*,
                                        uint32_t*, bool);

}  // namespace convcheck::opt
