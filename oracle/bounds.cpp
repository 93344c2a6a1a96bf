// Element-wise judgement against the exact reference (design §6.3):
//   tau_i = (1+u_out)[(2u_in+u_in^2) + gamma_k(u_acc)(1+u_in)^2] M_i + u_out|s_i| + nu_i,
//   gamma_k(u) = k u / (1 - k u), k = the contract's rounding chain for n_i terms,
// nu_i the underflow allowance: the output's smallest subnormal, plus the accumulator's
// per rounded product (products of f32 operands are rounded inside f32 accumulators), plus a
// flushed accumulator's smallest normal per term under FTZ.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/layout.h"
#include "oracle/internal.h"

namespace convcheck::oracle_detail {

namespace {

// The underflow allowance per rounding: a whole smallest subnormal of the format. Half would be
// exact for RN, but half of f64's smallest subnormal (2^-1075) is not a double: it rounds to 0 and
// would leave subnormal results no allowance at all.
double half_subnormal(int precision, int min_exponent) {
  return std::ldexp(1.0, min_exponent - precision + 1);
}

// The binary format an accumulator of unit roundoff u works in (for its underflow threshold).
FloatFormat accumulator_format(double u) {
  if (u <= 0x1p-53) return float_format(DType::f64);
  if (u <= 0x1p-24) return float_format(DType::f32);
  if (u <= 0x1p-11) return float_format(DType::f16);
  return float_format(DType::bf16);
}

// The smallest magnitude that rounds to Inf in the dtype (round to nearest): the largest finite
// value plus half its ulp, (2 - 2^-p) * 2^emax.
double overflow_threshold(DType t) {
  const FloatFormat f = float_format(t);
  return (2 - std::ldexp(1.0, -f.precision)) * std::ldexp(1.0, f.max_exponent);
}

bool both_zero(double a, double b) {
  return a == 0 && b == 0;
}

}  // namespace

bool bound_meaningful(const NumericContract& k, int64_t n) {
  return static_cast<double>(k.chain_length(n)) * k.u_acc < 0.5;
}

bool overflow_within(double v, double exact, double bound, DType t) {
  return std::isinf(v) && std::isfinite(exact) && std::signbit(v) == std::signbit(exact) &&
         std::fabs(exact) + bound >= overflow_threshold(t);
}

bool overflow_pair_within(double x, double y, double exact, double tx, double ty, DType t) {
  if (std::isinf(x) == std::isinf(y)) return false;
  const double inf = std::isinf(x) ? x : y, finite = std::isinf(x) ? y : x;
  const double inf_bound = std::isinf(x) ? tx : ty;
  const double nearest = std::max(overflow_threshold(t), std::fabs(exact) - inf_bound);
  return overflow_within(inf, exact, inf_bound, t) && std::isfinite(finite) &&
         std::signbit(finite) == std::signbit(inf) && nearest - std::fabs(finite) <= tx + ty;
}

double tau(const NumericContract& k, const ReferenceResult& ref, int64_t i, DType t) {
  if (t == DType::i32) return 0;
  const int64_t n = ref.terms[i];
  const double ku = static_cast<double>(k.chain_length(n)) * k.u_acc;
  const double gamma = ku < 0.5 ? ku / (1 - ku) : INFINITY;
  const double m = ref.magnitude[i];
  const double e = ((2 * k.u_in + k.u_in * k.u_in) + gamma * (1 + k.u_in) * (1 + k.u_in)) * m;
  const FloatFormat out = float_format(t);
  double nu = half_subnormal(out.precision, out.min_exponent);
  if (k.u_acc > 0) {
    const FloatFormat acc = accumulator_format(k.u_acc);
    nu += static_cast<double>(n) * half_subnormal(acc.precision, acc.min_exponent);
    if (k.flush_subnormals) nu += 2.0 * static_cast<double>(n) * std::ldexp(1.0, acc.min_exponent);
  }
  const double s = std::fabs(ref.exact_hi[i]);
  return ((1 + k.u_out) * e + k.u_out * s + nu) * (1 + 1e-12);  // evaluated with an upward margin
}

ResultCoords::ResultCoords(const Problem& p, const Geometry& g)
    : shape_(storage_shape(p, g, op_io(p.op).result_like)),
      nchw_(stored_nchw(p, op_io(p.op).result_like)) {}

std::array<int64_t, 4> ResultCoords::operator()(int64_t i) const {
  std::array<int64_t, 4> c{};
  int64_t rest = i;
  for (int d = 3; d >= 0; --d) {
    c[d] = shape_[d] ? rest % shape_[d] : 0;
    rest = shape_[d] ? rest / shape_[d] : 0;
  }
  if (nchw_) return {c[0], c[2], c[3], c[1]};
  return c;
}

std::array<int64_t, 4> result_coord(const Problem& p, const Geometry& g, int64_t i) {
  return ResultCoords(p, g)(i);
}

ReferenceResult reference_of(const Problem& p, const Roles& r) {
  return reference_of(p, geometry(p), r);
}

ReferenceResult reference_of(const Problem& p, const Geometry& g, const Roles& r) {
  const OpIO io = op_io(p.op);
  const ConstTensorView a = view(r.get(io.a)), b = view(r.get(io.b));
  Operands ops;
  ops.set(io.a, &a);
  ops.set(io.b, &b);
  return reference_compute(p, g, ops);
}

namespace {

// hi + lo, both integers (int32's double-double sum), exactly in decimal.
std::string integer_string(double hi, double lo) {
  if (!std::isfinite(hi) || !std::isfinite(lo) || std::fabs(hi) >= 0x1p126) return format_value(hi);
  __int128 v = static_cast<__int128>(hi) + static_cast<__int128>(lo);
  const bool negative = v < 0;
  unsigned __int128 m = negative ? -static_cast<unsigned __int128>(v) : v;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  return (negative ? "-" : "") + digits;
}

}  // namespace

// The heat map of a failing comparison (oracle.h): `usage_of(i)` over the slice of the result
// that holds element `worst`.
template <class UsageOf>
ErrorMap error_map(const Problem& p, const Geometry& g, int64_t size, int64_t worst,
                   const UsageOf& usage_of) {
  const bool filter = op_io(p.op).result_like == Role::filter;
  static const char* const kActivation[] = {"n", "h", "w", "c"};
  static const char* const kFilter[] = {"kh", "kw", "in", "out"};
  const char* const* names = filter ? kFilter : kActivation;
  const int r = filter ? 0 : 1, c = r + 1;  // the axes drawn
  const int s0 = filter ? 2 : 0, s1 = 3;    // the axes that choose the slice
  const ResultCoords coord_of(p, g);
  const std::array<int64_t, 4> w = coord_of(worst);
  const std::array<int64_t, 4> last = coord_of(size - 1);  // every axis at its end
  ErrorMap m;
  m.rows = names[r];
  m.cols = names[c];
  m.slice = std::string(names[s0]) + "=" + std::to_string(w[s0]) + " " + names[s1] + "=" +
            std::to_string(w[s1]);
  m.extent = {last[r] + 1, last[c] + 1};
  for (int k = 0; k < 2; ++k) m.cell[k] = (m.extent[k] + kErrorMapSide - 1) / kErrorMapSide;
  m.usage.assign(static_cast<std::size_t>((m.extent[0] + m.cell[0] - 1) / m.cell[0]),
                 std::vector<double>(
                     static_cast<std::size_t>((m.extent[1] + m.cell[1] - 1) / m.cell[1]), 0.0));
  for (int64_t i = 0; i < size; ++i) {
    const std::array<int64_t, 4> x = coord_of(i);
    if (x[s0] != w[s0] || x[s1] != w[s1]) continue;
    double& cell = m.usage[static_cast<std::size_t>(x[r] / m.cell[0])]
                          [static_cast<std::size_t>(x[c] / m.cell[1])];
    const double u = usage_of(i);
    if (std::isnan(u) || u > cell) cell = std::isnan(u) ? INFINITY : u;
  }
  return m;
}

Comparison compare_to_reference(const Problem& p, const Geometry& g, const ReferenceResult& ref,
                                const Tensor& got, const NumericContract& k, bool bitwise) {
  Comparison c;
  const bool exact = bitwise || p.dtype == DType::i32;
  // Element i: within its contract, its error and its bound.
  auto judge = [&](int64_t i, bool& ok, double& err, double& bound) {
    const double r = ref.result.get(i), v = got.get(i), hi = ref.exact_hi[i];
    bound = tau(k, ref, i, p.dtype);
    err = 0;
    if (exact) {
      ok = (r == v) || both_zero(r, v) || (std::isnan(r) && std::isnan(v));
      err = ok ? 0 : std::fabs(v - r);
    } else if (std::isnan(r)) {
      ok = std::isnan(v);
      err = ok ? 0 : INFINITY;
    } else if (std::isinf(hi)) {  // the exact value is infinite (Inf operands)
      ok = v == hi;
      err = ok ? 0 : INFINITY;
    } else if (std::isnan(v)) {
      ok = false;
      err = INFINITY;
    } else if (std::isinf(v) && !std::isinf(r)) {
      // The exact value is finite, the result overflowed (overflow_within).
      ok = overflow_within(v, hi, bound, p.dtype);
      err = ok ? bound : INFINITY;
    } else if (std::isinf(v)) {  // both overflowed the dtype
      ok = v == r;
      err = ok ? 0 : INFINITY;
    } else {
      err = std::fabs((v - hi) - ref.exact_lo[i]);
      ok = err <= bound;
    }
  };
  auto usage_of = [&](int64_t i) {
    bool ok;
    double err, bound;
    judge(i, ok, err, bound);
    return err > 0 ? (bound > 0 ? err / bound : INFINITY) : 0.0;
  };
  int64_t worst = -1;
  double worst_usage = -1;
  for (int64_t i = 0; i < got.size(); ++i) {
    bool ok;
    double err, bound;
    judge(i, ok, err, bound);
    const double r = ref.result.get(i), v = got.get(i), hi = ref.exact_hi[i];
    if (!ok) {
      const double u = err > 0 ? (bound > 0 ? err / bound : INFINITY) : 0.0;
      if (worst < 0 || u > worst_usage) {
        worst = i;
        worst_usage = u;
      }
    }
    if (err > 0) c.usage = std::max(c.usage, bound > 0 ? err / bound : INFINITY);
    if (!ok) {
      ++c.mismatches;
      if (c.passed) {
        c.passed = false;
        // int32's exact result is the sum wrapped modulo 2^32, as TF defines it (issue 19): the
        // reference's result, not the double-double of the unwrapped sum (which is not even
        // exact past 2^53); the unwrapped sum is shown beside it, labelled.
        const bool i32 = p.dtype == DType::i32;
        c.first = Offender{result_coord(p, g, i), i, i32 ? r : hi, v, bound};
        const auto& x = c.first->coord;
        c.detail = std::string(result_name(p.op)) + "[" + std::to_string(x[0]) + "," +
                   std::to_string(x[1]) + "," + std::to_string(x[2]) + "," + std::to_string(x[3]) +
                   "]: got " + format_value(v) + ", " +
                   (exact ? "exact " + format_value(c.first->ref) +
                                (i32 ? " (int32, wrapped; unwrapped sum " +
                                           integer_string(hi, ref.exact_lo[i]) + ")"
                                     : "") +
                                " (bitwise equality required)"
                          : exact_and_bound(c.first->ref, bound));
      }
    }
  }
  if (!c.passed) {
    c.map = error_map(p, g, got.size(), worst, usage_of);
    c.detail = std::to_string(c.mismatches) + " of " + std::to_string(got.size()) +
               " elements wrong; first " + c.detail;
  }
  return c;
}

Comparison compare_results(const Problem& p, const Geometry& g, const Tensor& a, const Tensor& b,
                           const ReferenceResult* ref, const NumericContract& k, bool bitwise) {
  Comparison c;
  const bool exact = bitwise || p.dtype == DType::i32 || ref == nullptr;
  for (int64_t i = 0; i < a.size(); ++i) {
    const double x = a.get(i), y = b.get(i);
    bool ok = x == y || both_zero(x, y) || (std::isnan(x) && std::isnan(y));
    double allowed = 0;
    if (!ok && !exact && std::isfinite(x) && std::isfinite(y)) {
      allowed = 2 * tau(k, *ref, i, p.dtype);
      ok = std::fabs(x - y) <= allowed;
      if (allowed > 0) c.usage = std::max(c.usage, std::fabs(x - y) / allowed);
    } else if (!ok && !exact && std::isinf(x) != std::isinf(y)) {
      // One sum overflowed, the other did not (overflow_pair_within). Usage as compare_to_reference
      // counts an admitted Inf (its whole bound), or infinite where the pair fails.
      const double bound = tau(k, *ref, i, p.dtype);
      allowed = 2 * bound;
      ok = overflow_pair_within(x, y, ref->exact_hi[i], bound, bound, p.dtype);
      c.usage = std::max(c.usage, ok ? 1.0 : INFINITY);
    }
    if (!ok) {
      ++c.mismatches;
      if (c.passed) {
        c.passed = false;
        c.first = Offender{result_coord(p, g, i), i, x, y, allowed};
        const auto& q = c.first->coord;
        c.detail = "element [" + std::to_string(q[0]) + "," + std::to_string(q[1]) + "," +
                   std::to_string(q[2]) + "," + std::to_string(q[3]) + "]: " + format_value(x) +
                   " vs " + format_value(y) +
                   (exact ? std::string(" (bitwise)") : ", allowed " + format_value(allowed));
      }
    }
  }
  return c;
}

}  // namespace convcheck::oracle_detail

namespace convcheck {

std::string format_value(double v) {
  if (std::isnan(v)) return "nan";  // a NaN's sign means nothing (iostreams print "-nan")
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string exact_and_bound(double exact, double bound) {
  const std::string e = "exact " + format_value(exact);
  if (std::isnan(exact)) return e + " (any NaN passes)";
  if (std::isinf(exact)) return e + " (only " + format_value(exact) + " passes)";
  return e + ", bound " + format_value(bound);
}

}  // namespace convcheck
