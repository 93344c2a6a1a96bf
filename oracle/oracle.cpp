// The oracle's driver: fill, run every backend guarded, judge, relate, decide (design §6).
#include "oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/limits.h"
#include "oracle/internal.h"

namespace convcheck {

using namespace oracle_detail;

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v : kAllVerdicts)
    if (s == verdict_name(v)) return v;
  return std::nullopt;
}

bool is_failure(Verdict v) {
  return v == Verdict::fail || v == Verdict::crashed || v == Verdict::timeout;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::unsupported:
      return "unsupported";
    case Verdict::mistrusted:
      return "mistrusted";
    case Verdict::crashed:
      return "crashed";
    case Verdict::timeout:
      return "timeout";
  }
  return "?";
}

std::string repro_line(const Case& c, const std::string& backend) {
  return "convcheck check '" + to_string(c.problem) + "' --backends " + backend + " --seed " +
         std::to_string(c.seed) + " --fill " + fill_name(c.fill);
}

bool CaseReport::all_passed() const {
  for (const BackendRecord& r : records)
    if (r.verdict != Verdict::pass) return false;
  return true;
}

namespace {

std::string describe(const NumericContract& k) {
  std::ostringstream os;
  os << k.name << " (u_in " << k.u_in << ", u_acc " << k.u_acc << ", u_out " << k.u_out
     << ", chain "
     << (k.chain == NumericContract::Chain::exact    ? "exact"
         : k.chain == NumericContract::Chain::linear ? "linear"
                                                     : "blocked " + std::to_string(k.block))
     << (k.flush_subnormals ? ", FTZ" : "") << (k.deterministic ? ", deterministic" : "") << ")";
  return os.str();
}

int64_t max_terms(const ReferenceResult& r) {
  int64_t n = 0;
  for (int64_t t : r.terms) n = std::max(n, t);
  return n;
}

double max_magnitude(const ReferenceResult& r) {
  double m = 0;
  for (double v : r.magnitude) m = std::max(m, v);
  return m;
}

// Exact fill: operands whose every partial sum, in all three ops of the triple, fits p_bits.
// Constructed, not discarded: when a long sum breaks the limit, thin the data and try again.
Roles exact_operands(const Problem& p, const Geometry& g, uint64_t seed, int p_bits) {
  const double limit = std::ldexp(1.0, p_bits);
  double density = 1.0;
  for (int attempt = 0;; ++attempt) {
    Roles r = make_operands(p, g, FillKind::exact, seed, p_bits, density);
    double worst = 0;
    const Op ops[] = {
        is_depthwise(p.op) ? Op::depthwise_conv2d : Op::conv2d,
        is_depthwise(p.op) ? Op::depthwise_conv2d_backprop_input : Op::conv2d_backprop_input,
        is_depthwise(p.op) ? Op::depthwise_conv2d_backprop_filter : Op::conv2d_backprop_filter};
    for (Op op : ops) {
      Problem q = p;
      q.op = op;
      if (!op_takes_dtype(op, p.dtype)) continue;
      try {
        geometry(q);
      } catch (const InvalidArgument&) {
        continue;  // not a valid problem (conv2d with zero outputs): no adjoint run either
      }
      worst = std::max(worst, max_magnitude(reference_of(q, r)));
    }
    if (worst <= limit || attempt == 30) return r;
    density *= std::max(0.05, std::min(0.5, limit / worst));
  }
}

struct Ran {
  std::size_t record;
  Tensor result;
  NumericContract contract;
};

// Two backends agree when every element is within the sum of their bounds (bitwise on exact fills).
bool agree(const Problem& p, const ReferenceResult& ref, const Ran& a, const Ran& b, bool bitwise) {
  for (int64_t i = 0; i < a.result.size(); ++i) {
    const double x = a.result.get(i), y = b.result.get(i);
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    if (bitwise || !std::isfinite(x) || !std::isfinite(y)) return false;
    if (std::fabs(x - y) > tau(a.contract, ref, i, p.dtype) + tau(b.contract, ref, i, p.dtype))
      return false;
  }
  return true;
}

}  // namespace

