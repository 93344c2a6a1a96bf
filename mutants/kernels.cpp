// The seven ops once more, as literal loop nests like the reference's (reference/*.cpp hold the
// same index laws), with the bug switches of internal.h wired into the law and the accumulation.
#include "mutants/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>

#include "core/half.h"
#include "core/hash.h"
#include "reference/exact_accumulator.h"

namespace convcheck::mutants {

namespace {

// What the index law uses. The index-law bugs distort these fields; the shapes (H, W, OH, OW, ...)
// stay the problem's and every index is bounds-checked against them, so a distorted law still
// reads and writes only inside the tensors.
//
// Depthwise is grouped conv with G = C, Cf = 1 and O = C*M (that is how geometry() describes it),
// and RSCM [KH,KW,C,M] is HWIO [KH,KW,1,C*M] in memory; so one set of loop nests serves all seven
// ops. Output channel o belongs to group o / (O/G): for depthwise k = o / M, with m = o % M.
struct Law {
  const Geometry& g;
  int64_t sh, sw, dh, dw, pad_top, pad_left;
  bool flip = false;             // flip_filter
  bool drop_last_row = false;    // drop_last_row
  bool channel_m_major = false;  // depthwise_order (depthwise ops only: O = C*M there)
  bool io_swapped = false;       // filter_io_swapped
  bool ignore_groups = false;    // ignore_groups
  bool vector_tail = false;      // vector_tail
  bool batch_tail = false;       // batch_unroll_tail
  bool index16 = false;          // index16
  bool column_tail = false;      // spatial_unroll_tail
  bool pad_terms = false;        // zero_padding_terms

  // spatial_unroll_tail: whether output column j is past the last full group of 4.
  bool lost_column(int64_t j) const {
    return column_tail && g.OW > 4 && g.OW % 4 != 0 && j >= g.OW - g.OW % 4;
  }

  // vector_tail: whether channel k of a blocked loop over `count` channels is in the lost tail.
  bool lost_channel(int64_t k, int64_t count) const {
    return vector_tail && count > 8 && count % 8 != 0 && k >= count - count % 8;
  }
  // batch_unroll_tail: whether image n is past the last full group of 4.
  bool lost_image(int64_t n) const {
    return batch_tail && g.N > 4 && g.N % 4 != 0 && n >= g.N - g.N % 4;
  }
  // index16: an activation offset as a 16-bit index keeps it (in range only below 2^16).
  int64_t offset(int64_t i) const { return index16 ? (i & 0xFFFF) : i; }

  int64_t per_group() const { return g.O / g.G; }
  // The input channel that filter input q of output channel o reads.
  int64_t x_channel(int64_t o, int64_t q) const {
    return (ignore_groups ? 0 : o / per_group()) * g.Cf + q;
  }
  // Where logical output channel o = k*M + m sits in y / dy, and back.
  int64_t y_channel(int64_t o) const { return channel_m_major ? (o % g.M) * g.C + o / g.M : o; }
  int64_t y_logical(int64_t stored) const {
    return channel_m_major ? (stored % g.C) * g.M + stored / g.C : stored;
  }

