// The optimized backend's depthwise forward / backprop input alone, on the same 64-byte aligned
// buffers (OFF=K: K floats past the boundary) call after call, nothing between calls: the kernels'
// own speed, without the harness's interleaved comparator evicting the caches. Prints the fastest
// and median call and the cycles per 2-column tile at 2.7 GHz (the guest's clock, from its FMA
// peak), times the thread count. Not built by CMake; see build-variant.sh.
//   OMP_NUM_THREADS=1 ./dwk depthwise_conv2d:input=1x24x56x128,filter=3x3x128x1,padding=SAME 200
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/problem.h"
#include "optimized/ops.h"

using namespace convcheck;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const Geometry g = geometry(parse_problem(argv[1]));
  const int reps = argc > 2 ? atoi(argv[2]) : 50;
  const int off = getenv("OFF") ? atoi(getenv("OFF")) : 0;
  auto buffer = [&](size_t n, float v) {
    float* p = static_cast<float*>(aligned_alloc(64, (n + 64) * 4)) + off;
    std::fill(p, p + n, v);
    return p;
  };
  float* x = buffer(g.N * g.H * g.W * g.C, 1.f);
  float* w = buffer(g.KH * g.KW * g.C * g.M, 0.5f);
  float* y = buffer(g.N * g.OH * g.OW * g.O, 0.f);
  const bool bpi = std::string(argv[1]).rfind("depthwise_conv2d_backprop_input", 0) == 0;
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    if (bpi) {
      opt::depthwise_backprop_input<float>(g, w, y, x, true);
    } else {
      opt::depthwise_conv2d<float>(g, x, w, y, true);
    }
    const auto t1 = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(t.begin(), t.end());
  const double tiles = double(g.N) * (bpi ? g.H * g.W : g.OH * g.OW) / 2;
  printf("min %.1f us median %.1f us; per 2-col tile at 2.7GHz: %.0f cycles (min)\n", t[0],
         t[reps / 2], t[0] * 2700 / tiles * omp_get_max_threads());
}
