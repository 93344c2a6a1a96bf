// What the optimized backend's files share: the op entry points (one file each), workspace
// buffers, thread partitioning. Internal to optimized/.
//
// The op entry points take canonical operands in the compute type T (float for f32, f16 and bf16;
// double for f64; uint32_t for int32, whose wrapping arithmetic is exactly int32's modulo 2^32):
// activations NHWC, filters HWIO (RSCM for depthwise). Each writes every element of its result.
// backend.cpp converts to and from the problem's dtype and format.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/problem.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

/// An uninitialised, 64-byte aligned array (workspace; never value-initialises large buffers).
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t n) { resize(n); }
  void resize(int64_t n) {
    const std::size_t count = n > 0 ? static_cast<std::size_t>(n) : 1;
    data_.reset(static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{64})));
    size_ = n > 0 ? n : 0;
  }
  void zero() {
    if (size_ > 0) std::memset(static_cast<void*>(data_.get()), 0, size_ * sizeof(T));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<T, Free> data_;
  int64_t size_ = 0;
};

/// Scratch memory kept between calls (per calling thread, per slot), so that a run does not
/// fault in fresh pages for its large workspaces every time: get() returns at least `bytes` bytes,
/// 64-byte aligned, valid until the next get() of the same slot on the same thread. Buffers above
/// kScratchKeep bytes are released at the next get() instead of kept.
enum class ScratchSlot {
  packed_filter,
  operand_a,
  operand_b,
  result,
  partial_sums,
  packed_input,
  staged_sums,
  count
};
void* scratch(ScratchSlot slot, std::size_t bytes);
template <class T>
T* scratch_array(ScratchSlot slot, int64_t n) {
  return static_cast<T*>(scratch(slot, static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T)));
}