  // The filter as stored: [KH, KW, FI, FO], HWIO [KH,KW,Cf,O] or RSCM [KH,KW,C,M].
  int64_t fi() const { return g.depthwise ? g.C : g.Cf; }
  int64_t fo() const { return g.depthwise ? g.M : g.O; }
  // Storage index of tap (a, b) of filter input q of output channel o.
  int64_t filter_index(int64_t a, int64_t b, int64_t q, int64_t o) const {
    if (flip) {
      a = g.KH - 1 - a;
      b = g.KW - 1 - b;
    }
    const int64_t in = g.depthwise ? o / g.M : q, out = g.depthwise ? o % g.M : o;
    const int64_t tap = a * g.KW + b;
    return io_swapped ? (tap * fo() + out) * fi() + in : (tap * fi() + in) * fo() + out;
  }
  // The inverse of filter_index: the (a, b, q, o) that filter element e stands for.
  void filter_coords(int64_t e, int64_t* a, int64_t* b, int64_t* q, int64_t* o) const {
    int64_t in, out;
    if (io_swapped) {
      in = e % fi();
      out = e / fi() % fo();
    } else {
      out = e % fo();
      in = e / fo() % fi();
    }
    const int64_t tap = e / (fi() * fo());
    *a = tap / g.KW;
    *b = tap % g.KW;
    if (flip) {
      *a = g.KH - 1 - *a;
      *b = g.KW - 1 - *b;
    }
    *q = g.depthwise ? 0 : in;
    *o = g.depthwise ? in * g.M + out : out;
  }
};

Law make_law(const Problem& p, const Geometry& g, Bug bug) {
  Law law{g, g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left};
  switch (bug) {
    case Bug::same_pad_before:
      // SAME puts the odd element after (pad_bottom >= pad_top); the bug puts it before.
      if (p.padding.kind == PaddingKind::SAME) {
        law.pad_top = g.pad_bottom;
        law.pad_left = g.pad_right;
      }
      break;
    case Bug::no_dilation:
      law.dh = law.dw = 1;
      break;
    case Bug::swap_strides:
      std::swap(law.sh, law.sw);
      break;
    case Bug::flip_filter:
      law.flip = true;
      break;
    case Bug::drop_last_row:
      law.drop_last_row = true;
      break;
    case Bug::depthwise_order:
      law.channel_m_major = g.depthwise;
      break;
    case Bug::filter_io_swapped:
      law.io_swapped = true;
      break;
    case Bug::ignore_groups:
      law.ignore_groups = true;
      break;
    case Bug::vector_tail:
      law.vector_tail = true;
      break;
    case Bug::batch_unroll_tail:
      law.batch_tail = true;
      break;
    case Bug::index16:
      law.index16 = true;
      break;
    case Bug::spatial_unroll_tail:
      law.column_tail = true;
      break;
    case Bug::zero_padding_terms:
      law.pad_terms = true;
      break;
    default:
      break;  // the other bugs live in the accumulation or in the driver
  }
  return law;
}

// Forward (conv2d, depthwise_conv2d):
//   y[n,i,j,o] = sum_{a<KH} sum_{b<KW} sum_{q<Cf}
//                X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q) * w[a,b,q,o]
// X is 0 outside [0,H) x [0,W) (padding positions are not terms). drop_last_row: input row H-1
// is not read.
struct Forward {
  Law L;
  const double* x;
  const double* w;
  int64_t count() const { return L.g.N * L.g.OH * L.g.OW * L.g.O; }
  template <class F>
  void terms(int64_t e, F&& f) const {
    const Geometry& g = L.g;
    const int64_t stored = e % g.O, j = e / g.O % g.OW, i = e / (g.O * g.OW) % g.OH,
                  n = e / (g.O * g.OW * g.OH);
    const int64_t o = L.y_logical(stored);
    if (L.lost_image(n) || L.lost_column(j)) return;
    // zero_padding_terms: a tap on padding multiplies a zero by the filter.
    auto padding = [&](int64_t a, int64_t b) {
      if (!L.pad_terms) return;
      for (int64_t q = 0; q < g.Cf; ++q) f(0.0, w[L.filter_index(a, b, q, o)]);
    };
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t r = i * L.sh + a * L.dh - L.pad_top;
      if (L.drop_last_row && r == g.H - 1) continue;
      if (r < 0 || r >= g.H) {
        for (int64_t b = 0; b < g.KW; ++b) padding(a, b);
        continue;
      }
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t c = j * L.sw + b * L.dw - L.pad_left;
        if (c < 0 || c >= g.W) {
          padding(a, b);
          continue;
        }
        const int64_t xs = ((n * g.H + r) * g.W + c) * g.C;
        for (int64_t q = 0; q < g.Cf; ++q) {
          if (L.lost_channel(q, g.Cf)) continue;
          f(x[L.offset(xs + L.x_channel(o, q))], w[L.filter_index(a, b, q, o)]);
        }
      }
    }
  }
};

