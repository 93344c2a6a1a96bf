// AVX2 6 x 16 backprop-filter tile (the shape of optimized/'s FilterTile kernel) over kc pixels of
// L1-resident operands, against a loop of 12 independent FMA chains (the core's peak): the tile
// with broadcasts from memory (as the kernel) and with a pre-broadcast operand (8 copies per
// element, a full-vector load instead). Build: g++ -O3 -mavx2 -mfma tile-l1.cpp -o tile-l1; run:
// ./tile-l1 KC. Figures: terminal.txt (2026-12-06, second session).
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
// 6x16 AVX2 micro-kernel variants over an L1-resident panel, kc pixels per pass.
alignas(64) float X[256 * 48];  // broadcast side, 6 per pixel (or 48 pre-broadcast)
alignas(64) float D[256 * 16];
alignas(64) float C[6 * 16];
template <int MODE>
__attribute__((noinline)) void kern1(long kc) {
  __m256 a[6][2];
#pragma GCC unroll 6
  for (int m = 0; m < 6; ++m) {
    a[m][0] = _mm256_load_ps(C + m * 16);
    a[m][1] = _mm256_load_ps(C + m * 16 + 8);
  }
  const float* x = X;
  const float* d = D;
  for (long k = 0; k < kc; ++k) {
    __m256 d0 = _mm256_load_ps(d), d1 = _mm256_load_ps(d + 8);
#pragma GCC unroll 6
    for (int m = 0; m < 6; ++m) {
      __m256 xm;
      if (MODE == 0)
        xm = _mm256_broadcast_ss(x + m);
      else
        xm = _mm256_load_ps(x + 8 * m);  // pre-broadcast
      a[m][0] = _mm256_fmadd_ps(xm, d0, a[m][0]);
      a[m][1] = _mm256_fmadd_ps(xm, d1, a[m][1]);
    }
    x += MODE == 0 ? 6 : 48;
    d += 16;
  }
#pragma GCC unroll 6
  for (int m = 0; m < 6; ++m) {
    _mm256_store_ps(C + m * 16, a[m][0]);
    _mm256_store_ps(C + m * 16 + 8, a[m][1]);
  }
}
template <int MODE>
void kern(long kc, long reps) {
  for (long r = 0; r < reps; ++r) kern1<MODE>(kc);
}
// Pure FMA peak: 12 independent chains, no loads.
__attribute__((noinline)) void peak(long n) {
  __m256 a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm256_set1_ps(i);
  __m256 b = _mm256_set1_ps(1.0001f), c = _mm256_set1_ps(0.5f);
  for (long i = 0; i < n; ++i)
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) a[j] = _mm256_fmadd_ps(a[j], b, c);
  for (int i = 0; i < 12; ++i) _mm256_store_ps(C + 8 * (i % 12), a[i]);
}
template <class F>
double best(F f) {
  double b = 1e30;
  for (int t = 0; t < 7; ++t) {
    auto s = std::chrono::steady_clock::now();
    f();
    double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    if (e < b) b = e;
  }
  return b;
}
int main(int argc, char** argv) {
  long kc = argc > 1 ? atol(argv[1]) : 128;
  for (int i = 0; i < 256 * 48; ++i) X[i] = 1e-3f * (i % 7);
  for (int i = 0; i < 256 * 16; ++i) D[i] = 1e-3f * (i % 5);
  long n = 20000000;
  double tp = best([&] { peak(n); });
  double gp = 2.0 * 8 * 12 * n / tp / 1e9;
  long reps = 20000000 / kc;
  double t0 = best([&] { kern<0>(kc, reps); });
  double t1 = best([&] { kern<1>(kc, reps); });
  double fl = 2.0 * 6 * 16 * kc * reps;
  printf("peak %.1f GFLOP/s; bcast %.1f (%.0f%%); prebcast %.1f (%.0f%%)\n", gp, fl / t0 / 1e9,
         100 * fl / t0 / 1e9 / gp, fl / t1 / 1e9, 100 * fl / t1 / 1e9 / gp);
}
