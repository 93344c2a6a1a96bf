// The oracle (design §6): runs a case through backends side by side and decides, with evidence,
// whether each one is right.
//
// For a case (problem, seed, fill) it fills all three roles reproducibly from the seed, runs every
// backend on guarded buffers (guard bands around every buffer, a poisoned result), and judges each
// result against the exact reference under the backend's declared numeric contract:
//   compare      element-wise |got - s_i| <= tau_i (design §6.3); exact fills demand bitwise
//   equality guards       an out-of-bounds write, an unwritten element, a modified operand adjoint
//   <conv2d(x,w),dy> = <x,backprop_input(w,dy)> = <w,backprop_filter(x,dy)> (and the
//                depthwise triple), inner products exact, slack derived from the same bounds
//   metamorphic  transpose = backprop input; depthwise = grouped conv (G = C); NCHW = NHWC
//                transposed; SAME = its explicit split; VALID on a zero-padded input = EXPLICIT;
//                NaN footprint; linearity; bitwise rerun for backends that claim determinism
//   state        the same backend runs another case of the same shapes (other data; other
//                strides/padding/dilation), judged on its own, then this case again, which must
//                give its first run's bits (oracle/state.cpp)
// and gives one verdict per backend, with the repro line that reruns it.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/admission.h"
#include "core/backend.h"
#include "core/problem.h"
#include "core/tensor.h"
#include "oracle/fills.h"

