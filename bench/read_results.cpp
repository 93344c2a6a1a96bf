// read_results: the results.jsonl reader alone (reports/results.h's read_results, what `report`,
// `--resume` and `merge` spend on reading), timed over a file: best of --runs runs.
//
//   build/bench/read_results FILE [RUNS]     (a big FILE: bench/make_results.py)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "reports/results.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: read_results FILE [RUNS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  const double bytes = static_cast<double>(f.tellg());
  double best = 1e300;
  std::size_t records = 0;
  try {
    for (int i = 0; i < runs; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      const convcheck::reports::ReadResult r = convcheck::reports::read_results(path);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      records = r.records.size();
      if (s < best) best = s;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "read_results: %s\n", e.what());
    return 1;
  }
  std::printf("%zu records, %.1f MB in %.3f s (best of %d): %.1f MB/s, %.0f lines/s\n", records,
              bytes / 1e6, best, runs, bytes / 1e6 / best, static_cast<double>(records) / best);
  return 0;
}
