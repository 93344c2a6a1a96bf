// What every gpu/ kernel shares: the host/device qualifier, the problem's geometry as the kernels
// see it, the multiply-add of each compute type, integer helpers, the stride-phase tap ranges, and
// bit-exact conversions (f16, bf16, TF32) that give the same bits on the host and the device.
//
// Every function here is `__host__ __device__` under nvcc and plain inline C++ under a host
// compiler: the kernels' arithmetic is written once and the host-emulation test
// (tests/test_gpu_kernels.cpp) runs exactly this code over every element. Nothing here may depend
// on the FPU's rounding mode, on FTZ or on contraction: products and sums are explicit fma / add
// calls, and conversions work on bit patterns.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define CONVCHECK_HD __host__ __device__ __forceinline__
#else
#include <cmath>
#define CONVCHECK_HD inline
#endif
// Full unrolling of fixed-trip loops, in device code only (host compilers warn on the pragma).
#ifdef __CUDA_ARCH__
#define CONVCHECK_UNROLL _Pragma("unroll")
#else
#define CONVCHECK_UNROLL
#endif

namespace convcheck::gpu::k {

/// The problem as the kernels see it (core's Geometry, trivially copyable, int64 throughout).
/// Activations are NHWC, filters HWIO; a depthwise filter RSCM is HWIO with Cf = 1, O = C*M.
struct ConvShape {
  int64_t N, H, W, C;      // forward input
  int64_t KH, KW, Cf, O;   // filter taps, input channels per group, output channels
  int64_t G, M;            // groups (C / Cf; C for depthwise), depthwise multiplier
  int64_t OH, OW;          // forward output = out_backprop
  int64_t sh, sw, dh, dw;  // strides, dilations
  int64_t pad_top, pad_left;
};

/// How a tensor is stored (the problem's dtype); the kernels compute in float (f16, bf16, f32),
/// double (f64) or uint32_t (i32).
enum class Storage { f16, bf16, f32, f64, i32 };

// ---- arithmetic of the compute types -----------------------------------------------------------
// float (f32, f16, bf16, tf32 operands), double (f64), uint32_t (int32: wrapping arithmetic is
// int32's modulo 2^32, without signed overflow).

/// acc + a*b rounded once (fused), or modulo 2^32.
CONVCHECK_HD float mul_add(float a, float b, float acc) {
#ifdef __CUDA_ARCH__
  return __fmaf_rn(a, b, acc);
#else
  return std::fma(a, b, acc);
#endif
}
CONVCHECK_HD double mul_add(double a, double b, double acc) {
#ifdef __CUDA_ARCH__
  return __fma_rn(a, b, acc);
#else
  return std::fma(a, b, acc);
#endif
}
CONVCHECK_HD uint32_t mul_add(uint32_t a, uint32_t b, uint32_t acc) {
  return a * b + acc;
}
/// a + b rounded once (never contracted with a neighbouring product).
CONVCHECK_HD float add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
CONVCHECK_HD double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CONVCHECK_HD uint32_t add(uint32_t a, uint32_t b) {
  return a + b;
}

// ---- integers ----------------------------------------------------------------------------------

/// Floor division and modulo for a positive divisor.
CONVCHECK_HD int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
CONVCHECK_HD int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}
CONVCHECK_HD int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}
CONVCHECK_HD int64_t max64(int64_t a, int64_t b) {
  return a > b ? a : b;
}
CONVCHECK_HD int64_t gcd64(int64_t a, int64_t b) {
  while (b != 0) {
    const int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// The filter taps that connect a backprop-input position to out_backprop along one axis, in
/// closed form, so that no product with an inserted zero of the strided out_backprop is formed.
///
/// Position v (= h + pad) is read by tap a through out_backprop index i = (v - a*d) / s when the
/// division is exact and 0 <= i < out. Exactness holds for a in one residue class modulo
/// step = s / gcd(s, d) (the stride phase of v), found among a < step; along the class i falls by
/// d / gcd(s, d) per tap. The taps are first, first + step, ..., count of them, with out_backprop
/// index i_first for the first.
struct TapRange {
  int64_t first = 0, step = 1, count = 0;
  int64_t i_first = 0, i_step = 0;  // i of the m-th tap: i_first - m * i_step
};
CONVCHECK_HD TapRange tap_range(int64_t v, int64_t d, int64_t s, int64_t K, int64_t out) {
  TapRange t;
  const int64_t g = gcd64(s, d);
  t.step = s / g;
  t.i_step = d / g;
  int64_t a0 = -1;
  for (int64_t a = 0; a < t.step && a < K; ++a) {
    if (floor_mod(v - a * d, s) == 0) {
      a0 = a;
      break;
    }
  }
  if (a0 < 0) return t;  // this phase has no taps: the position gets no term
  const int64_t i0 = floor_div(v - a0 * d, s);
  // m-th tap: a = a0 + m*step < K, i = i0 - m*i_step in [0, out).
  const int64_t m_lo =
      max64(0, floor_div(i0 - out + t.i_step, t.i_step));  // ceil((i0-out+1)/i_step)
  const int64_t m_hi = min64(floor_div(i0, t.i_step), floor_div(K - 1 - a0, t.step));
  if (m_hi < m_lo) return t;
  t.first = a0 + m_lo * t.step;
  t.count = m_hi - m_lo + 1;
  t.i_first = i0 - m_lo * t.i_step;
  return t;
}

// ---- bit patterns and 16-bit / TF32 rounding ---------------------------------------------------
// Bit-exact with core/half.h (round to nearest even once, gradual underflow, overflow to Inf, NaN
// quieted keeping the top payload bits), on the host and on the device.

CONVCHECK_HD uint32_t bits_of(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}
CONVCHECK_HD float float_of(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

CONVCHECK_HD float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
  if (e == 0x1F) return float_of(sign | 0x7F800000u | (f ? (f << 13) | 0x400000u : 0u));
  if (e == 0) {
    if (f == 0) return float_of(sign);
    e = 1;  // subnormal: normalise (exact in f32)
    while ((f & 0x400u) == 0) {
      f <<= 1;
      --e;
    }
    f &= 0x3FFu;
    return float_of(sign | ((e + 112u) << 23) | (f << 13));
  }
  return float_of(sign | ((e + 112u) << 23) | (f << 13));
}

CONVCHECK_HD uint16_t f32_to_f16(float v) {
  const uint32_t x = bits_of(v);
  const uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) {  // Inf, NaN
    return static_cast<uint16_t>(sign | 0x7C00u |
                                 (ax > 0x7F800000u ? 0x200u | ((ax >> 13) & 0x3FFu) : 0u));
  }
  if (ax >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds to Inf
  if (ax < 0x38800000u) {  // below 2^-14: f16 subnormal (quantum 2^-24) or zero
    const uint32_t field = ax >> 23;
    if (field == 0) return static_cast<uint16_t>(sign);   // f32 subnormal: below 2^-126
    const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;      // value = m * 2^(field - 150)
    const uint32_t shift = 126u - field;                  // >= 14
    if (shift >= 25) return static_cast<uint16_t>(sign);  // below half the quantum
    uint32_t n = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (n & 1u))) ++n;
    return static_cast<uint16_t>(sign | n);  // n = 0x400 is the smallest normal
  }
  uint32_t h = (ax - 0x38000000u) >> 13;  // rebias the exponent, drop 13 fraction bits
  const uint32_t rem = ax & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(sign | h);
}

CONVCHECK_HD float bf16_to_f32(uint16_t h) {
  uint32_t x = static_cast<uint32_t>(h) << 16;
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0) x |= 0x400000u;
  return float_of(x);
}

CONVCHECK_HD uint16_t f32_to_bf16(float v) {
  const uint32_t x = bits_of(v);
  if ((x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/// An f32 value rounded to TF32 (10 fraction bits, f32's exponent range), to nearest even: what
/// the "gpu-tf32" mode does to every operand before the FP32 FMA. Subnormals, zeros, Inf and NaN
/// pass unchanged: every normal value moves by at most 2^-11 of itself (the contract's u_in), and
/// no nonzero operand becomes 0 (which would turn subnormal * Inf into 0 * Inf = NaN).
CONVCHECK_HD float round_tf32(float v) {
  const uint32_t x = bits_of(v), field = x & 0x7F800000u;
  if (field == 0 || field == 0x7F800000u) return v;
  return float_of((x + 0xFFFu + ((x >> 13) & 1u)) & ~0x1FFFu);  // a carry moves into the exponent
}

}  // namespace convcheck::gpu::k
