// `convcheck bench` (design §8, issue 4): the named backends on each problem of a suite, timed
// interleaved in one process (A B A B ...) after warm-up, reported as medians with GFLOP/s, % of
// the FMA peak and of the memory bandwidth measured in the same process, and the ratio to the first
// comparator (the second backend named; the first is the one under study).
//
// Ratios are also paired (`paired_ratio`): the median over rounds of the comparator's time over the
// backend's in the same round. On a shared machine (a cloud guest whose neighbour comes and goes)
// the two medians can fall in different spells, the paired ratio cannot. Several thread counts
// (`--threads 1,2`) are interleaved in the same rounds (the OpenMP thread count set before each
// run; oneDNN keys its primitives on it), each with its own records, peaks, ratios and notes, and a
// record at a later thread count has `speedup`: the median over rounds of the same backend's time
// at the first thread count over its time at this one (1 -> 2 thread scaling measured in one
// spell). Every other round runs in reverse order (A B B A), so that no backend or thread count
// always runs first after a switch.
//
// Device backends (issue 5): a run's time is the backend's own device time (last_device_ms():
// events around its kernels, transfers excluded) whenever it reports one, else the wall clock
// around run(); and its % of peak and of bandwidth are against the device's peaks measured in this
// process (device_peaks()), not the CPU's. Each record says which: `timing` ("wall" or "device"),
// `device` (the device whose peaks were used; empty: the CPU's) and the peaks themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/peak.h"
#include "core/backend.h"
#include "core/problem.h"

namespace convcheck {

struct BenchOptions {
  int reps = 10;   // timed runs per backend (at least 10 for reports)
  int warmup = 2;  // untimed runs per backend first
  // OpenMP thread counts, interleaved in every round; empty: the calling thread's current count.
  std::vector<int> threads;
};

/// FLOPs as benchmarks count them: nominal 2*N*OH*OW*K*C*R*S/G (every tap, padding included) and
/// useful (only taps that land inside the input); the same for the three ops of a triple.
int64_t nominal_flops(const Geometry& g);
int64_t useful_flops(const Geometry& g);
/// Bytes a run must move at least: the two operands read and the result written, once each.
int64_t compulsory_bytes(const Problem& p, const Geometry& g);

/// A distribution-free interval for the median of values drawn independently from one
/// distribution (here: one ratio per round): the k-th smallest and the k-th largest of the n
/// values, with k the largest whose coverage, 1 - 2 P(Binomial(n, 1/2) <= k - 1), is at least
/// 95 % (10 rounds: the 2nd of each end, 97.9 %). Fewer than 6 values cannot reach 95 %: then the
/// smallest and the largest, at the coverage they have (5: 93.8 %; one value: 0, none). Rounds on a
/// shared machine are not quite independent (a busy spell spans several), so read it as the
/// spread a rerun may show, not a guarantee.
struct MedianInterval {
  double lo = 0, hi = 0;
  double level = 0;  // the coverage
};
MedianInterval median_interval(std::vector<double> values);
/// The rank k and the coverage median_interval uses for n values (n < 2: level 0, none).
struct MedianRank {
  std::size_t k = 1;
  double level = 0;
};
MedianRank median_rank(std::size_t n);

struct BenchRecord {
  std::string problem, tag, backend;
  bool ran = false;
  std::string reason;  // why it did not run (unavailable, cannot implement, threw)
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double gflops = 0, useful_gflops = 0;  // from the median
  double pct_peak = 0, pct_bandwidth = 0;
  double ratio = 0;                 // throughput / the first comparator's (0: none)
  double paired_ratio = 0;          // median over rounds of comparator time / own time (0: none)
  MedianInterval paired_interval;   // of paired_ratio's per-round ratios (level 0: none)
  MedianInterval speedup_interval;  // of speedup's per-round ratios (level 0: none)
  std::vector<double> times_ms;     // every timed run, in round order
  double speedup = 0;    // median over rounds of own time at speedup_base threads / at these (0:
                         // none, e.g. this backend did not run at the first count)
  int speedup_base = 0;  // the first thread count, on records at a later one (0: at the first)
  int64_t flops = 0, useful = 0, bytes = 0;
  int reps = 0, threads = 0;
  std::string timing = "wall";  // "device": per-run times are the backend's last_device_ms()
  std::string device;           // the device whose peaks pct_* are against; empty: the CPU's
  double peak_gflops = 0, bandwidth_gbs = 0;  // the peaks pct_peak and pct_bandwidth use
  // The round's footprint (footprint_bytes: the problem's compulsory bytes and the other running
  // backends' results, which a round writes between two runs of this one; bench_problem), the
  // triad over it (triad_gbs, bench/peak.h; the higher of a reading before the warm-up and one
  // after the timed rounds) and the record's byte rate as a % of it: the yardstick of a layer
  // whose data can stay in a cache between rounds, which can move "more than" the triad over
  // memory-sized arrays, and the memory's where they cannot (0: a device's record, or not run).
  // JSON: footprint_bytes, footprint_bandwidth_gbs, pct_footprint_bandwidth. (The triad runs at
  // 48 KiB at least and 512 MiB at most, triad_gbs: footprint_bytes is the round's size itself.)
  int64_t footprint_bytes = 0;
  double footprint_bandwidth_gbs = 0, pct_footprint_bandwidth = 0;
  std::string note;        // what the backend says about its run (cuDNN: the algorithm), or empty
  std::string kernel_isa;  // Backend::isa(): the ISA its kernels ran with ("" if it names none)
};

/// Records thread count by thread count (options.threads' order; `peaks` one per count, in that
/// order), backends in their order within each.
std::vector<BenchRecord> bench_problem(const Problem& p, const std::string& tag,
                                       const std::vector<Backend*>& backends,
                                       const BenchOptions& options,
                                       const std::vector<Peaks>& peaks);

/// One JSON object. `peak_gflops` and `bandwidth_gbs` are the peaks the record's percentages use
/// (the CPU's, or the device's when `peaks` is "device"); `isa` is the CPU peak's ISA,
/// `kernel_isa` the one the backend's own kernels ran with; `avx2_peak_gflops` the CPU's f32 FMA
/// peak with AVX2 (0 without AVX2), the ceiling of a run capped to AVX2.
std::string bench_json(const BenchRecord& r, const Peaks& peaks);

/// For the text table: an indented line under a record that was timed on a device, used a
/// device's peaks or has a note ("" otherwise, so host backends' rows are unchanged).
std::string bench_text_note(const BenchRecord& r);

}  // namespace convcheck
