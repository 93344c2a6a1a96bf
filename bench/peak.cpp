#include "bench/peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/cpu.h"

namespace convcheck {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Independent FMA chains (more than the FMA latency x throughput product) per thread; returns the
// FMAs each thread did.
constexpr long kIterations = 20'000'000;

// Twelve independent accumulators in named variables, so they live in registers: enough chains to
// cover the FMA latency times the number of FMA pipes on current x86 cores.
#define CONVCHECK_FMA12(fma, a, b)                                                \
  x0 = fma(x0, a, b), x1 = fma(x1, a, b), x2 = fma(x2, a, b), x3 = fma(x3, a, b), \
  x4 = fma(x4, a, b), x5 = fma(x5, a, b), x6 = fma(x6, a, b), x7 = fma(x7, a, b), \
  x8 = fma(x8, a, b), x9 = fma(x9, a, b), x10 = fma(x10, a, b), x11 = fma(x11, a, b)

__attribute__((target("avx512f"))) double fma_avx512() {
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  // Distinct starting values: equal ones would let the compiler merge the chains into one.
  __m512 x0 = _mm512_set1_ps(1.00f), x1 = _mm512_set1_ps(1.01f), x2 = _mm512_set1_ps(1.02f),
         x3 = _mm512_set1_ps(1.03f), x4 = _mm512_set1_ps(1.04f), x5 = _mm512_set1_ps(1.05f),
         x6 = _mm512_set1_ps(1.06f), x7 = _mm512_set1_ps(1.07f), x8 = _mm512_set1_ps(1.08f),
         x9 = _mm512_set1_ps(1.09f), x10 = _mm512_set1_ps(1.10f), x11 = _mm512_set1_ps(1.11f);
  for (long i = 0; i < kIterations; ++i) CONVCHECK_FMA12(_mm512_fmadd_ps, a, b);
  const __m512 sum =
      _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(x0, x1), _mm512_add_ps(x2, x3)),
                                  _mm512_add_ps(_mm512_add_ps(x4, x5), _mm512_add_ps(x6, x7))),
                    _mm512_add_ps(_mm512_add_ps(x8, x9), _mm512_add_ps(x10, x11)));
  alignas(64) float out[16];
  _mm512_store_ps(out, sum);
  float sink = 0;
  for (float v : out) sink += v;
  return static_cast<double>(sink);
}

__attribute__((target("avx2,fma"))) double fma_avx2() {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 x0 = _mm256_set1_ps(1.00f), x1 = _mm256_set1_ps(1.01f), x2 = _mm256_set1_ps(1.02f),
         x3 = _mm256_set1_ps(1.03f), x4 = _mm256_set1_ps(1.04f), x5 = _mm256_set1_ps(1.05f),
         x6 = _mm256_set1_ps(1.06f), x7 = _mm256_set1_ps(1.07f), x8 = _mm256_set1_ps(1.08f),
         x9 = _mm256_set1_ps(1.09f), x10 = _mm256_set1_ps(1.10f), x11 = _mm256_set1_ps(1.11f);
  for (long i = 0; i < kIterations; ++i) CONVCHECK_FMA12(_mm256_fmadd_ps, a, b);
  const __m256 sum =
      _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
                                  _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7))),
                    _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11)));
  alignas(32) float out[8];
  _mm256_store_ps(out, sum);
  float sink = 0;
  for (float v : out) sink += v;
  return static_cast<double>(sink);
}

double fma_scalar() {
  float x0 = 1.00f, x1 = 1.01f, x2 = 1.02f, x3 = 1.03f, x4 = 1.04f, x5 = 1.05f, x6 = 1.06f,
        x7 = 1.07f, x8 = 1.08f, x9 = 1.09f, x10 = 1.10f, x11 = 1.11f;
  auto fma = [](float x, float a, float b) { return std::fma(x, a, b); };
  for (long i = 0; i < kIterations / 4; ++i) CONVCHECK_FMA12(fma, 0.999999f, 1e-7f);
  return static_cast<double>(x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11);
}

// One thread's share of a triad sweep, dst = src + 0.5 c, in the widest vectors the CPU has (a
// build for baseline x86-64 would time SSE2 where the footprint is in cache). Entered only after
// core/cpu.h's check, as fma_*; tests/isa/check_isa_symbols.py lists them.
__attribute__((always_inline)) inline void triad_part(float* dst, const float* src, const float* c,
                                                      int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i] + 0.5f * c[i];
}
__attribute__((target("avx512f"))) void triad_avx512(float* d, const float* s, const float* c,
                                                     int64_t n) {
  triad_part(d, s, c, n);
}
__attribute__((target("avx2"))) void triad_avx2(float* d, const float* s, const float* c,
                                                int64_t n) {
  triad_part(d, s, c, n);
}
void triad_base(float* d, const float* s, const float* c, int64_t n) {
  triad_part(d, s, c, n);
}

}  // namespace