// Backprop input (conv2d_backprop_input, conv2d_transpose, depthwise_conv2d_backprop_input), the
// forward law's adjoint as a gather:
//   dx[n,r,c,ch] = sum_{o in group ch/Cf} sum_{a<KH} sum_{b<KW} dy[n,i,j,o] * w[a,b,ch%Cf,o]
//   with i = (r + pad_top - a*dh) / sh, j = (c + pad_left - b*dw) / sw exact and in range.
// drop_last_row: dy row OH-1 is not read.
struct BackpropInput {
  Law L;
  const double* w;
  const double* dy;
  int64_t count() const { return L.g.N * L.g.H * L.g.W * L.g.C; }
  template <class F>
  void terms(int64_t e, F&& f) const {
    const Geometry& g = L.g;
    const int64_t ch = e % g.C, c = e / g.C % g.W, r = e / (g.C * g.W) % g.H,
                  n = e / (g.C * g.W * g.H);
    const int64_t group = L.ignore_groups ? 0 : ch / g.Cf, q = ch % g.Cf, pg = L.per_group();
    if (L.lost_image(n)) return;
    for (int64_t a = 0; a < g.KH; ++a) {
      const int64_t ti = r + L.pad_top - a * L.dh;
      if (ti < 0 || ti % L.sh != 0 || ti / L.sh >= g.OH) continue;
      const int64_t i = ti / L.sh;
      if (L.drop_last_row && i == g.OH - 1) continue;
      for (int64_t b = 0; b < g.KW; ++b) {
        const int64_t tj = c + L.pad_left - b * L.dw;
        if (tj < 0 || tj % L.sw != 0 || tj / L.sw >= g.OW) continue;
        const int64_t j = tj / L.sw;
        if (L.lost_column(j)) continue;
        const int64_t dys = ((n * g.OH + i) * g.OW + j) * g.O;
        for (int64_t o = group * pg; o < (group + 1) * pg; ++o) {
          if (L.lost_channel(o - group * pg, pg)) continue;
          f(dy[L.offset(dys + L.y_channel(o))], w[L.filter_index(a, b, q, o)]);
        }
      }
    }
  }
};

// Backprop filter (conv2d_backprop_filter, depthwise_conv2d_backprop_filter), the adjoint in w:
//   dw[a,b,q,o] = sum_n sum_{i<OH} sum_{j<OW}
//                 dy[n,i,j,o] * X(n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g(o)*Cf + q)
// drop_last_row: dy row OH-1 is not read.
struct BackpropFilter {
  Law L;
  const double* x;
  const double* dy;
  int64_t count() const { return L.g.KH * L.g.KW * L.fi() * L.fo(); }
  template <class F>
  void terms(int64_t e, F&& f) const {
    const Geometry& g = L.g;
    int64_t a, b, q, o;
    L.filter_coords(e, &a, &b, &q, &o);
    const int64_t channel = L.x_channel(o, q), yc = L.y_channel(o);
    if (L.lost_channel(q, g.Cf)) return;  // the result's tail channels: never reduced
    for (int64_t n = 0; n < g.N; ++n) {
      if (L.lost_image(n)) continue;
      for (int64_t i = 0; i < g.OH; ++i) {
        if (L.drop_last_row && i == g.OH - 1) continue;
        const int64_t r = i * L.sh + a * L.dh - L.pad_top;
        const bool row_padding = r < 0 || r >= g.H;
        if (row_padding && !L.pad_terms) continue;
        for (int64_t j = 0; j < g.OW; ++j) {
          if (L.lost_column(j)) continue;
          const int64_t c = j * L.sw + b * L.dw - L.pad_left;
          if (row_padding || c < 0 || c >= g.W) {
            // zero_padding_terms: the gradient times a padding zero.
            if (L.pad_terms) f(dy[((n * g.OH + i) * g.OW + j) * g.O + yc], 0.0);
            continue;
          }
          f(dy[L.offset(((n * g.OH + i) * g.OW + j) * g.O + yc)],
            x[L.offset(((n * g.H + r) * g.W + c) * g.C + channel)]);
        }
      }
    }
  }
};

// How an element's terms are summed.
enum class Accumulation {
  exact,            // exactly, rounded once (int32: mod 2^32) -- the reference's answer
  saturate,         // int_saturate: the exact int32 sum clamped instead of wrapped
  bf16_running,     // low_precision_accumulate
  shuffled,         // nondeterministic: plain sums in a per-run order
  quarter_squares,  // cancellation: plain sums of products formed as ((x+y)^2 - (x-y)^2) / 4
  flushed,          // flush_to_zero: exact, then a subnormal result becomes a zero of its sign
  dtype_running,    // half_accumulate: the running sum rounded into f16/bf16 after every add
  in_float,         // f64_in_f32 (operands, products, sums in float) and i32_via_f32
  truncated,        // truncate_16bit: exact, then rounded toward zero into f16/bf16
  lost_update,      // lost_update: exact, but some elements lose their last term
};

// A value of dtype t nearest to v (RN-even), as a double.
double round_into(double v, DType t) {
  switch (t) {
    case DType::f16:
      return f16_to_double(f16_from_double(v));
    case DType::bf16:
      return bf16_to_double(bf16_from_double(v));
    case DType::f32:
      return static_cast<double>(static_cast<float>(v));
    case DType::f64:
    case DType::i32:
      break;
  }
  return v;
}

