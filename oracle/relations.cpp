// Adjoint identities (design §6.4) and metamorphic relations (design §6.5), run on one backend.
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "core/hash.h"
#include "core/layout.h"
#include "oracle/internal.h"
#include "reference/exact_accumulator.h"

namespace convcheck::oracle_detail {

namespace {

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

RelationResult not_applicable(std::string name, std::string why) {
  RelationResult r;
  r.name = std::move(name);
  r.applicable = false;
  r.detail = std::move(why);
  return r;
}

RelationResult failed(std::string name, std::string detail) {
  RelationResult r;
  r.name = std::move(name);
  r.passed = false;
  r.detail = std::move(detail);
  return r;
}

bool all_finite(const Roles& r) {
  for (Role role : {Role::input, Role::filter, Role::out_backprop}) {
    const Tensor& t = r.get(role);
    for (int64_t i = 0; i < t.size(); ++i)
      if (!std::isfinite(t.get(i))) return false;
  }
  return true;
}

// Runs `b` on a derived problem; a crash or guard violation there is a failed relation.
struct Derived {
  bool ok = false;
  Tensor result;
  RelationResult failure;
};
Derived run_derived(Backend& b, const std::string& name, const Problem& q, const Roles& operands) {
  Derived d;
  if (Status s = b.can_implement(q); !s.ok()) {
    d.failure =
        not_applicable(name, "the backend cannot implement " + to_string(q) + ": " + s.reason());
    return d;
  }
  Geometry g;
  try {
    g = geometry(q);
  } catch (const InvalidArgument& e) {  // the derived problem is not valid (e.g. conv2d, O = 0)
    d.failure = not_applicable(name, to_string(q) + " is not a valid problem: " + e.what());
    return d;
  }
  Run run = run_guarded(b, q, g, operands, nullptr);
  if (run.check == "timeout") throw Timeout(run.error);  // the backend's verdict, not a relation's
  if (!run.ran || !run.check.empty()) {
    d.failure = failed(name, "on " + to_string(q) + ": " + run.error);
    return d;
  }
  d.ok = true;
  d.result = std::move(run.result);
  return d;
}

RelationResult judge(const std::string& name, const Comparison& c, const std::string& what) {
  RelationResult r;
  r.name = name;
  r.passed = c.passed;
  r.residual = c.usage;
  r.slack = 1;
  r.detail = c.passed
                 ? what
                 : what + ": " + std::to_string(c.mismatches) + " elements differ; " + c.detail;
  return r;
}

// Activation tensor (logical [N,H,W,C]) in the other format.
Tensor reformat(const Tensor& t, const std::array<int64_t, 4>& s, Format to, Layout layout) {
  const Shape shape =
      to == Format::NCHW ? Shape{s[0], s[3], s[1], s[2]} : Shape{s[0], s[1], s[2], s[3]};
  Tensor out(t.dtype(), shape, layout);
  const std::size_t w = dtype_size(t.dtype());
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t h = 0; h < s[1]; ++h)
      for (int64_t x = 0; x < s[2]; ++x)
        for (int64_t c = 0; c < s[3]; ++c) {
          const int64_t nhwc = activation_offset(s, Format::NHWC, n, h, x, c);
          const int64_t nchw = activation_offset(s, Format::NCHW, n, h, x, c);
          const int64_t from = to == Format::NCHW ? nhwc : nchw,
                        dst = to == Format::NCHW ? nchw : nhwc;
          std::memcpy(static_cast<char*>(out.data()) + dst * w,
                      static_cast<const char*>(t.data()) + from * w, w);
        }
  return out;
}

Tensor with_shape(const Tensor& t, Shape shape, Layout layout) {
  Tensor out(t.dtype(), std::move(shape), layout);
  if (t.bytes()) std::memcpy(out.data(), t.data(), t.bytes());
  return out;
}

// Element-wise copy of a tensor with every value multiplied by `f` (exact for f = 2 barring
// overflow; int32 wraps).
Tensor scaled(const Tensor& t, double f) {
  Tensor out(t.dtype(), t.shape(), t.layout());
  for (int64_t i = 0; i < t.size(); ++i) {
    if (t.dtype() == DType::i32) {
      out.as<int32_t>()[i] = static_cast<int32_t>(static_cast<uint32_t>(t.as<int32_t>()[i]) * 2u);
    } else {
      out.set(i, t.get(i) * f);
    }
  }
  return out;
}

// ---- the adjoint triple ----------------------------------------------------------------------

struct TripleOps {
  Op fwd, bpi, bpf;
};
TripleOps triple(Op op) {
  if (is_depthwise(op)) {
    return {Op::depthwise_conv2d, Op::depthwise_conv2d_backprop_input,
            Op::depthwise_conv2d_backprop_filter};
  }
  return {Op::conv2d, Op::conv2d_backprop_input, Op::conv2d_backprop_filter};
}

bool same_maths(Op a, Op b) {
  auto canon = [](Op o) { return o == Op::conv2d_transpose ? Op::conv2d_backprop_input : o; };
  return canon(a) == canon(b);
}

}  // namespace