/// Per-core data cache sizes in bytes (L1 data, L2), read once at run time from the OS
/// (sysconf, else /sys/devices/system/cpu/cpu0/cache; else 32 KiB and 256 KiB). The blocking of
/// the GEMM-shaped ops is chosen from them; nothing assumes one machine's numbers.
struct CacheSizes {
  int64_t l1d = 0, l2 = 0;
};
const CacheSizes& cache_sizes();
/// Makes cache_sizes() report these sizes (clamped as the OS's are) until clear_cache_override():
/// for tests, which reach every blocking path on any machine through small caches. Not while an
/// op runs.
void override_cache_sizes(int64_t l1d, int64_t l2);
void clear_cache_override();
/// Whether this CPU issues each 512-bit multiply-add as two 256-bit halves (AMD family 19h, Zen 4,
/// from CPUID: core/cpu.h), so that an AVX-512 kernel needs half the operand bytes per cycle of a
/// core with 512-bit units (an Intel Xeon's two): backprop filter sizes its wide panels'
/// sub-blocks by it (backprop_filter.cpp). Not known for other CPUs (Intel parts with one 512-bit
/// unit, Zen 5): no. override_split_fma512(0 or 1) forces it for tests, -1 restores the CPU's;
/// not while an op runs.
bool split_fma512();
void override_split_fma512(int split);
/// Whether bursts of L2 software prefetches pay while other threads run too: on AMD cores yes
/// (measured on Zen 4: ResNet's 1x1 backprop input, 2 threads, AVX2 1.01 -> 1.08 of oneDNN), on
/// others no (Intel cores hold an L1 fill buffer per prefetch until its line arrives: on the Xeon
/// guest the same layer went 1.02 -> 0.94; implicit_gemm.cpp). override_threaded_prefetch_bursts(0
/// or 1) forces it for tests, -1 restores the CPU's; not while an op runs.
bool threaded_prefetch_bursts();
void override_threaded_prefetch_bursts(int allow);
/// Whether depthwise backprop input prefetches its next out_backprop row into L1 (prefetcht0)
/// rather than L2 (prefetcht1; RowLines::step) where the row fits L1: on AMD cores yes, elsewhere
/// no (not measured on Intel cores, whose L2 prefetches already hold an L1 fill buffer each). On
/// the Zen 4 guest it was level with L2 prefetches in most A/B sets and faster in one spell when
/// the L2-prefetching build ran slow (MobileNet dw1 1.27 -> 0.88 ms); backprop filter, which walks
/// its rows a vector of channels per pass, read slower into L1 outside that spell and keeps L2
/// prefetches. The sets and their figures: bench/zen4-2026-12-04/README.md. Not measured on rows
/// larger than MobileNet's (14 and 28 KiB). override_depthwise_input_rows_to_l1(0 or 1) forces
/// it for tests, -1 restores the CPU's; not while an op runs.
bool depthwise_input_rows_to_l1();
void override_depthwise_input_rows_to_l1(int to_l1);
/// Backprop filter's rows of C (a filter's input channels per group) in tiles of `mr` (the
/// kernels' MR): how many rows early the last tile starts, so that where it would have at most
/// mr / 2 rows the last two share mr plus its rows evenly (the larger first: 6 + 2 -> 4 + 4, 6 + 1
/// -> 4 + 3, 6 + 3 -> 5 + 4); else 0.
int64_t filter_q_shift(int64_t rows, int64_t mr);
/// Whether backprop filter may run a 1x1 layer mirrored (backprop_filter.cpp; default yes): for
/// the test that the mirrored result is bitwise the plain one. Not while an op runs.
void allow_mirrored_filter(bool allow);
/// Whether backprop filter may run a 1x1 layer as a packed GEMM (backprop_filter.cpp, packed;
/// default yes): for the test that its result is bitwise the in-place paths'. Not while an op runs.
void allow_packed_filter(bool allow);
/// The passes of a block of pixels over a range of input panels that backprop filter's packed
/// path (backprop_filter.cpp, packed_runs) made since the last call: for the tests that the path,
/// and its several blocks per item and ranges per block, are reached.
int64_t packed_filter_passes_for_tests();
/// The implicit GEMM's panel-major chunks whose kernel calls prefetched the next chunk's filter
/// rows (implicit_gemm.cpp, next_chunk_rows) since the last call: for the tests that it is reached.
int64_t next_chunk_prefetches_for_tests();
/// The implicit GEMM's largest prefetch pace (reduction steps per line, IgemmTile::pf_pace; the
/// one-tap blocks' and the panel-major chunks') since the last call (0: none since).
int64_t igemm_pace_for_tests();
/// The implicit GEMM's blocks that, with more than one thread, prefetched the source rows of the
/// block their thread takes next (implicit_gemm.cpp, threaded_prefetch_bursts) since the last call:
/// for the test that the path is reached.
int64_t threaded_ahead_blocks_for_tests();
/// backprop filter's (run, sub-block) passes in place (backprop_filter.cpp, tap_runs) since the
/// last call: for the test that the sub-blocks' size (split_fma512) changes no bits.
int64_t filter_sub_blocks_for_tests();
/// Those of tap_runs' passes that prefetched the rows of the unit's next sub-block or block with
/// its out_backprop rows (backprop_filter.cpp, prefetch_fill), since the last call: for the test
/// that the rule reaches it.
int64_t fill_prefetch_sub_blocks_for_tests();
/// Those of the passes that units holding ranges of input panels made (backprop_filter.cpp,
/// split_q), since the last call.
int64_t packed_filter_split_passes_for_tests();
/// The packed path's kernel calls of several tiles (FilterTile::panels) since the last call.
int64_t packed_filter_panel_calls_for_tests();
/// Raises `seen` to `value` where it is lower (the for-tests maxima of several threads).
inline void note_max(std::atomic<int64_t>* seen, int64_t value) {
  for (int64_t v = seen->load(std::memory_order_relaxed);
       value > v && !seen->compare_exchange_weak(v, value, std::memory_order_relaxed);) {
  }
}
/// Backprop filter's largest prefetch pace (pixels per line, FilterTile::pf_pace; packed_runs and
/// tap_runs) since the last call (0: no such call since).
int64_t filter_pace_for_tests();
/// Where backprop filter reads the input from packed panels (backprop_filter.cpp, pack_input):
/// never, by its rule (the default), or wherever it can (several taps, one group): for the test
/// that the packed input's result is bitwise the in-place one. Not while an op runs.
enum class InputPacking { never, by_rule, wherever_possible };
void set_input_packing_for_tests(InputPacking packing);
/// backprop filter's calls that read the input from packed panels, since the last call.
int64_t packed_input_filter_calls_for_tests();
/// Where backprop filter gathers each tap's input pixels and out_backprop slice contiguous
/// (backprop_filter.cpp, gather; only where the input is packed, and out_backprop's slice too):
/// never, by its rule (the default), or wherever it can; for the test that the gathered result is
/// bitwise the packed one. Not while an op runs.
void set_tap_gather_for_tests(InputPacking gather);
/// backprop filter's calls that gathered the input per tap, since the last call.
int64_t gathered_filter_calls_for_tests();
/// Whether `bytes` of data outgrow twice L2: a result that would not stay in L2 for its reader, a
/// filter whose tiles the kernels would wait on (backprop_filter.cpp).
inline bool over_twice_l2(int64_t bytes) {
  return bytes > 2 * cache_sizes().l2;
}

