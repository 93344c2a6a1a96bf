// `convcheck report diff A B`: what changed from run A to run B (issue 6).
//
// Records are matched by (descriptor, seed, fill, backend). Reported:
//   new failures   A's verdict is not a failure, B's is (fail, crashed, timeout)   -> regression
//   fixed          A's verdict is a failure, B's is pass
//   bound growth   B's bound usage > 2x A's and > 0.5, both judged (pass or fail)  -> regression
//   other changes  any other verdict change (e.g. pass -> unsupported), listed
//   performance    per (backend, op) group, the median of log(ms_B / ms_A) over the pairs both
//                  runs timed with at least min_ms in each (shorter runs are timer noise). The
//                  run-to-run noise is measured from the same data: sigma = 1.4826 x the median
//                  absolute deviation of those log ratios over all of the backend's timed pairs
//                  (how much single cases scatter when nothing changed). A group of n >= min_pairs
//                  is a slowdown when its median ratio exceeds both 1 + min_slowdown and
//                  exp(z x 1.2533 sigma / sqrt(n)) (z standard errors of a median).   -> regression
//                  Faster groups are listed the same way, as improvements.
//   implementations per backend, the pairs judged in both runs (pass or fail) whose record's
//                  note (what the backend said it ran: Backend::last_note(), e.g. cuDNN's
//                  algorithm, oneDNN's jit:avx512_core) differs from A to B, counted by (A's
//                  note, B's note): why a time may have moved; neither a regression nor an
//                  improvement
// Pairs only in A or only in B are counted (a different suite or backend set), not judged.
#pragma once

#include <string>
#include <vector>

#include "reports/results.h"

namespace convcheck::reports {

struct DiffOptions {
  double bound_growth = 2.0;
  double bound_floor = 0.5;
  double min_ms = 1.0;
  double min_slowdown = 0.2;
  double z = 3.0;
  int min_pairs = 5;
};

struct PerfGroup {
  std::string backend, op;
  int64_t pairs = 0;
  double median_ratio = 1;  // B / A
  double threshold = 1;     // slower than this (or faster than 1 / this) is beyond noise
  double sigma = 0;         // the backend's per-case log-ratio noise
  enum class Change { none, slower, faster } change = Change::none;
};

struct Change {
  Record a, b;
};

/// Matched pairs whose backend said it ran something else in B than in A (Record's note).
struct ImplementationChange {
  std::string backend, a, b;  // the notes ("" where a run said nothing)
  int64_t pairs = 0;
};

struct DiffResult {
  int64_t matched = 0, only_a = 0, only_b = 0;
  std::vector<Change> new_failures, fixed, bound_growth, other;
  std::vector<PerfGroup> perf;                        // every judged group
  std::vector<ImplementationChange> implementations;  // by backend, then notes
  int64_t perf_untimed = 0;                           // matched pairs too short (or unrun) to time
  bool regression() const;
  int64_t slower_groups() const;
};

DiffResult diff(const std::vector<Record>& a, const std::vector<Record>& b,
                const DiffOptions& options = {});
std::string diff_text(const DiffResult& d, const std::string& a_name, const std::string& b_name);
std::string diff_json(const DiffResult& d, const std::string& a_name, const std::string& b_name);

}  // namespace convcheck::reports