std::vector<RelationResult> adjoint_checks(Backend& b, const RelationContext& ctx) {
  const Problem& p = ctx.c.problem;
  const TripleOps t = triple(p.op);
  if (!all_finite(ctx.operands)) {
    return {not_applicable("adjoint", "operands are not all finite (fill " +
                                          std::string(fill_name(ctx.c.fill)) + ")")};
  }
  // Results and references of the three ops, reusing the case's own.
  struct Member {
    Op op = Op::conv2d;
    Role pairs_with = Role::input;  // <result, operands[pairs_with]> is the inner product
    bool have = false;
    Tensor result;
    ReferenceResult ref;
  };
  Member m[3];
  m[0].op = t.fwd, m[0].pairs_with = Role::out_backprop;
  m[1].op = t.bpi, m[1].pairs_with = Role::input;
  m[2].op = t.bpf, m[2].pairs_with = Role::filter;
  std::vector<RelationResult> out;
  for (Member& x : m) {
    Problem q = p;
    q.op = x.op;
    if (!op_takes_dtype(x.op, p.dtype)) continue;  // int32 has no backprop filter
    try {
      geometry(q);
    } catch (const InvalidArgument& e) {  // e.g. conv2d refuses a filter with zero outputs
      out.push_back(not_applicable(std::string("adjoint:") + op_name(x.op), e.what()));
      continue;
    }
    if (same_maths(x.op, p.op)) {
      x.result = with_shape(ctx.result, ctx.result.shape(), ctx.result.layout());
      x.ref = ReferenceResult{};
      x.ref.result = with_shape(ctx.ref.result, ctx.ref.result.shape(), ctx.ref.result.layout());
      x.ref.exact_hi = ctx.ref.exact_hi;
      x.ref.exact_lo = ctx.ref.exact_lo;
      x.ref.magnitude = ctx.ref.magnitude;
      x.ref.terms = ctx.ref.terms;
      x.have = true;
      continue;
    }
    const std::string name = std::string("adjoint:") + op_name(x.op);
    Derived d = run_derived(b, name, q, ctx.operands);
    if (!d.ok) {
      out.push_back(d.failure);
      continue;
    }
    x.result = std::move(d.result);
    x.ref = reference_of(q, ctx.operands);
    x.have = true;
  }
  for (const Member& x : m) {
    if (!x.have) continue;
    for (int64_t i = 0; i < x.ref.result.size(); ++i) {
      if (!std::isfinite(x.ref.exact_hi[i]) || !std::isfinite(x.ref.result.get(i))) {
        out.push_back(not_applicable(
            "adjoint", std::string(op_name(x.op)) + "'s exact result overflows the dtype"));
        return out;
      }
    }
  }
  const NumericContract& k = ctx.contract;
  auto inner = [&](const Member& x, ExactAccumulator& acc, double sign, __int128* isum) {
    const Tensor& other = ctx.operands.get(x.pairs_with);
    for (int64_t i = 0; i < other.size(); ++i) {
      if (p.dtype == DType::i32) {
        *isum += static_cast<__int128>(sign) * x.result.as<int32_t>()[i] *
                 static_cast<int64_t>(other.as<int32_t>()[i]);
      } else {
        acc.add_product(x.result.get(i), sign * other.get(i));
      }
    }
  };
  auto slack = [&](const Member& x) {
    const Tensor& other = ctx.operands.get(x.pairs_with);
    double s = 0;
    for (int64_t i = 0; i < other.size(); ++i)
      s += std::fabs(other.get(i)) * tau(k, x.ref, i, p.dtype);
    return s * (1 + 1e-10);
  };
  const char* short_name[] = {"fwd", "bpi", "bpf"};
  for (auto [l, r] : {std::pair{0, 1}, std::pair{0, 2}, std::pair{1, 2}}) {
    if (!m[l].have || !m[r].have) continue;
    if (l == 1 && m[0].have) continue;  // fwd=bpi and fwd=bpf already imply bpi=bpf
    RelationResult rel;
    rel.name = std::string("adjoint:") + short_name[l] + "=" + short_name[r];
    ExactAccumulator acc;
    __int128 isum = 0;
    inner(m[l], acc, 1.0, &isum);
    inner(m[r], acc, -1.0, &isum);
    if (p.dtype == DType::i32) {
      // Wrapping int32 is arithmetic modulo 2^32, a ring: the identity holds modulo 2^32.
      rel.residual =
          static_cast<double>(static_cast<uint32_t>(static_cast<unsigned __int128>(isum)));
      rel.slack = 0;
    } else {
      rel.residual = std::fabs(acc.round_to(DType::f64));
      rel.slack = ctx.bitwise ? 0.0 : slack(m[l]) + slack(m[r]);
    }
    rel.passed = rel.residual <= rel.slack;
    rel.detail = std::string("|<") + short_name[l] + "," + role_name(m[l].pairs_with) + "> - <" +
                 short_name[r] + "," + role_name(m[r].pairs_with) + ">| = " + fmt(rel.residual) +
                 (p.dtype == DType::i32 ? " (mod 2^32)" : "") + ", slack " + fmt(rel.slack);
    out.push_back(rel);
  }
  return out;
}

