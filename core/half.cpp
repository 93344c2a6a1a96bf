#include "core/half.h"

#include <cstring>

namespace convcheck {
namespace {

// An IEEE-style binary interchange format: precision p (with the hidden bit), exponent of the
// smallest normal, exponent of the largest finite. Field widths follow from those (bias = emax).
struct Format {
  int p;
  int emin;
  int emax;
  int frac_bits() const { return p - 1; }
  int exp_bits() const {
    int w = 0;
    while ((1 << w) <= 2 * emax + 1) ++w;  // the all-ones field 2*emax+1 encodes Inf/NaN
    return w;
  }
  uint64_t exp_all_ones() const { return static_cast<uint64_t>(2 * emax + 1); }
  uint64_t frac_mask() const { return (uint64_t{1} << frac_bits()) - 1; }
  int sign_shift() const { return frac_bits() + exp_bits(); }
  uint64_t inf_bits() const { return exp_all_ones() << frac_bits(); }
};

constexpr Format kF16{11, -14, 15};
constexpr Format kBF16{8, -126, 127};
constexpr Format kF32{24, -126, 127};
constexpr Format kF64{53, -1022, 1023};

int bit_length(uint64_t m) {
  return m == 0 ? 0 : 64 - __builtin_clzll(m);
}

// Converts a value between two formats, rounding to nearest, ties to even, exactly once. Serves
// both directions: widening never has bits to drop, so it is exact. Works on the integer
// significand, so no floating-point arithmetic (and no FPU rounding mode or FTZ) is involved.
uint64_t convert(uint64_t bits, Format src, Format dst) {
  const uint64_t sign = (bits >> src.sign_shift()) & 1;
  const uint64_t out_sign = sign << dst.sign_shift();
  const uint64_t field = (bits >> src.frac_bits()) & src.exp_all_ones();
  const uint64_t frac = bits & src.frac_mask();

  if (field == src.exp_all_ones()) {
    if (frac == 0) return out_sign | dst.inf_bits();
    // NaN: keep the top payload bits that fit and set the quiet bit, which also guarantees a
    // nonzero fraction, so a NaN can never turn into Inf.
    uint64_t payload = dst.frac_bits() >= src.frac_bits()
                           ? frac << (dst.frac_bits() - src.frac_bits())
                           : frac >> (src.frac_bits() - dst.frac_bits());
    payload |= uint64_t{1} << (dst.frac_bits() - 1);
    return out_sign | dst.inf_bits() | payload;
  }

  // value = m * 2^lsb, m an integer.
  uint64_t m;
  int lsb;
  if (field == 0) {
    m = frac;
    lsb = src.emin - src.frac_bits();
  } else {
    m = frac | (uint64_t{1} << src.frac_bits());
    lsb = static_cast<int>(field) - 1 + src.emin - src.frac_bits();
  }
  if (m == 0) return out_sign;

  const int e = lsb + bit_length(m) - 1;  // exponent of the leading bit
  if (e > dst.emax) return out_sign | dst.inf_bits();
  // Below emin the quantum stays at the subnormal spacing: gradual underflow.
  const int e_eff = e < dst.emin ? dst.emin : e;
  const int quantum = e_eff - dst.frac_bits();
  const int shift = quantum - lsb;

  uint64_t n;
  if (shift <= 0) {
    n = m << -shift;  // exact; n < 2^p_dst
  } else if (shift >= 64) {
    n = 0;  // m < 2^53 is below half the quantum
  } else {
    n = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }

  // For normals n is in [2^(p-1), 2^p] and the hidden bit adds one to the exponent field; for
  // subnormals the field is 0. A carry to 2^p moves into the next binade (or the smallest normal,
  // or Inf: its encoding is exactly the next field value with a zero fraction).
  uint64_t out = (static_cast<uint64_t>(e_eff - dst.emin) << dst.frac_bits()) + n;
  if (out > dst.inf_bits()) out = dst.inf_bits();  // cannot happen after the e > emax check
  return out_sign | out;
}

uint64_t float_bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
uint64_t double_bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
float float_from_bits(uint64_t b) {
  const uint32_t b32 = static_cast<uint32_t>(b);
  float v;
  std::memcpy(&v, &b32, sizeof v);
  return v;
}
double double_from_bits(uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

}  // namespace

float f16_to_float(uint16_t bits) {
  return float_from_bits(convert(bits, kF16, kF32));
}
double f16_to_double(uint16_t bits) {
  return double_from_bits(convert(bits, kF16, kF64));
}
uint16_t f16_from_float(float v) {
  return static_cast<uint16_t>(convert(float_bits(v), kF32, kF16));
}
uint16_t f16_from_double(double v) {
  return static_cast<uint16_t>(convert(double_bits(v), kF64, kF16));
}

float bf16_to_float(uint16_t bits) {
  return float_from_bits(convert(bits, kBF16, kF32));
}
double bf16_to_double(uint16_t bits) {
  return double_from_bits(convert(bits, kBF16, kF64));
}
uint16_t bf16_from_float(float v) {
  return static_cast<uint16_t>(convert(float_bits(v), kF32, kBF16));
}
uint16_t bf16_from_double(double v) {
  return static_cast<uint16_t>(convert(double_bits(v), kF64, kBF16));
}

}  // namespace convcheck
