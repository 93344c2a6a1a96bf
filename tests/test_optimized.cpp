#define BOOST_TEST_MODULE optimized
// What is special to the optimized backend. Its code paths (1x1, implicit GEMM with panel and tile
// tails, reduction chunks, stride phases, dilation, groups, depthwise vector and multiplier paths,
// NCHW, empty tensors, the direct path for non-finite filters) pass through the oracle under
// every ISA this machine runs, and per dtype, in the backend testbed (tests/test_backends.cpp,
// CTest test_backends_optimized). Here: determinism (bitwise equal results across runs and across
// thread counts), the SIMD half conversions against core/half.h, the declared contracts, the
// per-ISA dispatch tables, and the blocking of the GEMM-shaped paths under every ISA.
#include <omp.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/cpu.h"
#include "core/half.h"
#include "optimized/dispatch.h"
#include "optimized/internal.h"
#include "optimized/kernels.h"
#include "optimized/optimized.h"
#include "oracle/oracle.h"
#include "properties/generators.h"
#include "tests/backend_testbed.h"

using namespace convcheck;

namespace {

// The cases of blocking arithmetic and store kinds (cache sizes, chunks, sub-blocks, column
// blocks, packing, prefetches, non-temporal stores): no CPU model changes them, and they run here
// under every ISA the host runs. The emulated CPU models of the `isa` label leave them out
// (tests/isa/test_isa.sh: `--run_test=!@blocking`), where qemu takes 30-60 times their native
// seconds.
const auto blocking = boost::unit_test::label("blocking");

Backend& optimized() {
  static std::unique_ptr<Backend> b = [] {
    register_optimized_backend(Registry::instance());
    return Registry::instance().make("optimized");
  }();
  return *b;
}

// Runs the backend on fixed pseudo-random operands and returns the result's bytes.
std::vector<unsigned char> result_bytes(const Problem& p) {
  return testbed::bytes(testbed::result_of(optimized(), p, testbed::random_operands(p, 12345)));
}

// The thread count, cache sizes and 512-bit split a test sets, restored however its scope ends (a
// failed BOOST_REQUIRE throws), so that the cases after it see the machine's.
struct Restored {
  const int threads = omp_get_max_threads();
  ~Restored() {
    opt::clear_cache_override();
    opt::override_split_fma512(-1);
    opt::override_depthwise_row_window(-1);
    omp_set_num_threads(threads);
  }
};

// While alive, the thread asking for part 1 of any StealingRanges gets nothing, so that the others
// take all of its part (optimized/internal.h).
struct SkippedThread {
  SkippedThread() {
    opt::pieces_stolen_for_tests();
    opt::skip_part_for_tests(1);
  }
  ~SkippedThread() { opt::skip_part_for_tests(-1); }
};

// While alive, depthwise backprop filter walks 3-tap rows in column blocks (the default again
// however the scope ends: later checks expect it).
struct ThreeTapRowsOff {
  ThreeTapRowsOff() { opt::allow_three_tap_rows(false); }
  ~ThreeTapRowsOff() { opt::allow_three_tap_rows(true); }
};

// The result bytes with 2 and 3 threads when the second takes nothing and the others take all of
// its pieces: `first` again. Returns the pieces taken from another thread at each count (none
// where the problem's path hands out no pieces: the panel-major order, a single piece).
std::vector<int64_t> expect_same_with_a_skipped_thread(const Problem& p,
                                                       const std::vector<unsigned char>& first,
                                                       const std::string& what) {
  const SkippedThread skipped;
  std::vector<int64_t> stolen;
  for (int threads : {2, 3}) {
    omp_set_num_threads(threads);
    BOOST_TEST((result_bytes(p) == first),
               what << " with " << threads << " threads, the second taking nothing");
    stolen.push_back(opt::pieces_stolen_for_tests());
  }
  return stolen;
}

}  // namespace

BOOST_AUTO_TEST_CASE(bitwise_identical_across_runs_and_thread_counts) {
  const char* const problems[] = {
      "conv2d:input=4x17x15x24,filter=3x3x24x40,padding=SAME",
      "conv2d_backprop_input:input=4x17x15x24,filter=3x3x24x72,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=4x17x15x24,filter=3x3x24x72,padding=SAME",
      "conv2d_backprop_filter:input=3x9x9x16,filter=3x3x8x16,dilation=2x2,padding=SAME,dtype=f64",
      // a filter larger than the activations: one chunk, each thread's tiles in runs
      "conv2d_backprop_filter:input=2x5x5x64,filter=3x3x64x96,padding=SAME",
      "depthwise_conv2d_backprop_input:input=4x30x30x24,filter=3x3x24x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=4x30x30x24,filter=3x3x24x1,padding=SAME",
      // 150 out_backprop rows in 4 chunks of 37 and 38 (the rows do not divide)
      "depthwise_conv2d_backprop_filter:input=5x30x30x24,filter=3x3x24x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=4x30x30x4,filter=3x3x4x3,padding=SAME,dtype=f16",
      "conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x8,padding=SAME,format=NCHW,dtype=bf16",
  };
  const Restored restored;
  for (const char* text : problems) {
    const Problem p = parse_problem(text);
    omp_set_num_threads(2);
    const std::vector<unsigned char> first = result_bytes(p);
    for (int run = 0; run < 2; ++run)
      BOOST_TEST((result_bytes(p) == first), text << " run " << run);
    for (int threads : {1, 3}) {
      omp_set_num_threads(threads);
      BOOST_TEST((result_bytes(p) == first), text << " with " << threads << " threads");
    }
    // Each of these problems hands out pieces (implicit GEMM, backprop filter, depthwise).
    for (int64_t stolen : expect_same_with_a_skipped_thread(p, first, text))
      BOOST_TEST(stolen > 0, text << ": no piece taken from the skipped thread");
  }
}

namespace {

struct Piece {
  int64_t begin, end;
  int by;  // the asking part
};

// Every index of [0, n) in exactly one piece, no piece empty or longer than `piece`.
void expect_exact_cover(std::vector<Piece> pieces, int64_t n, int64_t piece,
                        const std::string& what) {
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.begin < b.begin; });
  int64_t at = 0;
  for (const Piece& x : pieces) {
    BOOST_TEST(x.begin == at, what << ": a piece begins at " << x.begin << ", expected " << at);
    BOOST_TEST(x.end > x.begin, what);
    BOOST_TEST(x.end - x.begin <= piece, what);
    at = x.end;
  }
  BOOST_TEST(at == n, what);
}

// Every part asks from its own thread until all are spent; the pieces each got.
std::vector<Piece> ask_concurrently(opt::StealingRanges& r, int parts) {
  std::vector<std::vector<Piece>> by(static_cast<std::size_t>(parts));
  std::vector<std::thread> threads;
  for (int part = 0; part < parts; ++part)
    threads.emplace_back([&, part] {
      int64_t b, e;
      while (r.next(part, &b, &e)) by[static_cast<std::size_t>(part)].push_back({b, e, part});
    });
  for (std::thread& t : threads) t.join();
  std::vector<Piece> all;
  for (const auto& v : by) all.insert(all.end(), v.begin(), v.end());
  return all;
}

}  // namespace

// StealingRanges (internal.h): each part's owner takes its own range from the front, in order,
// in pieces of `piece` (with shrink_tail, half of what is left, rounded up, where that is less);
// a part no thread asks for is taken by the others; concurrent askers never share an index.
BOOST_AUTO_TEST_CASE(stealing_ranges_hand_out_every_index_once) {
  struct Row {
    int64_t n;
    int parts;
    int64_t piece;
    bool shrink = false;  // (each row runs both ways below)
  };
  std::vector<Row> rows;
  for (const bool shrink : {false, true})
    for (const Row& r : {Row{0, 2, 4}, Row{1, 2, 4}, Row{10, 3, 4}, Row{1000, 2, 7},
                         Row{1000, 5, 1}, Row{37, 4, 100}, Row{64, 2, 4}})
      rows.push_back({r.n, r.parts, r.piece, shrink});
  for (const Row& row : rows) {
    const std::string what = "n " + std::to_string(row.n) + ", " + std::to_string(row.parts) +
                             " parts, pieces of " + std::to_string(row.piece) +
                             (row.shrink ? ", shrinking" : "");
    // Only part 0 asks: its own range first, in order, then everything else.
    {
      opt::StealingRanges r(row.n, row.parts, row.piece, row.shrink);
      std::vector<Piece> got;
      int64_t b, e;
      while (r.next(0, &b, &e)) got.push_back({b, e, 0});
      int64_t own_begin, own_end, at = 0;
      opt::split_range(row.n, row.parts, 0, &own_begin, &own_end);
      std::size_t k = 0;
      for (; k < got.size() && at < own_end; ++k) {
        BOOST_TEST(got[k].begin == at, what);
        const int64_t left = own_end - at;
        const int64_t want = std::min(row.piece, row.shrink ? (left + 1) / 2 : left);
        BOOST_TEST(got[k].end - got[k].begin == want, what << ": an own piece of "
                                                           << got[k].end - got[k].begin << " with "
                                                           << left << " left, expected " << want);
        at = got[k].end;
      }
      BOOST_TEST(at == own_end, what);
      expect_exact_cover(got, row.n, row.piece, what + ", one asker");
    }
    // Every part asks from its own thread, part 1 given nothing: the others take all of it.
    {
      opt::StealingRanges r(row.n, row.parts, row.piece, row.shrink);
      const SkippedThread skipped;
      const std::vector<Piece> all = ask_concurrently(r, row.parts);
      expect_exact_cover(all, row.n, row.piece, what + ", concurrent");
      int64_t b1, e1, stolen = 0;
      opt::split_range(row.n, row.parts, 1, &b1, &e1);
      for (const Piece& x : all) {
        BOOST_TEST(x.by != 1, what << ": part 1's thread was given a piece");
        if (x.begin >= b1 && x.end <= e1) stolen += x.end - x.begin;
      }
      BOOST_TEST(stolen == e1 - b1, what << ": part 1 not all taken by the others");
    }
  }
  // Worked by hand: 64 in 2 parts, pieces of 4, shrinking: part 0's [0, 32) as 7 pieces of 4
  // (8 or more left), then 2 of the last 4, 1 and 1.
  {
    opt::StealingRanges r(64, 2, 4, true);
    std::vector<int64_t> sizes;
    int64_t b, e;
    while (r.next(0, &b, &e) && b < 32) sizes.push_back(e - b);
    BOOST_TEST(sizes == (std::vector<int64_t>{4, 4, 4, 4, 4, 4, 4, 2, 1, 1}),
               boost::test_tools::per_element());
  }
  // Many threads at full speed, pieces of one: owners and thieves contend for the same words.
  {
    const int64_t n = 200000;
    opt::StealingRanges r(n, 4, 1);
    const std::vector<Piece> all = ask_concurrently(r, 4);
    expect_exact_cover(all, n, 1, "n 200000, 4 parts, pieces of 1, concurrent");
  }
  // From 2^31 elements each part is its owner's alone (front and back no longer fit one word),
  // still in pieces of at most `piece`.
  const int64_t n = (int64_t{1} << 33) + 5, piece = int64_t{1} << 30;
  opt::StealingRanges r(n, 2, piece);
  std::vector<Piece> got;
  int64_t b, e;
  while (r.next(0, &b, &e)) got.push_back({b, e, 0});
  int64_t own_begin, own_end;
  opt::split_range(n, 2, 0, &own_begin, &own_end);
  BOOST_TEST(got.back().end == own_end);
  while (r.next(1, &b, &e)) got.push_back({b, e, 1});
  expect_exact_cover(got, n, piece, "n 2^33 + 5");
}

// L2Prefetch (kernels.h): take() hands each range's lines out once, in order, inside the range
// (offsets past its end by less than a line, clamped to its last byte), one range per piece; what
// it leaves due goes out through take(0) (issue_due's loop, recorded here instead of issued).
// After each piece of work, the lines out are those due: the units' share and a line ahead (two
// allowed for the double's rounding), never a burst of more. Rows: range sizes (at unaligned
// offsets into one buffer), units, work per take.
BOOST_AUTO_TEST_CASE(l2_prefetch_hands_out_every_line_once_in_proportion) {
  struct Row {
    std::vector<int64_t> sizes;
    int64_t units, work;
  };
  const int64_t kLine = opt::kLine;
  for (const Row& row : {Row{{1000}, 10, 1}, Row{{172032, 44032}, 43, 1}, Row{{1, 64, 65}, 2, 1},
                         Row{{5000, 3}, 1, 1}, Row{{100, 200, 300, 400}, 1000, 1}, Row{{640}, 3, 1},
                         Row{{6400, 640}, 7, 2}, Row{{}, 5, 1}, Row{{1, 2, 3, 4, 5}, 4, 1}}) {
    std::string what =
        "units " + std::to_string(row.units) + ", work " + std::to_string(row.work) + ", sizes";
    for (int64_t z : row.sizes) what += " " + std::to_string(z);
    std::vector<char> buf(1 << 19);
    opt::L2Prefetch pf;
    std::vector<const char*> begin;
    int64_t at = 3, lines_total = 0;
    for (int64_t z : row.sizes) {
      pf.add(buf.data() + at, z);
      if (begin.size() < opt::L2Prefetch::kMax) {  // a fifth range is not taken
        begin.push_back(buf.data() + at);
        lines_total += (z + kLine - 1) / kLine + 1;  // offsets 0, kLine, ... below z + kLine
      }
      at += z + 7;
    }
    pf.spread(row.units);
    std::vector<int64_t> expect(begin.size(), 0);  // per range, the next piece's offset
    int64_t handed = 0;
    auto record = [&](const char* range, int64_t off, int64_t last, int64_t lines) {
      const auto r = std::find(begin.begin(), begin.end(), range) - begin.begin();
      BOOST_TEST_REQUIRE(r < static_cast<std::ptrdiff_t>(begin.size()), what << ": no range");
      BOOST_TEST(off == expect[r], what << ": a line skipped or handed out twice");
      BOOST_TEST(last == row.sizes[r] - 1, what);
      BOOST_TEST(off + (lines - 1) * kLine < row.sizes[r] + kLine, what << ": past the range");
      for (std::ptrdiff_t q = 0; q < r; ++q)
        BOOST_TEST(expect[q] >= row.sizes[q] + kLine, what << ": a range left unfinished");
      expect[r] = off + lines * kLine;
      handed += lines;
    };
    for (int64_t u = row.work; u < row.units + 2 * row.work; u += row.work) {
      const char* range = nullptr;
      int64_t off = 0, last = 0, lines = -1;
      pf.take(row.work, &range, &off, &last, &lines);
      BOOST_TEST(lines >= 0, what);
      if (lines > 0) record(range, off, last, lines);
      for (pf.take(0, &range, &off, &last, &lines); lines > 0;
           pf.take(0, &range, &off, &last, &lines))
        record(range, off, last, lines);
      const int64_t share = u >= row.units ? lines_total : lines_total * u / row.units;
      BOOST_TEST(handed >= share, what << ", unit " << u);
      BOOST_TEST(handed <= std::min(lines_total, share + 2), what << ", unit " << u);
    }
    BOOST_TEST(handed == lines_total, what);
    for (std::size_t r = 0; r < begin.size(); ++r)
      BOOST_TEST(expect[r] >= row.sizes[r] + kLine, what << ": range " << r << " unfinished");
  }
}