Peaks measure_peaks(int threads) {
  Peaks p;
  p.threads = threads;
  int lanes = 1;
  long iterations = kIterations / 4;
  double (*kernel)() = fma_scalar;
  p.isa = "scalar";
  // The same CPU + OS check as the optimized backend's dispatch (core/cpu.h): a target-attributed
  // function is entered only where it can run.
  if (cpu_features().avx512_usable()) {
    kernel = fma_avx512, lanes = 16, iterations = kIterations, p.isa = "avx512f";
  } else if (cpu_features().avx2_usable()) {
    kernel = fma_avx2, lanes = 8, iterations = kIterations, p.isa = "avx2+fma";
  }
  volatile double sink = 0;
  auto rate = [&](double (*fn)(), int width, long iters) {
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      double sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
      sum += fn();
      const double s = seconds_since(t0);
      sink = sink + sum;
      best = std::max(best, 2.0 * width * 12 * iters * threads / s / 1e9);
    }
    return best;
  };
  p.fma_gflops = rate(kernel, lanes, iterations);
  if (cpu_features().avx2_usable())
    p.avx2_gflops = lanes == 8 ? p.fma_gflops : rate(fma_avx2, 8, kIterations);
  // STREAM triad over 3 x 64 MiB of floats.
  p.bandwidth_gbs = triad_gbs(threads, int64_t{192} << 20);
  return p;
}

double triad_gbs(int threads, int64_t bytes) {
  bytes = std::clamp<int64_t>(bytes, int64_t{48} << 10, int64_t{512} << 20);
  // Each array a whole number of 64-byte lines (16 floats), each thread's part too, so that no
  // vector straddles two lines and no line is shared between threads.
  const int64_t lines = std::max<int64_t>(1, bytes / (3 * 64));
  const int64_t n = lines * 16;
  // Lines allocated without being written here, so that each thread's first touch (rep -1)
  // places its part's pages (a std::vector would zero them on this thread).
  struct Free {
    void operator()(float* f) const { std::free(f); }
  };
  auto lines_of = [&] {
    return std::unique_ptr<float[], Free>(
        static_cast<float*>(std::aligned_alloc(64, static_cast<std::size_t>(n) * sizeof(float))));
  };
  const std::unique_ptr<float[], Free> a = lines_of(), b = lines_of(), c = lines_of();
  if (!a || !b || !c) return 0;  // no memory for this size: no reading
  // Passes of `sweeps` triads, so that a small footprint's pass is not a timer's resolution
  // (about 5 ms at 50 GB/s; one sweep over memory-sized arrays). Each thread sweeps its own part
  // with no barrier between sweeps (a barrier per sweep of a small footprint would be timed
  // too). Sweeps alternate a = b + s c and b = a + s c (two arrays read, one written, as the
  // triad), so that none is a dead store. The best of 10 passes: on a shared machine a pass
  // that a neighbour slowed only lowers a reading.
  const int64_t sweeps = std::max<int64_t>(1, (int64_t{256} << 20) / bytes);
  // (The same CPU + OS check as measure_peaks.)
  void (*const sweep)(float*, const float*, const float*, int64_t) =
      cpu_features().avx512_usable() ? triad_avx512
      : cpu_features().avx2_usable() ? triad_avx2
                                     : triad_base;
  double best = 0;
  for (int rep = -1; rep < 10; ++rep) {  // rep -1: the first touch
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t i0 = lines * t / nt * 16, i1 = lines * (t + 1) / nt * 16;
      float* const pa = a.get();
      float* const pb = b.get();
      float* const pc = c.get();
      if (rep < 0) {
        for (int64_t i = i0; i < i1; ++i) pa[i] = 0, pb[i] = 1, pc[i] = 2;
      } else {
        for (int64_t k = 0; k < sweeps; ++k) {
          float* const dst = k % 2 == 0 ? pa : pb;
          const float* const src = k % 2 == 0 ? pb : pa;
          sweep(dst + i0, src + i0, pc + i0, i1 - i0);
        }
      }
    }
    const double s = seconds_since(t0);
    if (rep >= 0)
      best = std::max(best, 3.0 * static_cast<double>(n) * sizeof(float) * sweeps / s / 1e9);
  }
  volatile float sink = a[n / 2] + b[n / 2];
  (void)sink;
  return best;
}

}  // namespace convcheck
