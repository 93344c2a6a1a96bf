// Measures what exactness costs: the exact reference (certified double-double fast path + Kulisch
// fallback) against the same loop nests accumulating in plain double, on the same problems, same
// threads, interleaved (naive, exact, naive, exact, ...), reporting medians.
//
//   build/bench/reference_cost [--reps N] [--threads T]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"
#include "core/stats.h"
#include "reference/reference.h"

using namespace convcheck;

namespace {

template <class F>
double time_ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      omp_set_num_threads(std::max(1, std::atoi(argv[++i])));
    } else {
      std::fprintf(stderr, "usage: reference_cost [--reps N] [--threads T]\n");
      return 2;
    }
  }
  const char* problems[] = {
      "conv2d_backprop_input:input=1x28x28x128,filter=3x3x128x128,padding=SAME",
      "conv2d_backprop_filter:input=1x28x28x128,filter=3x3x128x128,padding=SAME",
      "conv2d_backprop_input:input=1x32x32x64,filter=5x5x64x128,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=1x32x32x64,filter=5x5x64x128,stride=2x2,padding=SAME",
  };
  std::printf("threads %d, %d timed runs each after one warm-up, f32 operands ~ N(0,1)\n",
              omp_get_max_threads(), reps);
  std::printf("%-84s %10s %10s %7s %9s\n", "problem", "naive ms", "exact ms", "ratio", "fallback");
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal;
  for (const char* text : problems) {
    const Problem p = parse_problem(text);
    const Geometry g = geometry(p);
    const OpIO io = op_io(p.op);
    Tensor t[2];
    ConstTensorView v[2];
    Operands ops;
    int k = 0;
    for (Role r : {io.a, io.b}) {
      t[k] = Tensor(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
      for (int64_t i = 0; i < t[k].size(); ++i) t[k].set(i, normal(rng));
      v[k] = view(static_cast<const Tensor&>(t[k]));
      ops.set(r, &v[k]);
      ++k;
    }
    std::vector<double> naive, exact;
    int64_t fallbacks = 0;
    naive_double_compute(p, ops);
    reference_compute(p, ops);
    for (int r = 0; r < reps; ++r) {
      naive.push_back(time_ms([&] { naive_double_compute(p, ops); }));
      exact.push_back(time_ms([&] { fallbacks = reference_compute(p, ops).exact_fallbacks; }));
    }
    const double mn = median(naive), me = median(exact);
    std::printf("%-84s %10.1f %10.1f %6.2fx %9lld\n", text, mn, me, me / mn,
                static_cast<long long>(fallbacks));
  }
  return 0;
}
