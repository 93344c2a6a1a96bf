// Operand fills (design §6.1; the vocabulary and the two ramps: oracle/fills.h). Each element's
// value is a function of (seed, role, index) alone, so fills are reproducible and independent of
// the thread count and of the order of filling.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/hash.h"
#include "oracle/internal.h"

namespace convcheck::oracle_detail {

namespace {

struct Stream {  // the random numbers of one element
  uint64_t state;
  Stream(uint64_t seed, Role r, int64_t i)
      : state(splitmix64_mix(seed * kSplitMixGamma +
                             (static_cast<uint64_t>(r) + 1) * 0xD1B54A32D192ED03ull +
                             static_cast<uint64_t>(i))) {}
  uint64_t next() { return splitmix64_next(state); }
  double uniform() { return (next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {                                      // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  int64_t integer(int64_t range) {  // uniform in [-range, range]
    return static_cast<int64_t>(next() % static_cast<uint64_t>(2 * range + 1)) - range;
  }
};

double min_subnormal(DType t) {
  const FloatFormat f = float_format(t);
  return std::ldexp(1.0, f.min_exponent - f.precision + 1);
}

// Largest term count of any element of the conv triple (forward, backprop input, backprop filter):
// an exact fill must keep all three exact, since the adjoint checks run all three.
int64_t longest_sum(const Geometry& g) {
  const int64_t fwd = g.KH * g.KW * g.Cf;
  const int64_t bpi = g.KH * g.KW * (g.depthwise ? g.M : (g.G ? g.O / g.G : 0));
  const int64_t bpf = g.N * g.OH * g.OW;
  return std::max<int64_t>({fwd, bpi, bpf, 1});
}

// ---- the generators: one per row of kFills --------------------------------------------------

double exact_value(const FillSite& x) {
  // Thin input and out_backprop (never the filter): every product of the triple then keeps a
  // factor from a thinned role.
  Stream s(x.seed, x.role, x.index);
  if (x.density < 1 && x.role != Role::filter && s.uniform() >= x.density) return 0.0;
  return static_cast<double>(s.integer(x.range));
}

double real_value(const FillSite& x) {
  Stream s(x.seed, x.role, x.index);
  if (x.dtype == DType::i32) return static_cast<double>(static_cast<int32_t>(s.next()));
  return s.normal();
}

double cancel_value(const FillSite& x) {
  Stream s(x.seed, x.role, x.index);
  const DType t = x.dtype;
  if (t == DType::i32) return static_cast<double>(static_cast<int32_t>(s.next()));
  const double big = t == DType::f16 ? 8 : t == DType::bf16 ? 64 : t == DType::f32 ? 1024 : 0x1p20;
  return (s.next() & 1 ? 1 : -1) * (big + s.normal() * big / 16);
}

double special_value(const FillSite& x) {
  Stream s(x.seed, x.role, x.index);
  const DType t = x.dtype;
  if (t == DType::i32) return static_cast<double>(static_cast<int32_t>(s.next()));
  const double u = s.uniform();
  if (u < 0.02) return NAN;
  if (u < 0.04) return INFINITY;
  if (u < 0.06) return -INFINITY;
  if (u < 0.10)
    return (s.next() & 1 ? 1 : -1) * min_subnormal(t) * static_cast<double>(1 + s.next() % 7);
  if (u < 0.13) return -0.0;
  return s.normal();
}

double ramp_value(const FillSite& x) {
  // TF's 1..n; 16-bit types wrap at the last exactly representable integer.
  const int64_t wrap = x.dtype == DType::f16 ? 2048 : x.dtype == DType::bf16 ? 256 : INT64_MAX;
  return static_cast<double>(x.index % wrap + 1);
}

double ones_value(const FillSite&) {
  return 1.0;
}

double ramp_unwrapped_value(const FillSite& x) {
  return static_cast<double>(x.index + 1);
}

double random_value(const FillSite& x) {
  // Element i of the SplitMix64 stream seeded with seed + role.
  uint64_t state =
      x.seed + static_cast<uint64_t>(x.role) + static_cast<uint64_t>(x.index) * kSplitMixGamma;
  return static_cast<double>(static_cast<int64_t>(splitmix64_next(state) % 17) - 8);
}

// Scale-disparate roles, as in training: activations ~1, filters ~1e-1, gradients ~1e-3 to 1e-6.
// Each role's scale is drawn per case from (seed, role) alone (the element stream at index -1,
// which no element uses): input 10^U(-0.5, 0.5), filter 10^U(-1.5, -0.5), out_backprop
// 10^U(-6, -3); f16's out_backprop 10^U(-4, -3), since below f16's smallest normal (6.1e-5)
// the values would be the tiny fill's business and keep at most a few bits. Each element is
// N(0,1) times its role's scale, rounded into the dtype; int32 gets the real fill (full-range
// integers: an integer has no scale to disparate).
double scaled_scale(const FillSite& x) {
  Stream s(x.seed, x.role, -1);
  const double u = s.uniform();
  switch (x.role) {
    case Role::input:
      return std::pow(10.0, u - 0.5);
    case Role::filter:
      return std::pow(10.0, u - 1.5);
    default: {
      const double lo = x.dtype == DType::f16 ? -4 : -6;
      return std::pow(10.0, lo + (-3 - lo) * u);
    }
  }
}

double scaled_value(const FillSite& x) {
  if (x.dtype == DType::i32) return real_value(x);
  Stream s(x.seed, x.role, x.index);
  return s.normal() * scaled_scale(x);
}

// Results straddling the dtype's smallest normal 2^e (e = min_exponent: f16 -14, bf16 and f32
// -126, f64 -1022), where flush-to-zero bites. Every role's elements are +-(1 + U[0,1)) *
// 2^(floor(e/2) + k), k uniform in [-6, 2], a quarter of the input's and out_backprop's 0 (never
// the filter's, so a 1x1 filter is never all zero): every operand is normal, each
// product of two roles (whichever pair an op multiplies) lies in about [2^(e-13), 2^(e+6)), and
// with signs mixed and zeros thinning the sums, some results are subnormal and some normal.
// int32 gets integers in [-1, 1] (it has no subnormals; these are its smallest values).
double tiny_value(const FillSite& x) {
  Stream s(x.seed, x.role, x.index);
  if (x.dtype == DType::i32) return static_cast<double>(s.integer(1));
  if (s.uniform() < 0.25 && x.role != Role::filter) return 0.0;
  const int half = static_cast<int>(std::floor(float_format(x.dtype).min_exponent / 2.0));
  const double sign = s.next() & 1 ? 1 : -1;
  return sign * std::ldexp(1.0 + s.uniform(), half + static_cast<int>(s.integer(4)) - 2);
}

// clang-format off
const FillInfo kFills[] = {
    {FillKind::exact,   "exact",   kOracleFill, "small integers: every partial sum exact, results bit for bit", exact_value, 30},
    {FillKind::real,    "real",    kOracleFill, "N(0,1) rounded into the dtype (int32: full-range integers)", real_value, 25},
    {FillKind::cancel,  "cancel",  kOracleFill, "large values of both signs: heavy cancellation", cancel_value, 8},
    {FillKind::special, "special", kOracleFill, "NaN, +-Inf, subnormals and -0 in a real background", special_value, 10},
    {FillKind::ramp,    "ramp",    kOracleFill, "TF's 1..n in storage order; f16/bf16 wrap at 2048/256 (exact integers)", ramp_value, 12},
    {FillKind::scaled,  "scaled",  kOracleFill, "N(0,1) per role scaled as in training: input ~1, filter ~1e-1, out_backprop 1e-3..1e-6", scaled_value, 8},
    {FillKind::tiny,    "tiny",    kOracleFill, "operands near the square root of the smallest normal: results straddle it (subnormal and normal)", tiny_value, 7},
    {FillKind::ones,    "ones",    kOperandsFill, "all 1 (TF's conv2d_transpose tests)", ones_value, 0},
    {FillKind::ramp_unwrapped, "ramp", kOperandsFill, "TF's np.arange(1, n+1) in storage order, as the dtype rounds it", ramp_unwrapped_value, 0},
    {FillKind::random,  "random",  kOperandsFill, "integers in [-8, 8] from the seed (and the role)", random_value, 0},
};
// clang-format on

}  // namespace

}  // namespace convcheck::oracle_detail

namespace convcheck {

using oracle_detail::kFills;

const std::vector<FillInfo>& fills() {
  static const std::vector<FillInfo> all(std::begin(kFills), std::end(kFills));
  return all;
}

const FillInfo& fill_info(FillKind f) {
  for (const FillInfo& x : kFills)
    if (x.kind == f) return x;
  throw std::logic_error("fill_info: a FillKind without a row in kFills");
}

const char* fill_name(FillKind f) {
  return fill_info(f).name;
}

std::optional<FillKind> parse_fill(std::string_view s, FillUse use) {
  for (const FillInfo& x : kFills)
    if ((x.uses & use) && s == x.name) return x.kind;
  return std::nullopt;
}

std::string fill_names(FillUse use, const char* sep, const char* last) {
  std::vector<const char*> names;
  for (const FillInfo& x : kFills)
    if (x.uses & use) names.push_back(x.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? last : sep) + std::string(names[i]);
  return out;
}

const std::vector<FillKind> kAllFills = [] {
  std::vector<FillKind> out;
  for (const FillInfo& x : oracle_detail::kFills)
    if (x.uses & kOracleFill) out.push_back(x.kind);
  return out;
}();

void fill_tensor(Tensor& t, FillKind f, Role r, uint64_t seed) {
  const FillInfo& info = fill_info(f);
  for (int64_t i = 0; i < t.size(); ++i) t.set(i, info.value({t.dtype(), r, i, seed}));
}

}  // namespace convcheck

namespace convcheck::oracle_detail {

int exact_bits(DType t, const std::vector<NumericContract>& contracts) {
  int bits = t == DType::i32 ? 31 : float_format(t).precision;
  for (const NumericContract& k : contracts) {
    for (double u : {k.u_acc, k.u_in}) {
      if (u > 0) bits = std::min(bits, static_cast<int>(std::floor(-std::log2(u))));
    }
  }
  return std::max(bits, 2);
}

Roles make_operands(const Problem& p, const Geometry& g, FillKind fill, uint64_t seed, int p_bits,
                    double density) {
  // Exact fill: integers in [-R, R] with R^2 * n <= 2^p_bits (n = the longest sum), R <= 8.
  const double n = static_cast<double>(longest_sum(g));
  const int64_t range = std::clamp<int64_t>(
      static_cast<int64_t>(std::floor(std::sqrt(std::ldexp(1.0, p_bits) / n))), 1, 8);
  Roles roles;
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    Tensor t(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
    const FillInfo& f = fill_info(fill);
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, f.value({p.dtype, r, i, seed, range, density}));
    roles.get(r) = std::move(t);
  }
  return roles;
}

namespace {

double max_magnitude(const ReferenceResult& r) {
  double m = 0;
  for (double v : r.magnitude) m = std::max(m, v);
  return m;
}

}  // namespace

// Exact fill: operands whose every partial sum, in all three ops of the triple, fits p_bits.
// Constructed, not discarded: when a long sum breaks the limit, thin the data and try again.
Roles exact_operands(const Problem& p, const Geometry& g, uint64_t seed, int p_bits) {
  // The ops of the triple this dtype takes and this problem makes valid (conv2d with zero outputs
  // is not: no adjoint run either), derived once.
  std::vector<CheckedProblem> triple;
  for (OpKind kind : {OpKind::forward, OpKind::backward_data, OpKind::backward_filter}) {
    Problem q = p;
    q.op = triple_member(p.op, kind);
    if (!op_takes_dtype(q.op, p.dtype)) continue;
    try {
      triple.emplace_back(q);
    } catch (const InvalidArgument&) {
      continue;
    }
  }
  const double limit = std::ldexp(1.0, p_bits);
  double density = 1.0;
  for (int attempt = 0;; ++attempt) {
    Roles r = make_operands(p, g, FillKind::exact, seed, p_bits, density);
    double worst = 0;
    for (const CheckedProblem& q : triple)
      worst = std::max(worst, max_magnitude(reference_of(q.problem(), q.geometry(), r)));
    if (worst <= limit || attempt == 30) return r;
    density *= std::max(0.05, std::min(0.5, limit / worst));
  }
}

}  // namespace convcheck::oracle_detail
