#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <immintrin.h>
#include "optimized/kernels.h"
// The FMA peak of this core now: 12 independent chains (as bench/peak.cpp), best of 5.
__attribute__((target("avx2,fma"), noinline)) double peak() {
  double best = 1e30;
  float sink = 0;
  for (int t = 0; t < 5; ++t) {
    auto t0 = std::chrono::steady_clock::now();
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 x[12];
    for (int i = 0; i < 12; ++i) x[i] = _mm256_set1_ps(1.0f + 0.01f * i);
    __m256 x0 = x[0], x1 = x[1], x2 = x[2], x3 = x[3], x4 = x[4], x5 = x[5], x6 = x[6],
           x7 = x[7], x8 = x[8], x9 = x[9], x10 = x[10], x11 = x[11];
    for (long i = 0; i < 5000000; ++i) {
      x0 = _mm256_fmadd_ps(x0, a, b), x1 = _mm256_fmadd_ps(x1, a, b), x2 = _mm256_fmadd_ps(x2, a, b);
      x3 = _mm256_fmadd_ps(x3, a, b), x4 = _mm256_fmadd_ps(x4, a, b), x5 = _mm256_fmadd_ps(x5, a, b);
      x6 = _mm256_fmadd_ps(x6, a, b), x7 = _mm256_fmadd_ps(x7, a, b), x8 = _mm256_fmadd_ps(x8, a, b);
      x9 = _mm256_fmadd_ps(x9, a, b), x10 = _mm256_fmadd_ps(x10, a, b), x11 = _mm256_fmadd_ps(x11, a, b);
    }
    x[0] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(x0, x1), _mm256_add_ps(x2, x3)),
                         _mm256_add_ps(_mm256_add_ps(x4, x5), _mm256_add_ps(x6, x7)));
    x[1] = _mm256_add_ps(_mm256_add_ps(x8, x9), _mm256_add_ps(x10, x11));
    sink += x[0][0] + x[1][0];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * 8 * 12 * 5000000 / best / 1e9 + sink * 0;
}
using namespace convcheck::opt;
int main(int argc, char** argv) {
  const KernelTable<float>& kt = kernels<float>();
  const int64_t MR = kt.mr, NR = kt.nr(kt.variants - 1), KC = argc > 1 ? atol(argv[1]) : 128;
  const int mode = argc > 2 ? atoi(argv[2]) : 0;
  const int64_t Cf = 64, O = 256, qb_n = (Cf + MR - 1) / MR, ob_n = O / NR;
  const int64_t lda = KC * MR + 8;
  std::vector<float> pa(lda * qb_n, 1e-3f), pb(KC * NR * ob_n, 1e-3f), c(Cf * O, 0.f);
  Segment seg{0, 0, KC};
  double best = 1e30;
  for (int trial = 0; trial < 7; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    const int reps = 200;
    for (int r = 0; r < reps; ++r)
      for (int64_t ob = 0; ob < ob_n; ++ob)
        for (int64_t qb = 0; qb < qb_n; ++qb) {
          FilterTile<float> ft;
          ft.x = pa.data() + (mode == 1 ? 0 : qb * lda);
          ft.x_step = MR;
          ft.dy = pb.data() + (mode == 1 ? 0 : ob * KC * NR);
          ft.dy_step = NR;
          ft.seg = &seg;
          ft.nseg = 1;
          ft.c = c.data() + (mode == 2 ? 0 : qb * MR * O + ob * NR);
          ft.ldc = O;
          ft.mr = std::min(MR, Cf - qb * MR);
          ft.nr = NR;
          ft.accumulate = true;
          kt.filter[kt.variants - 1](ft);
        }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
  }
  const double gf = 2.0 * 200 * Cf * O * KC / best / 1e9, pk = peak();
  printf("MR %ld NR %ld KC %ld mode %d: %.1f GFLOP/s, peak now %.1f: %.0f %%\n", (long)MR, (long)NR,
         (long)KC, mode, gf, pk, 100 * gf / pk);
}