/// Whether a depthwise backprop op prefetches the source rows its next result row (backprop
/// input; why: kernels_impl.h, depthwise_run) or row group (backprop filter:
/// depthwise_filter_group) reads first into L2 (backprop input's into L1 on AMD cores:
/// depthwise_input_rows_to_l1): where each of `threads` threads' share of
/// out_backprop (`source_bytes`) outgrows twice its L2, so that the rows come from L3 or memory,
/// and a row of `row_bytes`, prefetched a row ahead, stays in L2 (a sixteenth of it; a row of
/// millions of columns would be evicted before it is read).
inline bool prefetch_next_rows(int64_t source_bytes, int64_t row_bytes, int threads) {
  return over_twice_l2(source_bytes / std::max(threads, 1)) && row_bytes <= cache_sizes().l2 / 16;
}
/// Whether depthwise backprop input slides its rows' three column taps through registers
/// (DepthwiseRow::window; the measurements: kernels_impl.h, depthwise_window_run): where the
/// kernels have the window and a tile's source, three rows of kDepthwiseWindowColumns + 2 pixels
/// of `pixel_bytes`, fits in L1 (on a Zen 3, 32 KiB L1: 28x28x256, 18 KiB, 12-20 % faster with
/// it; 14x14x512, 36 KiB, 1 % faster to 16 % slower), for ISAs whose window was measured
/// (`by_rule`: KernelTable::depthwise_row_window_by_rule). override_depthwise_row_window(0 or 1)
/// forces it (1: where the kernels have it, by rule or not) for tests, -1 restores the rule; not
/// while an op runs.
bool depthwise_row_window(bool kernels_have_it, bool by_rule, int64_t pixel_bytes);
void override_depthwise_row_window(int window);
/// Depthwise backprop input's runs that slid the window since the last call (counted by the
/// kernels: DepthwiseRow::slid): for the same test.
int64_t window_depthwise_runs_for_tests();
/// Depthwise backprop input's rows that prefetched the next input row's highest out_backprop row
/// since the last call: for the test that the path is reached. Not while an op runs.
int64_t prefetching_depthwise_rows_for_tests();
/// Depthwise backprop filter's chunks that prefetched their next row groups since the last call
/// (DepthwiseFilterRows::prefetch_next): for the same test. Not while an op runs.
int64_t prefetching_depthwise_filter_chunks_for_tests();
/// Sets dr's next row: the highest source row the next result row reads, `next_last`, where this
/// row's highest, `last`, is below it (stride 1: the row it adds; none where a stride repeats
/// rows). NHWC rows of one image are `row_elements` apart.
template <class T>
void set_next_rows(DepthwiseRow<T>* dr, const T* src, int64_t row_elements, int64_t last,
                   int64_t next_last) {
  if (next_last <= last) return;
  dr->next_src = src + next_last * row_elements;
  dr->next_src_elements = row_elements;
}

