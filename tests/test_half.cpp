#define BOOST_TEST_MODULE half
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/half.h"

namespace convcheck {
namespace {

// One 16-bit format under test: its parameters from the IEEE definition and its conversions.
struct Half {
  const char* name;
  int frac_bits;  // m
  int bias;
  float (*to_float)(uint16_t);
  double (*to_double)(uint16_t);
  uint16_t (*from_float)(float);
  uint16_t (*from_double)(double);

  int exp_bits() const { return 15 - frac_bits; }
  uint16_t exp_all_ones() const { return static_cast<uint16_t>((1 << exp_bits()) - 1); }
  uint16_t max_finite() const {
    return static_cast<uint16_t>(((exp_all_ones() - 1) << frac_bits) | ((1 << frac_bits) - 1));
  }
  uint16_t inf() const { return static_cast<uint16_t>(exp_all_ones() << frac_bits); }
  bool is_nan(uint16_t b) const { return (b & 0x7FFF) > inf(); }
};

const Half kF16{"f16", 10, 15, f16_to_float, f16_to_double, f16_from_float, f16_from_double};
const Half kBF16{"bf16", 7, 127, bf16_to_float, bf16_to_double, bf16_from_float, bf16_from_double};
const Half kFormats[] = {kF16, kBF16};

float float_of(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// The value a pattern denotes, straight from the IEEE definition (finite patterns only).
long double definition_value(const Half& h, uint16_t b) {
  const int s = b >> 15;
  const int e = (b >> h.frac_bits) & h.exp_all_ones();
  const int f = b & ((1 << h.frac_bits) - 1);
  long double mag;
  if (e == 0) {
    mag = std::ldexp(static_cast<long double>(f), 1 - h.bias - h.frac_bits);
  } else {
    mag = std::ldexp(1.0L + std::ldexp(static_cast<long double>(f), -h.frac_bits), e - h.bias);
  }
  return s ? -mag : mag;
}

BOOST_AUTO_TEST_CASE(widening_matches_definition_exhaustively) {
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      int failures = 0;
      for (uint32_t i = 0; i < 65536; ++i) {
        const uint16_t b = static_cast<uint16_t>(i);
        const double d = h.to_double(b);
        const float f = h.to_float(b);
        const bool neg = (b >> 15) != 0;
        const int e = (b >> h.frac_bits) & h.exp_all_ones();
        const int frac = b & ((1 << h.frac_bits) - 1);
        bool ok;
        if (e == h.exp_all_ones() && frac == 0) {
          ok = std::isinf(d) && std::isinf(f) && std::signbit(d) == neg && std::signbit(f) == neg;
        } else if (e == h.exp_all_ones()) {
          ok = std::isnan(d) && std::isnan(f) && std::signbit(d) == neg && std::signbit(f) == neg;
        } else {
          const long double want = definition_value(h, b);
          ok = static_cast<long double>(d) == want && static_cast<long double>(f) == want &&
               std::signbit(d) == neg && std::signbit(f) == neg;
        }
        if (!ok && ++failures <= 5) BOOST_ERROR("widening of 0x" << std::hex << i);
      }
      BOOST_TEST(failures == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(widen_then_narrow_round_trips_exhaustively) {
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      int failures = 0;
      for (uint32_t i = 0; i < 65536; ++i) {
        const uint16_t b = static_cast<uint16_t>(i);
        const uint16_t via_f = h.from_float(h.to_float(b));
        const uint16_t via_d = h.from_double(h.to_double(b));
        bool ok;
        if (h.is_nan(b)) {
          // Quiet NaNs keep their whole payload; signalling ones come back quieted.
          const uint16_t quiet = static_cast<uint16_t>(b | (1 << (h.frac_bits - 1)));
          ok = via_f == quiet && via_d == quiet;
        } else {
          ok = via_f == b && via_d == b;
        }
        if (!ok && ++failures <= 5) {
          BOOST_ERROR("round trip of 0x" << std::hex << i << " gave 0x" << via_f << " / 0x"
                                         << via_d);
        }
      }
      BOOST_TEST(failures == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(narrowing_nan_keeps_sign_and_payload_and_is_quiet) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      const uint16_t quiet_bit = static_cast<uint16_t>(1 << (h.frac_bits - 1));
      const uint16_t nan_field = h.inf();
      // A signalling double NaN whose payload lies entirely below the 16-bit fraction: it must
      // still come out NaN (quieted), not Inf.
      uint64_t snan_bits = 0x7FF0000000000001ull;
      double snan;
      std::memcpy(&snan, &snan_bits, sizeof snan);
      BOOST_TEST(h.from_double(snan) == (nan_field | quiet_bit));
      BOOST_TEST(h.from_double(-snan) == (0x8000 | nan_field | quiet_bit));
      BOOST_TEST(h.from_float(float_of(0x7F800001u)) == (nan_field | quiet_bit));
      BOOST_TEST(h.from_float(float_of(0xFF800001u)) == (0x8000 | nan_field | quiet_bit));
      // Top payload bits survive.
      uint64_t payload_bits = 0x7FF8000000000000ull | (uint64_t{1} << 49);
      double payload_nan;
      std::memcpy(&payload_nan, &payload_bits, sizeof payload_nan);
      BOOST_TEST(h.from_double(payload_nan) == (nan_field | quiet_bit | (quiet_bit >> 2)));
      BOOST_TEST(h.from_float(float_of(0x7FC00000u | (1u << 20))) ==
                 (nan_field | quiet_bit | (quiet_bit >> 2)));
      BOOST_TEST(h.from_double(std::nan("")) != h.inf());
      BOOST_TEST(h.from_double(inf) == h.inf());
      BOOST_TEST(h.from_double(-inf) == (0x8000 | h.inf()));
      BOOST_TEST(h.from_float(std::numeric_limits<float>::infinity()) == h.inf());
      BOOST_TEST(h.from_double(0.0) == 0);
      BOOST_TEST(h.from_double(-0.0) == 0x8000);
      BOOST_TEST(h.from_float(-0.0f) == 0x8000);
    }
  }
}

// For every pair of adjacent finite values (both signs, subnormals included), the exact midpoint
// goes to the even one and the doubles/floats just beside it go to the nearer one.
BOOST_AUTO_TEST_CASE(rounding_at_every_midpoint) {
  const double dinf = std::numeric_limits<double>::infinity();
  const float finf = std::numeric_limits<float>::infinity();
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      int failures = 0;
      int float_checked = 0;
      for (uint32_t i = 0; i < h.max_finite(); ++i) {
        for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
          const uint16_t lo = static_cast<uint16_t>(sign | i);  // nearer to zero
          const uint16_t hi = static_cast<uint16_t>(sign | (i + 1));
          const uint16_t even = (i & 1) ? hi : lo;
          const double a = h.to_double(lo), b = h.to_double(hi);
          const double mid = (a + b) / 2;  // exact: few significant bits, far from underflow
          const double toward_hi = sign ? -dinf : dinf;
          const double toward_lo = -toward_hi;
          bool ok = h.from_double(mid) == even &&
                    h.from_double(std::nextafter(mid, toward_hi)) == hi &&
                    h.from_double(std::nextafter(mid, toward_lo)) == lo;
          const float fmid = static_cast<float>(mid);
          if (static_cast<double>(fmid) == mid) {
            ++float_checked;
            const float ftoward_hi = sign ? -finf : finf;
            ok = ok && h.from_float(fmid) == even &&
                 h.from_float(std::nextafter(fmid, ftoward_hi)) == hi &&
                 h.from_float(std::nextafter(fmid, -ftoward_hi)) == lo;
          }
          if (!ok && ++failures <= 5) {
            BOOST_ERROR("rounding between 0x" << std::hex << lo << " and 0x" << hi);
          }
        }
      }
      BOOST_TEST(failures == 0);
      // Every f16 and bf16 midpoint fits in a float (at most 12 significant bits, exponent >=
      // -134), so the float path is checked everywhere too.
      BOOST_TEST(float_checked == 2 * h.max_finite());
    }
  }
}

BOOST_AUTO_TEST_CASE(overflow_boundary_to_inf) {
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      const double max = h.to_double(h.max_finite());
      // max + half an ulp; an ulp of the top binade is 2^(emax - m).
      const double boundary = max + std::ldexp(1.0, h.bias - h.frac_bits - 1);
      for (double s : {1.0, -1.0}) {
        const uint16_t sign = s < 0 ? 0x8000 : 0;
        const uint16_t inf = static_cast<uint16_t>(sign | h.inf());
        const uint16_t mx = static_cast<uint16_t>(sign | h.max_finite());
        // The midpoint ties to "even": max has an odd fraction, 2^(emax+1) (Inf) an even one.
        BOOST_TEST(h.from_double(s * boundary) == inf);
        BOOST_TEST(h.from_double(std::nextafter(s * boundary, 0.0)) == mx);
        BOOST_TEST(h.from_double(std::nextafter(s * boundary, s * 1e308)) == inf);
        BOOST_TEST(h.from_double(s * max) == mx);
        BOOST_TEST(h.from_double(s * 1e300) == inf);
        BOOST_TEST(h.from_double(s * std::numeric_limits<double>::max()) == inf);
        const float fb = static_cast<float>(s * boundary);
        BOOST_REQUIRE(static_cast<double>(fb) == s * boundary);
        BOOST_TEST(h.from_float(fb) == inf);
        BOOST_TEST(h.from_float(std::nextafter(fb, 0.0f)) == mx);
        BOOST_TEST(h.from_float(static_cast<float>(s) * std::numeric_limits<float>::max()) == inf);
      }
    }
  }
  BOOST_TEST(f16_from_double(65519.99) == 0x7BFF);
  BOOST_TEST(f16_from_double(65520.0) == 0x7C00);
  BOOST_TEST(f16_from_float(65520.0f) == 0x7C00);
  BOOST_TEST(f16_from_double(65504.0) == 0x7BFF);
}