CaseReport run_case(const Case& c, const std::vector<Backend*>& backends,
                    const OracleOptions& options) {
  const Problem& p = c.problem;
  const Geometry g = geometry(p);
  // Refused before anything is filled or allocated (core/limits.h; the CLI's --max-bytes).
  require_memory(p, g, MemoryUse::oracle);
  CaseReport report;
  report.c = c;
  report.admission = tf_admission(p);
  const bool bitwise = c.fill == FillKind::exact;

  // Who can run it, and under which contracts (the exact fill must suit all of them).
  std::vector<NumericContract> contracts;
  std::vector<Status> status;
  for (Backend* b : backends) {
    Status s = Status::Ok();
    try {
      s = b->available();
      if (s.ok()) s = b->can_implement(p);
      if (s.ok()) contracts.push_back(b->contract(p));
    } catch (const Timeout& e) {
      s = Status::TimedOut(std::string("timed out while declaring its capabilities: ") + e.what());
    } catch (const std::exception& e) {
      s = Status::Crashed(std::string("crashed while declaring its capabilities: ") + e.what());
    }
    status.push_back(s);
  }
  const Roles operands = bitwise ? exact_operands(p, g, c.seed, exact_bits(p.dtype, contracts))
                                 : make_operands(p, g, c.fill, c.seed, 53, 1.0);
  const ReferenceResult ref = reference_of(p, operands);
  bool degenerate = ref.result.size() == 0;
  if (!degenerate) {
    degenerate = true;
    for (int64_t i = 0; i < ref.result.size() && degenerate; ++i)
      degenerate = ref.result.get(i) == 0;
  }

  std::vector<Ran> ran;
  for (std::size_t bi = 0; bi < backends.size(); ++bi) {
    Backend& b = *backends[bi];
    BackendRecord rec;
    rec.backend = b.name();
    rec.repro = repro_line(c, rec.backend);
    auto finish = [&](Verdict v, std::string check, std::string reason) {
      rec.verdict = v;
      rec.check = std::move(check);
      rec.reason = std::move(reason);
      report.records.push_back(std::move(rec));
    };
    if (!status[bi].ok()) {
      const bool crashed = status[bi].code() == Status::Code::crashed;
      const bool timed_out = status[bi].code() == Status::Code::timeout;
      finish(crashed     ? Verdict::crashed
             : timed_out ? Verdict::timeout
                         : Verdict::unsupported,
             crashed     ? "crashed"
             : timed_out ? "timeout"
                         : "",
             status[bi].reason());
      continue;
    }
    NumericContract k;
    try {
      k = b.contract(p);
    } catch (const Timeout& e) {
      finish(Verdict::timeout, "timeout", e.what());
      continue;
    } catch (const std::exception& e) {
      finish(Verdict::crashed, "crashed", e.what());
      continue;
    }
    rec.contract = describe(k);
    Run run = run_guarded(b, p, g, operands, &ref.result);
    rec.ms = run.ms;
    if (!run.ran) {
      // A device backend's GuardViolation ends the run early, as a failed check, not a crash.
      finish(run.check == "crashed"   ? Verdict::crashed
             : run.check == "timeout" ? Verdict::timeout
                                      : Verdict::fail,
             run.check, run.error);
      continue;
    }
    if (!run.check.empty()) {
      finish(Verdict::fail, run.check, run.error);
      continue;
    }
    if (!bitwise && p.dtype != DType::i32 && !bound_meaningful(k, max_terms(ref))) {
      finish(Verdict::mistrusted, "bound",
             "the contract's bound is meaningless here: k(n) u_acc >= 1/2 for n = " +
                 std::to_string(max_terms(ref)));
      continue;
    }
    const Comparison cmp = compare_to_reference(p, g, ref, run.result, k, bitwise);
    rec.bound_usage = cmp.usage;
    rec.mismatches = cmp.mismatches;
    rec.first = cmp.first;
    ran.push_back({report.records.size(), Tensor(), k});
    ran.back().result = run.result;
    const RelationContext ctx{c, g, operands, ref, run.result, k, bitwise};
    try {
      if (options.adjoint) rec.adjoint = adjoint_checks(b, ctx);
      if (options.metamorphic) rec.metamorphic = metamorphic_checks(b, ctx);
    } catch (const InvalidArgument&) {
      throw;  // an oracle bug in deriving a problem: not the backend's fault
    } catch (const Timeout& e) {
      finish(Verdict::timeout, "timeout", std::string("in a derived run: ") + e.what());
      continue;
    } catch (const std::exception& e) {
      finish(Verdict::crashed, "crashed",
             std::string("the backend threw in a derived run: ") + e.what());
      continue;
    }
    if (!cmp.passed) {
      finish(Verdict::fail, "compare", cmp.detail);
      continue;
    }
    const RelationResult* broken = nullptr;
    for (const auto* list : {&rec.adjoint, &rec.metamorphic})
      for (const RelationResult& r : *list)
        if (!broken && r.applicable && !r.passed) broken = &r;
    if (broken) {
      const std::string check = broken->name, reason = broken->detail;
      finish(Verdict::fail, check, reason);
      continue;
    }
    if (degenerate) {
      finish(Verdict::mistrusted, "degenerate",
             ref.result.size() == 0 ? "the result is empty: nothing to compare"
                                    : "the exact result is all zeros: too degenerate to judge");
      continue;
    }
    finish(Verdict::pass, "", "");
  }

  // The odd one out: with three or more results, one that disagrees with every other while the
  // others all agree with each other.
  if (ran.size() >= 3) {
    const std::size_t n = ran.size();
    std::vector<std::vector<bool>> ok(n, std::vector<bool>(n, true));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        ok[i][j] = ok[j][i] = agree(p, ref, ran[i], ran[j], bitwise);
    for (std::size_t x = 0; x < n; ++x) {
      bool odd = true;
      for (std::size_t i = 0; i < n && odd; ++i)
        for (std::size_t j = 0; j < n && odd; ++j) {
          if (i == j) continue;
          const bool involves = i == x || j == x;
          odd = involves ? !ok[i][j] : ok[i][j];
        }
      if (odd) report.odd_one_out = report.records[ran[x].record].backend;
    }
  }
  return report;
}

