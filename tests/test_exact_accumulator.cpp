#define BOOST_TEST_MODULE exact_accumulator
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "reference/exact_accumulator.h"

namespace convcheck {
namespace {

using i128 = __int128;  // GCC extension; used for independent exact reference sums

constexpr FloatFormat kF64{53, -1022, 1023};
constexpr FloatFormat kF32{24, -126, 127};
constexpr FloatFormat kF16{11, -14, 15};
constexpr FloatFormat kBF16{8, -126, 127};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t bits(double x) {
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Bitwise equality, with any two NaNs equal.
bool same(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return bits(x) == bits(y);
}

std::string hex(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

double from_fields(bool negative, unsigned field, uint64_t frac) {
  const uint64_t u =
      (uint64_t(negative) << 63) | (uint64_t(field) << 52) | (frac & ((uint64_t(1) << 52) - 1));
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

float float_from_fields(bool negative, unsigned field, uint32_t frac) {
  const uint32_t u = (uint32_t(negative) << 31) | (field << 23) | (frac & ((1u << 23) - 1));
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

int uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A random double whose exponent field is `field` (0: subnormal), random sign and fraction.
double random_double(std::mt19937_64& rng, int field) {
  return from_fields(rng() & 1, unsigned(std::clamp(field, 0, 2046)), rng());
}

// Random (a, b) whose biased exponent fields sum to about `sum` (product near 2^(sum - 2046)).
std::pair<double, double> random_pair(std::mt19937_64& rng, int sum) {
  const int fa = uniform(rng, std::max(0, sum - 2046), std::min(2046, sum));
  return {random_double(rng, fa), random_double(rng, sum - fa)};
}

// A product with a wild exponent: from deep underflow to past the double range.
std::pair<double, double> wild_pair(std::mt19937_64& rng) {
  const int mode = uniform(rng, 0, 99);
  if (mode < 10) return {random_double(rng, 0), random_double(rng, uniform(rng, 0, 2046))};
  if (mode < 15) return {random_double(rng, 0), random_double(rng, 0)};
  return random_pair(rng, uniform(rng, 700, 3100));
}

double round_sum(const std::vector<std::pair<double, double>>& terms, const FloatFormat& f) {
  ExactAccumulator acc;
  for (const auto& t : terms) acc.add_product(t.first, t.second);
  return acc.round_to(f);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Oracles from the C library / hardware.

BOOST_AUTO_TEST_CASE(fma_oracle) {
  std::mt19937_64 rng(20240611);
  const int n = 1000000;
  int mismatches = 0, zero_sign_exemptions = 0;
  ExactAccumulator acc;  // reused with clear(), as the reference kernels do
  for (int it = 0; it < n; ++it) {
    auto [a, b] = wild_pair(rng);
    if (uniform(rng, 0, 9) == 0) {
      // Short significands, so that a*b is often exact and c = -a*b cancels to exactly zero.
      a = from_fields(std::signbit(a), unsigned(bits(a) >> 52) & 0x7ff, bits(a) & ~0x7ffffffULL);
      b = from_fields(std::signbit(b), unsigned(bits(b) >> 52) & 0x7ff, bits(b) & ~0x7ffffffULL);
    }
    if (rng() & 1) std::swap(a, b);
    double c;
    const int cmode = uniform(rng, 0, 99);
    if (cmode < 35) {
      // Same magnitude region as the product.
      const int fa = std::max(1, int(bits(a) >> 52) & 0x7ff),
                fb = std::max(1, int(bits(b) >> 52) & 0x7ff);
      c = random_double(rng, fa + fb - 1023 + uniform(rng, -60, 60));
    } else if (cmode < 60) {
      // c ~ -a*b: massive cancellation.
      c = -(a * b);
      for (int k = uniform(rng, -3, 3); k != 0; k += (k > 0 ? -1 : 1)) {
        c = std::nextafter(c, k > 0 ? kInf : -kInf);
      }
    } else if (cmode < 70) {
      c = (rng() & 1) ? 0.0 : -0.0;
    } else if (cmode < 80) {
      c = random_double(rng, 0);
    } else {
      c = random_double(rng, uniform(rng, 0, 2046));
    }
    if (uniform(rng, 0, 199) == 0) {
      // Specials: +-Inf, NaN, +-0 in a random slot.
      const double specials[] = {kInf, -kInf, kNaN, 0.0, -0.0};
      const double s = specials[uniform(rng, 0, 4)];
      const int slot = uniform(rng, 0, 2);
      (slot == 0 ? a : slot == 1 ? b : c) = s;
    }
    acc.clear();
    acc.add_product(a, b);
    acc.add(c);
    const double got = acc.round_to(kF64);
    const double want = std::fma(a, b, c);
    bool ok = same(got, want);
    if (!ok && got == 0 && want == 0 && (a == 0 || b == 0) && c == 0) {
      // (-0) + (-0) is -0 in IEEE, while an exactly zero accumulator rounds to +0 by contract.
      ++zero_sign_exemptions;
      ok = !std::signbit(got);
    }
    if (!ok && ++mismatches <= 10) {
      BOOST_TEST_MESSAGE("fma mismatch: a=" << hex(a) << " b=" << hex(b) << " c=" << hex(c)
                                            << " got " << hex(got) << " want " << hex(want));
    }
  }
  BOOST_TEST_MESSAGE("fma oracle: " << n << " triples, " << mismatches << " mismatches, "
                                    << zero_sign_exemptions << " (-0)+(-0) exemptions");
  BOOST_TEST(mismatches == 0);
}

// A single product: hi = RN(a*b) and lo = RN(a*b - hi) = fma(a, b, -hi), one rounding each.
BOOST_AUTO_TEST_CASE(product_double_double_oracle) {
  std::mt19937_64 rng(7);
  int mismatches = 0;
  ExactAccumulator acc;
  for (int it = 0; it < 300000; ++it) {
    const auto [a, b] = wild_pair(rng);
    acc.clear();
    acc.add_product(a, b);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    const double want_hi = a * b;
    const double want_lo = std::isinf(want_hi) ? 0.0 : std::fma(a, b, -want_hi);
    if (!same(hi, want_hi) || !same(lo, want_lo)) {
      if (++mismatches <= 10) {
        BOOST_TEST_MESSAGE("dd mismatch: a=" << hex(a) << " b=" << hex(b) << " got " << hex(hi)
                                             << "," << hex(lo) << " want " << hex(want_hi) << ","
                                             << hex(want_lo));
      }
    }
    BOOST_TEST_REQUIRE(acc.sign() == (a * b > 0 || (a * b == 0 && !std::signbit(a * b)) ? 1 : -1));
  }
  BOOST_TEST(mismatches == 0);
}

BOOST_AUTO_TEST_CASE(f32_products_and_fmaf) {
  std::mt19937_64 rng(32);
  auto random_float = [&](int field) -> float {
    return float_from_fields(rng() & 1, unsigned(std::clamp(field, 0, 254)), uint32_t(rng()));
  };
  int mismatches = 0;
  ExactAccumulator acc;
  for (int it = 0; it < 300000; ++it) {
    float a, b;
    if (it % 2 == 0) {
      a = random_float(uniform(rng, 0, 254));
      b = random_float(uniform(rng, 0, 254));
    } else {
      // Products around the float range, underflow and overflow edges included.
      const int sum = uniform(rng, 127 - 160, 127 + 135) + 127;
      const int fa = uniform(rng, std::max(0, sum - 254), std::min(254, sum));
      a = random_float(fa);
      b = random_float(sum - fa);
    }
    if (a == 0 || b == 0) continue;  // exact zero rounds to +0 by contract, unlike IEEE
    volatile float va = a, vb = b;
    const float prod = va * vb;  // a single-precision multiply, nothing to contract
    acc.clear();
    acc.add_product(a, b);
    if (!same(acc.round_to(kF32), prod) || !same(acc.round_to(DType::f32), prod)) {
      if (++mismatches <= 10) {
        BOOST_TEST_MESSAGE("f32 product mismatch: " << hex(a) << " * " << hex(b));
      }
    }
    // fmaf(a, b, c) rounds a*b + c once to float.
    const float c = (it % 3 == 0)
                        ? -prod
                        : random_float(int(bits(prod) >> 52 & 0x7ff) - 896 + uniform(rng, -30, 30));
    acc.add(c);
    const float want = std::fmaf(a, b, c);
    // (An exactly zero sum is +0 here but can be -0 in IEEE, so zeros compare by value.)
    if (want == 0 ? acc.round_to(kF32) != 0 : !same(acc.round_to(kF32), want)) {
      if (++mismatches <= 10) {
        BOOST_TEST_MESSAGE("fmaf mismatch: " << hex(a) << " * " << hex(b) << " + " << hex(c));
      }
    }
    // And (float)x is a correctly rounded double -> float conversion.
    const double x = random_double(rng, uniform(rng, 1023 - 160, 1023 + 130));
    acc.clear();
    acc.add(x);
    if (!same(acc.round_to(kF32), static_cast<float>(x))) {
      if (++mismatches <= 10) BOOST_TEST_MESSAGE("f32 conversion mismatch: " << hex(x));
    }
  }
  BOOST_TEST(mismatches == 0);
}

BOOST_AUTO_TEST_CASE(sum_oracle) {
  std::mt19937_64 rng(99);
  int mismatches = 0;
  ExactAccumulator acc;
  for (int it = 0; it < 300000; ++it) {
    const double a = random_double(rng, uniform(rng, 0, 2046));
    const double b = (it % 2 == 0) ? random_double(rng, uniform(rng, 0, 2046))
                                   : -a * (1 + std::ldexp(double(uniform(rng, -1000, 1000)), -40));
    if (a == 0 || b == 0) continue;
    acc.clear();
    acc.add(a);
    acc.add(b);
    const double s = a + b;
    // TwoSum: the rounding error of a + b is exactly a double, so it is RN(exact - s).
    double err = 0.0;
    if (std::isfinite(s)) {
      const double bp = s - a, ap = s - bp;
      err = (a - ap) + (b - bp);
    }
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    if (!same(acc.round_to(kF64), s) || !same(hi, s) || !same(lo, err)) {
      if (++mismatches <= 10) BOOST_TEST_MESSAGE("sum mismatch: " << hex(a) << " + " << hex(b));
    }
    // The same in float, for float operands.
    const float fa = static_cast<float>(a * 0x1p-900), fb = static_cast<float>(b * 0x1p-900);
    if (fa != 0 && fb != 0 && std::isfinite(fa) && std::isfinite(fb)) {
      volatile float va = fa, vb = fb;
      const float fs = va + vb;
      acc.clear();
      acc.add(fa);
      acc.add(fb);
      if (!same(acc.round_to(kF32), fs) && ++mismatches <= 10) {
        BOOST_TEST_MESSAGE("f32 sum mismatch: " << hex(fa) << " + " << hex(fb));
      }
    }
  }
  BOOST_TEST(mismatches == 0);
}

// ---------------------------------------------------------------------------------------------
// f16 / bf16: brute force over a table of every nonnegative value of the format.

namespace {

struct SmallFormatTable {
  FloatFormat format;
  // value[i] is the format value with bit pattern i, for i = 0 (+0) .. the +Inf pattern, where the
  // Inf entry holds 2^(emax+1): IEEE rounds as if the exponent range were unbounded, and that
  // value's (even) significand is what a tie between it and the largest finite value picks.
  std::vector<double> value;
};

SmallFormatTable make_table(const FloatFormat& f, int exponent_bits) {
  const int frac_bits = f.precision - 1;
  const unsigned inf_pattern = ((1u << exponent_bits) - 1) << frac_bits;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  SmallFormatTable t{f, {}};
  for (unsigned pat = 0; pat <= inf_pattern; ++pat) {
    const int e = int(pat >> frac_bits);
    const double frac = pat & ((1u << frac_bits) - 1);
    t.value.push_back(e == 0 ? std::ldexp(frac, 1 - bias - frac_bits)
                             : std::ldexp(frac + (1u << frac_bits), e - bias - frac_bits));
  }
  return t;
}

// RN-even of a real x into the table's format. `cmp(t)` is the exact sign of |x| - t.
double table_round(const SmallFormatTable& t, const std::function<int(double)>& cmp,
                   bool negative) {
  const std::vector<double>& v = t.value;
  const size_t last = v.size() - 1;  // the Inf entry
  size_t j;
  if (cmp(v[last]) >= 0) {
    j = last;
  } else {
    // Largest i with v[i] <= |x|; v[0] = 0 <= |x| always.
    size_t lo = 0, hi = last;
    while (hi - lo > 1) {
      const size_t mid = (lo + hi) / 2;
      (cmp(v[mid]) >= 0 ? lo : hi) = mid;
    }
    if (cmp(v[lo]) == 0) {
      j = lo;
    } else {
      const int c = cmp((v[lo] + v[lo + 1]) / 2);  // exact midpoint: few significand bits
      j = c < 0 ? lo : c > 0 ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
    }
  }
  const double r = (j == last) ? kInf : v[j];
  return negative ? -r : r;
}

double table_round_double(const SmallFormatTable& t, double x) {
  const double ax = std::fabs(x);
  return table_round(
      t, [ax](double v) { return (ax > v) - (ax < v); }, std::signbit(x));
}

void check_small_format(const SmallFormatTable& t, int exponent_lo, int exponent_hi,
                        uint64_t seed) {
  std::mt19937_64 rng(seed);
  int mismatches = 0, checked = 0;
  ExactAccumulator acc;
  auto check_double = [&](double x) {
    acc.clear();
    acc.add(x);
    // An exactly zero sum is +0 by contract, even for x = -0.
    const double got = acc.round_to(t.format), want = x == 0 ? 0.0 : table_round_double(t, x);
    ++checked;
    if (!same(got, want) && ++mismatches <= 10) {
      BOOST_TEST_MESSAGE("small format mismatch: x=" << hex(x) << " got " << hex(got) << " want "
                                                     << hex(want));
    }
  };
  // Every value, every midpoint (ties) and the doubles just beside each midpoint.
  const std::vector<double>& v = t.value;
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const double mid = (v[i] + v[i + 1]) / 2;
    const double sgn = (i % 3 == 0) ? -1.0 : 1.0;
    for (double x : {v[i], mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)}) {
      check_double(sgn * x);
    }
  }
  // Random doubles across (and beyond) the format's range.
  for (int k = 0; k < 5000; ++k) {
    check_double(random_double(rng, 1023 + uniform(rng, exponent_lo, exponent_hi)));
  }
  // Random products, compared exactly through fma's sign: fma(|a|, |b|, -v) is never inexact
  // enough to underflow here (product bits stay far above 2^-1074).
  for (int k = 0; k < 5000; ++k) {
    const auto [a, b] = random_pair(rng, 2046 + uniform(rng, exponent_lo, exponent_hi));
    acc.clear();
    acc.add_product(a, b);
    const double fa = std::fabs(a), fb = std::fabs(b);
    const double want = table_round(
        t,
        [fa, fb](double v) {
          const double d = std::fma(fa, fb, -v);
          return (d > 0) - (d < 0);
        },
        std::signbit(a) != std::signbit(b));
    const double got = acc.round_to(t.format);
    ++checked;
    if (!same(got, want) && ++mismatches <= 10) {
      BOOST_TEST_MESSAGE("small format product mismatch: " << hex(a) << " * " << hex(b));
    }
  }
  BOOST_TEST_MESSAGE("small format p=" << t.format.precision << ": " << checked << " values, "
                                       << mismatches << " mismatches");
  BOOST_TEST(mismatches == 0);
}

}  // namespace

BOOST_AUTO_TEST_CASE(f16_brute_force) {
  const SmallFormatTable t = make_table(kF16, 5);
  BOOST_TEST(t.value.back() == 65536.0);
  BOOST_TEST(t.value[0x7bff] == 65504.0);
  BOOST_TEST(t.value[1] == std::ldexp(1.0, -24));
  check_small_format(t, -30, 17, 16);
  const SmallFormatTable u = make_table(float_format(DType::f16), 5);  // the library's format
  check_small_format(u, -26, 16, 17);
}

BOOST_AUTO_TEST_CASE(bf16_brute_force) {
  const SmallFormatTable t = make_table(kBF16, 8);
  // Cross-check the table against bf16 = the top half of a float.
  for (unsigned pat = 0; pat < 0x7f80; ++pat) {
    const uint32_t u = pat << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    BOOST_TEST_REQUIRE(t.value[pat] == double(f));
  }
  BOOST_TEST(t.value.back() == std::ldexp(1.0, 128));
  check_small_format(t, -140, 130, 8);
}

// ---------------------------------------------------------------------------------------------
// Exactness properties.

BOOST_AUTO_TEST_CASE(order_invariance) {
  std::mt19937_64 rng(4242);
  std::vector<std::pair<double, double>> wild;
  while (wild.size() < 1000) {
    const auto p = wild_pair(rng);
    wild.push_back(p);
    // Cancel some of the big ones, so that the small terms decide the rounding.
    const int e = std::ilogb(p.first) + std::ilogb(p.second);
    if (e > 900 || (e > 0 && (rng() & 1))) {
      wild.push_back({-p.first, p.second});
    }
  }
  std::vector<std::pair<double, double>> ordinary;
  std::normal_distribution<double> normal;
  for (int i = 0; i < 10000; ++i)
    ordinary.push_back({normal(rng), (i % 4 == 0) ? 1.0 : normal(rng)});

  for (auto* terms : {&wild, &ordinary}) {
    double ref[5] = {}, ref_hi = 0, ref_lo = 0;
    int ref_sign = 0;
    for (int perm = 0; perm < 5; ++perm) {
      std::shuffle(terms->begin(), terms->end(), rng);
      ExactAccumulator acc;
      for (const auto& t : *terms) {
        if (t.second == 1.0) {
          acc.add(t.first);
        } else {
          acc.add_product(t.first, t.second);
        }
      }
      const double r[5] = {acc.round_to(kF64), acc.round_to(kF32), acc.round_to(kF16),
                           acc.round_to(kBF16), acc.round_to(DType::f64)};
      double hi, lo;
      acc.to_double_double(&hi, &lo);
      if (perm == 0) {
        std::copy(r, r + 5, ref);
        ref_hi = hi;
        ref_lo = lo;
        ref_sign = acc.sign();
        BOOST_TEST_MESSAGE("order invariance: " << terms->size() << " terms, f64 " << hex(hi)
                                                << " + " << hex(lo));
        BOOST_TEST(same(r[0], r[4]));
        BOOST_TEST(same(hi, r[0]));
      } else {
        for (int k = 0; k < 5; ++k) BOOST_TEST(same(r[k], ref[k]));
        BOOST_TEST(same(hi, ref_hi));
        BOOST_TEST(same(lo, ref_lo));
        BOOST_TEST(acc.sign() == ref_sign);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(exact_cancellation) {
  std::mt19937_64 rng(555);
  std::vector<std::pair<double, double>> terms;
  for (int i = 0; i < 2000; ++i) {
    const auto p = wild_pair(rng);
    terms.push_back(p);
    terms.push_back((rng() & 1) ? std::make_pair(-p.first, p.second)
                                : std::make_pair(p.first, -p.second));
  }
  for (int perm = 0; perm < 3; ++perm) {
    std::shuffle(terms.begin(), terms.end(), rng);
    ExactAccumulator acc;
    for (const auto& t : terms) acc.add_product(t.first, t.second);
    for (const FloatFormat& f : {kF64, kF32, kF16, kBF16}) {
      const double r = acc.round_to(f);
      BOOST_TEST(r == 0.0);
      BOOST_TEST(!std::signbit(r));
    }
    BOOST_TEST(acc.sign() == 0);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((bits(hi) == 0 && bits(lo) == 0));
  }

  {
    ExactAccumulator acc;
    acc.add_product(1e300, 1e300);
    BOOST_TEST(acc.round_to(kF64) == kInf);  // finite but beyond double: rounds to Inf
    BOOST_TEST(acc.sign() == 1);
    BOOST_TEST(acc.infinity_sign() == 0);
    BOOST_TEST(!acc.is_nan());
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((hi == kInf && bits(lo) == 0));
    acc.add_product(-1e300, 1e300);
    BOOST_TEST(bits(acc.round_to(kF64)) == 0u);
    BOOST_TEST(acc.sign() == 0);
    acc.add_product(-1e300, 1e300);
    BOOST_TEST(acc.round_to(kF64) == -kInf);
    BOOST_TEST(acc.sign() == -1);
  }

  // Carries and borrows across every limb: the smallest product 2^-2148 next to the largest ones.
  const double ms = std::numeric_limits<double>::denorm_min();  // 2^-1074
  const double big = std::numeric_limits<double>::max();
  {
    ExactAccumulator acc;
    acc.add_product(big, big);  // ~2^2048
    acc.add_product(-ms, ms);   // borrow from bit 0 all the way up
    BOOST_TEST(acc.sign() == 1);
    acc.add_product(-big, big);
    BOOST_TEST(acc.sign() == -1);  // exactly -2^-2148
    BOOST_TEST(bits(acc.round_to(kF64)) == bits(-0.0));
    acc.add_product(ms, ms);
    BOOST_TEST(acc.sign() == 0);
    acc.add_product(ms, ms);
    BOOST_TEST(acc.sign() == 1);  // exactly +2^-2148
    BOOST_TEST(bits(acc.round_to(kF64)) == 0u);
    acc.add_product(-big, big);  // negative with a huge magnitude, then back
    acc.add_product(big, big);
    BOOST_TEST(acc.sign() == 1);
    acc.add_product(-ms, ms);
    BOOST_TEST(acc.sign() == 0);
  }
  {
    // The smallest double survives huge partial sums exactly.
    ExactAccumulator acc;
    acc.add_product(1e300, 1e300);
    acc.add(big);
    acc.add(-ms);
    acc.add_product(ms, ms);
    acc.add(-1.0);
    acc.add_product(-1e300, 1e300);
    acc.add(-big);
    acc.add(1.0);
    acc.add_product(-ms, ms);
    BOOST_TEST(same(acc.round_to(kF64), -ms));
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((same(hi, -ms) && bits(lo) == 0));
    acc.add(ms);
    acc.add(ms);
    acc.add(1.0);
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((hi == 1.0 && same(lo, ms)));
  }
}

// Carries and borrows out of the top limb a product can touch, into the sign extension: only
// reachable by piling up millions of the largest products aligned at the same place (the guard
// bits at work). P = (2^53-1)^2 * 2^-101 fills the top of its three limbs; 2^23 P is
// 2^28 - 2^-24 + 2^-78, and two fix-up products, kept within P's limbs, make it exactly 2^28: a
// limb boundary, reached in either order.
BOOST_AUTO_TEST_CASE(carries_into_the_sign_extension) {
  const double a = 0x1.fffffffffffffp52, b = 0x1.fffffffffffffp-49;  // (2^53-1), (2^53-1)*2^-101
  const int n = 1 << 23;
  for (int order = 0; order < 3; ++order) {
    const double sgn = order == 0 ? 1.0 : -1.0;
    ExactAccumulator acc;
    for (int k = 0; k < n; ++k) acc.add_product(sgn * a, b);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST(hi == sgn * (0x1p28 - 0x1p-24));
    BOOST_TEST(lo == sgn * 0x1p-78);
    if (order == 2) {
      acc.add_product(0x1p-39, 0x1p-39);   // + 2^-78: the magnitude lands exactly on 2^28
      acc.add_product(-0x1p-12, 0x1p-12);  // - 2^-24, with no borrow out of the top limb
    } else {
      acc.add_product(-sgn * 0x1p-12, -0x1p-12);  // the magnitude crosses 2^28 first
      acc.add_product(-sgn * 0x1p-39, 0x1p-39);
    }
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((hi == sgn * 0x1p28 && bits(lo) == 0));
    BOOST_TEST(acc.round_to(kF32) == sgn * 0x1p28);
    BOOST_TEST(acc.sign() == int(sgn));
    acc.add(-sgn * 0x1p28);
    BOOST_TEST(acc.sign() == 0);
    BOOST_TEST(bits(acc.round_to(kF64)) == 0u);
  }
}

// Reusing an accumulator through clear() must match a fresh one, whatever state it was left in.
BOOST_AUTO_TEST_CASE(clear_matches_fresh) {
  std::mt19937_64 rng(31337);
  ExactAccumulator reused;
  for (int it = 0; it < 20000; ++it) {
    const int n = uniform(rng, 0, 12);
    std::vector<std::pair<double, double>> terms;
    for (int k = 0; k < n; ++k) terms.push_back(wild_pair(rng));
    reused.clear();
    ExactAccumulator fresh;
    for (const auto& t : terms) {
      reused.add_product(t.first, t.second);
      fresh.add_product(t.first, t.second);
    }
    double h1, l1, h2, l2;
    reused.to_double_double(&h1, &l1);
    fresh.to_double_double(&h2, &l2);
    BOOST_TEST_REQUIRE((same(h1, h2) && same(l1, l2) && reused.sign() == fresh.sign() &&
                        same(reused.round_to(kF16), fresh.round_to(kF16))));
    BOOST_TEST_REQUIRE(same(h1, round_sum(terms, kF64)));
  }
}

// ---------------------------------------------------------------------------------------------
// Independent exact sums in __int128.

BOOST_AUTO_TEST_CASE(million_tenths) {
  // 0.1 is m * 2^-56 exactly, so 10^6 copies sum to exactly (10^6 m) * 2^-56.
  const int64_t m = 0x1999999999999A;
  BOOST_TEST_REQUIRE(std::ldexp(double(m), -56) == 0.1);
  const i128 s = i128(m) * 1000000;
  const double s_hi = double(s);  // correctly rounded int -> double conversion
  const double want_hi = std::ldexp(s_hi, -56);
  const double want_lo = std::ldexp(double(s - i128(s_hi)), -56);

  ExactAccumulator acc;
  double naive = 0;
  for (int i = 0; i < 1000000; ++i) {
    acc.add(0.1);
    naive += 0.1;
  }
  double hi, lo;
  acc.to_double_double(&hi, &lo);
  BOOST_TEST(same(hi, want_hi));
  BOOST_TEST(same(lo, want_lo));
  BOOST_TEST(hi == 100000.0);     // 10^6 * 0.1 is 100000 + 5.55e-12: below half an ulp (2^-37)
  BOOST_TEST(lo == 0x1.86ap-38);  // = 10^6 * (0.1 - 1/10), worked out by hand
  BOOST_TEST(acc.round_to(kF32) == 100000.0);
  BOOST_TEST_MESSAGE("sum of 10^6 x 0.1: exact " << hex(hi) << " + " << hex(lo) << ", naive "
                                                 << hex(naive));
}

BOOST_AUTO_TEST_CASE(int128_grid_sums) {
  // Terms k * 2^(e0 + s) with k < 2^50 and s <= 60: the exact sum is S * 2^e0 with S an __int128.
  // Huge and tiny cancelling pairs are mixed in, so partial sums swing across the whole range.
  std::mt19937_64 rng(128);
  int mismatches = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int e0 = uniform(rng, -1000, 850);
    std::vector<std::pair<double, double>> terms;
    i128 s = 0;
    for (int k = 0; k < 500; ++k) {
      const int64_t k1 = int64_t(rng() >> 39) + 1, k2 = int64_t(rng() >> 39) + 1;  // < 2^25
      const int sh = uniform(rng, 0, 60), sh1 = uniform(rng, 0, sh);
      const bool neg = rng() & 1;
      s += (neg ? -1 : 1) * (i128(k1 * k2) << sh);
      terms.push_back({(neg ? -1.0 : 1.0) * std::ldexp(double(k1), sh1),
                       std::ldexp(double(k2), e0 + sh - sh1)});
    }
    for (int k = 0; k < 50; ++k) {
      const auto p = wild_pair(rng);
      terms.push_back(p);
      terms.push_back({p.first, -p.second});
    }
    std::shuffle(terms.begin(), terms.end(), rng);
    ExactAccumulator acc;
    for (const auto& t : terms) acc.add_product(t.first, t.second);
    const double s_hi = double(s);
    const double want_hi = std::ldexp(s_hi, e0);
    const double want_lo = std::ldexp(double(s - i128(s_hi)), e0);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    const int want_sign = (s > 0) - (s < 0);
    if (!same(hi, want_hi) || !same(lo, want_lo) || acc.sign() != want_sign) {
      if (++mismatches <= 10) {
        BOOST_TEST_MESSAGE("int128 mismatch: got " << hex(hi) << "," << hex(lo) << " want "
                                                   << hex(want_hi) << "," << hex(want_lo));
      }
    }
  }
  BOOST_TEST(mismatches == 0);
}

// ---------------------------------------------------------------------------------------------
// Hand-computed rounding cases.

namespace {

// Exact sum of the given doubles, rounded into f.
double rsum(std::initializer_list<double> xs, const FloatFormat& f) {
  ExactAccumulator acc;
  for (double x : xs) acc.add(x);
  return acc.round_to(f);
}

}  // namespace

BOOST_AUTO_TEST_CASE(nan_and_inf_rules) {
  auto run = [](std::initializer_list<std::pair<double, double>> products) {
    ExactAccumulator acc;
    for (const auto& p : products) acc.add_product(p.first, p.second);
    return acc;
  };
  BOOST_TEST(run({{kNaN, 1.0}}).is_nan());
  BOOST_TEST(run({{1.0, kNaN}, {2.0, 3.0}}).is_nan());
  BOOST_TEST(run({{0.0, kInf}}).is_nan());
  BOOST_TEST(run({{-kInf, -0.0}}).is_nan());
  BOOST_TEST(run({{kInf, 2.0}, {-kInf, 1.0}}).is_nan());
  BOOST_TEST(run({{kInf, -2.0}, {kInf, 1.0}}).is_nan());
  BOOST_TEST(std::isnan(run({{kInf, 2.0}, {-kInf, 1.0}}).round_to(kF16)));

  {
    ExactAccumulator acc = run({{kInf, -2.0}, {5.0, 7.0}, {1e300, 1e300}});
    BOOST_TEST(!acc.is_nan());
    BOOST_TEST(acc.infinity_sign() == -1);
    BOOST_TEST(acc.sign() == -1);
    BOOST_TEST(acc.round_to(kF64) == -kInf);
    BOOST_TEST(acc.round_to(kF16) == -kInf);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((hi == -kInf && bits(lo) == 0));
    acc.add(kInf);
    BOOST_TEST(acc.is_nan());
    BOOST_TEST(acc.infinity_sign() == 0);
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((std::isnan(hi) && bits(lo) == 0));
    acc.clear();
    BOOST_TEST(!acc.is_nan());
    BOOST_TEST(acc.sign() == 0);
    BOOST_TEST(bits(acc.round_to(kF64)) == 0u);
  }
  {
    ExactAccumulator acc = run({{kInf, kInf}, {-kInf, -kInf}, {-1.0, 3.0}});
    BOOST_TEST(acc.infinity_sign() == 1);
    BOOST_TEST(acc.round_to(kBF16) == kInf);
    acc.add(-kInf);
    BOOST_TEST(acc.is_nan());
  }
  {
    ExactAccumulator acc;
    acc.add(kNaN);
    BOOST_TEST(acc.is_nan());
    acc.clear();
    acc.add(-kInf);
    acc.add(-kInf);
    BOOST_TEST(acc.infinity_sign() == -1);
    BOOST_TEST(acc.round_to(kF32) == -kInf);
  }
}

BOOST_AUTO_TEST_CASE(ties_to_even) {
  const double u53 = std::ldexp(1.0, -53);
  // f64: 1 + 2^-53 is the midpoint of 1 and 1 + 2^-52 -> the even one, 1.
  BOOST_TEST(rsum({1.0, u53}, kF64) == 1.0);
  // 1 + 3*2^-53 is the midpoint of 1 + 2^-52 (odd) and 1 + 2^-51 (even).
  BOOST_TEST(rsum({1.0, u53, u53, u53}, kF64) == 1.0 + std::ldexp(1.0, -51));
  BOOST_TEST(rsum({-1.0, -3 * u53}, kF64) == -(1.0 + std::ldexp(1.0, -51)));
  // Just above / below the midpoint: the sticky bit decides.
  BOOST_TEST(rsum({1.0, u53, std::ldexp(1.0, -1000)}, kF64) == 1.0 + 2 * u53);
  BOOST_TEST(rsum({1.0, u53, std::ldexp(-1.0, -1000)}, kF64) == 1.0);
  {
    ExactAccumulator acc;  // sticky from the very bottom bit, 2^-2148
    acc.add(1.0);
    acc.add(u53);
    acc.add_product(std::numeric_limits<double>::denorm_min(),
                    std::numeric_limits<double>::denorm_min());
    BOOST_TEST(acc.round_to(kF64) == 1.0 + 2 * u53);
  }
  // f32: 1 + 2^-24 -> 1; 1 + 3*2^-24 -> 1 + 2^-22; a hair above the first -> 1 + 2^-23.
  const double u24 = std::ldexp(1.0, -24);
  BOOST_TEST(rsum({1.0, u24}, kF32) == 1.0);
  BOOST_TEST(rsum({1.0, 3 * u24}, kF32) == 1.0 + std::ldexp(1.0, -22));
  BOOST_TEST(rsum({1.0, u24, std::ldexp(1.0, -300)}, kF32) == 1.0 + std::ldexp(1.0, -23));
  BOOST_TEST(rsum({-1.0, -u24, std::ldexp(1.0, -300)}, kF32) == -1.0);
  // f16: 2048 + 1 -> 2048, 2048 + 3 -> 2052; bf16: 256 + 1 -> 256, 256 + 3 -> 260.
  BOOST_TEST(rsum({2048.0, 1.0}, kF16) == 2048.0);
  BOOST_TEST(rsum({2048.0, 3.0}, kF16) == 2052.0);
  BOOST_TEST(rsum({256.0, 1.0}, kBF16) == 256.0);
  BOOST_TEST(rsum({256.0, 3.0}, kBF16) == 260.0);
  // A carry out of the significand: (2 - 2^-53) in f64 rounds up to 2.
  BOOST_TEST(rsum({2.0, -u53}, kF64) == 2.0);
  BOOST_TEST(rsum({2.0, -u53 * 2}, kF64) == 2.0 - 2 * u53);
}

BOOST_AUTO_TEST_CASE(subnormal_results) {
  const double ms = std::numeric_limits<double>::denorm_min();
  auto prod = [](double a, double b, const FloatFormat& f) {
    ExactAccumulator acc;
    acc.add_product(a, b);
    return acc.round_to(f);
  };
  // f64: quantum 2^-1074 below 2^-1022.
  BOOST_TEST(bits(prod(0x1p-538, 0x1p-537, kF64)) == 0u);           // 2^-1075: tie -> 0
  BOOST_TEST(bits(prod(-0x1p-538, 0x1p-537, kF64)) == bits(-0.0));  // keeps its sign
  BOOST_TEST(prod(0x1.8p-537, 0x1p-538, kF64) == ms);               // 0.75 ulp -> 1
  BOOST_TEST(prod(0x1.8p-536, 0x1p-538, kF64) == 2 * ms);           // 1.5 ulp -> 2 (even)
  BOOST_TEST(prod(0x1.4p-536, 0x1p-538, kF64) == ms);               // 1.25 ulp -> 1
  BOOST_TEST(prod(0x1.cp-536, 0x1p-538, kF64) == 2 * ms);           // 1.75 ulp -> 2
  BOOST_TEST(prod(0x1.4p-535, 0x1p-538, kF64) == 2 * ms);           // 2.5 ulp -> 2 (even)
  BOOST_TEST(prod(0x1.cp-535, 0x1p-538, kF64) == 4 * ms);           // 3.5 ulp -> 4 (even)
  {
    ExactAccumulator acc;  // 2^-1075 + 2^-1100: above the midpoint -> 2^-1074
    acc.add_product(0x1p-538, 0x1p-537);
    acc.add_product(0x1p-550, 0x1p-550);
    BOOST_TEST(acc.round_to(kF64) == ms);
  }
  // Largest subnormal to smallest normal by rounding: (2^52 - 1/2) * 2^-1074 -> 2^-1022.
  {
    ExactAccumulator acc;
    acc.add(std::ldexp(1.0, -1022) - ms);
    acc.add_product(0x1p-538, 0x1p-537);
    BOOST_TEST(acc.round_to(kF64) == std::ldexp(1.0, -1022));
  }
  // f32: quantum 2^-149. 2^-150 -> 0, 3*2^-150 -> 2^-148, 2^-150 + 2^-200 -> 2^-149.
  BOOST_TEST(bits(rsum({0x1p-150}, kF32)) == 0u);
  BOOST_TEST(bits(rsum({-0x1p-150}, kF32)) == bits(-0.0));
  BOOST_TEST(rsum({0x3p-150}, kF32) == 0x1p-148);
  BOOST_TEST(rsum({0x1p-150, 0x1p-200}, kF32) == 0x1p-149);
  BOOST_TEST(rsum({0x1p-126, -0x1p-149, 0x1p-151}, kF32) == 0x1p-126 - 0x1p-149);
  // f16: quantum 2^-24. 2^-25 -> 0, 3*2^-26 -> 2^-24, 5*2^-25 -> 2^-23 (2.5 -> 2).
  BOOST_TEST(bits(rsum({0x1p-25}, kF16)) == 0u);
  BOOST_TEST(rsum({0x3p-26}, kF16) == 0x1p-24);
  BOOST_TEST(rsum({0x5p-25}, kF16) == 0x1p-23);
  BOOST_TEST(rsum({0x7p-25}, kF16) == 0x1p-22);
  BOOST_TEST(rsum({0x1p-14, -0x1p-24}, kF16) == 0x1p-14 - 0x1p-24);
  // bf16: quantum 2^-133.
  BOOST_TEST(rsum({0x3p-134}, kBF16) == 0x1p-132);
  BOOST_TEST(bits(rsum({-0x1p-134}, kBF16)) == bits(-0.0));
}

BOOST_AUTO_TEST_CASE(overflow_to_inf) {
  // f16: max 65504, ulp there 32; 65520 is the tie with 65536 -> Inf.
  BOOST_TEST(rsum({65520.0}, kF16) == kInf);
  BOOST_TEST(rsum({-65520.0}, kF16) == -kInf);
  BOOST_TEST(rsum({65519.99}, kF16) == 65504.0);
  BOOST_TEST(rsum({std::nextafter(65520.0, 0.0)}, kF16) == 65504.0);
  BOOST_TEST(rsum({65504.0, 16.0, -0x1p-1074}, kF16) == 65504.0);
  BOOST_TEST(rsum({65504.0, 16.0, 0x1p-1074}, kF16) == kInf);
  BOOST_TEST(rsum({1e6}, kF16) == kInf);
  // bf16 / f32: max (2 - 2^(1-p)) * 2^127.
  const double bf16_max = (2 - 0x1p-7) * 0x1p127, f32_max = std::numeric_limits<float>::max();
  BOOST_TEST(rsum({bf16_max}, kBF16) == bf16_max);
  BOOST_TEST(rsum({bf16_max, 0x1p119}, kBF16) == kInf);
  BOOST_TEST(rsum({bf16_max, 0x1p119, -0x1p-1000}, kBF16) == bf16_max);
  BOOST_TEST(rsum({f32_max, 0x1p103}, kF32) == kInf);
  BOOST_TEST(rsum({f32_max, 0x1p103, -0x1p-1074}, kF32) == f32_max);
  BOOST_TEST(rsum({-f32_max, -0x1p102}, kF32) == -f32_max);
  // f64: DBL_MAX + half an ulp (2^970) -> Inf; one 2^-1074 less -> DBL_MAX.
  const double dmax = std::numeric_limits<double>::max();
  BOOST_TEST(rsum({dmax, 0x1p970}, kF64) == kInf);
  BOOST_TEST(rsum({dmax, 0x1p970, -0x1p-1074}, kF64) == dmax);
  BOOST_TEST(rsum({-dmax, -0x1p970}, kF64) == -kInf);
  BOOST_TEST(rsum({dmax, dmax, -dmax}, kF64) == dmax);
  {
    ExactAccumulator acc;
    acc.add(dmax);
    acc.add(dmax);
    double hi, lo;
    acc.to_double_double(&hi, &lo);
    BOOST_TEST((hi == kInf && bits(lo) == 0));
    BOOST_TEST(acc.infinity_sign() == 0);
    BOOST_TEST(acc.sign() == 1);
  }
  // The largest products (|a*b| < 2^2048), many of them, still exact.
  {
    ExactAccumulator acc;
    for (int i = 0; i < 1000; ++i) acc.add_product(dmax, -dmax);
    acc.add_product(1.5, 1.0);
    for (int i = 0; i < 1000; ++i) acc.add_product(-dmax, -dmax);
    BOOST_TEST(acc.round_to(kF64) == 1.5);
  }
}

// ---------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(micro_timing) {
  using clock = std::chrono::steady_clock;
  std::mt19937_64 rng(1);
  const int n = 1 << 20;
  std::vector<double> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    // f32-range operands: float significands, exponents within +-20.
    a[i] = static_cast<float>(random_double(rng, 1023 + uniform(rng, -20, 20)));
    b[i] = static_cast<float>(random_double(rng, 1023 + uniform(rng, -20, 20)));
  }
  volatile double sink = 0;
  ExactAccumulator acc;
  auto t0 = clock::now();
  for (int i = 0; i < n; ++i) acc.add_product(a[i], b[i]);
  auto t1 = clock::now();
  const double ns_per_term = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
  {
    // Not timed: the same terms in reverse order give the same bits.
    ExactAccumulator reversed;
    for (int i = n - 1; i >= 0; --i) reversed.add_product(a[i], b[i]);
    double h1, l1, h2, l2;
    acc.to_double_double(&h1, &l1);
    reversed.to_double_double(&h2, &l2);
    BOOST_TEST((same(h1, h2) && same(l1, l2)));
  }

  const int groups = n / 10;
  t0 = clock::now();
  for (int g = 0; g < groups; ++g) {
    acc.clear();
    for (int k = 0; k < 10; ++k) acc.add_product(a[g * 10 + k], b[g * 10 + k]);
    sink = sink + acc.round_to(kF32);
  }
  t1 = clock::now();
  const double ns_per_group = std::chrono::duration<double, std::nano>(t1 - t0).count() / groups;

  t0 = clock::now();
  for (int g = 0; g < groups / 10; ++g) {
    acc.clear();
    for (int k = 0; k < 100; ++k) acc.add_product(a[g * 100 + k], b[g * 100 + k]);
    sink = sink + acc.round_to(kF32);
  }
  t1 = clock::now();
  const double ns_per_100 =
      std::chrono::duration<double, std::nano>(t1 - t0).count() / (groups / 10);

  t0 = clock::now();
  for (int g = 0; g < groups; ++g) {
    ExactAccumulator fresh;
    fresh.add_product(a[g], b[g]);
    sink = sink + fresh.round_to(kF64);
  }
  t1 = clock::now();
  const double ns_fresh = std::chrono::duration<double, std::nano>(t1 - t0).count() / groups;

  BOOST_TEST_MESSAGE("timing: add_product "
                     << ns_per_term << " ns/term (f32-range products); "
                     << "clear + 10 add_product + round_to " << ns_per_group
                     << " ns; clear + 100 add_product + round_to " << ns_per_100
                     << " ns; fresh accumulator + 1 term + round " << ns_fresh << " ns");
  (void)sink;
}

}  // namespace convcheck
