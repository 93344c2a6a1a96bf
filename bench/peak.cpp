#include "bench/peak.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace convcheck {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Independent FMA chains (more than the FMA latency x throughput product) per thread; returns the
// FMAs each thread did.
constexpr long kIterations = 20'000'000;

__attribute__((target("avx512f"))) double fma_avx512() {
  __m512 acc[12];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (__m512& x : acc) x = _mm512_set1_ps(1.0f);
  for (long i = 0; i < kIterations; ++i)
    for (__m512& x : acc) x = _mm512_fmadd_ps(x, a, b);
  alignas(64) float out[16];
  float sink = 0;
  for (__m512& x : acc) {
    _mm512_store_ps(out, x);
    for (float v : out) sink += v;
  }
  return static_cast<double>(sink);
}

__attribute__((target("avx2,fma"))) double fma_avx2() {
  __m256 acc[12];
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (__m256& x : acc) x = _mm256_set1_ps(1.0f);
  for (long i = 0; i < kIterations; ++i)
    for (__m256& x : acc) x = _mm256_fmadd_ps(x, a, b);
  alignas(32) float out[8];
  float sink = 0;
  for (__m256& x : acc) {
    _mm256_store_ps(out, x);
    for (float v : out) sink += v;
  }
  return static_cast<double>(sink);
}

double fma_scalar() {
  float acc[12];
  for (float& x : acc) x = 1.0f;
  for (long i = 0; i < kIterations / 4; ++i)
    for (float& x : acc) x = std::fma(x, 0.999999f, 1e-7f);
  float sink = 0;
  for (float x : acc) sink += x;
  return static_cast<double>(sink);
}

}  // namespace

Peaks measure_peaks(int threads) {
  Peaks p;
  p.threads = threads;
  int lanes = 1;
  long iterations = kIterations / 4;
  double (*kernel)() = fma_scalar;
  p.isa = "scalar";
  if (__builtin_cpu_supports("avx512f")) {
    kernel = fma_avx512, lanes = 16, iterations = kIterations, p.isa = "avx512f";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = fma_avx2, lanes = 8, iterations = kIterations, p.isa = "avx2+fma";
  }
  volatile double sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += kernel();
    const double s = seconds_since(t0);
    p.fma_gflops = std::max(p.fma_gflops, 2.0 * lanes * 12 * iterations * threads / s / 1e9);
  }
  // STREAM triad over 3 x 64 MiB of floats.
  const std::size_t n = std::size_t{16} << 20;
  std::vector<float> a(n), b(n), c(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  for (int rep = 0; rep < 5; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    const double s = seconds_since(t0);
    p.bandwidth_gbs = std::max(p.bandwidth_gbs, 3.0 * n * sizeof(float) / s / 1e9);
  }
  sink = sink + a[n / 2];
  return p;
}

}  // namespace convcheck
