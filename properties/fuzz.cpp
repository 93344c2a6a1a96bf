// The fuzz driver (design §8 `convcheck fuzz`).
//
// Case i is drawn from gen::any_case() with the i-th split of rc::Random(seed) at a size that grows
// from 2 to 100 over the first 50 cases (then stays at 100; small problems remain common there),
// so a seed names the same sequence of cases on every machine. Every backend still being fuzzed
// runs on each case; a backend whose verdict is fail, crashed or timeout is shrunk alone, down
// RapidCheck's shrink tree: the first shrink that still fails (any failing verdict) is taken, and
// again from there, until no shrink fails or max_shrink_steps shrinks were taken (a shrink is
// taken only when it fails on four more runs too, so that a nondeterministic failure shrinks
// towards cases that fail reliably, not towards lucky ones). Its failure is
// reported and it is fuzzed no further. mistrusted and unsupported are not failures
// (unsupported is counted).
//
// Limits: `seconds` > 0 runs until that much time has passed (cases is then ignored, as the CLI's
// --cases and --time are alternatives); otherwise `cases` cases. The run also ends when every
// backend has failed. run_case throwing InvalidArgument is a bug, rethrown as std::logic_error
// naming the descriptor: the generator's when the problem is invalid, else the oracle's (it
// refused a problem it derived from a valid one).
#include "properties/fuzz.h"

#include <chrono>
#include <optional>
#include <stdexcept>

#include "properties/generators.h"

namespace convcheck {

namespace {

constexpr int kMaxSize = 100;  // the Debian RapidCheck build misbehaves above 100
constexpr int64_t kRampCases = 50;
constexpr int kConfirmRuns = 4;

int size_for(int64_t i) {
  return static_cast<int>(std::min<int64_t>(kMaxSize, 2 + i * (kMaxSize - 2) / kRampCases));
}

bool same_case(const Case& a, const Case& b) {
  return a.problem == b.problem && a.seed == b.seed && a.fill == b.fill;
}

CaseReport run_generated(const Case& c, const std::vector<Backend*>& backends,
                         const OracleOptions& options) {
  try {
    return run_case(c, backends, options);
  } catch (const InvalidArgument& e) {
    const std::string descriptor = to_string(c.problem);
    try {
      (void)geometry(c.problem);
    } catch (const InvalidArgument&) {
      throw std::logic_error("fuzz: the generator produced an invalid problem '" + descriptor +
                             "': " + e.what());
    }
    // A valid problem: the oracle refused one it derived from it.
    throw std::logic_error("fuzz: the oracle refused the valid problem '" + descriptor +
                           "' (seed " + std::to_string(c.seed) + ", fill " + fill_name(c.fill) +
                           "): " + e.what());
  }
}

/// The record of backend `b` (position `i` in the run's backend list).
const BackendRecord* record_of(const CaseReport& r, const std::vector<Backend*>& backends,
                               std::size_t i) {
  const std::string name = backends[i]->name();
  if (r.records.size() == backends.size() && r.records[i].backend == name) return &r.records[i];
  for (const BackendRecord& rec : r.records)
    if (rec.backend == name) return &rec;
  return nullptr;
}

FuzzFailure shrink_failure(Backend* b, const rc::Shrinkable<Case>& found, const Case& original,
                           const BackendRecord& record, const FuzzOptions& options) {
  FuzzFailure f;
  f.backend = b->name();
  f.original = original;
  f.minimal = original;
  f.record = record;
  const std::vector<Backend*> alone = {b};
  // Each accepted shrink costs at most a few dozen rejected candidates; the cap only guards
  // against a pathological tree.
  const int64_t max_attempts = 64 * static_cast<int64_t>(std::max(options.max_shrink_steps, 1));
  int64_t attempts = 0;
  // A shrink counts only when it fails the same check (no "slippage", as Hypothesis calls it):
  // else a bug seen by `compare` could shrink into another check's failure on a derived problem
  // (a state relation's second case, say), and the minimal case would stop showing the bug found.
  auto fails = [&](const Case& c) -> std::optional<BackendRecord> {
    const CaseReport r = run_generated(c, alone, options.oracle);
    const BackendRecord* rec = record_of(r, alone, 0);
    if (rec != nullptr && is_failure(rec->verdict) && rec->check == record.check) return *rec;
    return std::nullopt;
  };
  rc::Shrinkable<Case> current = found;
  bool progress = true;
  auto stopping = [&] { return options.stop && options.stop(); };
  while (progress && f.shrink_steps < options.max_shrink_steps && attempts < max_attempts &&
         !stopping()) {
    progress = false;
    rc::Seq<rc::Shrinkable<Case>> shrinks = current.shrinks();
    while (rc::Maybe<rc::Shrinkable<Case>> next = shrinks.next()) {
      const Case candidate = next->value();
      if (same_case(candidate, f.minimal)) continue;
      if (++attempts > max_attempts || stopping()) break;
      std::optional<BackendRecord> failed = fails(candidate);
      // A failure that does not come back (a nondeterministic backend) would steer shrinking
      // towards cases that rarely fail: an accepted shrink must fail kConfirmRuns more times.
      for (int k = 0; failed && k < kConfirmRuns; ++k) {
        if (!fails(candidate)) failed.reset();
      }
      if (failed) {
        current = *next;
        f.minimal = candidate;
        f.record = *failed;
        ++f.shrink_steps;
        progress = true;
        break;
      }
    }
  }
  // The record's repro line, always with --repeat: a racy backend's failure may come back only by
  // chance, under any check (a lost update in a derived run fails an adjoint identity in half the
  // runs, with the same words each time), and on a minimal case the extra runs cost nothing.
  f.repro = f.record.repro.empty() ? repro_line(f.minimal, f.backend) : f.record.repro;
  if (f.repro.find(" --repeat ") == std::string::npos)
    f.repro += " --repeat " + std::to_string(kReproRuns);
  return f;
}

}  // namespace

std::vector<Case> fuzz_cases(uint64_t seed, int64_t first, int64_t n) {
  std::vector<Case> out;
  rc::Random random(seed);
  const rc::Gen<Case> cases = gen::any_case();
  for (int64_t i = 0; i < first + n; ++i) {
    const rc::Random case_random = random.split();
    if (i >= first) out.push_back(cases(case_random, size_for(i)).value());
  }
  return out;
}

FuzzSummary fuzz(const std::vector<Backend*>& backends, const FuzzOptions& options,
                 const std::function<void(int64_t)>& on_case,
                 const std::function<void(const FuzzFailure&)>& on_failure) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const bool timed = options.seconds > 0;
  auto out_of_time = [&] {
    return std::chrono::duration<double>(Clock::now() - start).count() >= options.seconds;
  };

