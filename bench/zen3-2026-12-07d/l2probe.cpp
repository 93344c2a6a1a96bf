// Where do a block's lines sit when its first-use tiles read them? A probe without hardware
// counters (this guest has none): per trial, a fresh 160 KB region (ResNet conv2 1x1 backprop
// filter's next block: 128 pixels of out_backprop's 1 KiB rows and the input's 256 B) is made
// ready one of several ways, the thread then works for W microseconds on a hot L2-sized set (the
// partial filter and packed panels the kernels reread), and the region is read as the first-use
// tiles read it (a line per pixel, 1 KiB apart, panel after panel), timed in TSC cycles per line.
//   cold:        nothing done ahead (the lines are in memory, or in L3 at best)
//   hot:         the region read once before the work (its lines in L1 / L2 as far as they stay)
//   t1-burst:    prefetcht1 of every line at the start of the work
//   t1-spread:   prefetcht1 spread over the work in 64 slices (packed_runs' schedule)
//   t0-spread, nta-spread: the same with prefetcht0 / prefetchnta
//   t1-even:     prefetcht1 a line at a time, evenly spaced over the work
//   t1-even-2nd-half: the same over the work's second half only (a shorter lead)
// A line read costs about the same in `hot` and `t1-*` where the prefetched lines are in L2 when
// read, about `cold`'s where they were dropped or evicted.
// Build: g++ -O2 -mavx2 -mfma -fopenmp bench/zen3-2026-12-07d/l2probe.cpp -o build/l2probe
// Run:   build/l2probe [THREADS] [ROUNDS]   (one region set per thread, threads run at once)
#include <immintrin.h>
#include <omp.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int64_t kLine = 64;
constexpr int64_t kPixels = 128, kDyRow = 1024, kXRow = 256;
constexpr int64_t kRegion = kPixels * (kDyRow + kXRow);  // 160 KiB
constexpr int64_t kArena = int64_t{768} << 20;           // per thread: cycles past L3 many times
constexpr int64_t kHot = 104 << 10;  // partial filter 64 KiB + packed panels ~40 KiB

double tsc_per_us() {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = __rdtsc();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) {
  }
  const uint64_t c1 = __rdtsc();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return (c1 - c0) / us;
}

enum Mode { kCold, kHotMode, kT1Burst, kT1Spread, kT0Spread, kNtaSpread, kT1Even, kT1Half, kModes };
const char* kNames[] = {"cold",      "hot",        "t1-burst", "t1-spread",
                        "t0-spread", "nta-spread", "t1-even",  "t1-even-2nd-half"};

// The lines of a region, in the order the first-use tiles read them: out_backprop's 16 panels
// (a line per pixel each), then the input's 4 lines a pixel (the 11 input panels' x_first tiles
// read 24 B of them at a time: one new line per pixel and panel start, a line per 2-3 panels).
void region_lines(const char* base, std::vector<const char*>* out) {
  out->clear();
  const char* dy = base;
  const char* x = base + kPixels * kDyRow;
  for (int64_t panel = 0; panel < kDyRow / kLine; ++panel)
    for (int64_t p = 0; p < kPixels; ++p) out->push_back(dy + p * kDyRow + panel * kLine);
  for (int64_t l = 0; l < kXRow / kLine; ++l)
    for (int64_t p = 0; p < kPixels; ++p) out->push_back(x + p * kXRow + l * kLine);
}

