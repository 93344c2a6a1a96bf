// The data cache sizes the blocking is chosen from (internal.h: cache_sizes()), read once at run
// time: sysconf's glibc names first, then the kernel's description of cpu0's caches in sysfs, then
// a documented fallback. Also the CPU switches that tuning keys on the vendor or core
// (split_fma512, threaded_prefetch_bursts, depthwise_input_rows_to_l1), each with a test override.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/cpu.h"
#include "optimized/internal.h"

namespace convcheck::opt {

namespace {

// Used when neither source reports a size: small enough for every x86-64 core of the last decade
// (a guess too small costs some speed; one too large costs more).
constexpr int64_t kFallbackL1d = 32 * 1024;
constexpr int64_t kFallbackL2 = 256 * 1024;

int64_t from_sysconf(int name) {
#if defined(__GLIBC__)
  const long v = sysconf(name);
  return v > 0 ? static_cast<int64_t>(v) : 0;
#else
  (void)name;
  return 0;
#endif
}

// The size of cpu0's level-`level` data (or unified) cache from sysfs, 0 when not found.
int64_t from_sysfs(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    std::ifstream lv(dir + "/level"), type(dir + "/type"), size(dir + "/size");
    int l = 0;
    std::string t, s;
    if (!(lv >> l) || !(type >> t) || !(size >> s)) continue;
    if (l != level || t == "Instruction") continue;
    int64_t n = 0;
    std::size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) n = n * 10 + (s[i] - '0');
    if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) n *= 1024;
    if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) n *= 1024 * 1024;
    if (n > 0) return n;
  }
  return 0;
}

int64_t level_size(int level, int sysconf_name, int64_t fallback) {
  int64_t n = from_sysconf(sysconf_name);
  if (n <= 0) n = from_sysfs(level);
  return n > 0 ? n : fallback;
}

CacheSizes clamped(CacheSizes c) {
  // Clamped to sane ranges, with the L2 at least twice the L1 (the blocking assumes L2 > L1).
  c.l1d = std::clamp<int64_t>(c.l1d, 4 * 1024, 1024 * 1024);
  c.l2 = std::clamp<int64_t>(c.l2, 2 * c.l1d, 64 * 1024 * 1024);
  return c;
}

CacheSizes override_sizes;
std::atomic<bool> overridden{false};
std::atomic<int> g_split_override{-1};   // override_split_fma512
std::atomic<int> g_bursts_override{-1};  // override_threaded_prefetch_bursts
std::atomic<int> g_l1_override{-1};      // override_depthwise_input_rows_to_l1

// A CPU fact a test may force: its override (0 or 1), else (-1) what the CPU says.
bool unless_forced(const std::atomic<int>& forced, bool cpu) {
  const int f = forced.load(std::memory_order_relaxed);
  return f >= 0 ? f != 0 : cpu;
}

void force(std::atomic<int>* forced, int value) {
  forced->store(value < 0 ? -1 : value != 0, std::memory_order_relaxed);
}

bool amd() {
  static const bool is = cpu_features().vendor == "AuthenticAMD";
  return is;
}

}  // namespace

bool split_fma512() {
  return unless_forced(g_split_override,
                       amd() && cpu_features().family == 0x19 && cpu_features().avx512f);
}

void override_split_fma512(int split) {
  force(&g_split_override, split);
}

bool threaded_prefetch_bursts() {
  return unless_forced(g_bursts_override, amd());
}

void override_threaded_prefetch_bursts(int allow) {
  force(&g_bursts_override, allow);
}

bool depthwise_input_rows_to_l1() {
  return unless_forced(g_l1_override, amd());
}

void override_depthwise_input_rows_to_l1(int to_l1) {
  force(&g_l1_override, to_l1);
}

void override_cache_sizes(int64_t l1d, int64_t l2) {
  override_sizes = clamped({l1d, l2});
  overridden = true;
}

void clear_cache_override() {
  overridden = false;
}

const CacheSizes& cache_sizes() {
  if (overridden) return override_sizes;
  static const CacheSizes sizes = [] {
    CacheSizes c;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    c.l1d = level_size(1, _SC_LEVEL1_DCACHE_SIZE, kFallbackL1d);
    c.l2 = level_size(2, _SC_LEVEL2_CACHE_SIZE, kFallbackL2);
#else
    c.l1d = level_size(1, -1, kFallbackL1d);
    c.l2 = level_size(2, -1, kFallbackL2);
#endif
    return clamped(c);
  }();
  return sizes;
}

}  // namespace convcheck::opt
