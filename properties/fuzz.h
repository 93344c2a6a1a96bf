// The fuzz driver behind `convcheck fuzz` (design §8): random cases from the generators, each run
// through the oracle; a failing backend's case is shrunk to a minimal problem (RapidCheck's
// shrink tree) and reported with its repro line.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "oracle/oracle.h"

namespace convcheck {

struct FuzzOptions {
  int64_t cases = 100;  // stop after this many cases...
  double seconds = 0;   // ...or after this many seconds, when > 0
  uint64_t seed = 1;
  int max_shrink_steps = 500;
  OracleOptions oracle;
  /// Scale-out (`fuzz --shard K/N`): case i of the stream runs only when i mod shard_n ==
  /// shard_k - 1, so N shards together run exactly the unsharded campaign's cases.
  int64_t shard_k = 1, shard_n = 1;
  /// Resume: start at case `first_case` of the stream (the cases before it are skipped, not run).
  int64_t first_case = 0;
  /// Polled between cases (and between shrink attempts): true stops the campaign cleanly after
  /// the case in flight (SIGINT/SIGTERM). A failure being shrunk is reported as far as it got.
  std::function<bool()> stop;
};

struct FuzzFailure {
  std::string backend;
  Case original;         // the first failing case found
  Case minimal;          // after shrinking
  BackendRecord record;  // the oracle's record for the minimal case
  int shrink_steps = 0;
  std::string repro;  // the record's repro line, with --repeat 20 (fuzz.cpp says why)
};

struct FuzzSummary {
  int64_t cases = 0;        // cases generated and run
  int64_t unsupported = 0;  // (case, backend) pairs a backend declined
  int64_t next_case = 0;    // the stream index to resume from
  bool stopped = false;     // ended by options.stop
  // At most one per backend: a failing backend is not fuzzed further.
  std::vector<FuzzFailure> failures;
};

/// Cases first .. first + n - 1 of the stream `fuzz` draws from `seed` (the cases a campaign with
/// that seed runs, unshrunk): the pytest plugin's --convcheck-fuzz cases (python/).
std::vector<Case> fuzz_cases(uint64_t seed, int64_t first, int64_t n);

/// Fuzzes `backends` (not owned; each judged against the exact reference). `on_case(done)` is
/// called after each case (progress); `on_failure` as soon as a failure is shrunk.
FuzzSummary fuzz(const std::vector<Backend*>& backends, const FuzzOptions& options,
                 const std::function<void(int64_t)>& on_case = {},
                 const std::function<void(const FuzzFailure&)>& on_failure = {});

}  // namespace convcheck