// RowLines (kernels.h): step() by step, every line that each row touches, once, in order, each
// address inside its row (the first at the row's first byte), then nothing; no rows from a null
// pointer. Before each step, row_lines_left() is the steps left in the row (0 after the last).
// Rows: offset of the first row from a 64-byte boundary, rows, row bytes, stride.
BOOST_AUTO_TEST_CASE(row_lines_step_through_each_line_of_each_row_once) {
  struct Row {
    int64_t first, rows, row_bytes, ld;
  };
  const int64_t kLine = opt::kLine;
  alignas(64) static char buf[1 << 14];
  for (const Row& row :
       {Row{0, 6, 256, 1024}, Row{4, 6, 256, 1028}, Row{60, 3, 8, 100}, Row{0, 1, 1, 64},
        Row{32, 4, 192, 192}, Row{0, 0, 256, 256}, Row{8, 2, 0, 64}, Row{63, 2, 2, 200}}) {
    const std::string what =
        "first " + std::to_string(row.first) + ", " + std::to_string(row.rows) + " rows of " +
        std::to_string(row.row_bytes) + " bytes, " + std::to_string(row.ld) + " apart";
    opt::RowLines lines(buf + row.first, row.rows, row.row_bytes, row.ld);
    std::vector<int64_t> got, left;  // offsets into buf; row_lines_left() before each step
    for (int i = 0; i < 1000 && lines.rows > 0; ++i) {
      got.push_back(static_cast<int64_t>(lines.at - reinterpret_cast<uintptr_t>(buf)));
      left.push_back(lines.row_lines_left());
      lines.step();
    }
    BOOST_TEST(lines.rows == 0, what);
    BOOST_TEST(lines.row_lines_left() == 0, what);
    std::size_t k = 0;
    for (int64_t r = 0; r < row.rows && row.row_bytes > 0; ++r) {
      const int64_t b = row.first + r * row.ld, e = b + row.row_bytes;  // the row's bytes [b, e)
      BOOST_TEST_REQUIRE(k < got.size(), what << ": row " << r << " not reached");
      BOOST_TEST(got[k] == b, what << ": row " << r << " does not start at its first byte");
      for (int64_t line = b / kLine; line <= (e - 1) / kLine; ++line, ++k) {
        BOOST_TEST_REQUIRE(k < got.size(), what << ": row " << r << " cut short");
        BOOST_TEST(got[k] / kLine == line, what << ": row " << r << ", line " << line);
        BOOST_TEST(left[k] == (e - 1) / kLine - line + 1,
                   what << ": row " << r << ", line " << line);
        BOOST_TEST((got[k] >= b && got[k] < e), what << ": an address outside row " << r);
      }
    }
    BOOST_TEST(k == got.size(), what << ": lines past the last row");
  }
  opt::RowLines none(nullptr, 6, 256, 1024);
  BOOST_TEST(none.rows == 0);
}

// The generic kernels compiled here too, to see which one a backprop-filter call is given.
namespace convcheck::opt::dispatch_probe {
#include "optimized/simd.h"
// (kernels_impl.h after simd.h, as it asks: kept apart so that the includes are not sorted)
#include "optimized/kernels_impl.h"
}  // namespace convcheck::opt::dispatch_probe

namespace {

using ProbeFilterFn = void (*)(const opt::FilterTile<float>&);

// filter_kernel_fixed with a row count known at run time (2 or 4: rows below MR and all of them).
template <int NV, bool PF, bool TILE, bool PACK = false>
ProbeFilterFn probe_fixed(int64_t mr) {
  using S = opt::dispatch_probe::Scalar<float>;
  return mr == 2 ? &opt::dispatch_probe::filter_kernel_fixed<S, 2, NV, true, PF, TILE, PACK>
                 : &opt::dispatch_probe::filter_kernel_fixed<S, 4, NV, true, PF, TILE, PACK>;
}

template <int NV>
ProbeFilterFn probe_want(int64_t mr, bool pf, bool tile, bool pack) {
  if (pack)
    return pf ? probe_fixed<NV, true, false, true>(mr) : probe_fixed<NV, false, false, true>(mr);
  return pf ? (tile ? probe_fixed<NV, true, true>(mr) : probe_fixed<NV, true, false>(mr))
            : (tile ? probe_fixed<NV, false, true>(mr) : probe_fixed<NV, false, false>(mr));
}

}  // namespace

// filter_kernel_for (kernels_impl.h): a call takes its row count's kernel with the prefetch code
// for what it has, the lines (PF) and, with panels wider than a line only, a later tile (TILE);
// a call that packs its operands as it goes (packed_runs) the packing kernel, with the lines'
// prefetch where it has them and never a later tile's (packed_runs asks for none).
// A prefetch cannot change a result, so no oracle check sees a call given a kernel without its
// prefetches (a silent loss of speed): this does. Scalar floats, 4 rows: 16 columns are one line,
// 32 are two. (A call that should pack and is given a kernel that does not is caught by the
// packed path's bitwise test: its later tiles would read unwritten panels.)
BOOST_AUTO_TEST_CASE(backprop_filter_calls_take_the_kernel_with_their_prefetches) {
  using S = opt::dispatch_probe::Scalar<float>;
  struct Case {
    bool lines, later, wide;  // the call has lines to prefetch, a later tile; the panel is wide
    bool pf, tile;            // the kernel it must take
    bool pack = false;        // the call packs (pack_dy), and the kernel must
  };
  static_assert(!opt::wide_panel(16 * sizeof(float)) && opt::wide_panel(32 * sizeof(float)));
  alignas(64) static float c[4 * 32];
  alignas(64) static const char buf[256] = {};
  for (const Case& k :
       {Case{false, false, false, false, false}, Case{true, false, false, true, false},
        Case{false, true, false, false, false}, Case{true, true, false, true, false},
        Case{false, false, true, false, false}, Case{true, false, true, true, false},
        Case{false, true, true, false, true}, Case{true, true, true, true, true},
        Case{false, false, false, false, false, true}, Case{true, false, true, true, false, true},
        Case{true, true, true, true, false, true}}) {
    for (int64_t mr : {2, 4}) {
      opt::FilterTile<float> p;
      p.mr = mr;
      p.pf = k.lines ? buf : nullptr;
      p.pf_lines = k.lines ? 3 : 0;
      p.pf_last = sizeof buf - 1;
      p.next_c = k.later ? c : nullptr;
      p.next_mr = k.later ? 4 : 0;
      p.pack_dy = k.pack ? c : nullptr;
      const ProbeFilterFn got = k.wide ? opt::dispatch_probe::filter_kernel_for<S, 4, 32, true>(p)
                                       : opt::dispatch_probe::filter_kernel_for<S, 4, 16, true>(p);
      const ProbeFilterFn want = k.wide ? probe_want<32>(mr, k.pf, k.tile, k.pack)
                                        : probe_want<16>(mr, k.pf, k.tile, k.pack);
      BOOST_TEST((got == want), (k.lines ? "lines" : "no lines")
                                    << (k.later ? ", a later tile" : ", no later tile")
                                    << (k.wide ? ", wide panel" : ", one-line panel")
                                    << (k.pack ? ", packing" : "") << ", " << mr
                                    << " rows: not the kernel with its prefetches (PF " << k.pf
                                    << ", TILE " << k.tile << ", PACK " << k.pack << ")");
    }
  }
}

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

// The vector 16-bit conversions agree bit for bit with core/half.h (every f16/bf16 pattern
// widened; every 2^9-th f32 pattern plus the neighbours of the rounding boundaries narrowed).
BOOST_AUTO_TEST_CASE(half_conversions_match_core) {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < 65536; ++i) h[i] = static_cast<uint16_t>(i);
  std::vector<float> f;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 509)
    f.push_back(from_bits(static_cast<uint32_t>(u)));
  for (uint32_t i = 0; i < 65536; ++i) {
    for (uint32_t d : {0x0FFFu, 0x1000u, 0x1001u, 0x7FFFu, 0x8000u, 0x8001u}) {
      f.push_back(from_bits((i << 16) | d));  // bf16 ties and neighbours
    }
  }
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t m : {0x0FFFu, 0x1000u, 0x1001u, 0x2FFFu, 0x3000u, 0x3001u})
      for (uint32_t s : {0u, 0x80000000u}) f.push_back(from_bits(s | (e << 23) | m));
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    const opt::KernelTable<float>& k = opt::kernels<float>();
    std::vector<float> wide(h.size());
    std::vector<uint16_t> narrow(f.size());
    int64_t bad = 0;
    k.widen_f16(h.data(), wide.data(), static_cast<int64_t>(h.size()));
    for (uint32_t i = 0; i < 65536; ++i) bad += bits_of(wide[i]) != bits_of(f16_to_float(h[i]));
    k.widen_bf16(h.data(), wide.data(), static_cast<int64_t>(h.size()));
    for (uint32_t i = 0; i < 65536; ++i) bad += bits_of(wide[i]) != bits_of(bf16_to_float(h[i]));
    k.narrow_f16(f.data(), narrow.data(), static_cast<int64_t>(f.size()));
    for (std::size_t i = 0; i < f.size(); ++i) bad += narrow[i] != f16_from_float(f[i]);
    k.narrow_bf16(f.data(), narrow.data(), static_cast<int64_t>(f.size()));
    for (std::size_t i = 0; i < f.size(); ++i) bad += narrow[i] != bf16_from_float(f[i]);
    BOOST_TEST(bad == 0, "isa " << opt::isa_name(isa) << ": " << bad << " conversions differ");
  }
  opt::clear_isa_limit();
}

