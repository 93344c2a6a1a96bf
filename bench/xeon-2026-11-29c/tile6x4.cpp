#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
// 6x4 zmm filter tile: acc[m][v] += bcast(b[p*bstep+m]) * v[p*vstep + 16v]
__attribute__((noinline)) void tile(const float* b, long bstep, const float* vv, long vstep, long n, float* c, const char* pf, long pfl) {
  __m512 acc[6][4];
  for (int m = 0; m < 6; ++m) for (int v = 0; v < 4; ++v) acc[m][v] = _mm512_loadu_ps(c + m * 64 + v * 16);
  for (long t = n; t > 0; --t) {
#ifdef PF
    if (pfl > 0) { __builtin_prefetch(pf, 0, 2); pf += 64; --pfl; }
#endif
    __m512 d[4];
    for (int v = 0; v < 4; ++v) d[v] = _mm512_loadu_ps(vv + v * 16);
    for (int m = 0; m < 6; ++m) { __m512 xm = _mm512_set1_ps(b[m]); for (int v = 0; v < 4; ++v) acc[m][v] = _mm512_fmadd_ps(xm, d[v], acc[m][v]); }
    b += bstep; vv += vstep;
  }
  for (int m = 0; m < 6; ++m) for (int v = 0; v < 4; ++v) _mm512_storeu_ps(c + m * 64 + v * 16, acc[m][v]);
}
int main(int argc, char** argv) {
  long px = atol(argv[1]), bstep = atol(argv[2]), vstep = atol(argv[3]), tiles = atol(argv[4]);
  std::vector<float> B(px * bstep + 4096, 1e-3f), V(px * vstep + 64, 1e-3f), C(64 * 6 * 64, 0);
  double best = 1e9;
  for (int rep = 0; rep < 30; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < 20; ++it)
      for (long t = 0; t < tiles; ++t) tile(B.data() + (t * 6) % bstep, bstep, V.data(), vstep, px, C.data() + (t % 16) * 384, (const char*)V.data(), argc > 5 ? atol(argv[5]) : 0);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s < best) best = s;
  }
  double flop = 2.0 * 20 * tiles * px * 6 * 64;
  printf("px=%ld bstep=%ld vstep=%ld tiles=%ld: %.1f GFLOP/s\n", px, bstep, vstep, tiles, flop / best / 1e9);
}
