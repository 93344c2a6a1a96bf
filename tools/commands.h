// The convcheck subcommands (design §8). Each takes its own arguments (after the command word)
// and returns the process exit code: 0 success, 1 a check failed, 2 bad usage or bad input
// (message on stderr), 3 a requested backend is unavailable; 4 an internal error (a convcheck bug).
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/tensor.h"

namespace convcheck::cli {

enum ExitCode { kOk = 0, kCheckFailed = 1, kBadInput = 2, kUnavailable = 3, kInternal = 4 };

using Args = std::vector<std::string>;

int cmd_list(const Args& args);
int cmd_compute(const Args& args);
int cmd_operands(const Args& args);
int cmd_inspect(const Args& args);
int cmd_check(const Args& args);
int cmd_fuzz(const Args& args);
int cmd_bench(const Args& args);
int cmd_run(const Args& args);     // tools/run.cpp
int cmd_report(const Args& args);  // tools/report.cpp

// The backends a command runs: the named ones (vm["backends"], comma-separated), or every
// available non-family backend. A named backend that is unavailable: nullopt, after saying so on
// stderr (exit code 3).
struct Chosen {
  std::vector<std::unique_ptr<Backend>> owned;
  std::vector<Backend*> list;
  std::vector<std::string> skipped;  // defaulted backends that are unavailable, with the reason
};
std::optional<Chosen> choose_backends(const boost::program_options::variables_map& vm);

/// `fuzz --out DIR` keeps DIR/fuzz.json: the campaign (seed, shard, limit, backends), the next case
/// of the stream and the backends that failed, so that `fuzz --resume` continues it
/// (tools/run.cpp).
struct FuzzState {
  uint64_t seed = 1;
  std::string shard = "1/1";
  std::string limit;  // "cases N" or "time"
  std::vector<std::string> backends;
  int64_t next_case = 0, cases_run = 0;
  std::vector<std::string> failed;
  bool interrupted = false;
};
/// Parses "K/N" for --shard (InvalidArgument with the rule).
void shard_of(const std::string& text, int64_t* k, int64_t* n);
/// Reads DIR/fuzz.json into *state, checking that it records the same campaign (seed, shard,
/// limit, backends); InvalidArgument when it is missing, malformed or another campaign.
void resume_fuzz_state(const std::string& dir, FuzzState* state);
void write_fuzz_state(const std::string& dir, const FuzzState& state);

/// SIGINT/SIGTERM while `run` or `fuzz` works (issue 8): the first signal sets a flag that the
/// command polls between cases (it then stops after the case in flight, writes what finished and
/// exits 128 + the signal: 130, 143); the handler is reset, so a second signal ends the process
/// at once. The guard restores the previous handlers.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  /// 0 while no signal came, else the signal number.
  static int signal();
};

/// Progress on stderr for `run` and `fuzz`: on a terminal one line rewritten in place (cases,
/// rate, failures so far, ETA); in a log a plain line every tenth of the cases (or of --time) or
/// every 30 s, whichever comes first. The rate and ETA come from this segment alone, so a resumed
/// run's ETA does not count the cases recorded before it as done in no time.
class Progress {
 public:
  /// `what` starts each line ("run"); `failing` names what failures count ("failing pair");
  /// `total` cases, `already` of them done before this segment; `seconds` > 0: the limit is
  /// time (fuzz --time), and `total` is not used.
  Progress(std::string what, std::string failing, int64_t total, int64_t already,
           double seconds = 0);
  void update(int64_t done, int64_t failures);
  /// Ends the terminal's updating line.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  int64_t tenth(int64_t done, double elapsed) const;
  std::string what_, failing_;
  int64_t total_, start_done_;
  double seconds_;
  int64_t last_tenth_ = 0;
  bool tty_ = false, open_ = false;
  Clock::time_point start_, last_;
};

/// The operands an op reads, from .npy files (compute, verify), kept alive with their views.
struct OperandFiles {
  Tensor tensors[2];
  ConstTensorView views[2];
  Operands ops;
  int count = 0;
  /// Reads `path` as role `r` of `p`: dtype and storage shape checked, with every number.
  void read(const std::string& path, const Problem& p, const Geometry& g, Role r);
};
/// A .npy file in `layout` that must hold `p`'s dtype; else InvalidArgument "<what>: file PATH has
/// dtype f64 ('<f8'), expected f32 ('<f4') for <descriptor>".
Tensor read_npy_of_dtype(const std::string& what, const std::string& path, const Problem& p,
                         Layout layout);

/// --input, --filter, --out-backprop (compute, verify): each role's .npy file, with the ops that
/// read it in its help.
void add_operand_options(boost::program_options::options_description& desc);

/// Registers every backend built into this binary.
void register_builtin_backends();

/// Dispatches argv; catches everything and maps it to an exit code.
int run(int argc, char** argv);

}  // namespace convcheck::cli
