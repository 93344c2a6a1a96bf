// A copy-bandwidth probe: 2 threads copy N floats (default MobileNet dw3's 12.8 MB) into another
// array, 40 times each way, fastest and median: memcpy, 512-bit loads and stores, the same with
// streaming stores, and load-add-store. On this guest (260 MB L3) both arrays stay in L3: 55 GB/s
// copied, against the 17-20 GB/s `bench`'s triad reads on its larger arrays; the depthwise layers
// were not bandwidth-bound (depthwise-codegen.txt).
//   g++ -O2 -mavx512f -fopenmp copybw.cpp -o /tmp/copybw && /tmp/copybw [N]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
int main(int argc, char** argv) {
  // A multiple of 32 floats: each thread's half is whole 16-float vectors.
  size_t n = (argc > 1 ? atol(argv[1]) : 8L * 56 * 56 * 128) / 32 * 32;
  int reps = 40;
  float* in = (float*)aligned_alloc(64, n * 4);
  float* out = (float*)aligned_alloc(64, n * 4);
  for (size_t i = 0; i < n; ++i) {
    in[i] = i;
    out[i] = 0;
  }
  const char* names[] = {"memcpy", "avx512 ld/st", "avx512 ld/NT st", "avx512 ld/add/st"};
  for (int mode = 0; mode < 4; ++mode) {
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(2)
      {
        int tid = omp_get_thread_num();
        size_t b = n / 2 * tid, e = tid ? n : n / 2;
        if (mode == 0)
          memcpy(out + b, in + b, (e - b) * 4);
        else if (mode == 1)
          for (size_t i = b; i < e; i += 16) _mm512_store_ps(out + i, _mm512_load_ps(in + i));
        else if (mode == 2)
          for (size_t i = b; i < e; i += 16) _mm512_stream_ps(out + i, _mm512_load_ps(in + i));
        else {
          for (size_t i = b; i < e; i += 16) {
            __m512 a = _mm512_load_ps(in + i);
            _mm512_store_ps(out + i, _mm512_add_ps(a, _mm512_set1_ps(1.f)));
          }
        }
      }
      auto t1 = std::chrono::steady_clock::now();
      t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(t.begin(), t.end());
    double gb = 2.0 * n * 4 / 1e9;
    printf("%-22s min %.3f ms (%.1f GB/s)  median %.3f ms (%.1f GB/s)\n", names[mode], t[0],
           gb / t[0] * 1e3, t[reps / 2], gb / t[reps / 2] * 1e3);
  }
}
