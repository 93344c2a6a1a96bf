// State across cases (issue 15 item 5): a backend that keeps state between calls (a plan, packed
// weights, a result cache) keyed on too little hands a case what another case left behind. The
// case alone, in a fresh process, passes; the failure needs the case before it.
//
// After the case's own runs (A), the same backend instance runs another case B of the same tensor
// shapes, judged on its own against B's exact reference under the backend's contract, and then A
// again, which must give A's first run's bits (for a contract that does not claim determinism:
// A's bound against A's reference, as A's own comparison). One record per variant:
//   metamorphic:state         B = the same problem with other data: seed + 1, the same fill (the
//                             exact fill for fills that ignore the seed: ramp, ones, ...). A cache
//                             keyed on the problem but not on the data returns A's result for B.
//   metamorphic:state_shapes  B = a problem with the same input, filter and out_backprop shapes
//                             and other strides, dilations or padding (the first that exists and
//                             that the backend takes, of: dilation +-1, stride +-1, dilation + 1
//                             with the padding grown by the span it adds, an explicit pad moved
//                             to the other side, added or removed), the same seed and fill. A plan
//                             keyed on tensor shapes only returns A's plan for B. Not applicable
//                             when no such problem exists.
// The record names both cases. A failure's repro line replays the sequence in one process:
// `convcheck check B ... --after A ...` when B was wrong after A, `check A ... --after B ...` when
// A's rerun was (repro_line(c, b, after)); `check --after` runs the named case first, unjudged
// (run_unjudged), on the same backend instance.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "oracle/internal.h"