/// Streamed (non-temporal) stores of a result (stream.cpp): whole lines written without first
/// reading them from memory, and not kept in the caches. Whether a result of `bytes` at `out` may
/// be: its caller does not read it back right away (may_stream: not a scratch that is then
/// narrowed, transposed or rescaled), vector kernels, over twice L2, its start on a cache line,
/// and streaming allowed (allow_streamed_stores). Each op adds what its own kernels need.
bool stream_result(bool may_stream, Isa isa, const void* out, int64_t bytes);
/// The depthwise ops' (DepthwiseRow::stream): stream_result, multiplier 1, each run's taps one
/// group (so the first store is final) and every pixel's channels whole lines.
bool stream_depthwise_rows(const Geometry& g, Isa isa, const void* out, int64_t result_elements,
                           int64_t elem, bool may_stream);
/// Whether ops may stream their results (default yes), and how many backprop-filter tile calls
/// and depthwise result rows did since the last call: for the tests that streamed results are
/// bitwise the stored ones, and that the paths are reached. Not while an op runs.
void allow_streamed_stores(bool allow);
int64_t streamed_filter_calls_for_tests();
/// Backprop filter's tile calls that stored their sums in the thread's stage, not the filter
/// (backprop_filter.cpp, stage), since the last call. Not while an op runs.
int64_t staged_filter_calls_for_tests();
int64_t streamed_depthwise_rows_for_tests();
/// The implicit GEMM's tile calls that stored their results non-temporally (implicit_gemm.cpp,
/// stream) since the last call.
int64_t streamed_igemm_tiles_for_tests();
/// Depthwise backprop filter's (chunk, channel block) passes walked in several column blocks
/// since the last call (kernels_impl.h, depthwise_filter_block): for the test that blocked
/// results are bitwise whole rows', and that blocks are reached. Not while an op runs.
int64_t blocked_depthwise_filter_for_tests();
/// Whether depthwise backprop filter may walk 3-tap rows whole (kernels_impl.h,
/// depthwise_filter_rows3; default yes, under the vector kernels), and the chunks that did, and
/// of those the ones that slid a window of input columns (DepthwiseFilterRows::three_tap_window),
/// since the last call: for the test that the walks give the same bits. Not while an op runs.
void allow_three_tap_rows(bool allow);
int64_t three_tap_window_chunks_for_tests();
int64_t three_tap_depthwise_filter_chunks_for_tests();
/// After a piece of `rows` depthwise result rows whose stores were streamed: fences this thread's
/// non-temporal stores (store_fence, before the region's closing barrier publishes them) and
/// counts the rows for streamed_depthwise_rows_for_tests.
void end_streamed_rows(int64_t rows);

/// Threads for the backend's parallel regions: OpenMP's current maximum, or 1 when called from
/// inside a parallel region.
int thread_count();

/// Part `part` of `parts` contiguous, near-equal ranges of [0, n).
inline void split_range(int64_t n, int parts, int part, int64_t* begin, int64_t* end) {
  *begin = n * part / parts;
  *end = n * (part + 1) / parts;
}

/// Tests: the thread asking for part `part` (-1: none; 0 only where every region runs on more than
/// one thread) of any StealingRanges (under 2^31 elements, where parts can be taken) is given
/// nothing, as if it were held up until the others had done everything, so that they take all of
/// its part (results must not change); and how many pieces were taken from another thread's part
/// since the last call. Not while an op runs.
void skip_part_for_tests(int part);
int64_t pieces_stolen_for_tests();