std::vector<RelationResult> metamorphic_checks(Backend& b, const RelationContext& ctx) {
  const Problem& p = ctx.c.problem;
  const Geometry& g = ctx.g;
  const OpIO io = op_io(p.op);
  const NumericContract& k = ctx.contract;
  std::vector<RelationResult> out;
  auto relate = [&](const std::string& name, const Problem& q, const Roles& ops,
                    const std::function<Tensor(const Tensor&)>& back, const std::string& what,
                    const ReferenceResult* ref) {
    Derived d = run_derived(b, name, q, ops);
    if (!d.ok) {
      out.push_back(d.failure);
      return;
    }
    const Tensor mapped = back ? back(d.result) : std::move(d.result);
    out.push_back(
        judge(name, compare_results(p, g, ctx.result, mapped, ref, k, ctx.bitwise), what));
  };

  // conv2d_transpose = backprop input (spec A.8).
  if (p.op == Op::conv2d_backprop_input || p.op == Op::conv2d_transpose) {
    Problem q = p;
    q.op = p.op == Op::conv2d_transpose ? Op::conv2d_backprop_input : Op::conv2d_transpose;
    relate("metamorphic:transpose", q, ctx.operands, nullptr,
           std::string(op_name(q.op)) + " equals " + op_name(p.op), &ctx.ref);
  }

  // Depthwise = grouped conv with G = C: the RSCM filter is the HWIO filter [KH,KW,1,C*M].
  if (is_depthwise(p.op)) {
    Problem q = p;
    q.op = grouped_equivalent(p.op);
    q.filter = {g.KH, g.KW, 1, g.C * g.M};
    if (g.C == 0) {
      out.push_back(not_applicable("metamorphic:depthwise_grouped", "C = 0 has no grouped conv"));
    } else {
      Roles ops;
      ops.input =
          with_shape(ctx.operands.input, ctx.operands.input.shape(), ctx.operands.input.layout());
      ops.out_backprop = with_shape(ctx.operands.out_backprop, ctx.operands.out_backprop.shape(),
                                    ctx.operands.out_backprop.layout());
      ops.filter = with_shape(ctx.operands.filter, {g.KH, g.KW, 1, g.C * g.M}, Layout::HWIO);
      relate(
          "metamorphic:depthwise_grouped", q, ops,
          [&](const Tensor& t) { return with_shape(t, ctx.result.shape(), ctx.result.layout()); },
          std::string("grouped ") + op_name(q.op) + " with G = C equals " + op_name(p.op),
          &ctx.ref);
    }
  }

  // NCHW = NHWC transposed.
  {
    Problem q = p;
    q.format = p.format == Format::NHWC ? Format::NCHW : Format::NHWC;
    Roles ops;
    for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
      ops.get(r) = r == Role::filter ? with_shape(ctx.operands.filter, ctx.operands.filter.shape(),
                                                  ctx.operands.filter.layout())
                                     : reformat(ctx.operands.get(r), logical_shape(g, r), q.format,
                                                storage_layout(q, r));
    }
    relate(
        "metamorphic:format", q, ops,
        [&](const Tensor& t) {
          if (io.result_like == Role::filter) return with_shape(t, t.shape(), t.layout());
          return reformat(t, logical_shape(g, io.result_like), p.format, ctx.result.layout());
        },
        std::string(format_name(q.format)) + " equals " + format_name(p.format) + " transposed",
        &ctx.ref);
  }

  // SAME = EXPLICIT with SAME's split.
  if (p.padding.kind == PaddingKind::SAME) {
    Problem q = p;
    q.padding = {PaddingKind::EXPLICIT, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right};
    relate("metamorphic:same_explicit", q, ctx.operands, nullptr,
           "SAME equals padding " + std::to_string(g.pad_top) + ":" + std::to_string(g.pad_bottom) +
               ":" + std::to_string(g.pad_left) + ":" + std::to_string(g.pad_right),
           &ctx.ref);
  }

  // VALID on the zero-padded input = EXPLICIT.
  const bool padded = p.padding.kind == PaddingKind::EXPLICIT &&
                      (g.pad_top || g.pad_bottom || g.pad_left || g.pad_right);
  if (padded && !all_finite(ctx.operands)) {
    // Padding taps are not terms, but a materialised zero is: 0 * NaN = NaN. The relation is a
    // statement about finite data.
    out.push_back(not_applicable("metamorphic:valid_padded", "operands are not all finite"));
  } else if (padded) {
    Problem q = p;
    q.padding = {};
    q.input[1] = g.H + g.pad_top + g.pad_bottom;
    q.input[2] = g.W + g.pad_left + g.pad_right;
    const Geometry gq = geometry(q);
    Roles ops;
    ops.filter =
        with_shape(ctx.operands.filter, ctx.operands.filter.shape(), ctx.operands.filter.layout());
    ops.out_backprop = with_shape(ctx.operands.out_backprop, ctx.operands.out_backprop.shape(),
                                  ctx.operands.out_backprop.layout());
    // Pad (input) or crop (an input-shaped result) between [N,H,W,C] and [N,H',W',C].
    auto move = [&](const Tensor& from, const Problem& fp, const Geometry& fg, const Problem& tp,
                    const Geometry& tg, bool pad) {
      Tensor to(p.dtype, storage_shape(tp, tg, Role::input), storage_layout(tp, Role::input));
      const std::array<int64_t, 4> fs = logical_shape(fg, Role::input),
                                   ts = logical_shape(tg, Role::input);
      auto index = [&](const std::array<int64_t, 4>& s, int64_t n, int64_t h, int64_t w,
                       int64_t c) { return activation_offset(s, p.format, n, h, w, c); };
      (void)fp;
      const std::size_t sz = dtype_size(p.dtype);
      const std::array<int64_t, 4>& small = pad ? fs : ts;
      for (int64_t n = 0; n < small[0]; ++n)
        for (int64_t h = 0; h < small[1]; ++h)
          for (int64_t w = 0; w < small[2]; ++w)
            for (int64_t c = 0; c < small[3]; ++c) {
              const int64_t hs = h + g.pad_top, ws = w + g.pad_left;
              const int64_t src = pad ? index(fs, n, h, w, c) : index(fs, n, hs, ws, c);
              const int64_t dst = pad ? index(ts, n, hs, ws, c) : index(ts, n, h, w, c);
              std::memcpy(static_cast<char*>(to.data()) + dst * sz,
                          static_cast<const char*>(from.data()) + src * sz, sz);
            }
      return to;
    };
    ops.input = move(ctx.operands.input, p, g, q, gq, true);
    relate(
        "metamorphic:valid_padded", q, ops,
        [&](const Tensor& t) {
          if (io.result_like != Role::input) return with_shape(t, t.shape(), t.layout());
          return move(t, q, gq, p, g, false);
        },
        "VALID on the zero-padded input equals the explicit padding", &ctx.ref);
  }

  // Linearity: f(2a, b) = 2 f(a, b) in each operand (exact scaling; int32 modulo 2^32).
  if (ctx.c.fill != FillKind::special) {
    bool safe = true;  // keep 2 * result away from the dtype's overflow threshold
    if (p.dtype != DType::i32) {
      const FloatFormat f = float_format(p.dtype);
      const double limit = std::ldexp(1.0, f.max_exponent - 1);
      for (double v : ctx.ref.magnitude) safe = safe && v < limit;
    }
    if (!safe) {
      out.push_back(not_applicable("metamorphic:linearity", "2 x result could overflow the dtype"));
    } else {
      for (Role r : {io.a, io.b}) {
        const std::string name = std::string("metamorphic:linearity_") + role_name(r);
        Roles ops;
        for (Role s : {Role::input, Role::filter, Role::out_backprop}) {
          const Tensor& t = ctx.operands.get(s);
          ops.get(s) = s == r ? scaled(t, 2.0) : with_shape(t, t.shape(), t.layout());
        }
        Derived d = run_derived(b, name, p, ops);
        if (!d.ok) {
          out.push_back(d.failure);
          continue;
        }
        // |f(a) - f(2a)/2| <= tau(a) + tau(2a)/2 = 2 tau(a): what compare_results allows. int32
        // compares 2 f(a) with f(2a), modulo 2^32.
        const Comparison c =
            p.dtype == DType::i32
                ? compare_results(p, g, scaled(ctx.result, 2.0), d.result, nullptr, k, true)
                : compare_results(p, g, ctx.result, scaled(d.result, 0.5), &ctx.ref, k,
                                  ctx.bitwise);
        out.push_back(judge(
            name, c, std::string("f(2 ") + role_name(r) + ") equals 2 f(" + role_name(r) + ")"));
      }
    }
  }

  // NaN footprint: one NaN reaches exactly the elements the index law connects it to.
  if (p.dtype != DType::i32 && ctx.c.fill != FillKind::special) {
    const Role r = io.a;
    const Tensor& t = ctx.operands.get(r);
    if (t.size() == 0 || ctx.result.size() == 0) {
      out.push_back(not_applicable("metamorphic:nan_footprint", "empty operand or result"));
    } else {
      Roles ops;
      for (Role s : {Role::input, Role::filter, Role::out_backprop}) {
        const Tensor& u = ctx.operands.get(s);
        ops.get(s) = with_shape(u, u.shape(), u.layout());
      }
      const int64_t at = static_cast<int64_t>((ctx.c.seed * kSplitMixGamma >> 11) %
                                              static_cast<uint64_t>(t.size()));
      ops.get(r).set(at, NAN);
      Derived d = run_derived(b, "metamorphic:nan_footprint", p, ops);
      if (!d.ok) {
        out.push_back(d.failure);
      } else {
        const ReferenceResult nref = reference_of(p, ops);
        RelationResult rel;
        rel.name = "metamorphic:nan_footprint";
        int64_t reached = 0;
        for (int64_t i = 0; i < d.result.size(); ++i) {
          const bool want = std::isnan(nref.result.get(i)), got = std::isnan(d.result.get(i));
          reached += want;
          if (want != got && rel.passed) {
            rel.passed = false;
            const auto c = result_coord(p, g, i);
            rel.detail = std::string("NaN at ") + role_name(r) + " element " + std::to_string(at) +
                         ": result [" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," +
                         std::to_string(c[2]) + "," + std::to_string(c[3]) + "] is " +
                         (got ? "NaN but no term connects it" : "not NaN but a term connects it");
          }
        }
        if (rel.passed) {
          rel.detail = std::string("NaN at ") + role_name(r) + " element " + std::to_string(at) +
                       " reaches exactly the " + std::to_string(reached) + " connected elements";
        }
        out.push_back(rel);
      }
    }
  }

  // Bitwise rerun for backends that claim determinism.
  if (k.deterministic) {
    Derived d = run_derived(b, "metamorphic:determinism", p, ctx.operands);
    if (!d.ok) {
      out.push_back(d.failure);
    } else {
      RelationResult rel;
      rel.name = "metamorphic:determinism";
      rel.passed = d.result.bytes() == ctx.result.bytes() &&
                   (d.result.bytes() == 0 ||
                    !std::memcmp(d.result.data(), ctx.result.data(), d.result.bytes()));
      rel.detail = rel.passed ? "a rerun gave the same bits"
                              : "a rerun gave different bits (the contract claims determinism)";
      out.push_back(rel);
    }
  }
  return out;
}

}  // namespace convcheck::oracle_detail