namespace convcheck {

namespace json {
class Object;  // core/json_reader.h, declared here so that this header does not pull in simdjson's
}  // namespace json

// How operands are filled (FillKind, the vocabulary of fills): oracle/fills.h.

struct Case {
  Problem problem;
  uint64_t seed = 1;
  FillKind fill = FillKind::exact;
};

/// `convcheck check '<descriptor>' --backends <b> --seed <s> --fill <f>`
std::string repro_line(const Case& c, const std::string& backend);
/// The same replaying a sequence: `... --after '<descriptor>' --after-seed <s> --after-fill <f>`,
/// `after` run first on the same backend instance, unjudged (the state relation's repro).
std::string repro_line(const Case& c, const std::string& backend, const Case& after);

/// Runs `b` on case `c`, its operands filled as run_case fills them for `b` alone, guarded and
/// unjudged: `check --after` uses it to put a backend in the state a sequence leaves it in. What
/// went wrong (the backend cannot implement it, threw, broke a guard), or "" when it ran.
std::string run_unjudged(Backend& b, const Case& c);

/// The three operands of case `c` in their storage layouts, as run_case fills them for backends
/// holding `contracts` (an exact fill is sized so that every partial sum fits the narrowest of
/// them; empty: the dtype's native contract). The Python package's `operands()` (python/).
ByRole<Tensor> case_operands(const Case& c, const std::vector<NumericContract>& contracts);

enum class Verdict { pass, fail, unsupported, mistrusted, crashed, timeout };
inline constexpr Verdict kAllVerdicts[] = {Verdict::pass,        Verdict::fail,
                                           Verdict::unsupported, Verdict::mistrusted,
                                           Verdict::crashed,     Verdict::timeout};
const char* verdict_name(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view s);
/// Whether a verdict fails a run (fail, crashed, timeout). mistrusted and unsupported do not.
bool is_failure(Verdict v);

/// A result element that broke its bound: coordinates in logical order (n, h, w, c for activations;
/// kh, kw, in, out for filters).
struct Offender {
  std::array<int64_t, 4> coord{};
  int64_t index = 0;  // storage index
  double ref = 0;     // the exact value (hi of the double-double)
  double got = 0;
  double bound = 0;  // tau_i
};

/// A double as the oracle's messages print it: 17 significant digits (round-trips); every NaN as
/// "nan" (its sign means nothing; iostreams print "-nan" for a set sign bit).
std::string format_value(double v);
/// An offender's exact value and bound as messages print them: "exact E, bound B"; where the exact
/// value is NaN or infinite no bound applies, and what passes is named instead: "exact nan (any
/// NaN passes)", "exact -inf (only -inf passes)". One wording for the CLI, reports and JUnit.
std::string exact_and_bound(double exact, double bound);

/// Where a failing comparison's errors lie in the result (report.html's heat map, issue 19):
/// |got - exact| / bound per element over the result's two spatial axes (h, w; for a filter
/// result kh, kw), in the slice that holds the worst element (its n and c; in and out), as the
/// maximum over cells of cell[0] x cell[1] elements, so that the map has at most kErrorMapSide
/// cells a side. Inf: an element that differs where equality is required, or a non-finite error.
struct ErrorMap {
  std::string rows, cols;  // the axes drawn: "h", "w" (a filter result: "kh", "kw")
  std::string slice;       // the slice drawn: "n=0 c=3" ("in=1 out=0")
  std::array<int64_t, 2> extent{}, cell{};
  std::vector<std::vector<double>> usage;  // extent / cell rows of cells, rounded up
};
inline constexpr int64_t kErrorMapSide = 32;

/// One adjoint identity or metamorphic relation.
struct RelationResult {
  std::string name;        // e.g. "adjoint:fwd=bpi", "metamorphic:nchw"
  bool applicable = true;  // false: not run, and `detail` says why (never counted as a pass)
  bool passed = true;
  std::string detail;   // what was compared, and where it broke
  double residual = 0;  // |lhs - rhs| (adjoint), or the largest |a - b| / bound (metamorphic)
  double slack = 0;     // the allowed residual (adjoint), or 1 (metamorphic)
  /// A repro line of its own when the case's would not replay the failure (the state relation's
  /// sequence: repro_line(c, b, after)); it becomes the record's `repro`. Not in the JSON form.
  std::string repro;
  /// metamorphic:nan_footprint's comparison alone: results that are NaN though no term connects
  /// them to the NaN (it reached too far), and connected results that are not NaN (it was lost).
  /// Zero for every other relation and for the relation's rerun failures (crash, bounds,
  /// determinism). In the JSON form where either is nonzero (oracle/json.cpp), and in `detail`.
  int64_t nan_extra = 0, nan_missing = 0;
};

struct BackendRecord {
  std::string backend;
  Verdict verdict = Verdict::pass;
  std::string check;   // the check that decided a non-pass verdict: "compare", "out_of_bounds",
                       // "unwritten", "operand_modified", "adjoint:...", "metamorphic:...", ...
  std::string reason;  // one line a person can read
  std::string contract;
  double bound_usage = 0;  // max_i |got_i - s_i| / tau_i over compared elements (0/0 counts as 0)
  int64_t mismatches = 0;  // elements over their bound
  std::optional<Offender> first;
  std::optional<ErrorMap> error_map;  // a failing compare's errors over the result
  std::vector<RelationResult> adjoint;
  std::vector<RelationResult> metamorphic;
  double ms = 0;  // time of the backend's main run
  /// What the backend said of its main run (Backend::last_note(): cuDNN's algorithm and layout,
  /// oneDNN's implementation, eigen's path), as bench's records say it; written to results.jsonl
  /// only when not empty.
  std::string note;
  /// What an out-of-process backend (a plugin) printed while judged on this case: its last 64 KiB,
  /// printable ASCII (plugins/sandbox.h). Empty for the others; written to results.jsonl only
  /// when not empty.
  std::string output;
  std::string repro;
};

struct CaseReport {
  Case c;
  TfAdmission admission;
  std::vector<BackendRecord> records;
  /// With three or more backends that ran: the one whose result disagrees with all the others
  /// while they agree with each other (empty when there is none).
  std::string odd_one_out;
  bool all_passed() const;
};

struct OracleOptions {
  bool adjoint = true;
  bool metamorphic = true;
  /// Elements listed beside the first offender in reports (not yet used beyond the first).
  int max_offenders = 1;
  /// Runs of each backend on the case (at least 2): the reruns' bits must equal the first run's
  /// for a contract that claims determinism (oracle/determinism.cpp). `check --repeat N`.
  int runs = 2;
};

/// The runs a repro line of a `nondeterministic` failure asks for (`--repeat`): a race that
/// showed once in two runs shows again in one of these with high probability (README).
inline constexpr int kReproRuns = 20;

/// Runs one case through `backends` (none owned). Never throws for a backend's failure: a backend
/// that throws is `crashed` with the exception's text. Throws InvalidArgument for an invalid
/// problem, and ResourceLimit (an InvalidArgument) before allocating anything for one whose
/// footprint exceeds memory_limit() (core/limits.h, MemoryUse::oracle).
CaseReport run_case(const Case& c, const std::vector<Backend*>& backends,
                    const OracleOptions& options = {});

/// Judges a result computed elsewhere (`convcheck verify`) against the exact reference under the
/// contract `k`, with the figures of a guarded run's comparison: `in` holds the two operands the
/// op reads and `result` the result, all in their storage layouts with the problem's dtype and
/// shapes (the caller checks them). `bitwise` demands bit-for-bit equality (int32 always does).
/// The verdict is pass, fail [compare] (bound usage, mismatches, first offender), or mistrusted
/// (a bound meaningless for sums this long, an empty or all-zero exact result). No adjoint or
/// metamorphic checks: there is no backend to run. `name` labels the record.
BackendRecord judge_result(const Problem& p, const Operands& in, const Tensor& result,
                           const NumericContract& k, bool bitwise, const std::string& name);

/// The one JSON form of a backend's record, used by check --json, verify --json and run's
/// results.jsonl (core/json.h conventions), keys in this order: backend, verdict, check, reason,
/// contract, bound_usage, mismatches, first_offender ({coord, index, ref, got, bound} or null),
/// adjoint, metamorphic ([{name, applicable, passed (null when not applicable), residual, slack,
/// detail}]), ms, repro.
nlohmann::ordered_json to_json(const BackendRecord& b);
/// Reads to_json's keys back from a value parsed by core/json_reader.h (results.jsonl's reader),
/// all but "backend" (left empty: results.jsonl names the backend its own way). Throws
/// std::runtime_error naming the field that is missing, mistyped or unknown.
BackendRecord backend_record_from_json(const json::Object& o);
/// {cpu: {kind, message}, gpu: {kind, message}}, and back (an unknown kind is an error).
nlohmann::ordered_json to_json(const TfAdmission& a);
TfAdmission admission_from_json(const json::Object& o);

/// One JSON object with every figure: problem, seed, fill, tf_admission, odd_one_out, backends
/// (to_json of each record).
std::string to_json(const CaseReport& r);
/// A few lines for a person.
std::string to_text(const CaseReport& r);

}  // namespace convcheck