BOOST_AUTO_TEST_CASE(underflow_and_subnormals) {
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      const int min_sub_exp = 1 - h.bias - h.frac_bits;  // f16 -24, bf16 -133
      const double min_sub = std::ldexp(1.0, min_sub_exp);
      const double half_min = std::ldexp(1.0, min_sub_exp - 1);
      for (double s : {1.0, -1.0}) {
        const uint16_t sign = s < 0 ? 0x8000 : 0;
        BOOST_TEST(h.from_double(s * min_sub) == (sign | 1));
        BOOST_TEST(h.to_double(static_cast<uint16_t>(sign | 1)) == s * min_sub);
        // Exactly half the smallest subnormal ties to the even neighbour, zero.
        BOOST_TEST(h.from_double(s * half_min) == sign);
        BOOST_TEST(h.from_double(std::nextafter(s * half_min, s)) == (sign | 1));
        BOOST_TEST(h.from_double(std::nextafter(s * half_min, 0.0)) == sign);
        BOOST_TEST(h.from_double(s * 1.5 * min_sub) == (sign | 2));  // tie, 1 is odd -> 2
        BOOST_TEST(h.from_double(s * 2.5 * min_sub) == (sign | 2));  // tie, 2 is even
        BOOST_TEST(h.from_double(s * 1e-300) == sign);
        BOOST_TEST(h.from_double(s * std::numeric_limits<double>::denorm_min()) == sign);
        BOOST_TEST(h.from_float(static_cast<float>(s * half_min)) == sign);
        BOOST_TEST(h.from_float(static_cast<float>(s * min_sub)) == (sign | 1));
        BOOST_TEST(h.from_float(static_cast<float>(s) * std::numeric_limits<float>::denorm_min()) ==
                   sign);
        // Largest subnormal rounds up into the smallest normal.
        const uint16_t max_sub = static_cast<uint16_t>((1 << h.frac_bits) - 1);
        const double above = (h.to_double(max_sub) + h.to_double(max_sub + 1)) / 2;
        BOOST_TEST(h.from_double(s * above) == (sign | (max_sub + 1)));
      }
    }
  }
}

