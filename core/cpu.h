// What this CPU and its operating system let the process execute: read once with CPUID and, for
// the vector register state, XGETBV. One home for the fact, used by the optimized backend's
// dispatch (optimized/dispatch.cpp), the bench peaks (bench/peak.cpp) and the reports'
// environment.
//
// A feature counts as usable only when the CPU has it AND the OS saves its register state on a
// context switch (XCR0): a CPU with AVX-512 under an OS or hypervisor that does not enable the ZMM
// state faults on the first AVX-512 instruction exactly like a CPU without it.
//
// This file is compiled for the project's baseline (x86-64: SSE2), like everything outside the
// per-ISA kernel files; nothing here executes a vector instruction.
#pragma once

#include <string>

namespace convcheck {

struct CpuFeatures {
  // What CPUID reports.
  bool sse42 = false, avx = false, avx2 = false, fma = false, f16c = false, avx512f = false;
  // What XCR0 says the OS saves: SSE + AVX (YMM) state; opmask + ZMM state.
  bool os_ymm = false, os_zmm = false;
  std::string vendor;   // "GenuineIntel", "AuthenticAMD", ... (empty off x86)
  unsigned family = 0;  // CPUID's display family (base, plus extended where base is 0xF)

  /// AVX2 + FMA + F16C with the YMM state enabled: what the avx2 kernels execute.
  bool avx2_usable() const { return avx && avx2 && fma && f16c && os_ymm; }
  /// The avx2 set plus AVX-512F with the ZMM state enabled: what the avx512 kernels execute.
  bool avx512_usable() const { return avx2_usable() && avx512f && os_zmm; }
  /// E.g. "sse4.2 avx avx2 fma f16c avx512f; OS saves ymm zmm".
  std::string describe() const;
};

/// This machine's features, probed on first use.
const CpuFeatures& cpu_features();

}  // namespace convcheck
