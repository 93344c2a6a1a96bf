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

struct Ran {
  std::size_t record;
  Tensor result;
  NumericContract contract;
};

// Two backends agree when every element is within the sum of their bounds, or one overflowed within
// them (overflow_pair_within, internal.h); bitwise on exact fills.
bool agree(const Problem& p, const ReferenceResult& ref, const Ran& a, const Ran& b, bool bitwise) {
  for (int64_t i = 0; i < a.result.size(); ++i) {
    const double x = a.result.get(i), y = b.result.get(i);
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    if (bitwise) return false;
    const double ta = tau(a.contract, ref, i, p.dtype), tb = tau(b.contract, ref, i, p.dtype);
    if (overflow_pair_within(x, y, ref.exact_hi[i], ta, tb, p.dtype)) continue;
    if (!std::isfinite(x) || !std::isfinite(y)) return false;
    if (std::fabs(x - y) > ta + tb) return false;
  }
  return true;
}

// What each backend declares about the case: available and able (or why not), and its contract.
struct Declared {
  std::vector<Status> status;
  std::vector<NumericContract> contracts;  // of those that can run it
};
Declared declare(const std::vector<Backend*>& backends, const CheckedProblem& p) {
  Declared d;
  for (Backend* b : backends) {
    Status s = Status::Ok();
    try {
      s = b->available();
      if (s.ok()) s = b->can_implement(p);
      if (s.ok()) d.contracts.push_back(b->contract(p));
    } catch (const Timeout& e) {
      s = Status::TimedOut(std::string("timed out while declaring its capabilities: ") + e.what());
    } catch (const std::exception& e) {
      s = Status::Crashed(std::string("crashed while declaring its capabilities: ") + e.what());
    }
    d.status.push_back(s);
  }
  return d;
}

// The case as every backend is judged on it: filled operands and the exact result.
struct Judging {
  const Case& c;
  const CheckedProblem& checked;  // c.problem, validated
  const Roles& operands;
  const ReferenceResult& ref;
  bool bitwise;
  bool degenerate;  // an empty or all-zero exact result: nothing to tell apart
  const OracleOptions& options;
};

// One backend's record. `ran` gets its result when it got as far as the comparison.
BackendRecord judge_backend(Backend& b, const Status& declared, const Judging& j,
                            std::vector<Ran>& ran, std::size_t index) {
  const Problem& p = j.c.problem;
  BackendRecord rec;
  rec.backend = b.name();
  rec.repro = repro_line(j.c, rec.backend);
  auto finish = [&](Verdict v, std::string check, std::string reason) {
    rec.verdict = v;
    rec.check = std::move(check);
    rec.reason = std::move(reason);
    return std::move(rec);
  };
  if (!declared.ok()) {
    const bool crashed = declared.code() == Status::Code::crashed;
    const bool timed_out = declared.code() == Status::Code::timeout;
    return finish(crashed     ? Verdict::crashed
                  : timed_out ? Verdict::timeout
                              : Verdict::unsupported,
                  crashed     ? "crashed"
                  : timed_out ? "timeout"
                              : "",
                  declared.reason());
  }
  NumericContract k;
  try {
    k = b.contract(j.checked);
  } catch (const Timeout& e) {
    return finish(Verdict::timeout, "timeout", e.what());
  } catch (const std::exception& e) {
    return finish(Verdict::crashed, "crashed", e.what());
  }
  rec.contract = describe(k);
  Run run = run_guarded(b, j.checked, j.operands, &j.ref.result, b.reads_caller_memory());
  rec.ms = run.ms;
  rec.note = run.said;
  if (!run.ran) {
    // A device backend's GuardViolation ends the run early, as a failed check, not a crash.
    return finish(run.check == "crashed"   ? Verdict::crashed
                  : run.check == "timeout" ? Verdict::timeout
                                           : Verdict::fail,
                  run.check, run.error);
  }
  if (!run.check.empty()) return finish(Verdict::fail, run.check, run.error);
  // The reruns first: a racy kernel's failure is `nondeterministic`, whatever else it broke.
  RelationResult determinism = determinism_check(b, j.checked, j.operands, &j.ref.result,
                                                 run.result, k, std::max(j.options.runs, 2));
  if (determinism.applicable && !determinism.passed) {
    if (j.options.metamorphic) rec.metamorphic.push_back(determinism);
    rec.repro += " --repeat " + std::to_string(std::max(j.options.runs, kReproRuns));
    return finish(Verdict::fail, "nondeterministic", determinism.detail);
  }
  if (!j.bitwise && p.dtype != DType::i32 && !bound_meaningful(k, max_terms(j.ref))) {
    return finish(Verdict::mistrusted, "bound",
                  "the contract's bound is meaningless here: k(n) u_acc >= 1/2 for n = " +
                      std::to_string(max_terms(j.ref)));
  }
  const Geometry& g = j.checked.geometry();
  const Comparison cmp = compare_to_reference(p, g, j.ref, run.result, k, j.bitwise);
  rec.bound_usage = cmp.usage;
  rec.mismatches = cmp.mismatches;
  rec.first = cmp.first;
  rec.error_map = cmp.map;
  ran.push_back({index, run.result, k});
  const RelationContext ctx{j.c,        g, j.operands, j.ref,
                            run.result, k, j.bitwise,  std::max(j.options.runs, 2)};
  try {
    if (j.options.adjoint) rec.adjoint = adjoint_checks(b, ctx);
    if (j.options.metamorphic) {
      rec.metamorphic = metamorphic_checks(b, ctx);
      rec.metamorphic.push_back(std::move(determinism));
    }
  } catch (const InvalidArgument&) {
    throw;  // an oracle bug in deriving a problem: not the backend's fault
  } catch (const Timeout& e) {
    return finish(Verdict::timeout, "timeout", std::string("in a derived run: ") + e.what());
  } catch (const std::exception& e) {
    return finish(Verdict::crashed, "crashed",
                  std::string("the backend threw in a derived run: ") + e.what());
  }
  if (!cmp.passed) return finish(Verdict::fail, "compare", cmp.detail);
  for (const auto* list : {&rec.adjoint, &rec.metamorphic})
    for (const RelationResult& r : *list)
      if (r.applicable && !r.passed) {
        const std::string check = r.name, reason = r.detail;
        if (!r.repro.empty()) rec.repro = r.repro;  // a sequence (the state relation)
        return finish(Verdict::fail, check, reason);
      }
  if (j.degenerate) {
    return finish(Verdict::mistrusted, "degenerate",
                  j.ref.result.size() == 0
                      ? "the result is empty: nothing to compare"
                      : "the exact result is all zeros: too degenerate to judge");
  }
  return finish(Verdict::pass, "", run.note);  // a check that could not be made, if any
}