// Work on the hot set for `cycles` TSC cycles, issuing `lines` in 64 slices as it goes (spread)
// or none (the caller issued them). Reads the hot set a line at a time with a few FMAs per line
// (the kernels' L2 rereads), so the hot set stays hot.
__attribute__((noinline)) float work(const float* hot, uint64_t cycles,
                                     const std::vector<const char*>* lines, int hint,
                                     int64_t slices = 64, int64_t first_slice = 0) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const __m256 m = _mm256_set1_ps(0.999f);
  const int64_t hot_floats = kHot / 4;
  int64_t h = 0;
  const uint64_t t0 = __rdtsc();
  const int64_t n = lines ? static_cast<int64_t>(lines->size()) : 0;
  for (int64_t slice = 0; slice < slices; ++slice) {
    if (lines && slice >= first_slice) {
      const int64_t l0 = n * (slice - first_slice) / (slices - first_slice);
      const int64_t l1 = n * (slice - first_slice + 1) / (slices - first_slice);
      for (int64_t l = l0; l < l1; ++l) {
        const char* p = (*lines)[l];
        if (hint == 2)
          _mm_prefetch(p, _MM_HINT_T1);
        else if (hint == 3)
          _mm_prefetch(p, _MM_HINT_T0);
        else
          _mm_prefetch(p, _MM_HINT_NTA);
      }
    }
    const uint64_t end = t0 + cycles * (slice + 1) / slices;
    while (__rdtsc() < end) {
      for (int k = 0; k < 2; ++k) {
        const __m256 v = _mm256_load_ps(hot + h);
        h = (h + 16) % hot_floats;
        a0 = _mm256_fmadd_ps(v, m, a0);
        a1 = _mm256_fmadd_ps(a1, m, v);
        a2 = _mm256_fmadd_ps(a2, m, a0);
        a3 = _mm256_fmadd_ps(a3, m, a1);
      }
    }
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

// The first-use read: every line once, in tile order, independent loads summed (no chains through
// memory: the out-of-order core overlaps what misses it can, as the kernels do).
__attribute__((noinline)) float read_lines(const std::vector<const char*>& lines) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  const int64_t n = static_cast<int64_t>(lines.size());
  for (int64_t l = 0; l + 1 < n; l += 2) {
    a0 = _mm256_add_ps(a0, _mm256_load_ps(reinterpret_cast<const float*>(lines[l])));
    a1 = _mm256_add_ps(a1, _mm256_load_ps(reinterpret_cast<const float*>(lines[l + 1])));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(a0, a1));
  return out[0];
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 20;
  const double tpu = tsc_per_us();
  const std::vector<int> waits_us = {0, 10, 25, 50, 100};
  // results[t][w][mode] -> cycles per line of each round
  std::vector<std::vector<std::vector<std::vector<double>>>> res(
      threads, std::vector<std::vector<std::vector<double>>>(
                   waits_us.size(), std::vector<std::vector<double>>(kModes)));
  float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    const int t = omp_get_thread_num();
    char* arena = static_cast<char*>(std::aligned_alloc(4096, kArena));
    std::memset(arena, 1, kArena);
    float* hot = static_cast<float*>(std::aligned_alloc(4096, kHot));
    for (int64_t i = 0; i < kHot / 4; ++i) hot[i] = 1.0f;
    std::vector<const char*> lines;
    int64_t next = 0;
#pragma omp barrier
    for (int r = 0; r < rounds; ++r) {
      for (size_t w = 0; w < waits_us.size(); ++w) {
        for (int mode = 0; mode < kModes; ++mode) {
          char* base = arena + next;
          next = (next + kRegion + 4096) % (kArena - kRegion - 4096);
          region_lines(base, &lines);
          const uint64_t cyc = static_cast<uint64_t>(waits_us[w] * tpu);
          if (mode == kHotMode) sink += read_lines(lines);
          if (mode == kT1Burst)
            for (const char* p : lines) _mm_prefetch(p, _MM_HINT_T1);
          const int hint = mode == kT0Spread ? 3 : mode == kNtaSpread ? 4 : 2;
          const bool spread = mode == kT1Spread || mode == kT0Spread || mode == kNtaSpread;
          const int64_t n = static_cast<int64_t>(lines.size());
          if (mode == kT1Even || mode == kT1Half)
            sink += work(hot, std::max<uint64_t>(cyc, 1), &lines, 2, mode == kT1Even ? n : 2 * n,
                         mode == kT1Even ? 0 : n);
          else
            sink += work(hot, std::max<uint64_t>(cyc, 1), spread ? &lines : nullptr, hint);
          const uint64_t c0 = __rdtsc();
          sink += read_lines(lines);
          const uint64_t c1 = __rdtsc();
          res[t][w][mode].push_back(double(c1 - c0) / lines.size());
        }
      }
    }
    std::free(arena);
    std::free(hot);
  }
  std::printf(
      "# l2probe: %d thread(s), %d rounds, TSC %.0f MHz, region %lld KiB, hot set %lld KiB;"
      " TSC cycles per line, median [min] over rounds (thread 0)\n",
      threads, rounds, tpu, (long long)(kRegion >> 10), (long long)(kHot >> 10));
  std::printf("%-8s", "wait_us");
  for (int m = 0; m < kModes; ++m) std::printf(" %16s", kNames[m]);
  std::printf("\n");
  for (size_t w = 0; w < waits_us.size(); ++w) {
    std::printf("%-8d", waits_us[w]);
    for (int m = 0; m < kModes; ++m) {
      std::vector<double> v = res[0][w][m];
      std::sort(v.begin(), v.end());
      std::printf("   %6.2f [%5.2f]", v[v.size() / 2], v[0]);
    }
    std::printf("\n");
  }
  // Pacing sweep (thread 0 only, the other threads idle): every line prefetched (t1) at the start
  // of 50 us of work, consecutive prefetches `gap` dependent FMAs apart (4 core cycles each), in
  // the order the read takes them; then the read.
  const std::vector<int> gaps = {0, 1, 2, 4, 8, 16};
  std::printf(
      "# pacing: prefetcht1 of all lines, `gap` dependent FMAs (~4 core cycles each) apart, "
      "then 50 us of work, then the read: TSC cycles per line, median [min]\n");
  {
    char* arena = static_cast<char*>(std::aligned_alloc(4096, kArena));
    std::memset(arena, 1, kArena);
    float* hot = static_cast<float*>(std::aligned_alloc(4096, kHot));
    for (int64_t i = 0; i < kHot / 4; ++i) hot[i] = 1.0f;
    std::vector<const char*> lines;
    int64_t next = 0;
    std::vector<std::vector<double>> pr(gaps.size());
    const uint64_t cyc = static_cast<uint64_t>(50 * tpu);
    for (int r = 0; r < rounds; ++r) {
      for (size_t gi = 0; gi < gaps.size(); ++gi) {
        char* base = arena + next;
        next = (next + kRegion + 4096) % (kArena - kRegion - 4096);
        region_lines(base, &lines);
        __m256 c = _mm256_set1_ps(1.0f);
        const __m256 m = _mm256_set1_ps(0.999f);
        const uint64_t p0 = __rdtsc();
        for (const char* p : lines) {
          _mm_prefetch(p, _MM_HINT_T1);
          for (int k = 0; k < gaps[gi]; ++k) c = _mm256_fmadd_ps(c, m, m);
        }
        const uint64_t p1 = __rdtsc();
        float o[8];
        _mm256_storeu_ps(o, c);
        sink += o[0];
        sink += work(hot, cyc, nullptr, 2);
        const uint64_t c0 = __rdtsc();
        sink += read_lines(lines);
        const uint64_t c1 = __rdtsc();
        pr[gi].push_back(double(c1 - c0) / lines.size());
        if (r == 0)
          std::printf("#   gap %d: issuing took %.1f TSC cycles per line\n", gaps[gi],
                      double(p1 - p0) / lines.size());
      }
    }
    for (size_t gi = 0; gi < gaps.size(); ++gi) {
      std::sort(pr[gi].begin(), pr[gi].end());
      std::printf("gap %-3d  %6.2f [%5.2f]\n", gaps[gi], pr[gi][pr[gi].size() / 2], pr[gi][0]);
    }
    std::free(arena);
    std::free(hot);
  }
  return sink == 12345.0f ? 1 : 0;
}