BackendRecord judge_result(const Problem& p, const Operands& in, const Tensor& result,
                           const NumericContract& k, bool bitwise, const std::string& name) {
  const Geometry g = geometry(p);
  const ReferenceResult ref = reference_compute(p, in);
  BackendRecord rec;
  rec.backend = name;
  rec.contract = describe(k);
  auto finish = [&](Verdict v, std::string check, std::string reason) {
    rec.verdict = v;
    rec.check = std::move(check);
    rec.reason = std::move(reason);
    return rec;
  };
  if (!bitwise && p.dtype != DType::i32 && !bound_meaningful(k, max_terms(ref)))
    return finish(Verdict::mistrusted, "bound",
                  "the contract's bound is meaningless here: k(n) u_acc >= 1/2 for n = " +
                      std::to_string(max_terms(ref)));
  const Comparison cmp = compare_to_reference(p, g, ref, result, k, bitwise);
  rec.bound_usage = cmp.usage;
  rec.mismatches = cmp.mismatches;
  rec.first = cmp.first;
  if (!cmp.passed) return finish(Verdict::fail, "compare", cmp.detail);
  bool zero = true;
  for (int64_t i = 0; i < ref.result.size() && zero; ++i) zero = ref.result.get(i) == 0;
  if (zero)
    return finish(Verdict::mistrusted, "degenerate",
                  ref.result.size() == 0
                      ? "the result is empty: nothing to compare"
                      : "the exact result is all zeros: too degenerate to judge");
  return finish(Verdict::pass, "", "");
}

std::string to_text(const CaseReport& r) {
  std::ostringstream os;
  os << to_string(r.c.problem) << "  seed " << r.c.seed << "  fill " << fill_name(r.c.fill) << "\n";
  os << "  TF admission: CPU " << admission_kind_name(r.admission.cpu.kind)
     << (r.admission.cpu.message.empty() ? "" : " (" + r.admission.cpu.message + ")") << ", GPU "
     << admission_kind_name(r.admission.gpu.kind)
     << (r.admission.gpu.message.empty() ? "" : " (" + r.admission.gpu.message + ")") << "\n";
  for (const BackendRecord& b : r.records) {
    os << "  " << b.backend << ": " << verdict_name(b.verdict);
    if (!b.check.empty()) os << " [" << b.check << "]";
    if (!b.reason.empty()) os << " " << b.reason;
    os << "\n";
    if (b.verdict == Verdict::unsupported || b.verdict == Verdict::crashed ||
        b.verdict == Verdict::timeout)
      continue;
    int applied = 0, passed = 0;
    for (const auto* list : {&b.adjoint, &b.metamorphic})
      for (const RelationResult& x : *list) {
        applied += x.applicable;
        passed += x.applicable && x.passed;
      }
    os << "    bound usage " << b.bound_usage << ", relations " << passed << "/" << applied
       << " held, contract " << b.contract << "\n";
    if (b.verdict != Verdict::pass) os << "    repro: " << b.repro << "\n";
  }
  if (!r.odd_one_out.empty()) os << "  odd one out: " << r.odd_one_out << "\n";
  return os.str();
}

}  // namespace convcheck
