// Operand fills (design §6.1). Each element's value is a function of (seed, role, index) alone,
// so fills are reproducible and independent of the thread count and of the order of filling.
#include <algorithm>
#include <cmath>

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

double value(FillKind fill, DType t, Role r, Stream& s, int64_t i, int64_t range, double density) {
  switch (fill) {
    case FillKind::exact: {
      // Thin input and out_backprop (never the filter): every product of the triple then keeps a
      // factor from a thinned role.
      if (density < 1 && r != Role::filter && s.uniform() >= density) return 0.0;
      return static_cast<double>(s.integer(range));
    }
    case FillKind::real:
      if (t == DType::i32) return static_cast<double>(static_cast<int32_t>(s.next()));
      return s.normal();
    case FillKind::cancel: {
      if (t == DType::i32) return static_cast<double>(static_cast<int32_t>(s.next()));
      const double big = t == DType::f16    ? 8
                         : t == DType::bf16 ? 64
                         : t == DType::f32  ? 1024
                                            : 0x1p20;
      return (s.next() & 1 ? 1 : -1) * (big + s.normal() * big / 16);
    }
    case FillKind::special: {
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
    case FillKind::ramp: {
      // TF's 1..n; 16-bit types wrap at the last exactly representable integer.
      const int64_t wrap = t == DType::f16 ? 2048 : t == DType::bf16 ? 256 : INT64_MAX;
      return static_cast<double>(i % wrap + 1);
    }
  }
  return 0.0;
}

}  // namespace

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
    for (int64_t i = 0; i < t.size(); ++i) {
      Stream s(seed, r, i);
      t.set(i, value(fill, p.dtype, r, s, i, range, density));
    }
    roles.get(r) = std::move(t);
  }
  return roles;
}

}  // namespace convcheck::oracle_detail