BOOST_AUTO_TEST_CASE(declared_contracts) {
  auto contract = [](const char* dtype) {
    return optimized().contract(CheckedProblem(
        parse_problem(std::string("conv2d:input=1x3x3x1,filter=1x1x1x1,dtype=") + dtype)));
  };
  const NumericContract f32 = contract("f32"), f64 = contract("f64"), f16 = contract("f16"),
                        bf16 = contract("bf16"), i32 = contract("i32");
  BOOST_TEST(f32.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(f32.u_out == 0.0);
  BOOST_TEST(f64.u_acc == std::ldexp(1.0, -53));
  BOOST_TEST(f16.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(f16.u_out == std::ldexp(1.0, -11));
  BOOST_TEST(bf16.u_out == std::ldexp(1.0, -8));
  BOOST_TEST(i32.u_acc == 0.0);
  BOOST_TEST(i32.u_out == 0.0);
  for (const NumericContract& k : {f32, f64, f16, bf16, i32}) {
    BOOST_TEST(k.u_in == 0.0);
    BOOST_TEST(k.deterministic);
    BOOST_TEST(!k.flush_subnormals);
  }
  BOOST_TEST((f32.chain == NumericContract::Chain::linear));
}

// The dispatch never names an ISA the machine cannot run (issue 13), whatever is asked of it; the
// emulated CPU-model matrix (tests/isa/test_isa.sh) runs this on CPUs without AVX-512 and AVX.
BOOST_AUTO_TEST_CASE(dispatch_chooses_only_what_this_machine_runs) {
  const CpuFeatures& cpu = cpu_features();
  BOOST_TEST(cpu.avx2_usable() >= cpu.avx512_usable(),
             "avx512 usable without avx2: " << cpu.describe());
  const std::vector<opt::Isa> compiled = opt::compiled_isas(), runs = opt::available_isas();
  auto has = [](const std::vector<opt::Isa>& v, opt::Isa isa) {
    return std::find(v.begin(), v.end(), isa) != v.end();
  };
  // (Whether `runs` matches the CPU is checked against an independent source, the kernel's
  // /proc/cpuinfo flags and qemu's CPU models, by tests/isa/test_isa.sh.)
  BOOST_TEST(has(runs, opt::Isa::generic));
  for (opt::Isa isa : runs) BOOST_TEST(has(compiled, isa), opt::isa_name(isa) << " not compiled");
  for (opt::Isa cap : {opt::Isa::generic, opt::Isa::avx2, opt::Isa::avx512}) {
    opt::limit_isa(cap);
    const opt::Isa active = opt::active_isa();
    BOOST_TEST(has(runs, active),
               "cap " << opt::isa_name(cap) << " chose " << opt::isa_name(active));
    BOOST_TEST(static_cast<int>(active) <= static_cast<int>(cap));
    // The widest available ISA at or below the cap.
    for (opt::Isa isa : runs)
      if (static_cast<int>(isa) <= static_cast<int>(cap))
        BOOST_TEST(static_cast<int>(isa) <= static_cast<int>(active));
    BOOST_TEST((opt::kernels<float>().isa == active), opt::isa_name(opt::kernels<float>().isa));
    BOOST_TEST((opt::kernels<double>().isa == active), opt::isa_name(opt::kernels<double>().isa));
  }
  opt::clear_isa_limit();
  // An emulated ISA (AVX-512 through SIMDe, a build configured with avx512-emulated) runs
  // wherever AVX2 does, says so in its label, and is never the choice unasked.
  for (opt::Isa isa : compiled) {
    const std::string label = opt::isa_label(isa);
    if (!opt::isa_emulated(isa)) {
      BOOST_TEST(label == opt::isa_name(isa));
      continue;
    }
    BOOST_TEST(label == std::string(opt::isa_name(isa)) + "-emulated");
    BOOST_TEST(has(runs, isa) == cpu.avx2_usable(), label);
  }
  if (std::getenv("CONVCHECK_OPTIMIZED_ISA") == nullptr)
    BOOST_TEST(!opt::isa_emulated(opt::active_isa()), opt::isa_label(opt::active_isa()));
}

BOOST_AUTO_TEST_CASE(an_isa_request_the_machine_cannot_honour_is_refused) {
  struct Restore {
    std::string was;
    bool set;
    Restore() : set(std::getenv("CONVCHECK_OPTIMIZED_ISA") != nullptr) {
      if (set) was = std::getenv("CONVCHECK_OPTIMIZED_ISA");
    }
    ~Restore() {
      if (set)
        setenv("CONVCHECK_OPTIMIZED_ISA", was.c_str(), 1);
      else
        unsetenv("CONVCHECK_OPTIMIZED_ISA");
    }
  } restore;
  optimized();  // registers the backend
  unsetenv("CONVCHECK_OPTIMIZED_ISA");
  BOOST_TEST(opt::isa_request().ok());
  setenv("CONVCHECK_OPTIMIZED_ISA", "avx3", 1);
  BOOST_TEST(!opt::isa_request().ok());
  BOOST_TEST(opt::isa_request().reason().find("'avx3' is not an ISA") != std::string::npos,
             opt::isa_request().reason());
  const std::vector<opt::Isa> runs = opt::available_isas();
  for (opt::Isa isa : {opt::Isa::generic, opt::Isa::avx2, opt::Isa::avx512}) {
    setenv("CONVCHECK_OPTIMIZED_ISA", opt::isa_name(isa), 1);
    const bool can = std::find(runs.begin(), runs.end(), isa) != runs.end();
    BOOST_TEST(opt::isa_request().ok() == can, opt::isa_name(isa)
                                                   << ": " << opt::isa_request().reason());
    if (!can) {
      BOOST_CHECK_THROW(Registry::instance().make("optimized"), InvalidArgument);
    } else {
      BOOST_CHECK_NO_THROW(Registry::instance().make("optimized"));
    }
  }
}

// Each problem through the oracle under every ISA this machine runs, the special fill (NaN, Inf)
// included, and bitwise identical for 1, 2 and 3 threads.
template <std::size_t N>
void check_blocking_paths(const char* const (&problems)[N], const std::string& what) {
  const int saved = omp_get_max_threads();  // (not Restored: the caller's cache sizes stay)
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    const std::string context = what + "isa " + opt::isa_name(isa);
    int64_t stolen_here = 0;
    for (const char* text : problems) {
      omp_set_num_threads(2);
      testbed::expect_pass_exact_and_real(optimized(), text, {}, context);
      testbed::expect_pass(optimized(), text, FillKind::special, 11, {}, context);
      const Problem p = parse_problem(text);
      const std::vector<unsigned char> first = result_bytes(p);
      for (int threads : {1, 3}) {
        omp_set_num_threads(threads);
        BOOST_TEST((result_bytes(p) == first),
                   context << ": " << text << " with " << threads << " threads");
      }
      for (int64_t stolen : expect_same_with_a_skipped_thread(p, first, context + ": " + text))
        stolen_here += stolen;
    }
    BOOST_TEST(stolen_here > 0, context << ": no piece taken from a skipped thread");
  }
  opt::clear_isa_limit();
  omp_set_num_threads(saved);
}

// check_blocking_paths under cache sizes L1 l1_kib KiB, L2 l2_kib KiB, which it names in its
// messages (the override stays set: the caller's Restored clears it).
template <std::size_t N>
void check_blocking_paths_under(int64_t l1_kib, int64_t l2_kib, const char* const (&problems)[N]) {
  opt::override_cache_sizes(l1_kib * 1024, l2_kib * 1024);
  check_blocking_paths(
      problems, "L1 " + std::to_string(l1_kib) + " KiB, L2 " + std::to_string(l2_kib) + " KiB, ");
}

// The blocking of the GEMM-shaped paths (implicit_gemm.cpp, backprop_filter.cpp), chosen from the
// cache sizes the OS reports: 1x1 layers (the whole packed filter in one panel group: a plain
// packed GEMM, each out_backprop row reused across every panel), panel and pixel-tile tails
// (channels not a multiple of any NR, pixels not a multiple of MR), several panel groups and
// reduction slices (a wide 3x3), 1x1 strided (a GEMM per stride phase, zero phases included),
// 1x1 with explicit padding (padding taps read rows of zeros: not a GEMM over all pixels), several
// blocks of pixel tiles (the next block's pointers and prefetch), border classes of pixels (taps
// skipped per tile),
// backprop filter's reduction split into chunks (long reduction, small filter) with tails, and its
// packed out_backprop slices (several taps, out_backprop wider than a panel) and in-place reads;
// and the depthwise gather's tile-major runs (check_blocking_paths).
BOOST_AUTO_TEST_CASE(gemm_blocking_paths_under_every_isa_and_thread_count, *blocking) {
  BOOST_TEST(opt::cache_sizes().l1d > 0);
  BOOST_TEST(opt::cache_sizes().l2 >= 2 * opt::cache_sizes().l1d);
  const char* const problems[] = {
      "conv2d_backprop_input:input=2x7x9x64,filter=1x1x64x256",
      "conv2d_backprop_input:input=3x5x7x37,filter=1x1x37x83",
      "conv2d_backprop_input:input=2x9x9x20,filter=1x1x20x24,stride=2x2",
      "conv2d_backprop_input:input=2x9x8x20,filter=1x1x20x24,stride=3x2,padding=VALID",
      "conv2d_backprop_input:input=2x6x7x16,filter=1x1x16x40,padding=1:2:0:1",
      "conv2d_transpose:input=2x7x9x37,filter=1x1x37x83",
      // several blocks of pixel tiles: the next block's row pointers worked out ahead, and (one
      // tap) its source rows prefetched by the first panel's pass
      "conv2d_backprop_input:input=2x20x24x64,filter=1x1x64x48",
      "conv2d_backprop_input:input=2x20x24x16,filter=3x3x16x24,padding=SAME",
      // taps in several chunks (the tables refilled per chunk) and a tap in several slices, with
      // the filter packed ahead (its packed size at most four times the source's)
      "conv2d_backprop_input:input=3x5x4x16,filter=3x3x16x1024,padding=SAME",
      "conv2d_backprop_input:input=2x6x5x4,filter=1x1x4x20000",
      // panel-major order (a packed filter over four times the source): chunks, slices, a phase
      // without taps, groups, forward conv2d, and items split into parts (one panel, many tiles)
      "conv2d_backprop_input:input=1x4x5x256,filter=3x3x256x200,padding=SAME",
      "conv2d_backprop_input:input=1x3x4x4,filter=3x3x4x9000,padding=SAME",
      "conv2d_backprop_input:input=2x8x8x8,filter=5x5x8x64,stride=2x2,dilation=2x1,padding=SAME",
      "conv2d_transpose:input=2x8x8x24,filter=5x5x24x96,stride=2x2,padding=SAME",
      "conv2d_backprop_input:input=1x4x4x32,filter=3x3x16x64,padding=SAME",
      "conv2d:input=2x3x3x64,filter=3x3x64x96,padding=SAME",
      "conv2d_backprop_input:input=1x6x10x64,filter=3x3x64x256,padding=SAME",
      // pixels in border-class order (PixelOrder): tiles skip the taps that are padding for
      // all their pixels, so with one tap row per chunk (packed ahead, then panel-major, under
      // avx2 and avx512) a tile of top-row pixels runs chunks with no tap at all (zeros stored,
      // or nothing added); several runs of images, the last one short (MR = 6)
      "conv2d_backprop_input:input=1x2x30x1,filter=3x3x1x4200,padding=SAME",
      "conv2d_backprop_input:input=1x4x40x1,filter=5x5x1x4200,stride=2x2,padding=SAME",
      "conv2d_backprop_input:input=4x10x20x16,filter=3x3x16x24,padding=SAME",
      "conv2d:input=3x11x19x8,filter=3x5x8x20,dilation=2x1,padding=SAME",
      "conv2d_backprop_filter:input=4x16x16x8,filter=1x1x8x16",
      // 1x1 rows wider than an eighth of L2: a block per row, the next one prefetched
      "conv2d_backprop_filter:input=2x6x200x64,filter=1x1x64x100",
      "conv2d_backprop_filter:input=3x11x13x37,filter=1x1x37x83",
      "conv2d_backprop_filter:input=2x9x9x20,filter=1x1x20x24,stride=2x2,padding=1:1:1:1",
      // 1x1 packed or mirrored (fewer input than output channels, at least a panel of them; which
      // one by the ISA's panel width: backprop_filter.cpp): chunks, panel and tile tails; one chunk
      // (mirrored: the transpose written from the first sum directly); strided
      "conv2d_backprop_filter:input=3x11x13x70,filter=1x1x70x151",
      "conv2d_backprop_filter:input=1x2x3x64,filter=1x1x64x100",
      "conv2d_backprop_filter:input=2x9x9x40,filter=1x1x40x90,stride=2x2,padding=1:1:1:1,dtype=f64",
      "conv2d_backprop_filter:input=8x12x12x7,filter=3x3x7x9,padding=SAME",
      // several taps with out_backprop wider than a panel: the packed panel slices, sub-block
      // tails, panel tails, groups, strides
      "conv2d_backprop_filter:input=2x9x30x12,filter=3x3x12x83,padding=SAME",
      "conv2d_backprop_filter:input=2x8x10x16,filter=3x3x8x40,padding=SAME",
      "conv2d_backprop_filter:input=2x8x8x12,filter=5x5x12x40,stride=2x2,padding=SAME",
      // a row too wide for the packed slice to fit L2: out_backprop read in place (on a 512 KiB
      // L2 under AVX2; on any machine in the small-cache table below)
      "conv2d_backprop_filter:input=1x2x17000x2,filter=3x3x2x20,padding=SAME",
      // the depthwise gather's tile-major runs: each tile through channel blocks of every width
      // and a masked tail (245 f32 = 8 + 4 + 2 + 1 AVX-512 vectors and 5; 144 = 8 + 1; 30 AVX2
      // vectors and 5), dilated and strided, backprop input and forward
      "depthwise_conv2d_backprop_input:input=3x12x9x80,filter=3x3x80x1,dilation=2x1,padding=SAME",
      "depthwise_conv2d_backprop_input:input=2x9x10x72,filter=3x3x72x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_input:input=2x9x10x245,filter=3x3x245x1,padding=SAME",
      "depthwise_conv2d:input=2x9x10x144,filter=3x3x144x1,stride=2x1,dilation=1x2,padding=SAME",
      // f64: 8 + 4 + 2 + 1 AVX-512 vectors and 5; 7 x 4 + 2 + 1 AVX2 vectors and 1
      "depthwise_conv2d_backprop_input:input=2x9x10x125,filter=3x3x125x1,padding=SAME,dtype=f64",
  };
  check_blocking_paths(problems, "");
}

namespace {

// A copy of `t`'s bytes in `store`, starting `offset` bytes past a 64-byte boundary.
unsigned char* copy_at(const Tensor& t, std::size_t offset, std::vector<unsigned char>* store) {
  store->assign(t.bytes() + 128, 0);
  const auto base = reinterpret_cast<std::uintptr_t>(store->data());
  unsigned char* at = store->data() + (64 - base % 64) % 64 + offset;
  std::memcpy(at, t.data(), t.bytes());
  return at;
}

// The backend's result bytes for `in`, with the operands and the result (filled with `poison`
// bytes first) `offset` bytes past a 64-byte boundary.
std::vector<unsigned char> result_at(const CheckedProblem& checked, const testbed::Operands2& in,
                                     std::size_t offset, unsigned char poison = 0xA5) {
  const Problem& p = checked.problem();
  const OpIO io = op_io(p.op);
  std::vector<unsigned char> sa, sb, sr;
  ConstTensorView va = view(in.a), vb = view(in.b);
  va.data = copy_at(in.a, offset, &sa);
  vb.data = copy_at(in.b, offset, &sb);
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vb);
  Tensor result(p.dtype, storage_shape(p, checked.geometry(), io.result_like),
                storage_layout(p, io.result_like));
  TensorView vr = view(result);
  vr.data = copy_at(result, offset, &sr);
  std::memset(vr.data, poison, result.bytes());
  optimized().run(checked, ops, vr);
  const auto* got = static_cast<const unsigned char*>(vr.data);
  return std::vector<unsigned char>(got, got + result.bytes());
}

// Runs check(isa, item, what) under every ISA this machine runs, for every item (a problem's text,
// or a case whose `text` is one), `what` naming the ISA and the problem; then clears the ISA limit.
inline const char* text_of(const char* text) {
  return text;
}
template <class Case>
const char* text_of(const Case& c) {
  return c.text;
}
template <class Items, class Check>
void for_each_isa(const Items& items, Check&& check) {
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    for (const auto& item : items)
      check(isa, item, std::string("isa ") + opt::isa_name(isa) + ": " + text_of(item));
  }
  opt::clear_isa_limit();
}

}  // namespace

// The harness's tensors are 64-byte aligned (core/tensor.h), but a caller's need not be: Python's
// compute() views numpy's memory without a copy. Operands and result (poisoned) at 4 and 16 bytes
// past a 64-byte boundary (each element still aligned to its size) give bitwise the aligned
// result, under every ISA this machine runs: the kernels load and store unaligned.
BOOST_AUTO_TEST_CASE(results_do_not_depend_on_buffer_alignment) {
  const char* const problems[] = {
      "conv2d:input=2x9x11x24,filter=3x3x24x40,padding=SAME",
      "conv2d_backprop_input:input=2x9x11x24,filter=3x3x24x72,stride=2x2,padding=SAME",
      "conv2d_backprop_input:input=2x7x9x64,filter=1x1x64x256",
      "conv2d_transpose:input=2x8x8x16,filter=5x5x16x32,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=2x9x11x24,filter=3x3x24x72,padding=SAME",
      "conv2d_backprop_filter:input=2x7x9x64,filter=1x1x64x256",
      "depthwise_conv2d:input=2x9x11x136,filter=3x3x136x1,padding=SAME",
      "depthwise_conv2d_backprop_input:input=2x9x11x40,filter=3x3x40x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=2x9x11x40,filter=3x3x40x1,padding=SAME",
      "depthwise_conv2d:input=2x9x11x24,filter=3x3x24x1,padding=SAME,dtype=f64",
      "conv2d_backprop_filter:input=2x9x11x24,filter=3x3x24x40,padding=SAME,dtype=f16",
      "conv2d_backprop_input:input=2x9x11x24,filter=3x3x24x40,padding=SAME,dtype=bf16",
      "conv2d_backprop_filter:input=2x9x11x24,filter=3x3x24x40,padding=SAME,format=NCHW",
      "depthwise_conv2d_backprop_input:input=2x9x11x40,filter=3x3x40x1,format=NCHW",
  };
  BOOST_TEST(reinterpret_cast<std::uintptr_t>(Tensor(DType::f32, {1 << 20}).data()) % 64 == 0);
  for_each_isa(problems, [](opt::Isa, const char* text, const std::string& what) {
    const CheckedProblem checked(parse_problem(text));
    const Problem& p = checked.problem();
    const testbed::Operands2 in = testbed::random_operands(p, 777);
    const std::vector<unsigned char> aligned =
        testbed::bytes(testbed::result_of(optimized(), p, in));
    for (std::size_t offset : {std::size_t{4}, std::size_t{16}}) {
      if (offset % dtype_size(p.dtype) != 0) continue;
      BOOST_TEST((result_at(checked, in, offset) == aligned),
                 what << " at " << offset << " bytes past a 64-byte boundary");
    }
  });
}

// expect_streamed's `expected` where the count is not worked out: at least one.
constexpr int64_t kSomeStreamed = -1;

// One check of streamed stores (stream_result): the result passes the oracle; `streamed` (a test
// hook) counts `expected` streamed calls or rows (kSomeStreamed: some); with streaming off nothing
// streams and the bytes are the same; a result 16 bytes past a line is stored plainly, with the
// same bytes. With `gathered_calls` and `staged_calls`, backprop filter's gathered calls
// (gathered_runs) and staged tile calls (stage) of the streamed call alone go there.
void expect_streamed(const std::string& what, const char* text, int64_t expected,
                     int64_t (*streamed)(), int64_t* gathered_calls = nullptr,
                     int64_t* staged_calls = nullptr) {
  testbed::expect_pass_exact_and_real(optimized(), text, {}, what);
  const CheckedProblem checked(parse_problem(text));
  const Problem& p = checked.problem();
  const testbed::Operands2 in = testbed::random_operands(p, 777);
  streamed();
  opt::gathered_filter_calls_for_tests();
  opt::staged_filter_calls_for_tests();
  const std::vector<unsigned char> streamed_bytes =
      testbed::bytes(testbed::result_of(optimized(), p, in));
  const int64_t count = streamed();
  if (gathered_calls) *gathered_calls = opt::gathered_filter_calls_for_tests();
  if (staged_calls) *staged_calls = opt::staged_filter_calls_for_tests();
  BOOST_TEST((expected == kSomeStreamed ? count > 0 : count == expected),
             what << ": " << count << " streamed, expected " << expected);
  opt::allow_streamed_stores(false);
  const std::vector<unsigned char> stored = testbed::bytes(testbed::result_of(optimized(), p, in));
  opt::allow_streamed_stores(true);
  BOOST_TEST(streamed() == 0, what << ": streamed when not allowed");
  BOOST_TEST((streamed_bytes == stored), what << ": streamed and stored results differ");
  const std::vector<unsigned char> off_line = result_at(checked, in, 16);
  BOOST_TEST(streamed() == 0, what << ": streamed into a result off its lines");
  BOOST_TEST((off_line == stored), what << ": the result 16 bytes past a line differs");
}

// Backprop filter's full tiles: taps x row blocks of MR x whole panels of NR.
template <typename T>
int64_t full_filter_tiles(const Geometry& g) {
  const auto& k = opt::kernels<T>();
  return g.KH * g.KW * ((g.Cf + k.mr - 1) / k.mr) * (g.O / k.nr(k.variant_for(g.O)));
}