// Rounding double -> float -> f16 can differ from the correct double -> f16: a double just above
// an f16 midpoint rounds to the midpoint in float, and the second rounding then ties to even.
BOOST_AUTO_TEST_CASE(no_double_rounding) {
  const double mid = 1.0 + std::ldexp(1.0, -11);  // between 1.0 (0x3C00) and 1 + 2^-10 (0x3C01)
  const double x = mid + std::ldexp(1.0, -40);    // above the midpoint, within float's half ulp
  BOOST_REQUIRE(static_cast<double>(static_cast<float>(x)) == mid);
  BOOST_TEST(f16_from_float(static_cast<float>(x)) == 0x3C00);  // the twice-rounded answer
  BOOST_TEST(f16_from_double(x) == 0x3C01);                     // the correct one
  BOOST_TEST(f16_from_double(-x) == 0xBC01);

  // Systematically: for every f16/bf16 midpoint whose lower neighbour is even, the double
  // mid + (a bit) rounds to the midpoint in float; the direct conversion must go up.
  for (const Half& h : kFormats) {
    BOOST_TEST_CONTEXT(h.name) {
      int differing = 0, failures = 0;
      for (uint32_t i = 0; i < h.max_finite(); i += 2) {
        const double a = h.to_double(static_cast<uint16_t>(i));
        const double b = h.to_double(static_cast<uint16_t>(i + 1));
        const double m = (a + b) / 2;
        const double y = m + (b - a) * std::ldexp(1.0, -30);
        if (static_cast<double>(static_cast<float>(y)) != m) continue;
        if (h.from_float(static_cast<float>(y)) != i + 1) ++differing;
        if (h.from_double(y) != i + 1 && ++failures <= 5) {
          BOOST_ERROR("double rounding at 0x" << std::hex << i);
        }
      }
      BOOST_TEST(differing > 1000);
      BOOST_TEST(failures == 0);
    }
  }
}