/// [0, n) split among `parts` threads as split_range does, each part handed out from its front
/// to its owner in pieces of up to `piece`; a thread whose own part is spent takes pieces from the
/// back of another's (half of what is left there, at most `piece`). With every thread at full
/// speed each runs its own part, the static split, but for a piece or so where costs differ at
/// the ends. When something slows one thread (a neighbour on a shared 2-vCPU guest: the two
/// threads of one static split of ResNet's conv2 3x3 backprop input measured 12.9 and 6.3 ms in
/// the same round, 2026-11-27), the other finishes the slow one's tail instead of waiting for it.
/// Callers give every element of a piece the same sequence of operations wherever and with
/// whatever piece it runs, so results do not depend on who took what.
///
/// With `shrink_tail` (under 2^31 elements, where parts can be taken; from there pieces stay
/// `piece`), an owner's pieces shrink at the end of its part: half of what is left (rounded up)
/// where that is less than `piece`, so that its last pieces are 1/2, 1/4, ... of a piece and, at
/// equal speeds, a thread that finishes first waits on a fraction of one (a slowed thread can
/// still hold a whole piece taken earlier). For callers whose work costs about the same taken
/// whole or cut: backprop_filter's units.
class StealingRanges {
 public:
  StealingRanges(int64_t n, int parts, int64_t piece, bool shrink_tail = false)
      : parts_(parts < 1 ? 1 : parts),
        piece_(piece < 1 ? 1 : piece),
        shrink_(shrink_tail),
        // Front and back share one 64-bit word, 32 bits each; from 2^31 elements on, each
        // thread keeps to its own part (a 64-bit front its owner alone moves): nothing of that
        // size runs here today.
        steal_(n < (int64_t{1} << 31)),
        r_(new Range[static_cast<std::size_t>(parts_)]) {
    n = std::max<int64_t>(n, 0);
    for (int k = 0; k < parts_; ++k) {
      int64_t b, e;
      split_range(n, parts_, k, &b, &e);
      r_[k].end = e;
      r_[k].v.store(steal_ ? pack(b, e) : static_cast<uint64_t>(b), std::memory_order_relaxed);
    }
  }
  /// The end of thread `part`'s own range: its pieces come from the front of it in order, until
  /// another thread takes them from the back.
  int64_t part_end(int part) const { return r_[part].end; }
  /// The next piece for thread `part` (0 <= part < parts): [*begin, *end), at most `piece` long;
  /// false when every part is spent.
  bool next(int part, int64_t* begin, int64_t* end) {
    if (steal_ && part == skipped_part_.load(std::memory_order_relaxed)) return false;
    if (!steal_) {
      Range& r = r_[part];
      const int64_t front = static_cast<int64_t>(r.v.load(std::memory_order_relaxed));
      if (front >= r.end) return false;
      *begin = front;
      *end = std::min(r.end, front + piece_);
      r.v.store(static_cast<uint64_t>(*end), std::memory_order_relaxed);
      return true;
    }
    if (take(r_[part].v, true, begin, end)) return true;
    for (int k = 1; k < parts_; ++k) {
      if (take(r_[(part + k) % parts_].v, false, begin, end)) {
        stolen_.fetch_add(1, std::memory_order_relaxed);
        return true;
      }
    }
    return false;
  }

 private:
  friend void skip_part_for_tests(int);
  friend int64_t pieces_stolen_for_tests();
  static inline std::atomic<int> skipped_part_{-1};
  static inline std::atomic<int64_t> stolen_{0};

  struct alignas(64) Range {
    std::atomic<uint64_t> v;  // front << 32 | back (steal_), else the front alone
    int64_t end = 0;          // the part's end
  };
  static uint64_t pack(int64_t front, int64_t back) {
    return static_cast<uint64_t>(front) << 32 | static_cast<uint64_t>(back);
  }
  bool take(std::atomic<uint64_t>& v, bool own, int64_t* b, int64_t* e) const {
    uint64_t cur = v.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t front = static_cast<int64_t>(cur >> 32);
      const int64_t back = static_cast<int64_t>(cur & 0xffffffffu);
      const int64_t left = back - front;
      if (left <= 0) return false;
      const int64_t k = own ? std::min(piece_, shrink_ ? (left + 1) / 2 : left)
                            : std::min(piece_, std::max<int64_t>(1, left / 2));
      const uint64_t want = own ? pack(front + k, back) : pack(front, back - k);
      if (v.compare_exchange_weak(cur, want, std::memory_order_relaxed)) {
        *b = own ? front : back - k;
        *e = own ? front + k : back;
        return true;
      }
    }
  }
  int parts_;
  int64_t piece_;
  bool shrink_;
  bool steal_;
  std::unique_ptr<Range[]> r_;
};