// Streamed stores (backprop_filter.cpp, stream): where the filter is over twice L2 and summed in
// one chunk of one block, the tile calls store their final sums with non-temporal stores (line
// panels in one sub-block; wide panels staged, below). Under small caches (L2 32 KiB) small
// problems qualify. Under every vector ISA, every full tile (nr = NR) is streamed, once; the
// generic kernels stream none. The result passes the oracle and is bitwise the one stored plainly
// (in several sub-blocks where the first problem takes them: 18 rows of 6 pixels, sub-blocks of 4
// rows under AVX-512 and 16 under AVX2), and a result 16 bytes past a 64-byte boundary (where a
// non-temporal store would fault) is stored plainly, with the same bits.
//
// Staged (stage): under AVX-512 (wide panels) the first problem's 108 tiles (9 taps x 3 q blocks
// of 6, 6, 4 x 4 panels of 64) store their sums in the thread's stage in the first 4 of its 5
// sub-blocks (4, 4, 4, 3, 3 rows: the sub-block budget, one L1 of 8 KiB over 256 + 64 bytes a
// pixel, is 25 pixels, 4 rows), 432 calls, and stream them from the last. So do the second
// problem's, whose 80 columns are a panel of 64 and one of 16 (carried in the stage and stored,
// not streamed, from the last sub-block: masked loads and stores): 9 taps x 6 q blocks (6 x 4 + 4 +
// 4) x 2 panels, 108 tiles, 432 calls. Nothing is staged under AVX2 (line panels) or where nothing
// streams, nor where a block is one sub-block (the other problems' few rows).
//
// Problems: a 3x3 filter of 256 columns (whole panels), and of 80; DCGAN g2's shape in small (5x5,
// stride 2), f64 with a panel tail under AVX-512 (136 columns: 4 x 32 + 8), 72 columns of f32 (rows
// of 288 bytes, not whole lines: none streamed), and the first in f16 (summed into a scratch result
// that is then narrowed: none streamed); and DCGAN g2's shape with 128 input and output channels,
// which under AVX2 and AVX-512 takes the input gathered per tap (gathered_runs, counted), so that
// streaming is checked there too (with 64 output channels, one AVX-512 panel, out_backprop is read
// in place and the input not gathered).
BOOST_AUTO_TEST_CASE(streamed_backprop_filter_is_bitwise_the_stored_one, *blocking) {
  struct Case {
    const char* text;
    bool gathered;   // under the vector ISAs (backprop_filter.cpp, gather's rule)
    int64_t staged;  // tile calls into the stage under AVX-512
  };
  const Case problems[] = {
      {"conv2d_backprop_filter:input=3x6x6x16,filter=3x3x16x256,padding=SAME", false, 432},
      {"conv2d_backprop_filter:input=3x6x6x32,filter=3x3x32x80,padding=SAME", false, 432},
      {"conv2d_backprop_filter:input=2x4x4x32,filter=5x5x32x64,stride=2x2,padding=SAME", false, 0},
      {"conv2d_backprop_filter:input=1x3x3x16,filter=3x3x16x136,padding=SAME,dtype=f64", false, 0},
      {"conv2d_backprop_filter:input=1x3x3x32,filter=3x3x32x72,padding=SAME", false, 0},
      {"conv2d_backprop_filter:input=3x6x6x16,filter=3x3x16x256,padding=SAME,dtype=f16", false, 0},
      {"conv2d_backprop_filter:input=1x8x8x128,filter=5x5x128x128,stride=2x2,padding=SAME", true,
       0},
  };
  const Restored restored;
  opt::override_cache_sizes(8 * 1024, 32 * 1024);
  opt::override_split_fma512(0);  // sub-blocks of one L1 (a Zen 4 takes 4)
  omp_set_num_threads(2);
  for_each_isa(problems, [](opt::Isa isa, const Case& c, const std::string& what) {
    const char* const text = c.text;
    const CheckedProblem checked(parse_problem(text));
    const Problem& p = checked.problem();
    // Full tiles (none where rows are not whole lines: nothing streams).
    const Geometry& g = checked.geometry();
    const int64_t elem = static_cast<int64_t>(dtype_size(p.dtype));
    const bool native = p.dtype == DType::f32 || p.dtype == DType::f64;
    const int64_t full_tiles =
        isa == opt::Isa::generic || !native || g.O * elem % 64 != 0
            ? 0
            : (p.dtype == DType::f64 ? full_filter_tiles<double>(g) : full_filter_tiles<float>(g));
    int64_t gathered = 0, staged = 0;
    expect_streamed(what, text, full_tiles, opt::streamed_filter_calls_for_tests, &gathered,
                    &staged);
    BOOST_TEST(gathered == (c.gathered && isa != opt::Isa::generic ? 1 : 0),
               what << ": the streamed call gathered " << gathered << " times");
    BOOST_TEST(staged == (isa == opt::Isa::avx512 ? c.staged : 0),
               what << ": the streamed call staged " << staged << " tile calls");
  });
}

// Streamed stores of depthwise results (stream_depthwise_rows): backprop input and forward with
// multiplier 1, a result over twice L2 (64 KiB under these small caches), each run's taps one
// group and every pixel's channels whole lines, stream every result row under a vector ISA
// (forward: AVX2 only), bitwise the plain stores (expect_streamed); among them 240 channels (blocks
// of 8, 4, 2 and 1 vectors under AVX-512), a strided forward and f64. None streams (each case over
// twice L2 unless said) where a pixel's channels are not whole lines (24 floats; streaming there
// would fault), with a multiplier, with more taps than a group (7x7), in f16 (widened into a
// scratch result that is then narrowed), in NCHW (transposed from a scratch result), or at twice
// L2 exactly.
BOOST_AUTO_TEST_CASE(streamed_depthwise_results_are_bitwise_the_stored_ones, *blocking) {
  struct Case {
    const char* text;
    bool streams;
  };
  const Case cases[] = {
      {"depthwise_conv2d_backprop_input:input=2x16x16x64,filter=3x3x64x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=2x17x17x32,filter=3x3x32x1,stride=2x2,padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=2x17x17x16,filter=3x3x16x1,padding=VALID,dtype=f64",
       true},
      {"depthwise_conv2d:input=2x16x16x64,filter=3x3x64x1,padding=SAME", true},
      {"depthwise_conv2d:input=2x18x18x32,filter=3x3x32x1,dilation=2x2,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=2x8x8x240,filter=3x3x240x1,padding=SAME", true},
      {"depthwise_conv2d:input=2x33x33x32,filter=3x3x32x1,stride=2x2,padding=SAME", true},
      {"depthwise_conv2d:input=2x17x17x16,filter=3x3x16x1,padding=SAME,dtype=f64", true},
      {"depthwise_conv2d_backprop_input:input=2x24x24x24,filter=3x3x24x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x24x24x32,filter=3x3x32x2,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x16x16x64,filter=7x7x64x1,padding=SAME", false},
      {"depthwise_conv2d:input=2x16x16x64,filter=7x7x64x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x16x16x64,filter=3x3x64x1,padding=SAME,dtype=f16",
       false},
      {"depthwise_conv2d:input=2x16x16x64,filter=3x3x64x1,padding=SAME,format=NCHW", false},
      {"depthwise_conv2d_backprop_input:input=2x8x16x64,filter=3x3x64x1,padding=SAME", false},
  };
  const Restored restored;
  opt::override_cache_sizes(8 * 1024, 32 * 1024);
  omp_set_num_threads(2);
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const CheckedProblem checked(parse_problem(c.text));
    const Geometry& g = checked.geometry();
    const bool forward = checked.problem().op == Op::depthwise_conv2d;
    const int64_t rows = g.N * (forward ? g.OH : g.H);
    const bool vector = isa != opt::Isa::generic && !(forward && isa == opt::Isa::avx512);
    expect_streamed(what, c.text, c.streams && vector ? rows : 0,
                    opt::streamed_depthwise_rows_for_tests);
  });
}

// Streamed stores of the implicit GEMM's results (implicit_gemm.cpp, stream): in a phase of one
// chunk, a result over twice L2 (64 KiB under these small caches; each case's result a little
// over, as the oracle's exact checks take most of the test's time) whose rows, groups and panels
// are whole lines streams its tile calls under a vector ISA, bitwise the plain stores
// (expect_streamed): 1x1 backprop input, 1x1 stride 2 (one phase of one tap, three of none, whose
// tiles store zeros), a 3x3 layer of one chunk, conv2d forward, conv2d_transpose, f64. None
// streams where the result's channels are not whole lines (24 floats), in a layer of several
// chunks (3x3, 64 -> 64, under these caches), in f16 (a scratch result then narrowed), in NCHW
// (transposed from a scratch result), or at twice L2 exactly.
BOOST_AUTO_TEST_CASE(streamed_implicit_gemm_results_are_bitwise_the_stored_ones, *blocking) {
  struct Case {
    const char* text;
    bool streams;
  };
  const Case cases[] = {
      {"conv2d_backprop_input:input=2x17x17x32,filter=1x1x32x48", true},
      {"conv2d_backprop_input:input=2x17x17x32,filter=1x1x32x64,stride=2x2", true},
      {"conv2d_backprop_input:input=2x23x23x16,filter=3x3x16x16,padding=SAME", true},
      {"conv2d:input=2x12x12x48,filter=1x1x48x64", true},
      {"conv2d_transpose:input=2x17x17x32,filter=1x1x32x64", true},
      {"conv2d_backprop_input:input=2x13x13x32,filter=1x1x32x48,dtype=f64", true},
      {"conv2d_backprop_input:input=2x19x19x24,filter=1x1x24x48", false},
      {"conv2d_backprop_input:input=2x12x12x64,filter=3x3x64x64,padding=SAME", false},
      {"conv2d_backprop_input:input=2x17x17x32,filter=1x1x32x48,dtype=f16", false},
      {"conv2d_backprop_input:input=2x17x17x32,filter=1x1x32x48,format=NCHW", false},
      {"conv2d_backprop_input:input=2x16x16x32,filter=1x1x32x48", false},
  };
  const Restored restored;
  opt::override_cache_sizes(8 * 1024, 32 * 1024);
  omp_set_num_threads(2);
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    expect_streamed(what, c.text, c.streams && isa != opt::Isa::generic ? kSomeStreamed : 0,
                    opt::streamed_igemm_tiles_for_tests);
  });
}

// The highest out_backprop row that reaches input row r (the forward law: output row i reads
// input rows i * sh + a * dh - pad_top), -1 where none does.
int64_t highest_dy_row(const Geometry& g, int64_t r) {
  int64_t hi = -1;
  for (int64_t i = 0; i < g.OH; ++i)
    for (int64_t a = 0; a < g.KH; ++a)
      if (i * g.sh + a * g.dh - g.pad_top == r) hi = std::max(hi, i);
  return hi;
}

// Depthwise backprop input prefetches the next input row's highest out_backprop row into L2, and
// backprop filter each next row group's rows, where each thread's share of out_backprop
// outgrows twice L2 and a row fits a sixteenth of it (prefetch_next_rows; here L2 32 KiB and 2
// threads: over 128 KiB, rows up to 2 KiB). A prefetch changes no arithmetic: the result passes
// the oracle and is bitwise the one computed under a 1 MiB L2 (no prefetch; L1 the same, so
// backprop filter's column blocks are too). Backprop input's rows that prefetch, counted by the
// test hook, are those (multiplier 1) reached by some out_backprop row whose next row in the same
// image reaches a higher one; backprop filter's hook counts chunks, all of them or none. Cases:
// stride 1, stride 2 (half the input rows add none), dilation 2, f64; none where a row outgrows
// L2 / 16 (4 KiB), out_backprop fits (80 KiB; backprop filter's 40 KiB beside an input of 160),
// or with a multiplier. Backprop filter also with 5x5 taps (rows of more entries than a group).
// Backprop input's go into L2 or, where depthwise_input_rows_to_l1 (AMD), into L1: both ways,
// forced.
BOOST_AUTO_TEST_CASE(depthwise_next_row_prefetch_changes_no_bits, *blocking) {
  struct Case {
    const char* text;
    bool prefetches;
  };
  const Case cases[] = {
      {"depthwise_conv2d_backprop_input:input=2x40x16x32,filter=3x3x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=4x80x16x32,filter=3x3x32x1,stride=2x2,padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=2x40x16x32,filter=3x3x32x1,dilation=2x2,padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=2x40x16x16,filter=3x3x16x1,padding=VALID,dtype=f64",
       true},
      {"depthwise_conv2d_backprop_input:input=2x20x32x32,filter=3x3x32x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=1x40x16x32,filter=3x3x32x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x40x16x16,filter=3x3x16x2,padding=SAME", false},
      {"depthwise_conv2d_backprop_filter:input=2x40x16x32,filter=3x3x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_filter:input=4x80x16x32,filter=3x3x32x1,stride=2x2,padding=SAME",
       true},
      {"depthwise_conv2d_backprop_filter:input=2x40x16x16,filter=3x3x16x1,padding=SAME,dtype=f64",
       true},
      {"depthwise_conv2d_backprop_filter:input=2x40x16x32,filter=5x5x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_filter:input=2x20x32x32,filter=3x3x32x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_filter:input=1x40x16x32,filter=3x3x32x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_filter:input=2x40x16x32,filter=3x3x32x1,stride=2x2,padding=SAME",
       false},
  };
  const Restored restored;
  omp_set_num_threads(2);
  for_each_isa(cases, [](opt::Isa, const Case& c, const std::string& what) {
    const CheckedProblem checked(parse_problem(c.text));
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const bool input = p.op == Op::depthwise_conv2d_backprop_input;
    int64_t (*const hook)() = input ? opt::prefetching_depthwise_rows_for_tests
                                    : opt::prefetching_depthwise_filter_chunks_for_tests;
    const testbed::Operands2 in = testbed::random_operands(p, 778);
    opt::override_cache_sizes(8 * 1024, 1024 * 1024);
    hook();  // (other checks' counts: the oracle runs other ops too)
    const std::vector<unsigned char> plain = testbed::bytes(testbed::result_of(optimized(), p, in));
    BOOST_TEST(hook() == 0, what << ": prefetched under a 1 MiB L2");
    opt::override_cache_sizes(8 * 1024, 32 * 1024);
    testbed::expect_pass_exact_and_real(optimized(), c.text, {}, what);
    for (int to_l1 = 0; to_l1 < (input ? 2 : 1); ++to_l1) {
      opt::override_depthwise_input_rows_to_l1(to_l1);
      const std::string into = !input ? what : what + (to_l1 ? " (into L1)" : " (into L2)");
      hook();
      const std::vector<unsigned char> fetched =
          testbed::bytes(testbed::result_of(optimized(), p, in));
      const int64_t counted = hook();
      if (input) {
        int64_t expected = 0;
        for (int64_t r = 0; c.prefetches && r + 1 < g.H; ++r) {
          const int64_t hi = highest_dy_row(g, r);
          expected += hi >= 0 && highest_dy_row(g, r + 1) > hi;
        }
        expected *= g.N;
        BOOST_TEST((expected > 0) == c.prefetches, into << ": a case that cannot tell");
        BOOST_TEST(counted == expected, into << ": rows prefetching, expected " << expected);
      } else {
        BOOST_TEST((counted > 0) == c.prefetches, into << ": chunks prefetching: " << counted);
      }
      BOOST_TEST((fetched == plain), into << ": results with and without the prefetch differ");
    }
    opt::override_depthwise_input_rows_to_l1(-1);
    opt::clear_cache_override();
  });
}

