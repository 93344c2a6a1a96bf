#include "core/cpu.h"

#include <cstdint>
#include <cstring>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace convcheck {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// XGETBV through inline assembly: the _xgetbv intrinsic needs -mxsave on the whole file, and this
// file stays at the baseline ISA. Only called when CPUID says OSXSAVE (the OS enabled XSAVE), so
// the instruction exists.
uint64_t xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures probe() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return f;
  const unsigned max_leaf = a;
  char vendor[13];
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  vendor[12] = '\0';
  f.vendor = vendor;

  __get_cpuid(1, &a, &b, &c, &d);
  const unsigned base_family = (a >> 8) & 0xF;
  f.family = base_family == 0xF ? base_family + ((a >> 20) & 0xFF) : base_family;
  f.sse42 = (c & bit_SSE4_2) != 0;
  f.avx = (c & bit_AVX) != 0;
  f.fma = (c & bit_FMA) != 0;
  f.f16c = (c & bit_F16C) != 0;
  const bool osxsave = (c & bit_OSXSAVE) != 0;
  if (max_leaf >= 7) {
    __get_cpuid_count(7, 0, &a, &b, &c, &d);
    f.avx2 = (b & bit_AVX2) != 0;
    f.avx512f = (b & bit_AVX512F) != 0;
  }
  if (osxsave) {
    const uint64_t x = xcr0();
    f.os_ymm = (x & 0x6) == 0x6;    // bit 1 SSE, bit 2 AVX (upper YMM halves)
    f.os_zmm = (x & 0xe6) == 0xe6;  // plus bit 5 opmask, 6 ZMM0-15 upper, 7 ZMM16-31
  }
  return f;
}
#else
CpuFeatures probe() {
  return {};
}
#endif

}  // namespace

std::string CpuFeatures::describe() const {
  std::string s;
  auto add = [&s](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(sse42, "sse4.2");
  add(avx, "avx");
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  if (s.empty()) s = "baseline only";
  s += "; OS saves";
  if (!os_ymm && !os_zmm) s += " no vector state beyond SSE";
  if (os_ymm) s += " ymm";
  if (os_zmm) s += " zmm";
  return s;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = probe();
  return f;
}

}  // namespace convcheck
