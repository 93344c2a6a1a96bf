// Kulisch superaccumulator; see exact_accumulator.h.
//
// Representation (all inside the members the header declares):
//  - limb_[0 .. kLimbs-2] hold the value as a little-endian two's-complement integer; bit 0 of
//    limb_[0] weighs 2^-kBias. The largest product magnitude (< 2^2048) plus 64 guard bits stays
//    below bit 4261, i.e. within limb_[66].
//  - limb_[kLimbs-1] is the sign-extension limb: 0 or ~0. Logically every limb above hi_used_
//    equals it, but those limbs are kept physically 0 ("lazy sign extension"). This way a negative
//    value does not drag hi_used_ to the top, and clear() only zeroes what adds actually touched.
//  - Limbs below lo_used_ are 0, physically and logically. An empty range is lo_used_ = kLimbs,
//    hi_used_ = -1.
//  - NaN/Inf are flags; they never touch the limbs.
#include "reference/exact_accumulator.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace convcheck {
namespace {

// GCC extension; the project does not build with -Wpedantic.
using u128 = unsigned __int128;

constexpr int kBias = 2148;  // bit 0 of limb 0 weighs 2^-kBias (the smallest product: (2^-1074)^2)
constexpr int kSign = 67;    // index of the sign-extension limb (kLimbs - 1, checked below)
constexpr uint64_t kFracMask = (uint64_t(1) << 52) - 1;
constexpr uint64_t kHidden = uint64_t(1) << 52;
constexpr FloatFormat kF64{53, -1022, 1023};

inline uint64_t bits_of(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Propagates a carry (+1) or borrow (-1) into limb k and up, keeping the lazy-sign invariants.
void propagate(uint64_t* limb, int& hi, int k, int delta) {
  if (delta > 0) {
    for (; k <= hi; ++k) {
      if (++limb[k] != 0) return;
    }
    // Carry into the implicit sign extension: ...111 + 1 wraps to ...000 (value turned >= 0,
    // nothing to write); ...000 + 1 needs a new limb holding 1.
    if (limb[kSign]) {
      limb[kSign] = 0;
    } else if (hi + 1 < kSign) {  // always true below 2^64 terms
      limb[++hi] = 1;
    }
  } else {
    for (; k <= hi; ++k) {
      if (limb[k]-- != 0) return;
    }
    // Borrow from the sign extension: ...000 - 1 is ...111 (value turned negative; the lazy limbs
    // already read as ~0); ...111 - 1 leaves ...1110, i.e. one new limb ~0 - 1.
    if (!limb[kSign]) {
      limb[kSign] = ~uint64_t(0);
    } else if (hi + 1 < kSign) {
      limb[++hi] = ~uint64_t(0) - 1;
    }
  }
}

// Adds +-mag * 2^(pos - kBias); mag < 2^106 and 0 <= pos <= 4090, so the shifted magnitude fits
// in limbs i..i+2 with i + 2 <= 65.
inline void add_scaled(uint64_t* limb, int& lo, int& hi, u128 mag, int pos, bool negative) {
  const int i = pos >> 6;
  const int s = pos & 63;
  const uint64_t m0 = uint64_t(mag), m1 = uint64_t(mag >> 64);
  uint64_t w0 = m0, w1 = m1, w2 = 0;
  if (s != 0) {
    w0 = m0 << s;
    w1 = (m1 << s) | (m0 >> (64 - s));
    w2 = m1 >> (64 - s);
  }
  if (i < lo) lo = i;
  if (i + 2 > hi) {
    // Materialize the sign extension for the limbs about to be written (a no-op when >= 0).
    if (const uint64_t fill = limb[kSign]) {
      for (int k = hi + 1; k <= i + 2; ++k) limb[k] = fill;
    }
    hi = i + 2;
  }
  // Subtraction is addition of the two's complement: (w ^ ~0) + 1 over these three limbs, with
  // the sign extension ~0 above them. Adding that ~0 to the carry out c leaves c - 1, so the net
  // effect on the limbs above is c - negative: usually 0, no branch mispredicted on the sign.
  const uint64_t mask = negative ? ~uint64_t(0) : 0;
  u128 t = u128(limb[i]) + (w0 ^ mask) + (mask & 1);
  limb[i] = uint64_t(t);
  t = u128(limb[i + 1]) + (w1 ^ mask) + uint64_t(t >> 64);
  limb[i + 1] = uint64_t(t);
  t = u128(limb[i + 2]) + (w2 ^ mask) + uint64_t(t >> 64);
  limb[i + 2] = uint64_t(t);
  const int delta = int(t >> 64) - int(negative);
  // A carry out of, or borrow from, the three limbs is rare except when the sum changes sign.
  if (delta != 0) propagate(limb, hi, i + 3, delta);
}

}  // namespace

ExactAccumulator::ExactAccumulator() {
  static_assert(kSign == kLimbs - 1, "sign-extension limb must be the last one");
  static_assert(kLimbs * 64 > kBias + 2048 + 64 + 1, "limbs must cover products, guard and sign");
  std::memset(limb_, 0, sizeof limb_);
  lo_used_ = kLimbs;
  hi_used_ = -1;
  nan_ = pos_inf_ = neg_inf_ = false;
}

void ExactAccumulator::clear() {
  // Only the touched range: usually a few limbs, even for negative sums (lazy sign extension).
  for (int k = lo_used_; k <= hi_used_; ++k) limb_[k] = 0;
  limb_[kSign] = 0;
  lo_used_ = kLimbs;
  hi_used_ = -1;
  nan_ = pos_inf_ = neg_inf_ = false;
}

void ExactAccumulator::add_product(double a, double b) {
  const uint64_t ua = bits_of(a), ub = bits_of(b);
  const bool negative = ((ua ^ ub) >> 63) != 0;
  const unsigned ea = unsigned(ua >> 52) & 0x7ff, eb = unsigned(ub >> 52) & 0x7ff;
  if (ea == 0x7ff || eb == 0x7ff) {
    if (std::isnan(a) || std::isnan(b) || a == 0 || b == 0) {
      nan_ = true;  // NaN operand, or 0 * Inf
    } else {
      (negative ? neg_inf_ : pos_inf_) = true;
    }
    return;
  }
  // |x| = m * 2^e with a 53-bit integer m; subnormals have no hidden bit and e = -1074.
  const uint64_t ma = (ua & kFracMask) | (ea ? kHidden : 0);
  const uint64_t mb = (ub & kFracMask) | (eb ? kHidden : 0);
  if (ma == 0 || mb == 0) return;
  const int pos = (ea ? int(ea) - 1075 : -1074) + (eb ? int(eb) - 1075 : -1074) + kBias;
  add_scaled(limb_, lo_used_, hi_used_, u128(ma) * mb, pos, negative);
}

void ExactAccumulator::add(double v) {
  const uint64_t u = bits_of(v);
  const unsigned e = unsigned(u >> 52) & 0x7ff;
  if (e == 0x7ff) {
    if (std::isnan(v)) {
      nan_ = true;
    } else {
      (v < 0 ? neg_inf_ : pos_inf_) = true;
    }
    return;
  }
  const uint64_t m = (u & kFracMask) | (e ? kHidden : 0);
  if (m == 0) return;
  add_scaled(limb_, lo_used_, hi_used_, m, (e ? int(e) - 1075 : -1074) + kBias, (u >> 63) != 0);
}

bool ExactAccumulator::is_nan() const {
  return nan_ || (pos_inf_ && neg_inf_);
}

int ExactAccumulator::infinity_sign() const {
  if (is_nan()) return 0;
  return pos_inf_ ? 1 : (neg_inf_ ? -1 : 0);
}

int ExactAccumulator::sign() const {
  if (is_nan()) return 0;
  if (const int s = infinity_sign()) return s;
  if (limb_[kSign]) return -1;
  for (int k = lo_used_; k <= hi_used_; ++k) {
    if (limb_[k]) return 1;
  }
  return 0;
}

// Precondition: 2 <= precision <= 53 and the format's values are doubles (true of every dtype).
double ExactAccumulator::round_to(const FloatFormat& format) const {
  if (is_nan()) return std::numeric_limits<double>::quiet_NaN();
  if (const int s = infinity_sign()) return s * std::numeric_limits<double>::infinity();

  // Read the magnitude limb by limb without copying. With z the lowest nonzero limb of x, the
  // magnitude of a negative x = -x = ~x + 1 is: 0 below z, -x[z] at z (the +1 ripples through
  // the zero limbs and stops there), ~x[k] above. A positive x is its own magnitude.
  const bool negative = limb_[kSign] != 0;
  const uint64_t fill = limb_[kSign];
  const int hi = hi_used_;
  int z = lo_used_;
  while (z <= hi && limb_[z] == 0) ++z;
  if (z > hi && !negative) return 0.0;  // exactly zero -> +0
  // (A negative x with no nonzero limb in range is -2^(64 (hi+1)): z = hi + 1 reads the fill.)
  auto mag = [&](int k) -> uint64_t {
    if (k < z) return 0;
    const uint64_t x = k <= hi ? limb_[k] : fill;
    if (!negative) return x;
    return k == z ? uint64_t(0) - x : ~x;
  };
  int top = negative ? hi + 1 : hi;
  while (mag(top) == 0) --top;  // terminates at z at the latest

  const int lead = top * 64 + 63 - __builtin_clzll(mag(top));  // bit index of the leading 1
  const int p = format.precision;
  const int exponent = lead - kBias;  // the value lies in [2^exponent, 2^(exponent+1))
  // Exponent of the last significand place; below 2^emin the quantum is fixed (subnormals).
  int q = (exponent >= format.min_exponent ? exponent : format.min_exponent) - p + 1;
  if (q < -kBias) q = -kBias;  // finer than our bit 0: the value is already exact
  const int qbit = q + kBias;  // bit index of the quantum

  // Integer significand m = bits [qbit, lead] (at most p <= 53 bits).
  uint64_t m = 0;
  if (lead >= qbit) {
    const int n = lead - qbit + 1;
    const int k = qbit >> 6, s = qbit & 63;
    m = mag(k) >> s;
    if (s != 0 && n > 64 - s) m |= mag(k + 1) << (64 - s);
    if (n < 64) m &= (uint64_t(1) << n) - 1;
  }
  // Round bit (qbit - 1) and sticky (everything below it; a limb below k is nonzero in the
  // magnitude exactly when it is in x, i.e. when z < k).
  if (qbit > 0 && qbit - 1 <= lead) {
    const int r = qbit - 1;
    const int k = r >> 6, s = r & 63;
    const uint64_t mk = mag(k);
    const bool round_bit = (mk >> s) & 1;
    const bool sticky = z < k || (mk & ((uint64_t(1) << s) - 1)) != 0;
    if (round_bit && (sticky || (m & 1))) ++m;
  }
  if (m == 0) return negative ? -0.0 : 0.0;  // nonzero but below half the smallest subnormal
  const int result_exponent = 63 - __builtin_clzll(m) + q;
  if (result_exponent > format.max_exponent) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  // m <= 2^53 and the result is a double, so m * 2^q is exact; 2^q is built from its bits when
  // it is itself a double (always, for the supported formats), which is cheaper than ldexp.
  double r;
  if (q >= -1074 && q <= 1023) {
    const uint64_t pow2_bits =
        q >= -1022 ? uint64_t(q + 1023) << 52 : uint64_t(1) << (q + 1074);  // normal : subnormal
    double pow2;
    std::memcpy(&pow2, &pow2_bits, sizeof pow2);
    r = double(m) * pow2;
  } else {
    r = std::ldexp(double(m), q);
  }
  return negative ? -r : r;
}

void ExactAccumulator::to_double_double(double* hi, double* lo) const {
  *hi = round_to(kF64);
  *lo = 0.0;
  if (!std::isfinite(*hi)) return;  // NaN, Inf, or an exact value that overflows double
  ExactAccumulator rest(*this);
  rest.add(-*hi);
  *lo = rest.round_to(kF64);
}

}  // namespace convcheck