// Depthwise backprop input slides the source of runs of three column taps on consecutive columns
// through registers (kernels_impl.h, depthwise_window_tile) where a tile's source fits L1
// (depthwise_row_window: here an 8 KiB L1, so f32 pixels of up to 113 channels, f64 of 56). Each
// element sums its taps in the same order as the tap runs, so the bytes equal those with the
// window off, at 1 and 2 threads, and the result passes the oracle; the kernels count the runs
// that slid it (DepthwiseRow::slid). Cases: full vectors and AVX2's tails (C = 32, 20, 12; f64
// 10; f16 64), tiles of 4 with columns left over (17, 19, 21, 198 interior columns), VALID,
// asymmetric padding, 5x3 and 1x3 filters, row dilation, 3x5 taps (the edge columns' runs of
// three: tiles of one column), stride 2 with 5 wide taps or with column dilation 2 (a phase's
// three taps on consecutive columns, results every other column); none with 3 wide taps at
// stride 2 (runs of 2 or 1), column dilation at stride 1, a multiplier (the scalar loops), rows
// without an interior (2 and 3 columns), nor by the rule with 128 channels (forced on: the same
// bytes). AVX-512's window (4 columns of 4 vectors: its 64-channel blocks in f16's 64, 72's and
// 128's, 72's tail of 8) is off by the rule (unmeasured) and checked forced on, as the others.
BOOST_AUTO_TEST_CASE(depthwise_window_runs_are_bitwise_the_tap_runs, *blocking) {
  struct Case {
    const char* text;
    bool window;  // slides it under the rule (where the ISA has it)
  };
  const Case cases[] = {
      {"depthwise_conv2d_backprop_input:input=2x9x19x32,filter=3x3x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x7x23x20,filter=3x3x20x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x7x17x12,filter=3x3x12x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x9x21x10,filter=3x3x10x1,padding=SAME,dtype=f64",
       true},
      {"depthwise_conv2d_backprop_input:input=1x9x25x64,filter=3x3x64x1,padding=SAME,dtype=f16",
       true},
      {"depthwise_conv2d_backprop_input:input=1x8x21x32,filter=3x3x32x1,padding=VALID", true},
      {"depthwise_conv2d_backprop_input:input=1x9x17x32,filter=3x3x32x1,padding=1:2:2:0", true},
      {"depthwise_conv2d_backprop_input:input=1x11x13x16,filter=5x3x16x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=2x6x21x32,filter=1x3x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x12x33x16,filter=3x3x16x1,dilation=2x1,"
       "padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=1x3x200x32,filter=3x3x32x1,padding=SAME", true},
      // (72 channels: AVX-512's 4-vector block, then a tail of 8; its source fits the 8 KiB L1)
      {"depthwise_conv2d_backprop_input:input=2x7x19x72,filter=3x3x72x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x12x25x32,filter=3x5x32x1,padding=SAME", true},
      {"depthwise_conv2d_backprop_input:input=1x9x29x32,filter=3x5x32x1,stride=2x2,padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=1x9x29x20,filter=3x3x20x1,stride=2x2,dilation=2x2,"
       "padding=SAME",
       true},
      {"depthwise_conv2d_backprop_input:input=2x15x31x32,filter=3x3x32x1,stride=2x2,padding=SAME",
       false},
      {"depthwise_conv2d_backprop_input:input=1x12x33x16,filter=3x3x16x1,dilation=1x2,"
       "padding=SAME",
       false},
      {"depthwise_conv2d_backprop_input:input=1x7x13x8,filter=3x3x8x2,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x5x2x16,filter=3x3x16x1,padding=SAME", false},
      {"depthwise_conv2d_backprop_input:input=2x5x3x16,filter=3x3x16x1,padding=VALID", false},
      {"depthwise_conv2d_backprop_input:input=1x6x14x128,filter=3x3x128x1,padding=SAME", false},
  };
  const Restored restored;
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const Problem p = parse_problem(c.text);
    // (AVX-512's window, 4 x 4 vectors, is off by the rule until measured; forced on below)
    const bool has_window = isa != opt::Isa::avx512;
    opt::override_cache_sizes(8 * 1024, 1024 * 1024);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      const std::string at = what + " at " + std::to_string(threads) + " threads";
      opt::window_depthwise_runs_for_tests();
      const std::vector<unsigned char> rule = result_bytes(p);
      BOOST_TEST((opt::window_depthwise_runs_for_tests() > 0) == (c.window && has_window),
                 at << ": runs sliding the window");
      if (threads == 2) testbed::expect_pass_exact_and_real(optimized(), c.text, {}, at);
      opt::window_depthwise_runs_for_tests();  // (the oracle's own runs)
      opt::override_depthwise_row_window(0);
      const std::vector<unsigned char> taps = result_bytes(p);
      BOOST_TEST(opt::window_depthwise_runs_for_tests() == 0, at << ": window forced off");
      opt::override_depthwise_row_window(1);
      const std::vector<unsigned char> forced = result_bytes(p);
      const bool forced_slides = opt::window_depthwise_runs_for_tests() > 0;
      opt::override_depthwise_row_window(-1);
      BOOST_TEST((rule == taps), at << ": the window's bytes differ from the tap runs'");
      BOOST_TEST((forced == taps), at << ": the forced window's bytes differ from the tap runs'");
      // Forced on, every ISA's kernels slide it where the taps suit: the rule's layers and the
      // x128 one, whose source outgrows the 8 KiB L1 set above (off by the rule everywhere).
      const bool x128 = std::string(c.text).find("x128,") != std::string::npos;
      BOOST_TEST(forced_slides == (c.window || x128), at << ": forced on, runs sliding the window");
    }
    opt::clear_cache_override();
  });
}

// Depthwise backprop filter walks each row entry in blocks of output columns (kernels_impl.h,
// depthwise_filter_block: a quarter of L1 per block's slices, at least 4 columns). Every element
// sums the same terms in the same order as over whole rows, so under a 4 KiB L1 the bytes equal
// those under a 1 MiB one, under every ISA and thread count, and pass the oracle. Under 4 KiB
// every problem wider than 16 columns is walked in several blocks (spans of 4-6 columns under
// AVX2 and AVX-512, 8-16 under the generic kernels), which the test hook counts; under 1 MiB none
// is. Cases: 32 and 240 channels; 24 and 72 (a half-vector block under AVX-512); 20 (a partial
// vector under AVX2 and AVX-512); stride 2 and dilation 2 (each b's columns start elsewhere in a
// block); VALID padding with 5x5 taps; a row of 200 columns; f64; f16 (widened); and a stride
// wider than the input row (its clamp; one output column, so one block).
BOOST_AUTO_TEST_CASE(depthwise_filter_column_blocks_are_bitwise_whole_rows, *blocking) {
  const char* const problems[] = {
      "depthwise_conv2d_backprop_filter:input=2x13x37x32,filter=3x3x32x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=2x9x29x24,filter=3x3x24x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x7x19x72,filter=3x3x72x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x9x23x20,filter=3x3x20x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x5x21x240,filter=3x3x240x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=2x15x31x64,filter=3x3x64x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x12x33x16,filter=3x5x16x1,dilation=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x9x27x48,filter=5x5x48x1,padding=VALID",
      "depthwise_conv2d_backprop_filter:input=1x3x200x32,filter=3x3x32x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x9x25x40,filter=3x3x40x1,padding=SAME,dtype=f64",
      "depthwise_conv2d_backprop_filter:input=1x9x25x64,filter=3x3x64x1,padding=SAME,dtype=f16",
      "depthwise_conv2d_backprop_filter:input=1x7x3x16,filter=3x3x16x1,stride=4x5,padding=SAME",
  };
  const Restored restored;
  opt::blocked_depthwise_filter_for_tests();
  const ThreeTapRowsOff blocks_only;  // (3-tap rows are whole rows: the next test's)
  for_each_isa(problems, [](opt::Isa, const char* text, const std::string& what) {
    const CheckedProblem checked(parse_problem(text));
    const Problem& p = checked.problem();
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      opt::override_cache_sizes(4 * 1024, 64 * 1024);
      const std::vector<unsigned char> blocked = result_bytes(p);
      const int64_t blocked_passes = opt::blocked_depthwise_filter_for_tests();
      if (checked.geometry().OW > 16) BOOST_TEST(blocked_passes > 0, what << ": not blocked");
      if (threads == 2) testbed::expect_pass_exact_and_real(optimized(), text, {}, what);
      opt::override_cache_sizes(1024 * 1024, 2 * 1024 * 1024);
      opt::blocked_depthwise_filter_for_tests();
      const std::vector<unsigned char> whole = result_bytes(p);
      BOOST_TEST(opt::blocked_depthwise_filter_for_tests() == 0, what << ": blocked under 1 MiB");
      BOOST_TEST(!whole.empty());
      BOOST_TEST((blocked == whole), what << ", " << threads << " threads");
    }
  });
}

// Under the vector kernels depthwise backprop filter walks 3-tap rows whole with a row group's taps
// in registers, a cache line of channels at a time under AVX-512, two under AVX2 (kernels_impl.h,
// depthwise_filter_rows3; under AVX-512 a window of three input columns at stride 1 without column
// dilation, each tap's loads elsewhere; under AVX2 four vectors and one entry at a time; edge
// columns tap by tap). Every element sums the same terms in the same order as the column-blocked
// walk, so the bytes equal those with the path turned off, at 1 and 2 threads, and pass the oracle.
// The hooks count the chunks that took the walk (some under AVX2 and AVX-512, none under the
// generic kernels) and those that slid the window (AVX-512, the cases marked so). Cases: 32
// channels; partial last lines: 20 (AVX2's third vector part full, its fourth empty), 28 (AVX2's
// fourth part full), 16 (AVX2's last two vectors empty), 72 (4.5 AVX-512 vectors), f64 with 46
// (both ISAs' last vector part full); stride 2 and column dilation (no window), row dilation alone
// (window); 5x3 taps (groups of 3 and 2 entries); 1x3 taps (groups of one); asymmetric explicit
// padding (the left edge two columns wide); rows too narrow for an interior (2 columns, SAME) and
// one output column (VALID, all interior; a stride wider than the row); a 200-column row; f16; the
// prefetch on (under a 32 KiB L2 and 8 KiB L1; its chunks counted) with each chunk's lookahead.
BOOST_AUTO_TEST_CASE(depthwise_three_tap_rows_are_bitwise_column_blocks, *blocking) {
  struct Case {
    const char* text;
    bool window;  // slides the window under AVX-512
    int64_t l2;   // the L2 size the case runs under
  };
  constexpr int64_t kMiB = 1024 * 1024;
  const Case cases[] = {
      {"depthwise_conv2d_backprop_filter:input=2x13x37x32,filter=3x3x32x1,padding=SAME", true,
       kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x23x20,filter=3x3x20x1,padding=SAME", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x23x28,filter=3x3x28x1,padding=SAME", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x7x19x72,filter=3x3x72x1,padding=VALID", true,
       kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x25x46,filter=3x3x46x1,padding=SAME,dtype=f64",
       true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=2x15x31x64,filter=3x3x64x1,stride=2x2,padding=SAME",
       false, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x12x33x16,filter=3x3x16x1,dilation=1x2,"
       "padding=SAME",
       false, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x12x33x48,filter=3x3x48x1,dilation=2x1,"
       "padding=SAME",
       true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x27x48,filter=5x3x48x1,padding=SAME", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=2x6x21x32,filter=1x3x32x1,padding=SAME", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x17x32,filter=3x3x32x1,padding=1:2:2:0", true,
       kMiB},
      {"depthwise_conv2d_backprop_filter:input=2x5x2x16,filter=3x3x16x1,padding=SAME", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=2x5x3x16,filter=3x3x16x1,padding=VALID", true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x7x3x16,filter=3x3x16x1,stride=4x5,padding=SAME",
       false, kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x3x200x32,filter=3x3x32x1,padding=SAME", true,
       kMiB},
      {"depthwise_conv2d_backprop_filter:input=1x9x25x64,filter=3x3x64x1,padding=SAME,dtype=f16",
       true, kMiB},
      {"depthwise_conv2d_backprop_filter:input=2x40x16x32,filter=3x3x32x1,padding=SAME", true,
       32 * 1024},
  };
  const Restored restored;
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const Problem p = parse_problem(c.text);
    opt::override_cache_sizes(8 * 1024, c.l2);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      opt::three_tap_depthwise_filter_chunks_for_tests();
      opt::three_tap_window_chunks_for_tests();
      opt::prefetching_depthwise_filter_chunks_for_tests();
      const std::vector<unsigned char> rows = result_bytes(p);
      const int64_t chunks = opt::three_tap_depthwise_filter_chunks_for_tests();
      const int64_t windows = opt::three_tap_window_chunks_for_tests();
      const int64_t prefetching = opt::prefetching_depthwise_filter_chunks_for_tests();
      BOOST_TEST((chunks > 0) == (isa != opt::Isa::generic), what << ": 3-tap chunks " << chunks);
      BOOST_TEST((windows > 0) == (c.window && isa == opt::Isa::avx512),
                 what << ": window chunks " << windows);
      BOOST_TEST((prefetching > 0) == (c.l2 < kMiB), what << ": prefetching chunks");
      if (threads == 2) testbed::expect_pass_exact_and_real(optimized(), c.text, {}, what);
      std::vector<unsigned char> blocks;
      {
        const ThreeTapRowsOff off;
        opt::three_tap_depthwise_filter_chunks_for_tests();  // (the oracle's own runs)
        blocks = result_bytes(p);
        BOOST_TEST(opt::three_tap_depthwise_filter_chunks_for_tests() == 0, what << ": turned off");
      }
      BOOST_TEST(!rows.empty());
      BOOST_TEST((rows == blocks), what << ", " << threads << " threads");
    }
    opt::clear_cache_override();
  });
}

