// The packed 1x1 backprop filter's steady state (backprop_filter.cpp, packed_runs) on AVX2 without
// the tensors: a block of kc pixels, QP input panels [kc][6] and 16 out_backprop panels [kc][16],
// every 6 x 16 tile of the block, C 64 x 256 (ldc 256); order 0 walks out_backprop panels outermost
// (the code's order), 1 input panels; MR4 = 1 makes the last input panel a 4-row one (64 channels =
// 10 x 6 + 4). Build: g++ -O3 -mavx2 -mfma tile-blocks.cpp -o tile-blocks; run:
// ./tile-blocks KC ORDER QP MR4 (the figures in terminal.txt: QP 10, MR4 0 unless said).
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
// Steady state of packed_runs on AVX2: a block of kc pixels, QP x panels [kc][6], OP dy panels
// [kc][16], C 64 x 256 (ldc 256). Orders: 0 = ob outer (dy panel in L1, x panels stream), 1 = qb
// outer.
static float* X;
static float* D;
static float* Cm;
template <int MR>
__attribute__((noinline)) void kern1(const float* x, const float* d, float* c, long kc) {
  __m256 a[MR][2];
#pragma GCC unroll 6
  for (int m = 0; m < MR; ++m) {
    a[m][0] = _mm256_loadu_ps(c + m * 256);
    a[m][1] = _mm256_loadu_ps(c + m * 256 + 8);
  }
  for (long k = 0; k < kc; ++k) {
    __m256 d0 = _mm256_load_ps(d), d1 = _mm256_load_ps(d + 8);
#pragma GCC unroll 6
    for (int m = 0; m < MR; ++m) {
      __m256 xm = _mm256_broadcast_ss(x + m);
      a[m][0] = _mm256_fmadd_ps(xm, d0, a[m][0]);
      a[m][1] = _mm256_fmadd_ps(xm, d1, a[m][1]);
    }
    x += 6;
    d += 16;
  }
#pragma GCC unroll 6
  for (int m = 0; m < MR; ++m) {
    _mm256_storeu_ps(c + m * 256, a[m][0]);
    _mm256_storeu_ps(c + m * 256 + 8, a[m][1]);
  }
}
int main(int argc, char** argv) {
  long kc = atol(argv[1]);
  int order = atoi(argv[2]);
  const int QP = atoi(argv[3]), OP = 16;
  int mr4 = atoi(argv[4]);  // 60 rows (10 full panels) x 256
  X = (float*)aligned_alloc(64, sizeof(float) * QP * kc * 6 + 64);
  D = (float*)aligned_alloc(64, sizeof(float) * OP * kc * 16);
  Cm = (float*)aligned_alloc(64, sizeof(float) * 64 * 256);
  for (long i = 0; i < QP * kc * 6; ++i) X[i] = 1e-3f;
  for (long i = 0; i < OP * kc * 16; ++i) D[i] = 1e-3f;
  for (int i = 0; i < 64 * 256; ++i) Cm[i] = 0;
  long blocks = 200000000L / (kc * QP * OP * 96) + 1;
  double best = 1e30;
  for (int t = 0; t < 7; ++t) {
    auto s = std::chrono::steady_clock::now();
    for (long b = 0; b < blocks; ++b) {
      if (order == 0) {
        for (int ob = 0; ob < OP; ++ob)
          for (int qb = 0; qb < QP; ++qb)
            if (mr4 && qb == QP - 1)
              kern1<4>(X + qb * kc * 6, D + ob * kc * 16, Cm + qb * 6 * 256 + ob * 16, kc);
            else
              kern1<6>(X + qb * kc * 6, D + ob * kc * 16, Cm + qb * 6 * 256 + ob * 16, kc);
      } else {
        for (int qb = 0; qb < QP; ++qb)
          for (int ob = 0; ob < OP; ++ob)
            kern1<6>(X + qb * kc * 6, D + ob * kc * 16, Cm + qb * 6 * 256 + ob * 16, kc);
      }
    }
    double e = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
    if (e < best) best = e;
  }
  double fl = 2.0 * (6 * (QP - mr4) + 4 * mr4) * 16 * kc * OP * blocks;
  printf("kc %ld order %d: %.1f GFLOP/s (%.0f%% of 117.5)\n", kc, order, fl / best / 1e9,
         fl / best / 1e9 / 117.5 * 100);
}