/// f(begin, end) over pieces covering [0, n), on `threads` threads through StealingRanges (pieces
/// of up to `piece`); one thread: f(0, n). f runs concurrently on disjoint pieces.
template <class F>
void parallel_pieces(int threads, int64_t n, int64_t piece, F&& f) {
  if (n <= 0) return;
#ifdef _OPENMP  // (files built without OpenMP include this header: tests)
  if (threads > 1 && n > 1) {
    std::unique_ptr<StealingRanges> ranges;
#pragma omp parallel num_threads(threads)
    {
      const int tid = omp_get_thread_num();
#pragma omp single
      ranges = std::make_unique<StealingRanges>(n, omp_get_num_threads(), piece);
      int64_t b, e;
      while (ranges->next(tid, &b, &e)) f(b, e);
    }
    return;
  }
#endif
  (void)threads;
  (void)piece;
  f(int64_t{0}, n);
}

/// The depthwise ops' result rows in pieces (parallel_pieces: a thread done early takes a slowed
/// one's last rows; each row is written by one piece, whoever runs it), each streamed piece ended
/// by end_streamed_rows on the thread that streamed it.
template <class F>
void depthwise_row_pieces(int threads, int64_t rows, bool stream, F&& run_rows) {
  parallel_pieces(threads, rows, std::max<int64_t>(1, rows / (16 * threads)),
                  [&](int64_t r0, int64_t r1) {
                    run_rows(r0, r1);
                    if (stream) end_streamed_rows(r1 - r0);
                  });
}

/// n items cut into `parts` (>= 1) contiguous parts whose lengths differ by at most one; part k
/// is [begin(k), begin(k) + size(k)). No product that could overflow.
struct EvenSplit {
  int64_t q = 0, rem = 0;
  EvenSplit(int64_t n, int64_t parts) : q(n / parts), rem(n % parts) {}
  int64_t begin(int64_t k) const { return k * q + (k < rem ? k : rem); }
  int64_t size(int64_t k) const { return q + (k < rem ? 1 : 0); }
};

/// Floor division for a positive divisor.
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/// Ceiling division for a positive divisor.
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

/// Depthwise column runs (kernels.h): result columns v0 + t*v_step for t < count, whose candidate
/// taps (b, off) read source column t*src_step + off, a term where that is inside [0, src_w).
/// Consecutive columns with the same valid taps form one run; each tap is recorded as the pair
/// (b, source column of the run's first column).
inline void append_column_runs(int64_t v0, int64_t v_step, int64_t count, int64_t src_step,
                               int64_t src_w, const std::vector<int64_t>& cand_b,
                               const std::vector<int64_t>& cand_off, std::vector<ColumnRun>* runs,
                               std::vector<int64_t>* col_taps) {
  const std::size_t nc = cand_b.size();
  std::vector<char> prev(nc), cur(nc);
  for (int64_t t = 0; t < count; ++t) {
    for (std::size_t k = 0; k < nc; ++k) {
      const int64_t c = t * src_step + cand_off[k];
      cur[k] = c >= 0 && c < src_w;
    }
    if (t > 0 && cur == prev) {
      ++runs->back().count;
      continue;
    }
    ColumnRun run;
    run.v0 = v0 + t * v_step;
    run.count = 1;
    run.tap_begin = static_cast<int64_t>(col_taps->size() / 2);
    for (std::size_t k = 0; k < nc; ++k) {
      if (!cur[k]) continue;
      col_taps->push_back(cand_b[k]);
      col_taps->push_back(t * src_step + cand_off[k]);
    }
    run.tap_end = static_cast<int64_t>(col_taps->size() / 2);
    runs->push_back(run);
    prev = cur;
  }
}

}  // namespace convcheck::opt