// A 1x1 backprop filter runs as a packed GEMM (both operands packed on first use, in blocks of
// pixels, the input's panels in ranges) where it has fewer input than output channels and more
// than a panel of them, or a filter at least a quarter of the activations (a sixteenth where the
// input has more channels than out_backprop, which has several panels: the units then split the
// input's panels; with two units of work a thread: chunks times the panels units split); mirrored
// (out_backprop broadcast, input panels, into the filter's transpose) where it has fewer input than
// output channels, a panel at least, and is not packed. Each sums every element's products in the
// same order as the plain in-place path, so the bytes equal the plain path's, under every ISA,
// dtype and thread count (pseudo-random operands: no NaN, whose payload may follow the operand
// order). Three cache sizes: 32 KiB L1 and 8 MiB L2 (blocks of up to 128 pixels, one input range);
// 4 KiB L1 (blocks of 16-64 pixels under the vector ISAs, split inside an output row: a segment;
// f32 under generic keeps 128) with 64 KiB L2 (input ranges of 32 KiB: several for 300 channels
// but under AVX-512, whose 16-pixel blocks fit one); 4 KiB L1 with 8 KiB L2 (the least the override
// takes beside a 4 KiB L1: ranges of one to ten panels). Padded rows give chunks without pixels (2
// of 4 in the padded problem), whose filter is all zeros.
BOOST_AUTO_TEST_CASE(packed_and_mirrored_1x1_backprop_filter_are_bitwise_the_plain_one, *blocking) {
  struct Case {
    const char* text;
    bool packed;  // on every ISA (more than 64 input channels, the widest panel, or a big filter);
                  // else packed on all but AVX-512
    bool more;    // more passes under the smaller caches, with one thread
    bool split;   // where packed, units split the input's panels (more input channels than
                  // out_backprop, which has several panels)
    bool paced;   // under the 4 KiB L1, one thread: blocks whose tiles' pixels outnumber the next
                  // block's lines, which go out one every few pixels (FilterTile::pf_pace)
  };
  const Case cases[] = {
      {"conv2d_backprop_filter:input=2x9x26x70,filter=1x1x70x151", true, true, false, true},
      // 64 channels, the AVX-512 panel: packed there for the filter's size
      {"conv2d_backprop_filter:input=1x2x3x64,filter=1x1x64x256", true, false, false, false},
      {"conv2d_backprop_filter:input=2x9x9x40,filter=1x1x40x90,stride=2x2,padding=1:1:1:1,dtype="
       "f64",
       true, false, false, false},
      {"conv2d_backprop_filter:input=2x9x22x64,filter=1x1x64x72,dtype=f64", true, true, false,
       false},
      {"conv2d_backprop_filter:input=2x5x6x64,filter=1x1x64x256,dtype=bf16", true, false, false,
       false},
      {"conv2d_backprop_filter:input=2x5x6x64,filter=1x1x64x256,format=NCHW,dtype=f16", true, false,
       false, false},
      {"conv2d_backprop_filter:input=1x2x40x72,filter=1x1x72x80,padding=3:3:0:0", true, false,
       false, false},
      // more input than output channels, a filter over a quarter of the activations: units
      // hold ranges of input panels (split_q), several ranges each under the 8 KiB L2
      {"conv2d_backprop_filter:input=1x6x6x300,filter=1x1x300x256", true, true, true, false},
      // the same in f64, with a filter between a sixteenth and a quarter of the activations
      {"conv2d_backprop_filter:input=2x12x12x200,filter=1x1x200x100,dtype=f64", true, false, true,
       false},
      // the same with one AVX-512 panel of out_backprop: one unit of work, read in place there;
      // four or more panels elsewhere, split
      {"conv2d_backprop_filter:input=1x3x3x300,filter=1x1x300x64", false, false, true, false},
      // a panel of input channels on AVX-512: mirrored there, packed under AVX2 and generic
      {"conv2d_backprop_filter:input=1x12x20x64,filter=1x1x64x256", false, true, false, false},
  };
  const Restored restored;
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const CheckedProblem checked(parse_problem(c.text));
    const testbed::Operands2 in = testbed::random_operands(checked.problem(), 12345);
    // (into a result of NaNs, 0xFF bytes: a tile never stored shows, even under added partials)
    auto result = [&] { return result_at(checked, in, 0, 0xFF); };
    struct Caches {
      int64_t l1d, l2;
      const char* name;
    };
    const Caches caches[] = {{32 * 1024, 8 << 20, "32 KiB L1, 8 MiB L2"},
                             {4 * 1024, 64 * 1024, "4 KiB L1, 64 KiB L2"},
                             {4 * 1024, 8 * 1024, "4 KiB L1, 8 KiB L2"}};
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      // The plain path's bytes do not depend on the cache sizes (blocks do not change the
      // arithmetic): computed once.
      opt::allow_packed_filter(false);
      opt::allow_mirrored_filter(false);
      const std::vector<unsigned char> plain = result();
      opt::allow_mirrored_filter(true);
      opt::allow_packed_filter(true);
      BOOST_TEST(!plain.empty());
      int64_t passes[3] = {};
      for (int k = 0; k < 3; ++k) {
        opt::override_cache_sizes(caches[k].l1d, caches[k].l2);
        opt::packed_filter_passes_for_tests();
        opt::packed_filter_split_passes_for_tests();
        opt::packed_filter_panel_calls_for_tests();
        opt::filter_pace_for_tests();
        const std::vector<unsigned char> packed = result();
        passes[k] = opt::packed_filter_passes_for_tests();
        const int64_t pace = opt::filter_pace_for_tests();
        const int64_t split = opt::packed_filter_split_passes_for_tests();
        const int64_t panel_calls = opt::packed_filter_panel_calls_for_tests();
        // Calls of several tiles (FilterTile::panels) wherever a unit has two whole input panels
        // beside the first (whose tiles pack out_backprop): 25 channels (MR is at most 7; from 22
        // to 24 the last two tiles may share their rows, opt::filter_q_shift, and not be whole
        // ones), and an out_backprop panel beside the first (whose tiles pack the input): more than
        // the widest panel's 64 columns.
        const Problem& pr = checked.problem();
        if (k == 0 && threads == 1 && passes[0] > 0 && pr.filter[2] >= 25 && pr.filter[3] > 64)
          BOOST_TEST(panel_calls > 0, what << ": no call of several tiles");
        // (Where pace were 1 everywhere, the paced runs of the kernels would go untested: the
        // bytes above and below compare them with the plain path's.)
        if (k == 1 && threads == 1 && c.paced)
          BOOST_TEST(pace > 1, what << ": the lines went out one a pixel (pace " << pace << ")");
        BOOST_TEST(split == (c.split ? passes[k] : 0),
                   what << ": " << split << " of " << passes[k] << " passes split the input");
        opt::allow_packed_filter(false);
        const std::vector<unsigned char> mirrored = result();
        opt::allow_packed_filter(true);
        BOOST_TEST(opt::packed_filter_passes_for_tests() == 0, what << ": packed when not allowed");
        opt::clear_cache_override();
        const std::string how =
            what + ", " + std::to_string(threads) + " threads, " + caches[k].name;
        BOOST_TEST((packed == plain), how << ": packed");
        BOOST_TEST((mirrored == plain), how << ": mirrored");
      }
      if (c.packed || isa != opt::Isa::avx512)
        BOOST_TEST(passes[0] > 0, what << ": the packed path was not taken");
      else  // (a panel of input channels, or too few panels: mirrored or in place)
        BOOST_TEST(passes[0] == 0, what << ": packed on AVX-512");
      if (threads == 1 && c.more && passes[0] > 0) {  // (one thread: a unit per chunk)
        // (generic's 8-float panels keep 128-pixel blocks under a 4 KiB L1)
        if (isa != opt::Isa::generic)
          BOOST_TEST(passes[1] > passes[0], what << ": " << passes[0] << " passes, " << passes[1]
                                                 << " under the 4 KiB L1");
        BOOST_TEST(passes[2] > passes[1],
                   what << ": " << passes[1] << " passes, " << passes[2] << " under the 8 KiB L2");
      }
    }
  });
}

// Backprop filter's input read from packed panels (backprop_filter.cpp, pack_input) and gathered
// per tap with out_backprop's slice (gather, gathered_runs) against both read in place, bitwise:
// by the rules (packed: one chunk of one block of one sub-block, or staged; gathered: also short
// segments at a
// column stride and at least 128 input slots, as DCGAN g2's 4-pixel rows; the AVX2 and AVX-512
// kernels) and forced wherever they can (several taps, one group; out_backprop wider than every
// ISA's panel, 80 or 84 channels, so that its slice is packed; 84: a last panel of 4 or 20), also
// under small caches (several blocks and sub-blocks: a sub-block's pixels from the middle of each
// tap's), at 1 and 2 threads; and the gather's L2 rule (a tap's gathered input in half of L2) under
// a 64 KiB L2. The large caches are fixed (32 KiB L1, 512 KiB L2, Zen 1's), so that which cases the
// rules take does not depend on the machine.
BOOST_AUTO_TEST_CASE(packed_and_gathered_input_backprop_filter_is_bitwise_the_in_place_one,
                     *blocking) {
  struct Case {
    const char* text;
    bool pack_rule;    // packed by the rule under the large caches (AVX2 and AVX-512 kernels)
    bool gather_rule;  // gathered by the rule there
    bool possible;     // several taps, one group
    bool several;      // more blocks or sub-blocks under the small caches than the large
    bool l2_rule;      // under 32 KiB L1, 64 KiB L2 packed by the rule but not gathered
  };
  const Case cases[] = {
      // ResNet conv5's shape: 3x3 SAME, a filter larger than the activations; 5-pixel rows at
      // stride 1: packed, not gathered
      {"conv2d_backprop_filter:input=1x5x5x40,filter=3x3x40x80,padding=SAME", true, false, true,
       false, false},
      // DCGAN g2's: 5x5 stride 2, rows of 4 pixels (segments of 3 or 4); 128 input channels, a
      // last q block of 2 under MR 6 (132 slots)
      {"conv2d_backprop_filter:input=2x8x8x128,filter=5x5x128x84,stride=2x2,padding=SAME", true,
       true, true, false, false},
      // the same with 27 input channels: too few slots to gather by the rule
      {"conv2d_backprop_filter:input=2x8x8x27,filter=5x5x27x84,stride=2x2,padding=SAME", true,
       false, true, false, false},
      // its widest tap's gathered input 64 pixels x 138 slots: 35 KB, over half of a 64 KiB L2
      {"conv2d_backprop_filter:input=4x8x8x136,filter=5x5x136x84,stride=2x2,padding=SAME", true,
       true, true, false, true},
      // 6-pixel rows: packed, not gathered
      {"conv2d_backprop_filter:input=1x6x6x30,filter=3x3x30x80,padding=SAME,dtype=f64", true, false,
       true, false, false},
      {"conv2d_backprop_filter:input=2x8x8x128,filter=5x5x128x84,stride=2x2,padding=SAME,dtype=f64",
       true, true, true, false, false},
      {"conv2d_backprop_filter:input=1x6x7x128,filter=5x5x128x80,stride=2x2,padding=SAME,"
       "format=NCHW,dtype=bf16",
       true, true, true, false, false},
      // one input row: two of the three filter rows never meet the input (taps without pixels)
      {"conv2d_backprop_filter:input=1x1x8x128,filter=3x3x128x80,stride=2x2,padding=SAME", true,
       true, true, false, false},
      // 4-pixel rows at stride 1: packed, not gathered
      {"conv2d_backprop_filter:input=1x4x4x128,filter=3x3x128x80,padding=SAME", true, false, true,
       false, false},
      // dilated, uneven padding, segments of 5 or 6 pixels: packed, not gathered
      {"conv2d_backprop_filter:input=2x9x9x20,filter=3x3x20x80,dilation=2x2,padding=1:2:0:1", true,
       false, true, false, false},
      // the activations larger: by force only; several blocks and sub-blocks under the small
      // caches, out_backprop packed (or gathered) per sub-block
      {"conv2d_backprop_filter:input=2x14x14x16,filter=3x3x16x80,padding=SAME", false, false, true,
       true, false},
      // the same with a stride
      {"conv2d_backprop_filter:input=2x15x15x12,filter=3x3x12x80,stride=2x2,padding=1:1:1:1", false,
       false, true, true, false},
      // two groups: never
      {"conv2d_backprop_filter:input=1x6x6x16,filter=3x3x8x16,padding=SAME", false, false, false,
       false, false},
  };
  using opt::InputPacking;
  struct Run {
    std::vector<unsigned char> bytes;
    int64_t packed = 0, gathered = 0, sub_blocks = 0;  // the calls that did; sub-block passes
  };
  const Restored restored;
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const CheckedProblem checked(parse_problem(c.text));
    const testbed::Operands2 in = testbed::random_operands(checked.problem(), 321);
    auto run = [&](InputPacking packing, InputPacking gather) {
      opt::set_input_packing_for_tests(packing);
      opt::set_tap_gather_for_tests(gather);
      opt::packed_input_filter_calls_for_tests();
      opt::gathered_filter_calls_for_tests();
      opt::filter_sub_blocks_for_tests();
      Run r;
      r.bytes = result_at(checked, in, 0, 0xFF);
      r.packed = opt::packed_input_filter_calls_for_tests();
      r.gathered = opt::gathered_filter_calls_for_tests();
      r.sub_blocks = opt::filter_sub_blocks_for_tests();
      opt::set_input_packing_for_tests(InputPacking::by_rule);
      opt::set_tap_gather_for_tests(InputPacking::by_rule);
      return r;
    };
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      int64_t large_packed = 0, large_gathered = 0;  // forced runs' sub-block passes, large caches
      for (bool small : {false, true}) {
        if (small)
          opt::override_cache_sizes(4 * 1024, 16 * 1024);
        else
          opt::override_cache_sizes(32 * 1024, 512 * 1024);
        const std::string how = what + ", " + std::to_string(threads) + " threads, " +
                                (small ? "4 KiB L1, 16 KiB L2" : "32 KiB L1, 512 KiB L2");
        const Run plain = run(InputPacking::never, InputPacking::wherever_possible);
        const Run packed = run(InputPacking::wherever_possible, InputPacking::never);
        const Run gathered = run(InputPacking::wherever_possible, InputPacking::wherever_possible);
        const Run by_rule = run(InputPacking::by_rule, InputPacking::by_rule);
        opt::clear_cache_override();
        BOOST_TEST(!plain.bytes.empty());
        BOOST_TEST((packed.bytes == plain.bytes), how << ": packed input");
        BOOST_TEST((gathered.bytes == plain.bytes), how << ": gathered");
        BOOST_TEST((by_rule.bytes == plain.bytes), how << ": by the rules");
        // (the gather needs the packed input)
        BOOST_TEST(plain.packed + plain.gathered == 0, how << ": packed or gathered when never");
        BOOST_TEST(packed.gathered == 0, how << ": gathered when never");
        BOOST_TEST((packed.packed > 0) == c.possible,
                   how << ": " << packed.packed << " calls packed, forced");
        if (!small) {
          BOOST_TEST((gathered.gathered > 0) == c.possible,
                     how << ": " << gathered.gathered << " calls gathered, forced");
          const bool vector = isa != opt::Isa::generic;  // the rule's kernels
          BOOST_TEST((by_rule.packed > 0) == (c.pack_rule && vector),
                     how << ": " << by_rule.packed << " calls packed by the rule");
          BOOST_TEST((by_rule.gathered > 0) == (c.gather_rule && vector),
                     how << ": " << by_rule.gathered << " calls gathered by the rule");
          large_packed = packed.sub_blocks;
          large_gathered = gathered.sub_blocks;
        } else if (c.several && threads == 1) {  // (one thread: a unit per chunk)
          BOOST_TEST(packed.sub_blocks > large_packed,
                     how << ": " << packed.sub_blocks << " sub-block passes packed, "
                         << large_packed << " under the large caches");
          BOOST_TEST(gathered.gathered > 0, how << ": none gathered, forced");
          BOOST_TEST(gathered.sub_blocks > large_gathered,
                     how << ": " << gathered.sub_blocks << " sub-block passes gathered, "
                         << large_gathered << " under the large caches");
        }
      }
      if (c.l2_rule) {
        opt::override_cache_sizes(32 * 1024, 64 * 1024);
        const std::string how = what + ", " + std::to_string(threads) + " threads, 64 KiB L2";
        const Run plain = run(InputPacking::never, InputPacking::never);
        const Run by_rule = run(InputPacking::by_rule, InputPacking::by_rule);
        opt::clear_cache_override();
        BOOST_TEST((by_rule.bytes == plain.bytes), how << ": by the rules");
        BOOST_TEST((by_rule.packed > 0) == (isa != opt::Isa::generic),
                   how << ": " << by_rule.packed << " calls packed by the rule");
        BOOST_TEST(by_rule.gathered == 0, how << ": " << by_rule.gathered << " calls gathered");
      }
    }
  });
}

// The same paths under small caches (opt::override_cache_sizes), where small problems reach what
// only large ones reach with the machine's caches: backprop filter in row chunks (4 of 13 rows
// for 1x13x20x12, one block each, read in place in sub-blocks of a row under AVX-512; 2x13x20x24:
// 4 chunks of 6 or 7 rows, a 7-row chunk in 2 blocks (4 + 3), packed sub-blocks 3 + 3 under AVX2,
// in place under AVX-512; 2x10x12x8 with 72 channels: 4 chunks of 5 rows, each 3 packed
// sub-blocks and a tail panel under AVX-512; as printed by the code, 2026-11-27), the one-block
// rule for a filter larger than the activations (3 and 6 blocks otherwise, f32 and f64; under the
// vector ISAs its sums streamed, under AVX2 in one sub-block, under AVX-512 in 3 staged ones of 4
// rows: the streamed test below), a row
// whose packed slice would not fit L2 (1x1x600x2: read in place under AVX2 and AVX-512), runs of
// many tiles; the implicit GEMM with taps in several chunks, and a tap
// in slices (chunks of at most 16 KiB of packed panel, 8 KiB in panel-major order); in
// panel-major order (the last problem, and under AVX-512 the one before it, whose 8 KiB slices of
// a 600-element row are too far apart to prefetch) the next chunk's filter rows prefetched by
// each chunk's calls (counted below).
BOOST_AUTO_TEST_CASE(gemm_blocking_paths_under_small_caches, *blocking) {
  const char* const problems[] = {
      "conv2d_backprop_filter:input=1x13x20x12,filter=3x3x12x40,padding=SAME",
      "conv2d_backprop_filter:input=2x13x20x24,filter=3x3x24x40,padding=SAME",
      "conv2d_backprop_filter:input=2x10x12x8,filter=3x3x8x72,padding=SAME",
      "conv2d_backprop_filter:input=1x1x600x2,filter=1x3x2x80,padding=SAME",
      "conv2d_backprop_filter:input=2x13x20x12,filter=3x3x12x40,stride=1x2,padding=SAME",
      "conv2d_backprop_filter:input=2x6x6x16,filter=3x3x16x256,padding=SAME",
      "conv2d_backprop_filter:input=2x6x6x16,filter=3x3x16x256,padding=SAME,dtype=f64",
      "conv2d_backprop_filter:input=2x12x10x6,filter=1x1x6x40",
      // a block's input over half of L2: the next sub-block's input prefetched (prefetch_sub;
      // 4 chunks of 2 blocks, under AVX-512 each of 2 sub-blocks and several runs: the next
      // sub-block, the next run's first and the next block's first, as printed 2026-11-27)
      "conv2d_backprop_filter:input=1x32x40x32,filter=3x3x32x40,stride=2x2,padding=SAME",
      "conv2d_backprop_input:input=2x10x12x16,filter=3x3x16x40,padding=SAME",
      "conv2d_backprop_input:input=1x5x6x4,filter=3x3x4x600,padding=SAME",
      "conv2d_transpose:input=2x6x6x24,filter=5x5x24x40,stride=2x2,padding=SAME",
  };
  const Restored restored;
  opt::override_cache_sizes(8 * 1024, 32 * 1024);
  BOOST_TEST(opt::cache_sizes().l1d == 8 * 1024);
  BOOST_TEST(opt::cache_sizes().l2 == 32 * 1024);
  opt::next_chunk_prefetches_for_tests();
  check_blocking_paths(problems, "L1 8 KiB, L2 32 KiB, ");
  BOOST_TEST(opt::next_chunk_prefetches_for_tests() > 0, "no chunk prefetched the next one's rows");
  opt::clear_cache_override();
  BOOST_TEST(opt::cache_sizes().l2 >= 2 * opt::cache_sizes().l1d);
}

