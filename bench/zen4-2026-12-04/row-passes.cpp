#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
// The depthwise kernels' read pattern alone (bench/zen4-2026-12-04/README.md): two arrays (input,
// out_backprop) of R rows of P pixels x C floats (MobileNet dw3's 8x56 rows of 56 x 128, 25.7 MB
// in all, which stays in a 32 MB L3 between repetitions); per row C/16 passes, pass u reading
// line u of each pixel of the row in both (a vector of channels per pass, as the kernels do).
// Modes: 4 a plain sequential read (no passes); 0 the passes without software prefetch; 1 the
// next row prefetched a line per step with prefetcht1 (into L2, as the kernels did), 2 with
// prefetcht0 (into L1), 5 prefetchnta, 3 prefetcht1 two rows ahead, 9 prefetcht0 four lines every
// fourth step; 6 each row read sequentially before its passes; 7 the next row prefetched at once
// (prefetcht1) at the start of a row. Build: g++ -O2 -mavx512f -fopenmp row-passes.cpp.
// Prints each mode's best and median of 40 repetitions at 1 and 2 threads, as GB/s of the data.
int main(int argc, char** argv) {
  const int P = 56, C = 128, R = 8 * 56;
  const size_t row = size_t(P) * C, n = row * R;
  std::vector<float> x(n, 1.f), dy(n, 2.f);
  float sink = 0;
  for (int mode : {4, 0, 1, 2, 5, 3, 9, 6, 7})
    for (int threads : {1, 2}) {
      std::vector<double> t;
      for (int rep = 0; rep < 40; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        float tot = 0;
#pragma omp parallel num_threads(threads) reduction(+ : tot)
        {
          int id = omp_get_thread_num(), nt = omp_get_num_threads();
          int r0 = R * id / nt, r1 = R * (id + 1) / nt;
          __m512 s0 = _mm512_setzero_ps(), s1 = s0;
          for (int r = r0; r < r1; ++r) {
            const float* xr = &x[r * row];
            const float* dr = &dy[r * row];
            if (mode == 4) {
              for (size_t i = 0; i < row; i += 16) {
                s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xr + i));
                s1 = _mm512_add_ps(s1, _mm512_loadu_ps(dr + i));
              }
              continue;
            }
            if (mode == 6)
              for (size_t i = 0; i < row; i += 16) {
                s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xr + i));
                s1 = _mm512_add_ps(s1, _mm512_loadu_ps(dr + i));
              }
            if (mode == 7 && r + 1 < r1)
              for (size_t i = 0; i < row; i += 16) {
                _mm_prefetch((const char*)(xr + row + i), _MM_HINT_T1);
                _mm_prefetch((const char*)(dr + row + i), _MM_HINT_T1);
              }
            int dist = mode == 3 ? 2 : 1;
            const char* nx = (const char*)(xr + dist * row);
            const char* nd = (const char*)(dr + dist * row);
            bool pf = mode != 0 && mode != 6 && mode != 7 && r + dist < r1;
            size_t k = 0;
            for (int u = 0; u < C / 16; ++u)
              for (int j = 0; j < P; ++j, ++k) {
                s0 = _mm512_add_ps(s0, _mm512_loadu_ps(xr + j * C + u * 16));
                s1 = _mm512_add_ps(s1, _mm512_loadu_ps(dr + j * C + u * 16));
                if (pf) {
                  if (mode == 2) {
                    _mm_prefetch(nx + k * 64, _MM_HINT_T0);
                    _mm_prefetch(nd + k * 64, _MM_HINT_T0);
                  } else if (mode == 9) {
                    if (k % 4 == 0) {
                      for (int q = 0; q < 4; ++q) {
                        _mm_prefetch(nx + (k + q) * 64, _MM_HINT_T0);
                        _mm_prefetch(nd + (k + q) * 64, _MM_HINT_T0);
                      }
                    }
                  } else if (mode == 5) {
                    _mm_prefetch(nx + k * 64, _MM_HINT_NTA);
                    _mm_prefetch(nd + k * 64, _MM_HINT_NTA);
                  } else {
                    _mm_prefetch(nx + k * 64, _MM_HINT_T1);
                    _mm_prefetch(nd + k * 64, _MM_HINT_T1);
                  }
                }
              }
          }
          tot += _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
        }
        sink += tot;
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
      }
      std::sort(t.begin(), t.end());
      printf("mode %d threads %d: min %.3f ms med %.3f ms -> %.1f GB/s (min), %.1f (med)\n", mode,
             threads, t[0], t[20], 2 * n * 4 / t[0] / 1e6, 2 * n * 4 / t[20] / 1e6);
    }
  printf("%f\n", sink);
}