namespace convcheck {

std::string repro_line(const Case& c, const std::string& backend, const Case& after) {
  return repro_line(c, backend) + " --after '" + to_string(after.problem) + "' --after-seed " +
         std::to_string(after.seed) + " --after-fill " + fill_name(after.fill);
}

namespace oracle_detail {
namespace {

std::string case_name(const Case& c) {
  return "'" + to_string(c.problem) + "' seed " + std::to_string(c.seed) + " fill " +
         fill_name(c.fill);
}

// Fills whose data does not depend on the seed: another seed would give the same data.
bool seed_blind(FillKind f) {
  return f == FillKind::ramp || f == FillKind::ones || f == FillKind::ramp_unwrapped;
}

int64_t max_terms(const ReferenceResult& r) {
  int64_t n = 0;
  for (int64_t t : r.terms) n = std::max(n, t);
  return n;
}

bool same_shapes(const Geometry& a, const Geometry& b) {
  for (Role r : {Role::input, Role::filter, Role::out_backprop})
    if (logical_shape(a, r) != logical_shape(b, r)) return false;
  return true;
}

// Problems with p's tensor shapes and another index law, most telling first (not yet validated).
std::vector<Problem> shape_twins(const Problem& p, const Geometry& g) {
  std::vector<Problem> out;
  for (int dim = 0; dim < 2; ++dim) {
    const int64_t taps = dim ? g.KW : g.KH, outs = dim ? g.OW : g.OH;
    for (int delta : {1, -1}) {
      if (taps > 1) {  // a dilation changes nothing for a one-tap filter
        Problem q = p;
        (dim ? q.dilation_w : q.dilation_h) += delta;
        out.push_back(q);
      }
      if (outs > 1) {  // nor a stride for one output
        Problem q = p;
        (dim ? q.stride_w : q.stride_h) += delta;
        out.push_back(q);
      }
    }
  }
  const int64_t pads[4] = {g.pad_top, g.pad_bottom, g.pad_left, g.pad_right};
  // Dilation + 1 with the padding grown by the span it adds (K - 1): a twin for stride 1 too.
  for (int dim = 0; dim < 2; ++dim) {
    const int64_t taps = dim ? g.KW : g.KH;
    if (taps <= 1) continue;
    Problem q = p;
    (dim ? q.dilation_w : q.dilation_h) += 1;
    int64_t grown[4] = {pads[0], pads[1], pads[2], pads[3]};
    grown[2 * dim] += (taps - 1) / 2;
    grown[2 * dim + 1] += taps - 1 - (taps - 1) / 2;
    q.padding = {PaddingKind::EXPLICIT, grown[0], grown[1], grown[2], grown[3]};
    out.push_back(q);
  }
  const int moves[][4] = {{1, -1, 0, 0}, {-1, 1, 0, 0}, {0, 0, 1, -1}, {0, 0, -1, 1},
                          {1, 0, 0, 0},  {0, 1, 0, 0},  {0, 0, 1, 0},  {0, 0, 0, 1},
                          {-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}};
  for (const auto& m : moves) {
    Problem q = p;
    q.padding = {PaddingKind::EXPLICIT, pads[0] + m[0], pads[1] + m[1], pads[2] + m[2],
                 pads[3] + m[3]};
    out.push_back(q);
  }
  return out;
}

// The other case of each variant, or why there is none.
struct Other {
  std::optional<Case> c;
  std::string how;  // what differs, for the record
};

Other other_data(Backend&, const RelationContext& ctx) {
  Case o = ctx.c;
  o.seed = ctx.c.seed + 1;
  if (seed_blind(o.fill)) o.fill = FillKind::exact;
  return {o, "the same problem, other data"};
}

Other other_shapes(Backend& b, const RelationContext& ctx) {
  for (const Problem& q : shape_twins(ctx.c.problem, ctx.g)) {
    try {
      const CheckedProblem checked(q);
      if (!same_shapes(checked.geometry(), ctx.g) || !b.can_implement(checked).ok()) continue;
    } catch (const InvalidArgument&) {
      continue;
    }
    Case o = ctx.c;
    o.problem = q;
    return {o, "the same tensor shapes, another stride, dilation or padding"};
  }
  return {std::nullopt,
          "no problem with these tensor shapes and another stride, dilation or padding that the "
          "backend takes"};
}

struct Variant {
  const char* name;
  Other (*other)(Backend&, const RelationContext&);
};
// clang-format off
const Variant kVariants[] = {
    {"metamorphic:state",        other_data},
    {"metamorphic:state_shapes", other_shapes},
};
// clang-format on

RelationResult verdict(const char* name, bool passed, std::string detail, double residual) {
  RelationResult r;
  r.name = name;
  r.passed = passed;
  r.detail = std::move(detail);
  r.residual = residual;
  r.slack = 1;
  return r;
}

RelationResult run_after(Backend& b, const RelationContext& ctx, const char* name,
                         const Case& other, const std::string& how) {
  const Case& a = ctx.c;
  const std::string seq = "case B " + case_name(other) + " (" + how + ") run after this case A " +
                          case_name(a) + " on the same backend";
  auto failure = [&](const Case& failing, const Case& before, std::string what, double usage) {
    RelationResult r = verdict(name, false, seq + ": " + std::move(what), usage);
    r.repro = repro_line(failing, b.name(), before);
    return r;
  };
  // B, judged on its own.
  const CheckedProblem q(other.problem);
  const NumericContract kq = b.contract(q);
  const Roles ops = case_operands(q.problem(), q.geometry(), other.fill, other.seed,
                                  exact_bits(q.problem().dtype, {kq}));
  Run run = run_guarded(b, q, ops, nullptr);
  if (run.check == "timeout") throw Timeout(run.error);
  if (!run.ran || !run.check.empty()) return failure(other, a, "B: " + run.error, 0);
  const ReferenceResult ref = reference_of(q.problem(), q.geometry(), ops);
  const bool bitwise = other.fill == FillKind::exact;
  double usage = 0;
  if (bitwise || q.problem().dtype == DType::i32 || bound_meaningful(kq, max_terms(ref))) {
    const Comparison c =
        compare_to_reference(q.problem(), q.geometry(), ref, run.result, kq, bitwise);
    if (!c.passed) return failure(other, a, "B's result is wrong: " + c.detail, c.usage);
    usage = c.usage;
  }
  // A again.
  const CheckedProblem p(a.problem);
  run = run_guarded(b, p, ctx.operands, nullptr);
  if (run.check == "timeout") throw Timeout(run.error);
  if (!run.ran || !run.check.empty()) return failure(a, other, "A's rerun: " + run.error, 0);
  const Comparison c =
      ctx.contract.deterministic
          ? compare_results(a.problem, ctx.g, ctx.result, run.result, nullptr, ctx.contract, true)
          : compare_to_reference(a.problem, ctx.g, ctx.ref, run.result, ctx.contract, ctx.bitwise);
  if (!c.passed) {
    return failure(a, other,
                   ctx.contract.deterministic
                       ? "A's rerun differs from its first run in " + std::to_string(c.mismatches) +
                             " elements; first run vs rerun at " + c.detail
                       : "A's rerun is wrong: " + c.detail,
                   std::max(usage, c.usage));
  }
  return verdict(
      name, true,
      seq + ": B within its bound, A's rerun " +
          (ctx.contract.deterministic ? "bitwise equal to its first run" : "within its bound"),
      std::max(usage, c.usage));
}

}  // namespace

std::vector<RelationResult> state_checks(Backend& b, const RelationContext& ctx) {
  std::vector<RelationResult> out;
  for (const Variant& v : kVariants) {
    if (ctx.result.size() == 0) {
      out.push_back(not_applicable(v.name, "the result is empty"));
      continue;
    }
    const Other other = v.other(b, ctx);
    out.push_back(other.c ? run_after(b, ctx, v.name, *other.c, other.how)
                          : not_applicable(v.name, other.how));
  }
  return out;
}

}  // namespace oracle_detail

std::string run_unjudged(Backend& b, const Case& c) {
  using namespace oracle_detail;
  try {
    const CheckedProblem p(c.problem);
    if (Status s = b.available(); !s.ok()) return "unavailable: " + s.reason();
    if (Status s = b.can_implement(p); !s.ok()) return "cannot implement it: " + s.reason();
    const Roles ops = case_operands(p.problem(), p.geometry(), c.fill, c.seed,
                                    exact_bits(c.problem.dtype, {b.contract(p)}));
    const Run run = run_guarded(b, p, ops, nullptr);
    if (!run.ran || !run.check.empty()) return run.check + ": " + run.error;
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace convcheck