// The odd one out: with three or more results, one that disagrees with every other while the
// others all agree with each other. Its index into `ran`, or -1.
int odd_one_out(const Problem& p, const ReferenceResult& ref, const std::vector<Ran>& ran,
                bool bitwise) {
  const std::size_t n = ran.size();
  if (n < 3) return -1;
  std::vector<std::vector<bool>> ok(n, std::vector<bool>(n, true));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      ok[i][j] = ok[j][i] = agree(p, ref, ran[i], ran[j], bitwise);
  int found = -1;
  for (std::size_t x = 0; x < n; ++x) {
    bool odd = true;
    for (std::size_t i = 0; i < n && odd; ++i)
      for (std::size_t j = 0; j < n && odd; ++j) {
        if (i == j) continue;
        const bool involves = i == x || j == x;
        odd = involves ? !ok[i][j] : ok[i][j];
      }
    if (odd) found = static_cast<int>(x);
  }
  return found;
}

}  // namespace

namespace oracle_detail {
Roles case_operands(const Problem& p, const Geometry& g, FillKind fill, uint64_t seed, int p_bits) {
  return fill == FillKind::exact ? exact_operands(p, g, seed, p_bits)
                                 : make_operands(p, g, fill, seed, 53, 1.0);
}
}  // namespace oracle_detail

ByRole<Tensor> case_operands(const Case& c, const std::vector<NumericContract>& contracts) {
  const CheckedProblem checked(c.problem);
  require_memory(checked.problem(), checked.geometry(), MemoryUse::oracle);
  return oracle_detail::case_operands(
      checked.problem(), checked.geometry(), c.fill, c.seed,
      oracle_detail::exact_bits(c.problem.dtype,
                                contracts.empty()
                                    ? std::vector<NumericContract>{native_contract(c.problem.dtype)}
                                    : contracts));
}

CaseReport run_case(const Case& c, const std::vector<Backend*>& backends,
                    const OracleOptions& options) {
  const CheckedProblem checked(c.problem);
  const Problem& p = checked.problem();
  const Geometry& g = checked.geometry();
  // Refused before anything is filled or allocated (core/limits.h; the CLI's --max-bytes).
  require_memory(p, g, MemoryUse::oracle);
  CaseReport report;
  report.c = c;
  report.admission = tf_admission(p, g);
  const bool bitwise = c.fill == FillKind::exact;

  // Who can run it, and under which contracts (the exact fill must suit all of them).
  const Declared declared = declare(backends, checked);
  const Roles operands =
      case_operands(p, g, c.fill, c.seed, exact_bits(p.dtype, declared.contracts));
  const ReferenceResult ref = reference_of(p, g, operands);
  bool degenerate = ref.result.size() == 0;
  if (!degenerate) {
    degenerate = true;
    for (int64_t i = 0; i < ref.result.size() && degenerate; ++i)
      degenerate = ref.result.get(i) == 0;
  }

  const Judging judging{c, checked, operands, ref, bitwise, degenerate, options};
  std::vector<Ran> ran;
  for (std::size_t bi = 0; bi < backends.size(); ++bi) {
    report.records.push_back(
        judge_backend(*backends[bi], declared.status[bi], judging, ran, report.records.size()));
    // Everything it printed since the last case: its declarations above and every run here.
    report.records.back().output = backends[bi]->take_output();
  }
  const int odd = odd_one_out(p, ref, ran, bitwise);
  if (odd >= 0) report.odd_one_out = report.records[ran[odd].record].backend;
  return report;
}

BackendRecord judge_result(const Problem& p, const Operands& in, const Tensor& result,
                           const NumericContract& k, bool bitwise, const std::string& name) {
  const Geometry g = geometry(p);
  const ReferenceResult ref = reference_compute(p, g, in);
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
  rec.error_map = cmp.map;
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
    if (!b.output.empty()) {
      // Its last lines, indented: the record (--json, results.jsonl) has all it kept.
      constexpr int kLines = 8;
      std::size_t from = b.output.size();
      for (int n = 0; n <= kLines && from != std::string::npos && from > 0; ++n)
        from = b.output.rfind('\n', from - 1);
      from = from == std::string::npos ? 0 : from + 1;
      os << "    output (" << b.output.size() << " bytes kept" << (from ? "; its last lines" : "")
         << "):\n";
      std::istringstream lines(b.output.substr(from));
      for (std::string line; std::getline(lines, line);) os << "      | " << line << "\n";
    }
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
    if (!b.note.empty()) os << "    ran " << b.note << "\n";
    if (b.verdict != Verdict::pass) os << "    repro: " << b.repro << "\n";
  }
  if (!r.odd_one_out.empty()) os << "  odd one out: " << r.odd_one_out << "\n";
  return os.str();
}

}  // namespace convcheck
