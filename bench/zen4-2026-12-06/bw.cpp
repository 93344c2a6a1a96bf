// Bandwidth at 1 and 2 threads over one buffer: non-temporal stores, plain stores, and a read mode (one chain of vector adds: latency-bound, not used in the README).
#include <immintrin.h>
#include <omp.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  const size_t mb = argc > 1 ? atol(argv[1]) : 256;
  const size_t n = mb << 20 >> 2;
  float* a = (float*)aligned_alloc(64, n * 4);
  float* b = (float*)aligned_alloc(64, n * 4);
  for (size_t i = 0; i < n; ++i) a[i] = 1.0f, b[i] = 2.0f;
  for (int th : {1, 2, 1, 2}) {
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<double> ts;
      float sink = 0;
      for (int rep = 0; rep < 7; ++rep) {
        double t0 = now();
#pragma omp parallel num_threads(th) reduction(+ : sink)
        {
          int id = omp_get_thread_num(), nt = omp_get_num_threads();
          size_t lo = n / nt * id, hi = n / nt * (id + 1);
          __m256 v = _mm256_set1_ps(3.0f), s = _mm256_setzero_ps();
          if (mode == 0) for (size_t i = lo; i < hi; i += 8) _mm256_stream_ps(a + i, v);
          else if (mode == 1) for (size_t i = lo; i < hi; i += 8) _mm256_store_ps(a + i, v);
          else { for (size_t i = lo; i < hi; i += 8) s = _mm256_add_ps(s, _mm256_load_ps(b + i)); }
          _mm_sfence();
          float t[8]; _mm256_storeu_ps(t, s); sink += t[0];
        }
        ts.push_back(now() - t0);
      }
      std::sort(ts.begin(), ts.end());
      printf("%zu MB threads %d %-9s %.1f GB/s (median), %.1f (best)  %g\n", mb, th,
             mode == 0 ? "nt-store" : mode == 1 ? "store" : "read", n * 4 / ts[3] / 1e9, n * 4 / ts[0] / 1e9, (double)sink);
    }
  }
}
