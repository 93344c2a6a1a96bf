#include "reference/engine.h"

#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/half.h"

namespace convcheck::ref {

namespace {

// Round a double to dtype t (RN-even) and the neighbours of that value in t, all as doubles.
struct Rounded {
  double value, below, above;
};

Rounded round_with_neighbours(double v, DType t) {
  switch (t) {
    case DType::f32: {
      const float r = static_cast<float>(v);
      return {r, std::nextafter(r, -INFINITY), std::nextafter(r, INFINITY)};
    }
    case DType::f16:
    case DType::bf16: {
      const bool half = t == DType::f16;
      const uint16_t bits = half ? f16_from_double(v) : bf16_from_double(v);
      auto decode = [&](uint16_t b) { return half ? f16_to_double(b) : bf16_to_double(b); };
      // Precondition (checked by the caller): the value is nonzero and finite, so +-1 on the
      // magnitude bits steps to the neighbours; the sign bit says which way is up.
      const bool negative = bits & 0x8000;
      const uint16_t toward_zero = static_cast<uint16_t>(bits - 1);
      const uint16_t away = static_cast<uint16_t>(bits + 1);
      const double r = decode(bits);
      if (negative) return {r, decode(away), decode(toward_zero)};
      return {r, decode(toward_zero), decode(away)};
    }
    case DType::f64:
    case DType::i32:
      break;
  }
  return {v, v, v};
}

}  // namespace

bool certify_rounding(double hi, double lo, double err, DType t, double* rounded) {
  if (!std::isfinite(hi) || !std::isfinite(err)) return false;
  if (hi == 0) {
    // hi + lo is exactly zero; only an error-free sum proves the exact value is zero (-> +0).
    if (err != 0) return false;
    *rounded = 0.0;
    return true;
  }
  // Values near the bottom of double's range would need sub-ulp midpoints: leave them to the exact
  // accumulator (rare).
  if (std::fabs(hi) < 0x1p-1000) return false;
  // Slack for the few roundings in the distance computations below (each relative <= 2^-53).
  const double slack = 0x1p-50;
  if (t == DType::f64) {
    if (std::fabs(hi) >= DBL_MAX) return false;
    // hi = RN(hi + lo) and |lo| <= ulp/2: s rounds to hi iff it lies strictly between the
    // midpoints hi - ulp_below/2 and hi + ulp_above/2.
    const double up = (std::nextafter(hi, INFINITY) - hi) / 2 - lo;
    const double down = (hi - std::nextafter(hi, -INFINITY)) / 2 + lo;
    const double need = err * (1 + slack);
    if (!(up > need && down > need)) return false;
    *rounded = hi;
    return true;
  }
  const Rounded r = round_with_neighbours(hi, t);
  if (r.value == 0 || !std::isfinite(r.value) || !std::isfinite(r.below) ||
      !std::isfinite(r.above)) {
    return false;  // underflow to zero or overflow territory: the exact path decides
  }
  // The midpoints of a <= 24-bit format are exact doubles.
  const double mid_up = (r.value + r.above) / 2;
  const double mid_down = (r.value + r.below) / 2;
  const double up_gap = mid_up - hi, down_gap = hi - mid_down;
  const double up = up_gap - lo, down = down_gap + lo;
  const double need_up = err + slack * (std::fabs(up_gap) + std::fabs(lo));
  const double need_down = err + slack * (std::fabs(down_gap) + std::fabs(lo));
  if (!(up > need_up && down > need_down)) return false;
  *rounded = r.value;
  return true;
}

}  // namespace convcheck::ref
