#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
// The AVX2 backprop-filter tile's inner loop alone, in L1 (bench/zen4-2026-12-04b/README.md):
// 12 accumulators of a 6 x 16 tile, KC reduction steps per call (the accumulators loaded and
// stored once per call, as optimized/'s filter_kernel_fixed does per call), against the AVX-512
// 6 x 32 tile. Variants: 0 broadcasts from a packed A (6 floats per step; the production kernel's
// instruction sequence: objdump of kernels_avx2.cpp.o, filter_kernel_fixed<Avx2F32, 6, 2, ...>);
// 1 A pre-broadcast (8 copies per element: plain loads, no broadcasts); 2 as 0 with out_backprop's
// vectors as memory operands; 9 the AVX-512 tile; 30 / 312 / 310 as 0 but A strided like an input
// row (64 floats per pixel), the 6 channels at float 0, 12 (across a line boundary) or 10.
// Build: g++ -O3 -mavx2 -mfma avx2-tile.cpp. Prints each variant's best of 5, three times.
constexpr int KC = 64;
__attribute__((noinline)) void k0(const float* a, const float* b, float* c, long reps) {
  for (long r = 0; r < reps; ++r) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm256_loadu_ps(c + 16 * i);
    const float* ap = a; const float* bp = b;
    for (int k = 0; k < KC; ++k, ap += 6, bp += 16) {
      __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) {
        __m256 x = _mm256_broadcast_ss(ap + i);
        acc[i][0] = _mm256_fmadd_ps(x, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(x, b1, acc[i][1]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) { _mm256_storeu_ps(c + 16 * i, acc[i][0]); _mm256_storeu_ps(c + 16 * i + 8, acc[i][1]); }
  }
}
__attribute__((noinline)) void k1(const float* a, const float* b, float* c, long reps) {
  for (long r = 0; r < reps; ++r) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm256_loadu_ps(c + 16 * i);
    const float* ap = a; const float* bp = b;
    for (int k = 0; k < KC; ++k, ap += 48, bp += 16) {
      __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) {
        __m256 x = _mm256_load_ps(ap + 8 * i);
        acc[i][0] = _mm256_fmadd_ps(x, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(x, b1, acc[i][1]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) { _mm256_storeu_ps(c + 16 * i, acc[i][0]); _mm256_storeu_ps(c + 16 * i + 8, acc[i][1]); }
  }
}
// (2) 6x16 with B as memory operands, broadcasts in registers (B loaded twice per k, from L1)
__attribute__((noinline)) void k2(const float* a, const float* b, float* c, long reps) {
  for (long r = 0; r < reps; ++r) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm256_loadu_ps(c + 16 * i);
    const float* ap = a; const float* bp = b;
    for (int k = 0; k < KC; ++k, ap += 6, bp += 16) {
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) {
        __m256 x = _mm256_broadcast_ss(ap + i);
        acc[i][0] = _mm256_fmadd_ps(x, _mm256_load_ps(bp), acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(x, _mm256_load_ps(bp + 8), acc[i][1]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) { _mm256_storeu_ps(c + 16 * i, acc[i][0]); _mm256_storeu_ps(c + 16 * i + 8, acc[i][1]); }
  }
}
// AVX-512 reference: 6x32 with embedded broadcasts
__attribute__((noinline, target("avx512f"))) void k9(const float* a, const float* b, float* c, long reps) {
  for (long r = 0; r < reps; ++r) {
    __m512 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm512_loadu_ps(c + 32 * i);
    const float* ap = a; const float* bp = b;
    for (int k = 0; k < KC; ++k, ap += 6, bp += 32) {
      __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) {
        __m512 x = _mm512_set1_ps(ap[i]);
        acc[i][0] = _mm512_fmadd_ps(x, b0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(x, b1, acc[i][1]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) { _mm512_storeu_ps(c + 32 * i, acc[i][0]); _mm512_storeu_ps(c + 32 * i + 16, acc[i][1]); }
  }
}

// (3) as (0), but A strided like an input row: pixel stride 64 floats (256 B), the 6 channels at
// float offset `off` (0: inside one line; 12: floats 12..17 straddle a line boundary).
__attribute__((noinline)) void k3(const float* a, const float* b, float* c, long reps, int off) {
  for (long r = 0; r < reps; ++r) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) acc[i][0] = acc[i][1] = _mm256_loadu_ps(c + 16 * i);
    const float* ap = a + off; const float* bp = b;
    for (int k = 0; k < KC; ++k, ap += 64, bp += 16) {
      __m256 b0 = _mm256_load_ps(bp), b1 = _mm256_load_ps(bp + 8);
#pragma GCC unroll 6
      for (int i = 0; i < 6; ++i) {
        __m256 x = _mm256_broadcast_ss(ap + i);
        acc[i][0] = _mm256_fmadd_ps(x, b0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(x, b1, acc[i][1]);
      }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; ++i) { _mm256_storeu_ps(c + 16 * i, acc[i][0]); _mm256_storeu_ps(c + 16 * i + 8, acc[i][1]); }
  }
}
int main() {
  float* a = (float*)aligned_alloc(64, KC * 64 * 4);
  float* b = (float*)aligned_alloc(64, KC * 32 * 4);
  float* c = (float*)aligned_alloc(64, 6 * 32 * 4);
  for (int i = 0; i < KC * 64; ++i) a[i] = 1e-3f;
  for (int i = 0; i < KC * 32; ++i) b[i] = 1e-3f;
  for (int i = 0; i < 192; ++i) c[i] = 0;
  const long reps = 200000;
  for (int trial = 0; trial < 3; ++trial)
  for (int v : {0, 1, 2, 9, 30, 312, 310}) {
    double best = 1e30;
    for (int t = 0; t < 5; ++t) {
      auto t0 = std::chrono::steady_clock::now();
      if (v == 0) k0(a, b, c, reps); else if (v == 1) k1(a, b, c, reps); else if (v == 2) k2(a, b, c, reps); else if (v == 9) k9(a, b, c, reps); else k3(a, b, c, reps, v - 300 < 0 ? 0 : v - 300);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s < best) best = s;
    }
    double flops = 2.0 * reps * KC * 6 * (v == 9 ? 32 : 16);
    printf("variant %d: %.1f GFLOP/s\n", v, flops / best / 1e9);
  }
  printf("%f\n", c[0]);
}