// Backprop filter's sub-blocks of a wide panel (AVX-512) take 1 L1 on a core with 512-bit
// multiply-add units and 4 where each is two 256-bit halves (opt::split_fma512, Zen 4;
// backprop_filter.cpp): the same bits either way (a tile continues its sum from memory), at 1 and
// 2 threads, under every ISA; under AVX-512 the larger sub-blocks take fewer passes. With a 32 KiB
// L1 and 1 MiB L2: 28-pixel rows in sub-blocks of 3 and 14 rows, chunks of 7 (in place: 64
// channels, one panel), packed slices (128 channels), f64 (32-double panels).
BOOST_AUTO_TEST_CASE(wide_sub_blocks_change_no_bits, *blocking) {
  const char* const problems[] = {
      "conv2d_backprop_filter:input=2x28x28x16,filter=3x3x16x64,padding=SAME",
      "conv2d_backprop_filter:input=2x28x28x8,filter=3x3x8x128,padding=SAME",
      "conv2d_backprop_filter:input=2x28x28x8,filter=3x3x8x64,stride=2x1,padding=SAME,dtype=f64",
  };
  const Restored restored;
  opt::override_cache_sizes(32 * 1024, 1024 * 1024);
  for_each_isa(problems, [](opt::Isa isa, const char* text, const std::string& what) {
    const Problem p = parse_problem(text);
    omp_set_num_threads(2);
    opt::override_split_fma512(0);
    opt::filter_sub_blocks_for_tests();
    const std::vector<unsigned char> one_l1 = result_bytes(p);
    const int64_t passes_one_l1 = opt::filter_sub_blocks_for_tests();
    opt::override_split_fma512(1);
    const std::vector<unsigned char> four_l1 = result_bytes(p);
    const int64_t passes_four_l1 = opt::filter_sub_blocks_for_tests();
    BOOST_TEST((four_l1 == one_l1), what << ": 4 L1 sub-blocks changed the bits");
    if (isa == opt::Isa::avx512)
      BOOST_TEST(passes_four_l1 < passes_one_l1, what << ": sub-block passes " << passes_four_l1
                                                      << " with 4 L1, " << passes_one_l1
                                                      << " with 1");
    omp_set_num_threads(1);
    BOOST_TEST((result_bytes(p) == one_l1), what << ": 1 thread, 4 L1 sub-blocks");
    testbed::expect_pass(optimized(), text, FillKind::special, 11, {}, what);
  });
}

// The fuzz generator's problems reach backprop filter's packed-input and gathered paths
// (backprop_filter.cpp, pack_input, gather; the vector ISAs' rule), through its medium tier's
// "wide" problems (properties/generators.cpp): without them no generated problem had the 128 input
// slots a pixel needs to be gathered. 3000 problems (the generator's sizes 0..100, a fixed seed),
// through the optimized backend under AVX2, and under AVX-512 where this CPU has it, 1 thread:
// f32 problems reach both paths under each.
boost::test_tools::assertion_result has_avx2(boost::unit_test::test_unit_id) {
  const std::vector<opt::Isa> isas = opt::available_isas();
  boost::test_tools::assertion_result r(std::count(isas.begin(), isas.end(), opt::Isa::avx2) > 0);
  if (!r)
    r.message() << "this CPU (or build) runs no AVX2 kernels, so no vector ISA's (the rule's "
                   "kernels: the portable ones read the input in place)";
  return r;
}

BOOST_AUTO_TEST_CASE(fuzz_problems_reach_the_packed_and_gathered_input,
                     *boost::unit_test::precondition(has_avx2)) {
  const Restored restored;
  omp_set_num_threads(1);
  for (const opt::Isa isa : opt::available_isas()) {
    if (isa == opt::Isa::generic) continue;  // (not the rule's kernels)
    const rc::Gen<Problem> problems = gen::valid_problem(Op::conv2d_backprop_filter);
    rc::Random random(20261206);
    opt::limit_isa(isa);
    opt::packed_input_filter_calls_for_tests();
    opt::gathered_filter_calls_for_tests();
    int wide = 0;
    int64_t packed = 0, gathered = 0, packed_f32 = 0, gathered_f32 = 0;
    for (int i = 0; i < 3000; ++i) {
      const Problem p = problems(random.split(), i % 101).value();
      wide += p.input[3] > 128 && p.filter[2] == p.input[3];
      result_bytes(p);
      const int64_t pk = opt::packed_input_filter_calls_for_tests();
      const int64_t ga = opt::gathered_filter_calls_for_tests();
      packed += pk;
      gathered += ga;
      packed_f32 += p.dtype == DType::f32 ? pk : 0;
      gathered_f32 += p.dtype == DType::f32 ? ga : 0;
    }
    opt::clear_isa_limit();
    BOOST_TEST_MESSAGE(opt::isa_name(isa)
                       << ": 3000 generated problems: " << wide << " wide, " << packed
                       << " with the input packed (f32 " << packed_f32 << "), " << gathered
                       << " gathered (f32 " << gathered_f32 << ")");
    // f32 too under AVX-512: a third of the wide problems have more output channels than its
    // 64-float panel (a slice of one panel is read in place, not gathered).
    BOOST_TEST(packed_f32 > 0, opt::isa_name(isa) << ": no f32 problem with the input packed");
    BOOST_TEST(gathered_f32 > 0, opt::isa_name(isa) << ": no f32 problem gathered");
  }
}

// The fill prefetches (fill_prefetch_sub_blocks_for_tests) of one call at 1 thread, at 2, and at
// 2 with the second taking nothing.
struct Fills {
  int64_t one, two, two_skipped;
  int64_t pace_one;  // the largest prefetch pace at 1 thread (opt::filter_pace_for_tests)
};

// The fill-prefetch cases' frame: under L1 4 KiB, L2 32 KiB (where their small problems reach the
// rule), `check(isa, fills, what)` for each problem under each ISA this machine runs; then the
// results against the reference and for 1, 2 and 3 threads (check_blocking_paths); caches and
// thread count restored.
template <std::size_t N, class Check>
void under_fill_caches(const char* const (&problems)[N], Check&& check) {
  const Restored restored;
  opt::override_cache_sizes(4 * 1024, 32 * 1024);
  for_each_isa(problems, [&check](opt::Isa isa, const char* text, const std::string& what) {
    const Problem p = parse_problem(text);
    Fills f{};
    opt::fill_prefetch_sub_blocks_for_tests();
    opt::filter_pace_for_tests();
    for (int64_t* count : {&f.one, &f.two, &f.two_skipped}) {
      omp_set_num_threads(count == &f.one ? 1 : 2);
      {
        std::optional<SkippedThread> skipped;
        if (count == &f.two_skipped) skipped.emplace();
        result_bytes(p);
      }
      *count = opt::fill_prefetch_sub_blocks_for_tests();
      const int64_t pace = opt::filter_pace_for_tests();
      if (count == &f.one) f.pace_one = pace;
    }
    check(isa, f, what);
  });
  check_blocking_paths_under(4, 32, problems);
}

// Backprop filter's fill prefetch (backprop_filter.cpp, prefetch_fill): where a block's rows stay
// in L2, out_backprop's slice is packed per sub-block and the sub-block cap's rows take at most
// half of L2, a unit's first run prefetches each next sub-block's input and out_backprop rows, and
// its last run the next block's first. Derived by hand for 2x28x28x16 -> 64 (3x3, SAME) with L1 4
// KiB, L2 32 KiB: 56 output rows in 8 chunks of 7; rows of 8961 bytes (28 x 64 + 28 x 16 floats,
// + 1), so blocks of 3 rows (3, 2 and 2 a chunk); the block's input (5376 bytes) within half of
// L2, so no prefetch_sub. Under AVX2 (MR 6, NR 16): sub-blocks of 1 row (1.5 L1 over 128 bytes a
// pixel, its 16-float slice and an input line, and 28 pixels a row), 8961 bytes, within half of
// L2; runs of one panel (27 tiles; 42 fit). Every call passes its whole chunk (7 rows are not
// one block), so never warm: 2 + 1 + 1 first-run passes and 2 next-block passes, 6 a call. At 1
// thread a call is a chunk: 48 in all. At 2 (4 units a thread, 8 items: a unit an item, cut in 4
// pieces of one run, kTailCuts) each thread takes its own items 4 pieces at a time, its last as
// 2, 1 and 1 (shrink_tail): with the second thread taking nothing, the first runs its own 4 items
// in 6 calls and the second's, from the back, in 6 more: 72; with both running, which thread cuts
// what varies with timing: a multiple of 6, at least 48. The portable kernels (MR 4, NR 8):
// sub-blocks of 2 rows (96 bytes a pixel), 17922 bytes, over half of L2: none. AVX-512's
// 64-channel panel packs nothing: none. The results against the reference and for 1, 2 and 3
// threads: check_blocking_paths.
BOOST_AUTO_TEST_CASE(fill_prefetch_reaches_packed_sub_blocks, *blocking) {
  const char* const problems[] = {
      "conv2d_backprop_filter:input=2x28x28x16,filter=3x3x16x64,padding=SAME"};
  under_fill_caches(problems, [](opt::Isa isa, const Fills& f, const std::string& what) {
    const bool fills = isa == opt::Isa::avx2;
    BOOST_TEST(f.one == (fills ? 48 : 0), what << ": 1 thread");
    BOOST_TEST((fills ? f.two % 6 == 0 && f.two >= 48 : f.two == 0),
               what << ": 2 threads, " << f.two);
    BOOST_TEST(f.two_skipped == (fills ? 72 : 0), what << ": 2 threads, the second taking nothing");
    // The fills' lines paced (FilterTile::pf_pace): a pass's 27 tiles of 28 pixels against the
    // next sub-block's 170-198 lines (two or three input rows of 28 x 16 floats, an out_backprop
    // row of 28 x 64), 3-4 pixels a line.
    if (fills) BOOST_TEST(f.pace_one > 1, what << ": pace " << f.pace_one);
  });
}

// The fill prefetch's warm rule (tap_runs): no fill where the thread's last unit passed the same
// one block, whose rows are in its L2 already. Derived by hand for 1x8x8x16 -> 64 (3x3, SAME)
// under AVX2 with L1 4 KiB, L2 32 KiB: the filter (9216 elements) outweighs the activations (5120),
// so one chunk (a partials budget of 5120 elements holds no second filter) and one block of all 8
// rows; rows of 2561 bytes (8 x 64 + 8 x 16 floats, + 1), so no prefetch_next (8 rows > 8 KiB /
// 2561); the block's input 4096 bytes, within half of L2 (no prefetch_sub); sub-blocks of at most
// 6 rows (1.5 L1 over 128 bytes a pixel, 8 pixels a row), 15366 bytes, within half of L2: two of 4
// rows. A call that is not warm fills once (its first run's first sub-block; its last sub-block has
// no next block), so: 1 thread, one call: 1; 2 threads: every call has the same rows, so each
// thread's first call fills and no other (1 or 2: a thread whose pieces were all taken fills none;
// 34 without the rule: 2 items of 16 units, 3 pieces a unit, so 17 calls a thread, 15 of 3 pieces,
// then 2 and 1); with the second thread taking nothing, 1. The portable kernels (sub-blocks
// of 8 rows, 20488 bytes) and AVX-512 (nothing packed): none. Results: check_blocking_paths.
BOOST_AUTO_TEST_CASE(fill_prefetch_skips_a_block_the_thread_just_passed, *blocking) {
  const char* const problems[] = {
      "conv2d_backprop_filter:input=1x8x8x16,filter=3x3x16x64,padding=SAME"};
  under_fill_caches(problems, [](opt::Isa isa, const Fills& f, const std::string& what) {
    const bool fills = isa == opt::Isa::avx2;
    BOOST_TEST(f.one == (fills ? 1 : 0), what << ": 1 thread");
    BOOST_TEST((fills ? f.two >= 1 && f.two <= 2 : f.two == 0), what << ": 2 threads, " << f.two);
    BOOST_TEST(f.two_skipped == (fills ? 1 : 0), what << ": 2 threads, the second taking nothing");
  });
}

// Backprop filter's line-panel sub-blocks count the input lines a pixel's taps read
// (backprop_filter.cpp, input_lines_per_pixel): along each axis min(K, s / gcd(s, d)). Derived by
// hand for four problems of 8 x 8 output pixels, 16 -> 64 channels, under L1 4 KiB, L2 32 KiB, at
// 1 thread: the filter (9216 elements) outweighs the activations (8 x 8 x 64 + the input's 4096
// at most), so one chunk and one block of 8 rows; runs of one panel (AVX2: 3 q blocks x 9 taps =
// 27 tiles, 42 fit; portable: 4 x 9 = 36, 128 fit), so passes = panels x sub-blocks, each
// sub-block's slice packed (64 channels > a panel). The budget is 1.5 L1 (6144 bytes) over a
// pixel's panel line (AVX2: 64 bytes, 4 panels; portable: 32, 8 panels) and 64 bytes per input
// line:
//   3x3 stride 1 (1 line):  AVX2 6144 / 128 / 8 = 6 rows: 2 sub-blocks, 8 passes; portable
//                           6144 / 96 / 8 = 8: 1, 8;
//   3x3 stride 2 (2 x 2):   AVX2 6144 / 320 / 8 = 2 rows: 4, 16; portable 6144 / 288 / 8 = 2: 4,
//                           32 (one line: 8 and 8);
//   3x3 stride 1x2 (1 x 2): AVX2 6144 / 192 / 8 = 4: 2, 8; portable 6144 / 160 / 8 = 4: 2, 16;
//   3x3 stride 2, dilation 2 (every tap on rows and columns of one parity: 1 x 1): as stride 1.
// AVX-512's wide panels (64 floats, 256 bytes; one panel, nothing packed) count one line whatever
// the stride; under L1 8 KiB with whole 512-bit units (not opt::split_fma512's 4 L1): 8192 / 320
// / 8 = 3 rows, 3 sub-blocks, in runs of 10 tiles (16 KiB / (6 x 64 x 4 bytes)), 10 + 10 + 7 of
// the panel's 27: 9 passes each (counting the lines: 12 at stride 2 and 1x2). Results against the
// reference at 1, 2 and 3 threads (L1 4 KiB): check_blocking_paths.
BOOST_AUTO_TEST_CASE(line_sub_blocks_count_the_input_lines_of_a_stride, *blocking) {
  struct Case {
    const char* text;
    int64_t avx2, portable, wide;  // sub-block passes, 1 thread
  };
  const Case cases[] = {
      {"conv2d_backprop_filter:input=1x8x8x16,filter=3x3x16x64,padding=SAME", 8, 8, 9},
      {"conv2d_backprop_filter:input=1x16x16x16,filter=3x3x16x64,stride=2x2,padding=SAME", 16, 32,
       9},
      {"conv2d_backprop_filter:input=1x8x16x16,filter=3x3x16x64,stride=1x2,padding=SAME", 8, 16, 9},
      {"conv2d_backprop_filter:input=1x16x16x16,filter=3x3x16x64,stride=2x2,dilation=2x2,"
       "padding=SAME",
       8, 8, 9},
  };
  const Restored restored;
  omp_set_num_threads(1);
  opt::override_split_fma512(0);
  for_each_isa(cases, [](opt::Isa isa, const Case& c, const std::string& what) {
    const bool wide = isa == opt::Isa::avx512;
    opt::override_cache_sizes(wide ? 8 * 1024 : 4 * 1024, 32 * 1024);
    opt::filter_sub_blocks_for_tests();
    result_bytes(parse_problem(c.text));
    const int64_t passes = opt::filter_sub_blocks_for_tests();
    const int64_t want = wide ? c.wide : isa == opt::Isa::avx2 ? c.avx2 : c.portable;
    BOOST_TEST(passes == want, what << ": " << passes << " passes, derived " << want);
  });
  const char* problems[std::size(cases)];
  for (std::size_t i = 0; i < std::size(cases); ++i) problems[i] = cases[i].text;
  check_blocking_paths_under(4, 32, problems);
}