  FuzzSummary summary;
  std::vector<Backend*> active = backends;
  rc::Random random(options.seed);
  const rc::Gen<Case> cases = gen::any_case();
  summary.next_case = options.first_case;
  for (int64_t i = 0; !active.empty(); ++i) {
    if (timed ? out_of_time() : i >= options.cases) break;
    const rc::Random case_random = random.split();  // case i's randomness, run or not
    if (i < options.first_case || i % options.shard_n != options.shard_k - 1) continue;
    if (options.stop && options.stop()) {
      summary.stopped = true;
      break;
    }
    const rc::Shrinkable<Case> shrinkable = cases(case_random, size_for(i));
    const Case c = shrinkable.value();
    const CaseReport report = run_generated(c, active, options.oracle);
    ++summary.cases;
    std::vector<Backend*> still;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const BackendRecord* rec = record_of(report, active, k);
      if (rec == nullptr) {
        still.push_back(active[k]);
        continue;
      }
      if (rec->verdict == Verdict::unsupported) ++summary.unsupported;
      if (!is_failure(rec->verdict)) {
        still.push_back(active[k]);
        continue;
      }
      summary.failures.push_back(shrink_failure(active[k], shrinkable, c, *rec, options));
      if (on_failure) on_failure(summary.failures.back());
    }
    active = std::move(still);
    summary.next_case = i + 1;
    if (on_case) on_case(summary.cases);
  }
  return summary;
}

}  // namespace convcheck
