// AVX-512F intrinsics for a CPU without them, through SIMDe (libsimde-dev: "SIMD Everywhere",
// portable implementations of the x86 intrinsics): included by kernels_avx512.cpp in a build
// configured with CONVCHECK_OPTIMIZED_ISA=avx512-emulated (optimized/CMakeLists.txt) in place of
// <immintrin.h>'s AVX-512 part, so that the same kernels, and the driver's AVX-512 paths (its
// 64-float panels, wide_panel rules, blockings), run on any AVX2 CPU. For tests only: the
// emulation is correct lane by lane but nothing like AVX-512's speed (dispatch.h: such a build
// never chooses it unasked, and the backend then names its ISA "avx512-emulated").
//
// SIMDe's native aliases map the _mm512_* names and types onto its own; the few that its Debian 12
// version (0.7.4) lacks are written here. The masked loads and stores are written here in any
// case, an element at a time: simd.h's contract is that a partial load or store touches only its n
// lanes (a kernel stops exactly at a buffer's end), which a full-width load and blend would break
// (and AddressSanitizer would report).
#pragma once

#include <immintrin.h>

#include <cstdint>

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

namespace convcheck::opt::avx512_emulation {

template <class V, class T, int W, class M>
inline V maskz_loadu(M k, const void* p) {
  T lanes[W];
  for (int i = 0; i < W; ++i) lanes[i] = (k >> i) & 1 ? static_cast<const T*>(p)[i] : T(0);
  V v;
  static_assert(sizeof v == sizeof lanes, "a vector of W lanes");
  __builtin_memcpy(&v, lanes, sizeof v);
  return v;
}

template <class V, class T, int W, class M>
inline void mask_storeu(void* p, M k, V v) {
  T lanes[W];
  __builtin_memcpy(lanes, &v, sizeof v);
  for (int i = 0; i < W; ++i)
    if ((k >> i) & 1) static_cast<T*>(p)[i] = lanes[i];
}

inline simde__m512 maskz_loadu_ps(simde__mmask16 k, const void* p) {
  return maskz_loadu<simde__m512, float, 16>(k, p);
}
inline simde__m512d maskz_loadu_pd(simde__mmask8 k, const void* p) {
  return maskz_loadu<simde__m512d, double, 8>(k, p);
}
inline void mask_storeu_ps(void* p, simde__mmask16 k, simde__m512 v) {
  mask_storeu<simde__m512, float, 16>(p, k, v);
}
inline void mask_storeu_pd(void* p, simde__mmask8 k, simde__m512d v) {
  mask_storeu<simde__m512d, double, 8>(p, k, v);
}

}  // namespace convcheck::opt::avx512_emulation

#undef _mm512_maskz_loadu_ps
#undef _mm512_maskz_loadu_pd
#undef _mm512_mask_storeu_ps
#undef _mm512_mask_storeu_pd
#define _mm512_maskz_loadu_ps convcheck::opt::avx512_emulation::maskz_loadu_ps
#define _mm512_maskz_loadu_pd convcheck::opt::avx512_emulation::maskz_loadu_pd
#define _mm512_mask_storeu_ps convcheck::opt::avx512_emulation::mask_storeu_ps
#define _mm512_mask_storeu_pd convcheck::opt::avx512_emulation::mask_storeu_pd
// A non-temporal store is a cache hint: the emulation stores plainly (keeping the aligned form,
// whose alignment the kernels guarantee).
#undef _mm512_stream_ps
#undef _mm512_stream_pd
#define _mm512_stream_ps simde_mm512_store_ps
#define _mm512_stream_pd simde_mm512_store_pd
// Masked shuffles: 0.7.4 has the 128-bit-lane ones without their aliases, and not shuffle_ps's
// (written as the others are: the shuffle, then the masked lanes zeroed).
#undef _mm512_maskz_shuffle_f32x4
#undef _mm512_maskz_shuffle_f64x2
#undef _mm512_maskz_shuffle_ps
#define _mm512_maskz_shuffle_f32x4 simde_mm512_maskz_shuffle_f32x4
#define _mm512_maskz_shuffle_f64x2 simde_mm512_maskz_shuffle_f64x2
#define _mm512_maskz_shuffle_ps(k, a, b, imm) \
  simde_mm512_maskz_mov_ps((k), simde_mm512_shuffle_ps((a), (b), (imm)))
