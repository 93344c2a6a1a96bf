// The machine's peaks, measured in the same process as the benchmark (issue 4): the f32 FMA rate
// with the widest vector ISA the CPU has, and the STREAM-triad memory bandwidth.
#pragma once

#include <cstdint>
#include <string>

namespace convcheck {

struct Peaks {
  double fma_gflops = 0;     // f32, all threads, best of several runs
  double avx2_gflops = 0;    // the same with AVX2 + FMA (0 without AVX2): the ceiling of an
                             // AVX2-capped run where the widest ISA is AVX-512
  double bandwidth_gbs = 0;  // triad a = b + s c over arrays far larger than the caches
  int threads = 1;
  std::string isa;  // "avx512f", "avx2+fma" or "scalar"
};

/// Measures with `threads` OpenMP threads (about a second).
Peaks measure_peaks(int threads);

/// The triad's GB/s (best of several passes, `threads` threads) over three arrays that together
/// take `bytes` (at least 48 KiB, at most 512 MiB; 0 where they cannot be allocated): the
/// bandwidth of the cache level, or memory, where data of that size live. Peaks::bandwidth_gbs is
/// the one over 192 MiB, memory's on most machines; a layer whose data can stay in a cache between
/// rounds (MobileNet's depthwise layers in a large L3) is measured against this one at its round's
/// footprint too (bench records: footprint_bytes, footprint_bandwidth_gbs, pct_footprint_bandwidth;
/// bench_problem). Passes repeat to about 5 ms each.
double triad_gbs(int threads, int64_t bytes);

}  // namespace convcheck
