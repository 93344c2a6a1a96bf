// IEEE binary16 (f16) and bfloat16 (bf16), stored as raw bit patterns, with our own conversions.
//
// Widening (16-bit -> float/double) is exact. Narrowing rounds once, to nearest with ties to even,
// straight from the source value (double -> f16 never goes through float: that would round twice).
// Subnormals are produced and consumed (no flush-to-zero); overflow rounds to +-Inf exactly as IEEE
// 754 RN does (a value at or above the midpoint between the largest finite and 2^(emax+1) becomes
// Inf); NaN stays NaN with its sign and is quieted, keeping as much payload as fits.
#pragma once

#include <cstdint>

namespace convcheck {

float f16_to_float(uint16_t bits);
double f16_to_double(uint16_t bits);
uint16_t f16_from_float(float v);
uint16_t f16_from_double(double v);

float bf16_to_float(uint16_t bits);
double bf16_to_double(uint16_t bits);
uint16_t bf16_from_float(float v);
uint16_t bf16_from_double(double v);

}  // namespace convcheck
