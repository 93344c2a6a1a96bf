// An exact (Kulisch-style) accumulator for sums of products of doubles.
//
// Every f16, bf16, f32, f64 and int32 operand is exactly a double, and the product of two doubles
// is an integer of at most 106 bits times a power of two in [2^-2148, 2^2048). The accumulator
// holds the sum as a two's-complement fixed-point integer of 64-bit limbs whose bit 0 weighs
// 2^-2148 and whose top leaves 64 guard bits for carries (up to 2^64 terms), so every add is exact
// and order never matters: the result is bit-identical for any order of terms. NaN and +-Inf are
// tracked as flags with IEEE semantics (NaN operand, 0*Inf, or Inf + -Inf give NaN).
//
// round_to() rounds the exact value once, to nearest with ties to even, into any binary floating
// format (subnormals and overflow to Inf included); an exactly zero sum rounds to +0.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace convcheck {

class ExactAccumulator {
 public:
  ExactAccumulator();
  /// Back to zero, no flags.
  void clear();
  /// Adds a*b exactly.
  void add_product(double a, double b);
  /// Adds v exactly.
  void add(double v);

  bool is_nan() const;
  /// +1 or -1 when the value is an infinity (and not NaN), else 0.
  int infinity_sign() const;
  /// Sign of the exact value: -1, 0, +1 (meaningless when NaN; the infinity's sign when infinite).
  int sign() const;

  /// The exact value rounded once (RN-even) into `format`, returned as a double (which represents
  /// every value of every supported format exactly). NaN -> quiet NaN; Inf -> +-Inf.
  double round_to(const FloatFormat& format) const;
  /// Same, for a floating dtype.
  double round_to(DType t) const { return round_to(float_format(t)); }
  /// The exact value as a non-overlapping double-double: hi = RN64(exact), lo = RN64(exact - hi).
  /// For NaN/Inf, hi is NaN/+-Inf and lo is 0.
  void to_double_double(double* hi, double* lo) const;

 private:
  static constexpr int kLimbs = 68;  // 4352 bits >= 2148 + 2048 + 64 guard + sign
  uint64_t limb_[kLimbs];
  int lo_used_, hi_used_;  // value limbs that may be nonzero; limb_[kLimbs - 1] holds the sign
                           // extension (0 or all ones) that every limb above hi_used_ stands for
  bool nan_;
  bool pos_inf_, neg_inf_;
};

}  // namespace convcheck
