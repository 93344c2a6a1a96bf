// summary.json, run.json, the coverage classes and the environment (design §9, issue 6).
//
// run.json holds what a run was asked to do and when: suite, backends (and those skipped, with
// the reason), shard, environment, start and end times, whether it was interrupted. It is the
// only report file with wall-clock figures. summary.json is a function of results.jsonl and
// run.json's time-free part (suite, backends, skipped backends, environment, planned cases), so
// an interrupted-and-resumed run and an uninterrupted run of the same suite and backends on the
// same build and machine give byte-identical summaries, and so do N merged shards and the
// unsharded run.
//
// summary.json (keys in this order):
//   format            "convcheck-summary/1"
//   suite             the suite's name
//   backends          [{name, implementation}], skipped_backends [{name, reason}]
//   cases, pairs      {planned, recorded}: cases of the suite (or shard) and (case, backend)
//                     pairs; complete = every planned pair is recorded
//   verdicts          {pass, fail, unsupported, mistrusted, crashed, timeout} over all pairs
//   by_backend        {backend: {verdict: count}}
//   counts            [{op, dtype, backend, verdict, count}] sorted, zero counts left out
//   coverage          classes: [{class, description, cases, ran, by_op: {op: {cases, ran}}}] for
//                     the ops a class applies to; not_run: classes with no case that ran;
//                     not_run_by_op: "class/op" pairs (the op admits the class) with none
//                     ("ran": a case at least one backend executed: not unsupported)
//   environment       cpu, cores, gpu, compiler, boost, eigen, rapidcheck, onednn, cuda, cudnn,
//                     commit (from run.json)
#pragma once

#include <string>
#include <vector>

#include "core/json.h"
#include "core/problem.h"
#include "reports/results.h"

namespace convcheck::reports {

/// The equivalence classes of issue 6, with the ops they apply to.
struct CoverageClass {
  std::string name;
  std::string description;
};
const std::vector<CoverageClass>& coverage_classes();
/// Whether `op` admits the class (groups only for the conv2d family, multiplier only for
/// depthwise, int32 only for the ops that take it).
bool class_applies(const std::string& cls, Op op);
/// The classes a (valid) problem belongs to.
std::vector<std::string> classes_of(const Problem& p);

/// The machine and build: CPU model and cores (/proc/cpuinfo), GPU (the "gpu" backend's
/// availability, through the registry), compiler, library versions, the project's commit.
json::Value environment();

struct BackendLabel {
  std::string name, implementation;
};

struct RunInfo {
  std::string suite;        // name
  std::string suite_path;   // as read
  int64_t suite_cases = 0;  // cases of the whole suite
  std::vector<BackendLabel> backends;
  std::vector<std::pair<std::string, std::string>> skipped;  // name, reason
  Shard shard;
  std::vector<Shard> merged_shards;  // a merged report: the shards it was made of
  json::Value environment;
  std::string started, finished;  // UTC, ISO 8601
  double elapsed_s = 0;
  bool interrupted = false;
  std::string command;
  // A merge written with --allow-partial: the shards of the run that were missing or incomplete
  // ("K/N"); such a report is never complete.
  std::vector<std::string> missing_shards, incomplete_shards;
  bool partial = false;
  /// The planned case indices of this report (the shard's, or all).
  int64_t planned_cases() const;
};

/// Whether `recorded` pairs complete the report: every planned pair, and not a partial merge.
bool is_complete(const RunInfo& info, int64_t recorded);
/// run.json's object; "complete" is is_complete(info, recorded).
json::Value run_json(const RunInfo& info, int64_t recorded);
/// Throws InvalidArgument naming `path` when a field is missing.
RunInfo parse_run_json(const std::string& text, const std::string& path);

/// summary.json's text (indented, ends with a newline).
std::string summary_json(const RunInfo& info, const std::vector<Record>& records);

/// Writes `text` to `path` atomically: a temporary file in the same directory, fsync, rename.
/// Throws InvalidArgument naming the file and the system's reason.
void write_file_atomic(const std::string& path, const std::string& text);
/// Removes the temporary files write_file_atomic leaves behind when killed between its mkstemp
/// and its rename (".<name>.tmp-XXXXXX" in `dir`). Returns how many it removed. Call only while
/// holding the directory's OutputLock: another run's temporaries are never touched.
int remove_stale_temporaries(const std::string& dir);
/// The name prefix of `run`'s probe file that checks --out is writable (removed likewise).
extern const char* const kWriteTestPrefix;

/// One run per output directory (issue 18): an advisory lock (flock) on DIR/.convcheck.lock, held
/// for the life of this object, the holder's pid written in the file. The kernel drops a flock when
/// its holder dies, so a killed run's lock is simply taken over. Move-only.
class OutputLock {
 public:
  /// Takes the lock for `command` (e.g. "run", "report merge"); throws InvalidArgument naming the
  /// holder's pid and command when another process holds it, or the file when it cannot be made.
  OutputLock(const std::string& dir, const std::string& command);
  ~OutputLock();
  OutputLock(OutputLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  OutputLock& operator=(OutputLock&&) = delete;
  static constexpr const char* kFileName = ".convcheck.lock";

 private:
  int fd_ = -1;
};
/// Now, as "2026-11-22T10:00:00Z".
std::string utc_now();

}  // namespace convcheck::reports
