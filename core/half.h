// IEEE binary16 (f16) and bfloat16 (bf16): Eigen's `Eigen::half` and `Eigen::bfloat16`, the types
// TensorFlow itself stores and computes these dtypes with. Tensors, the plugin ABI and the GPU
// kernels keep them as raw uint16_t bit patterns (the same two bytes: see the static_asserts); the
// functions below convert those patterns.
//
// float <-> f16/bf16 is Eigen's conversion (widening exact; narrowing to nearest, ties to even,
// subnormals kept, overflow to +-Inf as IEEE 754 RN does), with one policy of ours on top, for NaN
// only: a NaN stays NaN with its sign, is quieted, and keeps as much payload as fits, both ways.
// That is what F16C's vcvtps2ph/vcvtph2ps and our SIMD and CUDA conversions do
// (optimized/kernels_impl.h, gpu/kernels/common.cuh), and they are tested bit-exact against these
// functions; Eigen's portable path instead drops the payload when narrowing and does not quiet a
// signalling NaN when widening.
//
// double -> f16/bf16 is our own routine, and it must be: the reference computes each output
// exactly (a double-double or a double) and rounds that value once, straight into the 16-bit
// format. Eigen only converts from float, and double -> float -> f16 rounds twice: a double just
// above an f16 midpoint can round down onto the midpoint in float, and the second rounding then
// ties to even, one ulp from the correct answer (tests/test_half.cpp `no_double_rounding`). On a
// value that is already a float both roads must agree, so tests/test_half.cpp checks
// f16_from_double(double(x)) against Eigen's float conversion for every float x that is not NaN
// (every one of the 2^32 patterns) -- the single rounding and Eigen's rounding agree wherever
// both are defined.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <type_traits>

namespace convcheck {

using f16_t = Eigen::half;
using bf16_t = Eigen::bfloat16;

// The uint16_t storage is the layout of both Eigen types (the ABI does not change).
static_assert(sizeof(f16_t) == sizeof(uint16_t) && sizeof(bf16_t) == sizeof(uint16_t));
static_assert(std::is_trivially_copyable_v<f16_t> && std::is_trivially_copyable_v<bf16_t>);

inline f16_t f16_of_bits(uint16_t bits) {
  return Eigen::numext::bit_cast<f16_t>(bits);
}
inline bf16_t bf16_of_bits(uint16_t bits) {
  return Eigen::numext::bit_cast<bf16_t>(bits);
}
inline uint16_t bits_of(f16_t v) {
  return Eigen::numext::bit_cast<uint16_t>(v);
}
inline uint16_t bits_of(bf16_t v) {
  return Eigen::numext::bit_cast<uint16_t>(v);
}

// Eigen's conversions with the NaN policy above.
float f16_to_float(uint16_t bits);
uint16_t f16_from_float(float v);
float bf16_to_float(uint16_t bits);
uint16_t bf16_from_float(float v);

// Widening to double is exact (through float, which holds every f16 and bf16 value).
double f16_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);

// Rounds a double once, to nearest with ties to even, straight into f16/bf16 (never through
// float), with the same subnormal, overflow and NaN rules.
uint16_t f16_from_double(double v);
uint16_t bf16_from_double(double v);

}  // namespace convcheck
