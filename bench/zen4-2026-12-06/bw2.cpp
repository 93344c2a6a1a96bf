// NT-store bandwidth at 2 threads over a buffer of MB megabytes: halves vs interleaved blocks.
#include <immintrin.h>
#include <omp.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const size_t mb = atol(argv[i]), n = mb << 20 >> 2;
    float* a = (float*)aligned_alloc(4096, n * 4);
    for (size_t k = 0; k < n; ++k) a[k] = 1;
    for (size_t block : {size_t(0), size_t(4096), size_t(65536)}) {  // 0: halves; else block bytes
      for (int th : {1, 2}) {
        std::vector<double> ts;
        for (int rep = 0; rep < 9; ++rep) {
          double t0 = now();
#pragma omp parallel num_threads(th)
          {
            int id = omp_get_thread_num(), nt = omp_get_num_threads();
            __m256 v = _mm256_set1_ps(3.0f);
            if (block == 0 || nt == 1) {
              size_t lo = n / nt * id, hi = n / nt * (id + 1);
              for (size_t k = lo; k < hi; k += 8) _mm256_stream_ps(a + k, v);
            } else {
              const size_t be = block / 4;
              for (size_t b0 = id * be; b0 < n; b0 += nt * be)
                for (size_t k = b0; k < std::min(n, b0 + be); k += 8) _mm256_stream_ps(a + k, v);
            }
            _mm_sfence();
          }
          ts.push_back(now() - t0);
        }
        std::sort(ts.begin(), ts.end());
        printf("%4zu MB %-6s %d thr: %.1f GB/s med, %.1f best\n", mb, block == 0 ? "halves" : block == 4096 ? "4K" : "64K", th, n * 4 / ts[4] / 1e9, n * 4 / ts[0] / 1e9);
      }
    }
    free(a);
  }
}
