// The reference's evaluation engine: one accumulation scheme for every op.
//
// An op supplies a Law: count() output elements in canonical order (NHWC activations, HWIO/RSCM
// filters) and terms(e, f), which calls f(x, y) for every non-padding product of element e. The
// engine turns those products into the correctly rounded result (see reference.h for the scheme).
// Internal to reference/.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/problem.h"
#include "reference/exact_accumulator.h"

namespace convcheck::ref {

/// Operands converted to double (exact for every dtype) in canonical layout.
struct Canonical : ByRole<std::vector<double>> {
  /// All operands finite and, for f64, every nonzero magnitude in [2^-480, 2^480]: then every
  /// product is exact as a double-double and no partial sum overflows, so the fast path is sound.
  bool fast_ok = true;
};

enum class Mode { exact, naive };

/// Per-element results in canonical order.
struct Outputs {
  std::vector<double>
      value;  // rounded into the dtype (exactly representable); naive: the double sum
  std::vector<double> hi, lo, magnitude;
  std::vector<int64_t> terms;
  int64_t fallbacks = 0;
};

/// If the exact value s, known to lie within `err` of hi + lo, provably rounds (RN-even) to one
/// value of dtype t, stores it in *rounded and returns true.
bool certify_rounding(double hi, double lo, double err, DType t, double* rounded);

namespace detail {

inline void two_sum(double a, double b, double* s, double* e) {
  *s = a + b;
  double z = *s - a;
  *e = (a - (*s - z)) + (b - z);
}

// gamma_k(u) = k u / (1 - k u), u = 2^-53.
inline double gamma64(int64_t k) {
  const double ku = static_cast<double>(k) * 0x1p-53;
  return ku / (1.0 - ku);
}

template <class Law>
void element_exact(const Law& law, int64_t e, DType t, Outputs& out, int64_t& fallbacks,
                   ExactAccumulator& acc) {
  double magnitude = 0;
  int64_t n = 0;
  if (t == DType::i32) {
    __int128 sum = 0;
    law.terms(e, [&](double x, double y) {
      sum += static_cast<__int128>(static_cast<int64_t>(x) * static_cast<int64_t>(y));
      magnitude += std::fabs(x * y);
      ++n;
    });
    // int32 is the exact sum modulo 2^32 (spec A.5): two's-complement wrap of the low 32 bits.
    const uint32_t low = static_cast<uint32_t>(static_cast<unsigned __int128>(sum));
    out.value[e] = static_cast<double>(static_cast<int32_t>(low));
    const double hi = static_cast<double>(sum);
    out.hi[e] = hi;
    out.lo[e] = static_cast<double>(sum - static_cast<__int128>(hi));
  } else {
    // Fast path: TwoSum keeps sum(h) = p + sum(q) exactly; s gathers the small parts q (and, for
    // f64 operands, the product errors r = fma(x, y, -h); f16/bf16/f32 products are exact in
    // double, r = 0). Since |q_k| <= u |p_k| <= u M (1 + gamma_n) and |r| <= u |h|, the small
    // parts sum to at most (n + 1) u M (1 + gamma_n), and s has error at most gamma_n times that:
    // err below is a rigorous bound with a safety factor 2 (which also covers M's own rounding).
    double p = 0, s = 0;
    const bool products_exact = t != DType::f64;
    if (products_exact) {
      law.terms(e, [&](double x, double y) {
        const double h = x * y;
        double q;
        two_sum(p, h, &p, &q);
        s += q;
        magnitude += std::fabs(h);
        ++n;
      });
    } else {
      law.terms(e, [&](double x, double y) {
        const double h = x * y;
        const double r = std::fma(x, y, -h);
        double q;
        two_sum(p, h, &p, &q);
        s += q + r;
        magnitude += std::fabs(h);
        ++n;
      });
    }
    double hi, lo;
    two_sum(p, s, &hi, &lo);
    const double err = 2 * static_cast<double>(n + 1) * 0x1p-53 * gamma64(n + 1) * magnitude;
    double rounded;
    if (certify_rounding(hi, lo, err, t, &rounded)) {
      out.value[e] = rounded;
      out.hi[e] = hi;
      out.lo[e] = lo;
    } else {
      // The exact accumulator decides (and is the only path for non-finite or extreme operands).
      ++fallbacks;
      acc.clear();
      magnitude = 0;
      law.terms(e, [&](double x, double y) {
        acc.add_product(x, y);
        magnitude += std::fabs(x) * std::fabs(y);
      });
      out.value[e] = acc.round_to(t);
      acc.to_double_double(&out.hi[e], &out.lo[e]);
    }
  }
  out.magnitude[e] = magnitude;
  out.terms[e] = n;
}

template <class Law>
void element_exact_only(const Law& law, int64_t e, DType t, Outputs& out, ExactAccumulator& acc) {
  double magnitude = 0;
  int64_t n = 0;
  acc.clear();
  law.terms(e, [&](double x, double y) {
    acc.add_product(x, y);
    magnitude += std::fabs(x) * std::fabs(y);
    ++n;
  });
  out.value[e] = acc.round_to(t);
  acc.to_double_double(&out.hi[e], &out.lo[e]);
  out.magnitude[e] = magnitude;
  out.terms[e] = n;
}

}  // namespace detail

/// Below this many multiply-add terms (the forward op's, padding taps included) a problem is
/// evaluated on one thread: the parallel region costs more than it saves there, and far more when
/// the machine is oversubscribed (ctest -j, other jobs), where each barrier can wait a scheduler
/// time slice for a descheduled thread.
inline constexpr double kParallelTerms = 65536;

/// Evaluates every element of `law` (OpenMP over elements when the problem has kParallelTerms
/// terms or more; each element's arithmetic is fixed, so results do not depend on the thread
/// count).
template <class Law>
void evaluate(const Law& law, DType t, const Canonical& c, Mode mode, Outputs& out) {
  const int64_t count = law.count();
  const Geometry& g = law.g;
  const bool parallel = static_cast<double>(g.N) * static_cast<double>(g.OH) *
                            static_cast<double>(g.OW) * static_cast<double>(g.O) *
                            static_cast<double>(g.KH) * static_cast<double>(g.KW) *
                            static_cast<double>(g.Cf) >=
                        kParallelTerms;
  out.value.assign(count, 0.0);
  if (mode == Mode::naive) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t e = 0; e < count; ++e) {
      double acc = 0;
      law.terms(e, [&](double x, double y) { acc += x * y; });
      out.value[e] = acc;
    }
    return;
  }
  out.hi.assign(count, 0.0);
  out.lo.assign(count, 0.0);
  out.magnitude.assign(count, 0.0);
  out.terms.assign(count, 0);
  int64_t fallbacks = 0;
  const bool fast = c.fast_ok || t == DType::i32;
#pragma omp parallel reduction(+ : fallbacks) if (parallel)
  {
    ExactAccumulator acc;
#pragma omp for schedule(dynamic, 64)
    for (int64_t e = 0; e < count; ++e) {
      if (fast) {
        detail::element_exact(law, e, t, out, fallbacks, acc);
      } else {
        detail::element_exact_only(law, e, t, out, acc);
        ++fallbacks;
      }
    }
  }
  out.fallbacks = fallbacks;
}

}  // namespace convcheck::ref