uint64_t splitmix64(uint64_t z) {  // one step of the stream from state z
  return splitmix64_next(z);
}

// The exact int32 sum of an element's terms (products of int32 values fit in int64).
template <class L>
__int128 int_sum(const L& law, int64_t e) {
  __int128 sum = 0;
  law.terms(e, [&](double x, double y) {
    sum += static_cast<__int128>(static_cast<int64_t>(x) * static_cast<int64_t>(y));
  });
  return sum;
}

template <class L>
double element(const L& law, int64_t e, DType t, Accumulation mode, uint64_t run_seed,
               ExactAccumulator& acc, std::vector<double>& products) {
  if (t == DType::i32 && mode == Accumulation::in_float) {
    float s = 0;  // i32_via_f32: products and sums rounded to 24 bits
    law.terms(e, [&](double x, double y) { s += static_cast<float>(x) * static_cast<float>(y); });
    return static_cast<double>(static_cast<int32_t>(
        static_cast<uint32_t>(static_cast<int64_t>(std::clamp<double>(s, -0x1p62, 0x1p62)))));
  }
  if (t == DType::i32 && mode != Accumulation::lost_update) {
    // Integer sums are associative: bf16_running and shuffled have nothing to change here.
    const __int128 sum = int_sum(law, e);
    if (mode == Accumulation::saturate) {
      const __int128 lo = std::numeric_limits<int32_t>::min(),
                     hi = std::numeric_limits<int32_t>::max();
      return static_cast<double>(std::clamp(sum, lo, hi));
    }
    // Two's-complement wrap of the low 32 bits (spec A.5).
    return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(sum)));
  }
  switch (mode) {
    case Accumulation::exact:
    case Accumulation::saturate:
    case Accumulation::flushed:
    case Accumulation::truncated:
      break;
    case Accumulation::dtype_running: {
      float s = 0;
      law.terms(e, [&](double x, double y) {
        s = static_cast<float>(
            round_into(static_cast<double>(s + static_cast<float>(x) * static_cast<float>(y)), t));
      });
      return s;
    }
    case Accumulation::in_float: {
      float s = 0;
      law.terms(e, [&](double x, double y) { s += static_cast<float>(x) * static_cast<float>(y); });
      return s;
    }
    case Accumulation::lost_update: {
      // A race between two threads' partial sums: in about half the elements (a different set
      // every run) the last term's update is lost.
      int64_t n = 0;
      law.terms(e, [&](double, double) { ++n; });
      const bool lost =
          n >= 2 && (splitmix64(run_seed ^ splitmix64(static_cast<uint64_t>(e))) & 1) == 0;
      int64_t k = 0;
      acc.clear();
      __int128 isum = 0;
      law.terms(e, [&](double x, double y) {
        if (lost && ++k == n) return;
        if (t == DType::i32)
          isum += static_cast<__int128>(static_cast<int64_t>(x) * static_cast<int64_t>(y));
        else
          acc.add_product(x, y);
      });
      if (t == DType::i32)
        return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(isum)));
      return acc.round_to(t);
    }
    case Accumulation::bf16_running: {
      // f64 keeps double products and adds; the others add in float (their products are exact
      // in float for f16/bf16 and rounded once for f32). Either way the running sum is rounded
      // to bf16 after every add: the bug.
      if (t == DType::f64) {
        double s = 0;
        law.terms(e, [&](double x, double y) { s = bf16_to_double(bf16_from_double(s + x * y)); });
        return s;
      }
      bf16_t s(0.0f);
      law.terms(e, [&](double x, double y) {
        const float prod = static_cast<float>(x) * static_cast<float>(y);
        s = bf16_t(static_cast<float>(s) + prod);
      });
      return round_into(static_cast<float>(s), t);
    }
    case Accumulation::shuffled: {
      // Plain linear sums (f64 in double, the rest in float) in a shuffled order that depends on
      // the run: the bits change from run to run while every result stays inside the plain
      // accumulation bound it declares.
      const bool in_double = t == DType::f64;
      products.clear();
      law.terms(e, [&](double x, double y) {
        products.push_back(
            in_double ? x * y : static_cast<double>(static_cast<float>(x) * static_cast<float>(y)));
      });
      uint64_t state = splitmix64(run_seed ^ splitmix64(static_cast<uint64_t>(e)));
      for (std::size_t k = products.size(); k > 1; --k) {
        state = splitmix64(state);
        std::swap(products[k - 1], products[state % k]);
      }
      if (in_double) {
        double s = 0;
        for (double v : products) s += v;
        return s;
      }
      float s = 0;
      for (double v : products) s += static_cast<float>(v);
      return round_into(s, t);
    }
    case Accumulation::quarter_squares: {
      // f64 in double, the rest in float: each square rounds relative to (x +- y)^2, not to x*y,
      // so a product of a large and a small value carries the large one's rounding error.
      if (t == DType::f64) {
        double s = 0;
        law.terms(e, [&](double x, double y) { s += ((x + y) * (x + y) - (x - y) * (x - y)) / 4; });
        return s;
      }
      float s = 0;
      law.terms(e, [&](double xd, double yd) {
        const float x = static_cast<float>(xd), y = static_cast<float>(yd);
        const float p = (x + y) * (x + y), m = (x - y) * (x - y);
        s += (p - m) / 4;
      });
      return round_into(s, t);
    }
  }
  // Exact: every product and sum exact, one rounding (RN-even) into the dtype.
  acc.clear();
  law.terms(e, [&](double x, double y) { acc.add_product(x, y); });
  const double v = acc.round_to(t);
  if (mode == Accumulation::flushed && std::fabs(v) < std::ldexp(1.0, float_format(t).min_exponent))
    return std::copysign(0.0, v);
  if (mode == Accumulation::truncated)
    return round_to_bits(acc.round_to(DType::f64), float_format(t).precision, true);
  return v;
}