// Backprop filter's rows of C (input channels per group) in tiles of MR: a last tile of at most
// MR / 2 rows (too few accumulator chains to keep the FMA units busy) shares the last two tiles'
// rows evenly, the tile count unchanged (opt::filter_q_shift; the shifts below derived by hand).
// Results against the reference under every ISA (check_blocking_paths) for channel counts that end
// in such tiles under MR 6 (AVX2, AVX-512): 3x3 layers of 7 = 4 + 3, 8 = 4 + 4 and 14 = 6 + 4 + 4
// channels in place, 9 = 5 + 4 at stride 2 (under AVX2 and AVX-512 with the input packed: its
// filter outweighs its activations), a 1x1 layer of 20 (packed under AVX2: 18 + 2 -> 4 + 4), a 1x1
// layer of 98 output channels (mirrored under AVX-512 at 2 and 3 threads: 96 + 2 rows) and a
// grouped layer of 8 channels a group; under the portable MR 4, 9 (4 + 3 + 2) and 14 (4 + 4 + 3 +
// 3). The packed and gathered input with 128 channels (126 + 2): packed_and_gathered_input_...
BOOST_AUTO_TEST_CASE(thin_last_filter_tiles_share_their_rows, *blocking) {
  struct Case {
    int64_t rows, mr, shift;
  };
  const Case cases[] = {
      {128, 6, 2}, {127, 6, 2}, {129, 6, 1}, {130, 6, 0}, {126, 6, 0}, {512, 6, 2},
      {8, 6, 2},   {7, 6, 2},   {9, 6, 1},   {6, 6, 0},   {2, 6, 0},   {13, 6, 2},
      {7, 4, 0},   {5, 4, 1},   {6, 4, 1},   {0, 6, 0},
  };
  for (const Case& c : cases)
    BOOST_TEST(opt::filter_q_shift(c.rows, c.mr) == c.shift,
               c.rows << " rows in tiles of " << c.mr << ": shift "
                      << opt::filter_q_shift(c.rows, c.mr) << ", derived " << c.shift);
  const char* const problems[] = {
      "conv2d_backprop_filter:input=2x6x7x7,filter=3x3x7x20,padding=SAME",
      "conv2d_backprop_filter:input=2x6x7x8,filter=3x3x8x20,padding=SAME",
      "conv2d_backprop_filter:input=1x7x6x9,filter=3x3x9x36,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=2x6x6x14,filter=3x3x14x40,padding=SAME",
      "conv2d_backprop_filter:input=2x6x6x20,filter=1x1x20x96",
      "conv2d_backprop_filter:input=1x6x6x64,filter=1x1x64x98",
      "conv2d_backprop_filter:input=2x6x6x16,filter=3x3x8x14,padding=SAME",
  };
  const Restored restored;
  check_blocking_paths_under(4, 32, problems);
}

// A 1x1 layer's blocks (implicit GEMM, one tap) prefetch the source rows of their thread's next
// block, and with more than one thread too where opt::threaded_prefetch_bursts() (AMD): that
// block's table is filled ahead, as the next of the thread's own range, and checked when a block
// is taken. With the first thread taking nothing, the second takes the first's blocks from the
// back, so that every table it fills ahead after its own range is for a block it does not take
// next: the same bits either way, under every ISA. L2 32 KiB: blocks of 4-10 tiles; a 1x1 stride
// 2 layer (one phase of one tap, three of none), f64, conv2d forward. The rows go out paced
// through the block's calls (IgemmTile::pf_pace) where they merge into few ranges: at one thread
// (each block's next is the following one) a line every 2 or more reduction steps on the f32
// backprop input and stride-1 forward problems under every ISA (AVX-512's one panel: 7-8 tiles
// of 6 rows of 40-48 channels against 121-127 lines; the strided forward 1x1 too). Two groups'
// rows are apart (20 of 40 channels: a range each, past L2Prefetch::kMax), so their blocks take
// the bursts after each tile instead (under generic and AVX2 every block did, pace 0, when this
// was written; a short last block may still be paced, so that is not asserted).
BOOST_AUTO_TEST_CASE(threaded_prefetch_ahead_changes_no_bits, *blocking) {
  struct Case {
    const char* text;
    bool paced;  // at one thread, a pace above 1 asserted (above)
  };
  const Case problems[] = {
      {"conv2d_backprop_input:input=2x20x20x32,filter=1x1x32x48", true},
      {"conv2d_backprop_input:input=2x21x19x24,filter=1x1x24x40,stride=2x2,dtype=f64", false},
      {"conv2d:input=2x20x20x40,filter=1x1x40x24", true},
      {"conv2d:input=2x20x20x40,filter=1x1x40x24,stride=2x2", true},
      {"conv2d:input=2x20x20x40,filter=1x1x20x24", false},
  };
  const Restored restored;
  opt::override_cache_sizes(8 * 1024, 32 * 1024);
  for_each_isa(problems, [](opt::Isa, const Case& c, const std::string& what) {
    const char* const text = c.text;
    const Problem p = parse_problem(text);
    omp_set_num_threads(1);
    opt::igemm_pace_for_tests();
    const std::vector<unsigned char> first = result_bytes(p);
    const int64_t pace = opt::igemm_pace_for_tests();
    if (c.paced) BOOST_TEST(pace > 1, what << ": pace " << pace);
    omp_set_num_threads(2);
    opt::threaded_ahead_blocks_for_tests();
    opt::override_threaded_prefetch_bursts(0);
    BOOST_TEST((result_bytes(p) == first), what << ": 2 threads, not ahead");
    BOOST_TEST(opt::threaded_ahead_blocks_for_tests() == 0, what);
    opt::override_threaded_prefetch_bursts(1);
    BOOST_TEST((result_bytes(p) == first), what << ": 2 threads, ahead");
    BOOST_TEST(opt::threaded_ahead_blocks_for_tests() > 0, what << ": no block prefetched ahead");
    // (part 0 may be skipped here: every region of these problems' path runs on 2 threads)
    opt::pieces_stolen_for_tests();
    opt::skip_part_for_tests(0);
    const std::vector<unsigned char> skipped = result_bytes(p);
    opt::skip_part_for_tests(-1);
    BOOST_TEST((skipped == first), what << ": 2 threads, ahead, the first taking nothing");
    BOOST_TEST(opt::pieces_stolen_for_tests() > 1, what << ": too few pieces taken");
    testbed::expect_pass(optimized(), text, FillKind::special, 11, {}, what);
  });
  opt::override_threaded_prefetch_bursts(-1);
}

namespace {

// Packs panels of every variant's NR, both orientations, with whole and partial transpose blocks
// (kc and nj below, at and above each ISA's block of 4, 8 or 16), and checks each element against
// PackPanel's law; then that an Inf or NaN anywhere it reads is reported, and one it must not read
// (a row's tail beyond kc or nj, a row beyond nj) is not.
template <class T>
void check_packing(const std::string& context) {
  const opt::KernelTable<T>& kt = opt::kernels<T>();
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  for (int v = 0; v < kt.variants; ++v) {
    const int64_t NR = kt.nr(v);
    for (bool transposed : {false, true})
      for (int64_t kc : {1, 3, 4, 8, 16, 19, 40})
        for (int64_t nj : {int64_t{1}, NR / 2 + 1, NR - 1, NR}) {
          if (nj < 1) continue;
          const int64_t rows = transposed ? NR : kc, len = transposed ? kc : nj, ld = len + 3;
          std::vector<T> src(static_cast<std::size_t>(rows * ld), nan);  // NaN where not read
          auto at = [&](int64_t k, int64_t j) -> T& {
            return src[static_cast<std::size_t>(transposed ? j * ld + k : k * ld + j)];
          };
          for (int64_t k = 0; k < kc; ++k)
            for (int64_t j = 0; j < nj; ++j) at(k, j) = static_cast<T>(k * 1000 + j + 1);
          // NaN beyond the panel too: a guard no pack may write
          std::vector<T> dst(static_cast<std::size_t>(kc * NR + 64), nan);
          opt::PackPanel<T> pp;
          pp.ld = ld;
          pp.kc = kc;
          pp.nj = nj;
          pp.NR = NR;
          pp.transposed = transposed;
          pp.src = src.data();
          pp.dst = dst.data();
          const std::string what = context + (transposed ? " transposed" : " forward") + " NR " +
                                   std::to_string(NR) + " kc " + std::to_string(kc) + " nj " +
                                   std::to_string(nj);
          BOOST_TEST(kt.pack(pp), what << ": a finite panel reported non-finite");
          int64_t wrong = 0;
          for (int64_t k = 0; k < kc; ++k)
            for (int64_t j = 0; j < NR; ++j) {
              const T want = j < nj ? at(k, j) : T(0);
              wrong += !(dst[static_cast<std::size_t>(k * NR + j)] == want);
            }
          BOOST_TEST(wrong == 0, what << ": " << wrong << " elements wrong");
          BOOST_TEST(
              std::all_of(dst.begin() + kc * NR, dst.end(), [](T x) { return std::isnan(x); }),
              what << ": wrote past the panel");
          // One special value at a time: at every element where kc is at most 19 (every row and
          // column of a whole transpose block and of a tail), else at the first, a middle and
          // the last.
          int64_t missed = 0;
          for (int64_t k = 0; k < kc; ++k)
            for (int64_t j = 0; j < nj; ++j) {
              if (kc > 19 && !(k == 0 && j == 0) && !(k == kc / 2 && j == nj / 2) &&
                  !(k == kc - 1 && j == nj - 1))
                continue;
              for (T special : {inf, nan}) {
                const T saved = at(k, j);
                at(k, j) = special;
                missed += kt.pack(pp);
                at(k, j) = saved;
              }
            }
          BOOST_TEST(missed == 0, what << ": " << missed << " Inf or NaN elements not reported");
        }
  }
}

}  // namespace

// The filter packing (transpose blocks of each ISA, element by element at the edges) against its
// law, under every ISA this machine runs, f32 and f64.
BOOST_AUTO_TEST_CASE(filter_packing_follows_its_law_under_every_isa) {
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    check_packing<float>(std::string("f32 ") + opt::isa_name(isa));
    check_packing<double>(std::string("f64 ") + opt::isa_name(isa));
  }
  opt::clear_isa_limit();
}

namespace {

// KernelTable::copy_rows under the current ISA: rows of n elements (whole vectors and tails)
// copied ld -> ldd apart, and nothing written past a row's n elements.
template <class T>
void check_copy_rows(const std::string& what) {
  const opt::KernelTable<T>& kt = opt::kernels<T>();
  for (int64_t n : {1, 3, 5, 8, 13, 16, 17, 40, 64}) {
    const int64_t count = 3, ld = n + 7, ldd = n + 5;
    std::vector<T> src(static_cast<std::size_t>(count * ld)),
        dst(static_cast<std::size_t>(count * ldd), T(-1));
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<T>(i + 1);
    kt.copy_rows(src.data(), ld, n, count, dst.data(), ldd);
    int64_t wrong = 0;
    for (int64_t r = 0; r < count; ++r)
      for (int64_t j = 0; j < ldd; ++j)
        wrong += dst[static_cast<std::size_t>(r * ldd + j)] !=
                 (j < n ? src[static_cast<std::size_t>(r * ld + j)] : T(-1));
    BOOST_TEST(wrong == 0, what << ", rows of " << n << ": " << wrong << " elements wrong");
  }
}

// KernelTable::sum_into under the current ISA: dst[e] plus count sources in source order, for
// lengths across its blocks and vector tails. The values make the order visible: dst 1, then
// +2^k and -2^k (k = 60 for f32 and f64, whose 1 + 2^60 rounds to 2^60; u32 wraps, exactly) give
// 0 in that order and 1 in any order that adds the two big ones first; a third source adds e.
template <class T>
void check_sum_into(const std::string& what) {
  const opt::KernelTable<T>& kt = opt::kernels<T>();
  const T big = std::is_floating_point_v<T> ? T(std::ldexp(1.0, 60)) : T(0x80000000u);
  for (int64_t n : {1, 5, 16, 17, 1023, 1024, 1025, 2100}) {
    const int64_t stride = n + 3, count = 3;
    std::vector<T> dst(static_cast<std::size_t>(n + 1), T(1)),
        src(static_cast<std::size_t>(count * stride), T(7));
    for (int64_t e = 0; e < n; ++e) {
      src[static_cast<std::size_t>(e)] = big;
      src[static_cast<std::size_t>(stride + e)] = T(0) - big;
      src[static_cast<std::size_t>(2 * stride + e)] = static_cast<T>(e % 97);
    }
    kt.sum_into(dst.data(), src.data(), stride, count, n);
    int64_t wrong = 0;
    for (int64_t e = 0; e < n; ++e) {
      // Derived: ((1 + big) - big) + e % 97, in the source order.
      const T want =
          std::is_floating_point_v<T> ? static_cast<T>(e % 97) : static_cast<T>(1 + e % 97);
      wrong += dst[static_cast<std::size_t>(e)] != want;
    }
    wrong += dst[static_cast<std::size_t>(n)] != T(1);  // past the end: untouched
    BOOST_TEST(wrong == 0, what << ", " << n << " elements: " << wrong << " wrong");
  }
  // Bit for bit the scalar passes (dst += source 0, then source 1, ...) on values of mixed sign
  // and magnitude, 5 sources; and nothing done for no elements or no sources.
  std::mt19937 gen(17);
  std::uniform_int_distribution<int> exponent(-30, 30), sign(0, 1);
  auto value = [&] {
    const double v = std::ldexp(1.0 + exponent(gen) / 64.0, exponent(gen)) * (sign(gen) ? -1 : 1);
    return std::is_floating_point_v<T> ? static_cast<T>(v) : static_cast<T>(gen());
  };
  const int64_t n = 2100, stride = 2111, count = 5;
  std::vector<T> src(static_cast<std::size_t>(count * stride)), dst(static_cast<std::size_t>(n));
  for (T& v : src) v = value();
  for (T& v : dst) v = value();
  std::vector<T> want = dst;
  for (int64_t c = 0; c < count; ++c)
    for (int64_t e = 0; e < n; ++e)
      want[static_cast<std::size_t>(e)] += src[static_cast<std::size_t>(c * stride + e)];
  const std::vector<T> before = dst;
  kt.sum_into(dst.data(), src.data(), stride, 0, n);
  kt.sum_into(dst.data(), src.data(), stride, count, 0);
  BOOST_TEST((dst == before), what << ": changed with no sources or no elements");
  kt.sum_into(dst.data(), src.data(), stride, count, n);
  BOOST_TEST((std::memcmp(dst.data(), want.data(), sizeof(T) * dst.size()) == 0),
             what << ": not bit for bit the scalar passes");
}

}  // namespace

BOOST_AUTO_TEST_CASE(copy_rows_and_sum_into_follow_their_law_under_every_isa) {
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    const std::string name = opt::isa_name(isa);
    check_copy_rows<float>("f32 " + name);
    check_copy_rows<double>("f64 " + name);
    check_sum_into<float>("f32 " + name);
    check_sum_into<double>("f64 " + name);
    if (isa == opt::Isa::generic) {
      check_copy_rows<uint32_t>("u32 generic");
      check_sum_into<uint32_t>("u32 generic");
    }
  }
  opt::clear_isa_limit();
}