// The classic bit trick for RNE float -> bf16, as an independent reference.
uint16_t bf16_reference(uint32_t bits) {
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

BOOST_AUTO_TEST_CASE(bf16_from_float_matches_bit_trick) {
  int failures = 0;
  uint64_t checked = 0;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 257) {
    const uint32_t bits = static_cast<uint32_t>(i);
    const float v = float_of(bits);
    const uint16_t got = bf16_from_float(v);
    const uint16_t got_d = bf16_from_double(static_cast<double>(v));
    bool ok;
    if (std::isnan(v)) {
      ok = kBF16.is_nan(got) && (got >> 15) == (bits >> 31);
    } else {
      const uint16_t want = bf16_reference(bits);
      ok = got == want && got_d == want;
    }
    ++checked;
    if (!ok && ++failures <= 5) {
      BOOST_ERROR("bf16 of float 0x" << std::hex << bits << " gave 0x" << got);
    }
  }
  BOOST_TEST(failures == 0);
  BOOST_TEST(checked > 16000000u);
}

// The reference's own single rounding (f16_from_double / bf16_from_double, core/half.h) and
// Eigen's float conversion, the one TensorFlow uses, must agree on every value both accept: every
// float that is not NaN (for NaN both give a NaN of the same sign; the payload is our policy).
// Every one of the 2^32 floats takes ~45 s of CPU, so by default the test walks every float whose
// rounding can differ: every sign, every exponent and every kept significand (all 2^10 of f16,
// 2^7 of bf16) with the dropped bits at zero, one, just below, at and just above the tie, and at
// their top, plus 32 hashed dropped patterns; and, for the kept significands 0, 1 and the two
// largest (the carries), every pattern of the top 13 dropped bits with the rest 0, 1 or all ones.
// CONVCHECK_HALF_EXHAUSTIVE=1 (CTest's test_half_exhaustive, label slow) walks all 2^32.
template <class EigenT>
uint64_t mismatches_with_eigen(uint16_t (*from_double)(double), uint32_t v_bits, uint64_t& nans) {
  const float v = float_of(v_bits);
  const uint16_t ours = from_double(static_cast<double>(v));
  const uint16_t eigen = Eigen::numext::bit_cast<uint16_t>(EigenT(v));
  if (std::isnan(v)) {
    ++nans;
    auto is_nan = [](uint16_t b) {
      return std::isnan(static_cast<float>(Eigen::numext::bit_cast<EigenT>(b)));
    };
    return !(is_nan(ours) && is_nan(eigen) && (ours >> 15) == (eigen >> 15));
  }
  return ours != eigen;
}

