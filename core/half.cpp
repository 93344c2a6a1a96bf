#include "core/half.h"

namespace convcheck {
namespace {

bool is_nan_bits(uint32_t b) {
  return (b & 0x7FFFFFFFu) > 0x7F800000u;
}

// A 16-bit format with f32's layout above it: fraction bits, exponent of the smallest normal and
// of the largest finite (bias = emax).
struct Format {
  int frac_bits;
  int emin;
  int emax;
  uint16_t inf_bits() const { return static_cast<uint16_t>((2 * emax + 1) << frac_bits); }
  int drop() const { return 23 - frac_bits; }  // f32 fraction bits not kept
};
constexpr Format kF16{10, -14, 15};
constexpr Format kBF16{7, -126, 127};

// A float NaN narrowed: its sign, the quiet bit, the top payload bits that fit.
uint16_t narrow_nan(uint32_t b, Format f) {
  const uint32_t sign = (b >> 16) & 0x8000u;
  const uint32_t payload = (b & 0x7FFFFFu) >> f.drop();
  return static_cast<uint16_t>(sign | f.inf_bits() | (1u << (f.frac_bits - 1)) | payload);
}

// Rounds v to nearest, ties to even, exactly once into f. Works on the integer significand, so
// no floating-point arithmetic (no FPU rounding mode, no FTZ) is involved.
uint16_t round_once(double v, Format f) {
  const uint64_t bits = Eigen::numext::bit_cast<uint64_t>(v);
  const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
  const int field = static_cast<int>((bits >> 52) & 0x7FF);
  const uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0x7FF) {
    if (frac == 0) return static_cast<uint16_t>(sign | f.inf_bits());
    // NaN: the top payload bits that fit, and the quiet bit (which also keeps it from being Inf).
    const uint64_t payload = frac >> (52 - f.frac_bits);
    return static_cast<uint16_t>(sign | f.inf_bits() | (1u << (f.frac_bits - 1)) | payload);
  }
  // value = m * 2^lsb, m an integer.
  const uint64_t m = field == 0 ? frac : frac | (uint64_t{1} << 52);
  const int lsb = (field == 0 ? 1 : field) - 1075;
  if (m == 0) return sign;
  const int e = lsb + (63 - __builtin_clzll(m));  // exponent of the leading bit
  if (e > f.emax) return static_cast<uint16_t>(sign | f.inf_bits());
  // Below emin the quantum stays at the subnormal spacing: gradual underflow.
  const int e_eff = e < f.emin ? f.emin : e;
  const int shift = e_eff - f.frac_bits - lsb;  // >= 1: a double has more fraction bits
  uint64_t n = 0;                               // 0 when m is below half the quantum
  if (shift < 64) {
    n = m >> shift;
    const uint64_t rem = m & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  // For normals n is in [2^frac_bits, 2^(frac_bits+1)] and the hidden bit adds one to the
  // exponent field; for subnormals the field is 0. A carry to 2^(frac_bits+1) moves into the next
  // binade (or the smallest normal, or Inf: its encoding is the next field with a zero fraction).
  return static_cast<uint16_t>(sign | ((static_cast<uint32_t>(e_eff - f.emin) << f.frac_bits) + n));
}

// Eigen's conversions, NaN handled by our policy (core/half.h).
template <class T>
float widen(uint16_t bits) {
  const uint32_t b =
      Eigen::numext::bit_cast<uint32_t>(static_cast<float>(Eigen::numext::bit_cast<T>(bits)));
  return Eigen::numext::bit_cast<float>(is_nan_bits(b) ? b | 0x400000u : b);  // NaN quieted
}
template <class T>
uint16_t narrow(float v, Format f) {
  const uint32_t b = Eigen::numext::bit_cast<uint32_t>(v);
  return is_nan_bits(b) ? narrow_nan(b, f) : Eigen::numext::bit_cast<uint16_t>(T(v));
}

}  // namespace

float f16_to_float(uint16_t bits) {
  return widen<f16_t>(bits);
}
uint16_t f16_from_float(float v) {
  return narrow<f16_t>(v, kF16);
}
float bf16_to_float(uint16_t bits) {
  return widen<bf16_t>(bits);
}
uint16_t bf16_from_float(float v) {
  return narrow<bf16_t>(v, kBF16);
}

double f16_to_double(uint16_t bits) {
  return static_cast<double>(f16_to_float(bits));
}
double bf16_to_double(uint16_t bits) {
  return static_cast<double>(bf16_to_float(bits));
}
uint16_t f16_from_double(double v) {
  return round_once(v, kF16);
}
uint16_t bf16_from_double(double v) {
  return round_once(v, kBF16);
}

}  // namespace convcheck