// OpenMP over result elements; each element's arithmetic is fixed (the shuffled order is a
// function of run seed and element), so results do not depend on the thread count.
template <class L>
std::vector<double> evaluate(const L& law, DType t, Accumulation mode, uint64_t run_seed) {
  const int64_t count = law.count();
  std::vector<double> out(static_cast<std::size_t>(count), 0.0);
#pragma omp parallel
  {
    ExactAccumulator acc;
    std::vector<double> products;
#pragma omp for schedule(dynamic, 64)
    for (int64_t e = 0; e < count; ++e) out[e] = element(law, e, t, mode, run_seed, acc, products);
  }
  return out;
}

Accumulation accumulation_for(Bug bug, DType t) {
  if (bug == Bug::int_saturate && t == DType::i32) return Accumulation::saturate;
  if (bug == Bug::low_precision_accumulate && is_floating(t)) return Accumulation::bf16_running;
  if (bug == Bug::nondeterministic && is_floating(t)) return Accumulation::shuffled;
  if (bug == Bug::cancellation && is_floating(t)) return Accumulation::quarter_squares;
  if (bug == Bug::flush_to_zero && is_floating(t)) return Accumulation::flushed;
  const bool sixteen = t == DType::f16 || t == DType::bf16;
  if (bug == Bug::half_accumulate && sixteen) return Accumulation::dtype_running;
  if (bug == Bug::truncate_16bit && sixteen) return Accumulation::truncated;
  if ((bug == Bug::f64_in_f32 && t == DType::f64) || (bug == Bug::i32_via_f32 && t == DType::i32))
    return Accumulation::in_float;
  if (bug == Bug::lost_update) return Accumulation::lost_update;
  return Accumulation::exact;
}

}  // namespace

double round_to_bits(double v, int bits, bool toward_zero) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  const double m = std::ldexp(std::frexp(v, &e), bits);  // |m| in [2^(bits-1), 2^bits)
  return std::ldexp(toward_zero ? std::trunc(m) : std::round(m), e - bits);
}

std::vector<double> compute(const Problem& p, const Geometry& g, Bug bug,
                            const CanonicalOperands& c, uint64_t run_seed) {
  // lost_update's race: a different set of lost updates in every run, in every process.
  if (bug == Bug::lost_update) run_seed ^= std::random_device{}();
  const Law law = make_law(p, g, bug);
  const Accumulation mode = accumulation_for(bug, p.dtype);
  switch (op_kind(p.op)) {
    case OpKind::forward:
      return evaluate(Forward{law, c.input.data(), c.filter.data()}, p.dtype, mode, run_seed);
    case OpKind::backward_data:
      return evaluate(BackpropInput{law, c.filter.data(), c.out_backprop.data()}, p.dtype, mode,
                      run_seed);
    case OpKind::backward_filter:
      return evaluate(BackpropFilter{law, c.input.data(), c.out_backprop.data()}, p.dtype, mode,
                      run_seed);
  }
  return {};
}

}  // namespace convcheck::mutants