struct EigenCase {
  const char* name;
  int frac_bits;                    // 16-bit format's fraction bits
  int dropped(uint32_t e) const {   // float fraction bits rounding drops at float exponent field e
    if (frac_bits == 7) return 16;  // bf16 shares f32's exponent range
    if (e >= 113) return 13;        // f16 normal
    return e == 0 ? 23 : std::min(23, 13 + static_cast<int>(113 - e));
  }
  uint64_t (*check)(uint32_t, uint64_t&);
};

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

BOOST_AUTO_TEST_CASE(single_rounding_matches_eigen_on_every_float) {
  const EigenCase cases[] = {
      {"f16", 10,
       [](uint32_t b, uint64_t& n) {
         return mismatches_with_eigen<Eigen::half>(f16_from_double, b, n);
       }},
      {"bf16", 7,
       [](uint32_t b, uint64_t& n) {
         return mismatches_with_eigen<Eigen::bfloat16>(bf16_from_double, b, n);
       }},
  };
  const char* env = std::getenv("CONVCHECK_HALF_EXHAUSTIVE");
  const bool exhaustive = env != nullptr && std::string(env) == "1";
  for (const EigenCase& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      uint64_t bad = 0, checked = 0, nans = 0;
      auto check = [&](uint32_t b) {
        const uint64_t miss = c.check(b, nans);
        ++checked;
        if (miss != 0 && ++bad <= 5) BOOST_ERROR("float 0x" << std::hex << b);
      };
      if (exhaustive) {
        for (uint64_t i = 0; i < (uint64_t{1} << 32); ++i) check(static_cast<uint32_t>(i));
        BOOST_TEST(checked == (uint64_t{1} << 32));
        BOOST_TEST(nans == 2 * ((uint64_t{1} << 23) - 1));
      } else {
        uint64_t seed = 0x5EED;
        for (uint32_t sign : {0u, 0x80000000u}) {
          for (uint32_t e = 0; e < 256; ++e) {
            const int k = c.dropped(e);
            const uint32_t top = uint32_t{1} << k, half = top >> 1;
            const uint32_t kept_max = (uint32_t{1} << (23 - k)) - 1;
            auto at = [&](uint32_t kept, uint32_t dropped) {
              check(sign | (e << 23) | (kept << k) | (dropped & (top - 1)));
            };
            for (uint32_t kept = 0; kept <= kept_max; ++kept) {
              for (uint32_t d : {0u, 1u, half - 1, half, half + 1, top - 2, top - 1}) at(kept, d);
              for (int r = 0; r < 32; ++r) at(kept, static_cast<uint32_t>(splitmix(seed)));
            }
            const int hi = std::min(k, 13), lo = k - hi;
            for (uint32_t kept : {0u, 1u, kept_max - 1, kept_max}) {
              for (uint32_t t = 0; t < (uint32_t{1} << hi); ++t) {
                for (uint32_t l : {0u, 1u, (uint32_t{1} << lo) - 1})
                  at(kept & kept_max, (t << lo) | l);
              }
            }
          }
        }
        BOOST_TEST_MESSAGE(c.name << ": " << checked << " floats checked against Eigen");
        BOOST_TEST(checked > 10000000u);
      }
      BOOST_TEST(bad == 0u);
    }
  }
}

#if defined(__FLT16_MAX__)
// Where the compiler has _Float16, its (correctly rounded) conversions are a second oracle for f16.
// Only a test oracle: the implementation never uses it.
BOOST_AUTO_TEST_CASE(f16_matches_compiler_float16) {
  int failures = 0;
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 65537 * 3) {
    const float v = float_of(static_cast<uint32_t>(i));
    if (std::isnan(v)) continue;
    const _Float16 ref = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &ref, sizeof want);
    if (f16_from_float(v) != want && ++failures <= 5) {
      BOOST_ERROR("f16 of float " << v);
    }
  }
  // Doubles with bits below float precision exercise the single rounding.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < 200000; ++k) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double mag = std::ldexp(static_cast<double>(state >> 11), -53);  // [0, 1)
    const double v = std::ldexp(mag, static_cast<int>(k % 44) - 28) * ((k & 1) ? -1 : 1);
    const _Float16 ref = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &ref, sizeof want);
    if (f16_from_double(v) != want && ++failures <= 5) {
      BOOST_ERROR("f16 of double " << v);
    }
  }
  BOOST_TEST(failures == 0);
}
#endif

}  // namespace
}  // namespace convcheck
