// The stand-alone loop of bench/xeon-2026-12-02b/README.md ("Where the backprop filter's time
// goes"): the AVX-512 6 x 64 backprop-filter tile's shape on L1-resident packed operands, in vector
// FMAs per TSC cycle. Not part of the build: g++ -O3 -march=x86-64-v4 tile-loop.cpp -o tile-loop &&
// ./tile-loop microbenchmark: 6x64 outer-product tile, AVX-512, L1-resident packed operands
#include <immintrin.h>
#include <x86intrin.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
alignas(64) float A[512 * 8];
alignas(64) float B[512 * 64];
alignas(64) float C[6 * 64];
template <int MODE>
__attribute__((noinline)) void tile(const float* a, const float* b, int n, float* c, long astep) {
  __m512 acc[6][4];
#pragma GCC unroll 64
  for (int m = 0; m < 6; ++m)
#pragma GCC unroll 64
    for (int v = 0; v < 4; ++v) acc[m][v] = _mm512_load_ps(c + m * 64 + v * 16);
  for (int k = 0; k < n; ++k) {
    __m512 d[4];
#pragma GCC unroll 64
    for (int v = 0; v < 4; ++v)
      d[v] = MODE == 2 ? _mm512_set1_ps(1.0f) : _mm512_load_ps(b + v * 16);
#pragma GCC unroll 64
    for (int m = 0; m < 6; ++m) {
      const __m512 xm = MODE == 1 ? _mm512_set1_ps(0.5f) : _mm512_set1_ps(a[m]);
#pragma GCC unroll 64
      for (int v = 0; v < 4; ++v) acc[m][v] = _mm512_fmadd_ps(xm, d[v], acc[m][v]);
    }
    a += astep;
    b += 64;
  }
#pragma GCC unroll 64
  for (int m = 0; m < 6; ++m)
#pragma GCC unroll 64
    for (int v = 0; v < 4; ++v) _mm512_store_ps(c + m * 64 + v * 16, acc[m][v]);
}
template <int MODE>
void run(const char* name, int n, long astep) {
  const int reps = 200000 * 128 / n;
  for (int r = 0; r < 1000; ++r) tile<MODE>(A, B, n, C, astep);
  uint64_t t = __rdtsc();
  for (int r = 0; r < reps; ++r) tile<MODE>(A, B, n, C, astep);
  t = __rdtsc() - t;
  printf("%-28s n=%4d astep %ld: %.2f vfma/tsc-cycle\n", name, n, astep, double(reps) * n * 24 / t);
}
int main() {
  for (int i = 0; i < 512 * 8; ++i) A[i] = 1e-3f;
  for (int i = 0; i < 512 * 64; ++i) B[i] = 1e-3f;
  run<2>("no loads (bcast const a)", 128, 6);
  run<1>("dy loads, const bcast", 128, 6);
  run<0>("dy loads + bcast loads", 128, 6);
  run<0>("dy loads + bcast loads", 64, 6);
  run<0>("dy loads + bcast loads", 32, 6);
  run<0>("dy loads + bcast loads", 256, 6);
  run<0>("dy loads + bcast loads", 512, 6);
  run<0>("astep 8", 128, 8);
}
