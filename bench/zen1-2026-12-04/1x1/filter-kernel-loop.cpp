#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "bench/peak.h"
#include "optimized/kernels.h"
// The production backprop-filter kernel (the table's widest AVX2 variant, 6 x 16) over packed
// operands in cache, every tile of one block in packed_runs' order (README.md here), beside the
// one-thread FMA peak measured just after it in the same process (bench/peak.cpp: a noisy host).
//   g++ -O2 -std=c++17 -I. filter-kernel-loop.cpp build/bench/libbench.a \
//     build/optimized/liboptimized.a build/core/libcore.a -fopenmp -o kb && ./kb KC [MODE]
// MODE 1: one A and B panel for every tile; 2: one C tile for every call.
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
  const double gf = 2.0 * 200 * Cf * O * KC / best / 1e9, pk = convcheck::measure_peaks(1).fma_gflops;
  printf("MR %ld NR %ld KC %ld mode %d: %.1f GFLOP/s, peak now %.1f: %.0f %%\n", (long)MR, (long)NR,
         (long)KC, mode, gf, pk, 100 * gf / pk);
}
