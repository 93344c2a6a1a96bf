// The case list of a run and its records (design §9, issue 6): what `convcheck run` writes to
// results.jsonl, and what `report`, `--resume` and `merge` read back.
//
// Cases. Each suite line gives a problem, an optional tag and an optional fill. A line with
// `--fill F` is one case; a line without is one case per default fill, `exact` then `real`
// (kDefaultFills): exact demands bit-exact results of every backend, real exercises rounding
// within each backend's declared contract. A case's seed is derived from the line alone: the low
// 32 bits of FNV-1a-64 over "<canonical descriptor>|<fill>" (a repeated identical line adds
// "|<occurrence>"), so a case keeps its seed when lines are added, removed or reordered, and runs
// of different suite versions stay comparable by `report diff`. Case i (0-based, suite order,
// fills in that order within a line) belongs to shard K of N when i mod N == K - 1.
//
// Records. One JSON object per (case, backend), one line each, fields in this order:
//   case            the case's index in the suite's case list
//   descriptor      canonical descriptor;  op, dtype, format  (from it, for jq users)
//   seed, fill, tag the rest of the case ("" when the line has no tag)
//   backend         the backend's name in this run; implementation: the backend that ran (they
//                   differ only when one stands in for another: --backends NAME=IMPL)
//   verdict, check, reason      pass|fail|unsupported|mistrusted|crashed|timeout, the deciding
//                   check ("" for pass), one readable line
//   contract        the backend's declared numeric contract
//   bound_usage, mismatches, first_offender {coord, index, ref, got, bound} or null
//   adjoint[], metamorphic[]    {name, applicable, passed (null when not applicable), residual,
//                   slack, detail}; a failing nan_footprint comparison adds nan_extra and
//                   nan_missing (its two counts)
//   ms              the main run's time (the only field that changes between identical runs)
//   tf_admission    {cpu: {kind, message}, gpu: {kind, message}}
//   odd_one_out     the backend that alone disagreed on this case, or null
//   repro           `convcheck check '<descriptor>' --backends <implementation> --seed S --fill F`;
//                   a state relation's failure (check metamorphic:state*) replays its sequence,
//                   `... --after '<descriptor2>' --after-seed S2 --after-fill F2`, and may name the
//                   other case first (oracle/state.cpp)
// NaN and infinities are written as the strings "nan", "inf", "-inf".
//
// Reading is simdjson's (core/json_reader.h; writing is nlohmann's). A 10^6-line, 1.94 GB file
// (`python3 bench/make_results.py RUN/results.jsonl 1000000 DIR`, then
// `build/bench/read_results DIR/results.jsonl 1`) reads in 14-21 s, 93-136 MB/s, 48k-70k lines/s,
// against 51-76 s (26-38 MB/s) with nlohmann, on the 2-core AMD EPYC VM under load ~5.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "core/suite.h"
#include "oracle/oracle.h"

namespace convcheck::reports {

inline constexpr FillKind kDefaultFills[] = {FillKind::exact, FillKind::real};

struct RunCase {
  int64_t index = 0;
  Case c;
  std::string tag;
  int line = 0;  // suite line
};

/// The deterministic seed of (descriptor, fill, occurrence); see the header comment.
uint64_t case_seed(const Problem& p, FillKind fill, int occurrence);
/// Every case of a suite, in order. Throws InvalidArgument for a line whose --fill is unknown.
std::vector<RunCase> suite_cases(const Suite& suite);

struct Shard {
  int64_t k = 1, n = 1;  // shard k of n, 1-based
  bool takes(int64_t index) const { return index % n == k - 1; }
  bool whole() const { return n == 1; }
};
/// How many of cases 0 .. total-1 shard `s` takes (reports/summary.cpp).
int64_t count_planned(int64_t total, const Shard& s);
/// Parses "K/N" (1 <= K <= N). Throws InvalidArgument with the rule.
Shard parse_shard(const std::string& text);
std::string to_string(const Shard& s);

/// One line of results.jsonl: the oracle's record of one backend on one case (`result`, written by
/// oracle/oracle.h's to_json), with the case, the run's name for the backend, TF's admission and
/// the case's odd one out.
struct Record {
  int64_t case_index = 0;
  std::string descriptor;         // canonical
  std::string op, dtype, format;  // from the descriptor
  uint64_t seed = 0;
  FillKind fill = FillKind::exact;
  std::string tag;
  std::string backend;   // the backend's name in this run
  BackendRecord result;  // result.backend: the implementation that ran
  TfAdmission admission;
  std::string odd_one_out;  // empty: none

  /// "<descriptor>|<seed>|<fill>": a case's identity.
  std::string case_key() const;
  /// case_key() + "|" + backend: a record's identity in resume, merge and diff.
  std::string key() const;
};

/// The records of one finished case. `labels[i]` is the name the run gives backend
/// report.records[i] (normally its own name; see --backends NAME=IMPL).
std::vector<Record> records_of(const CaseReport& report, const RunCase& rc,
                               const std::vector<std::string>& labels);

/// One line of results.jsonl (no newline).
std::string to_jsonl(const Record& r);
/// Parses one line; throws std::runtime_error saying what is wrong.
Record parse_record(const std::string& line);

struct ReadResult {
  std::vector<Record> records;
  /// A last line cut short (no newline and not parseable: a run killed mid-write), ignored.
  bool truncated_tail = false;
  /// Byte length of the complete lines (where an append must continue).
  std::size_t valid_bytes = 0;
};
/// Reads a results.jsonl. A missing file reads as empty. A malformed line (other than a last
/// line cut short) throws InvalidArgument naming the file and line number.
ReadResult read_results(const std::string& path);

/// Duplicate keys: the last record wins if they agree on the verdict; records that disagree
/// throw InvalidArgument naming the key and both verdicts (`where` says which files).
std::vector<Record> deduplicate(std::vector<Record> records, const std::string& where);

}  // namespace convcheck::reports
