// Run-time choice of the kernels: the widest ISA that was compiled in and that the CPU (and OS)
// supports, optionally capped by the environment variable CONVCHECK_OPTIMIZED_ISA (generic, avx2,
// avx512) or by limit_isa() (tests use it to run every compiled path on one machine).
#include "optimized/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace convcheck::opt {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return "generic";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

namespace {

#if defined(__x86_64__) && (defined(CONVCHECK_OPT_HAVE_AVX2) || defined(CONVCHECK_OPT_HAVE_AVX512))
// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#endif

bool supported(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::avx2:
#if defined(CONVCHECK_OPT_HAVE_AVX2) && defined(__x86_64__)
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
#else
      return false;
#endif
    case Isa::avx512:
#if defined(CONVCHECK_OPT_HAVE_AVX512) && defined(__x86_64__)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma") && has_f16c();
#else
      return false;
#endif
  }
  return false;
}

Isa env_limit() {
  const char* s = std::getenv("CONVCHECK_OPTIMIZED_ISA");
  if (s == nullptr) return Isa::avx512;
  if (!std::strcmp(s, "generic")) return Isa::generic;
  if (!std::strcmp(s, "avx2")) return Isa::avx2;
  return Isa::avx512;
}

std::atomic<int> g_limit{-1};  // -1: not set by limit_isa()

struct Tables {
  KernelTable<float> f32[3];
  KernelTable<double> f64[3];
  KernelTable<uint32_t> u32;
  Tables() {
    generic_tables(&f32[0], &f64[0], &u32);
    for (int i = 1; i < 3; ++i) {
      f32[i] = f32[0];
      f64[i] = f64[0];
    }
#if defined(CONVCHECK_OPT_HAVE_AVX2)
    avx2_tables(&f32[1], &f64[1]);
#endif
#if defined(CONVCHECK_OPT_HAVE_AVX512)
    avx512_tables(&f32[2], &f64[2]);
#endif
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::generic, Isa::avx2, Isa::avx512})
    if (supported(isa)) out.push_back(isa);
  return out;
}

void limit_isa(Isa isa) {
  g_limit.store(static_cast<int>(isa));
}

void clear_isa_limit() {
  g_limit.store(-1);
}

Isa active_isa() {
  static const Isa env = env_limit();
  const int set = g_limit.load();
  const Isa cap = set >= 0 ? static_cast<Isa>(set) : env;
  for (Isa isa : {Isa::avx512, Isa::avx2}) {
    if (static_cast<int>(isa) <= static_cast<int>(cap) && supported(isa)) return isa;
  }
  return Isa::generic;
}

template <>
const KernelTable<float>& kernels<float>() {
  return tables().f32[static_cast<int>(active_isa())];
}
template <>
const KernelTable<double>& kernels<double>() {
  return tables().f64[static_cast<int>(active_isa())];
}
template <>
const KernelTable<uint32_t>& kernels<uint32_t>() {
  return tables().u32;
}

}  // namespace convcheck::opt
