// `convcheck run` (design §8, issue 6): a suite through the oracle, every case on every chosen
// backend, recorded as it finishes; and the interruption handling that `run` and `fuzz` share
// (issue 8 item 4).
//
//   convcheck run --suite NAME|FILE [--backends a,b|NAME=IMPL,...] [--out DIR] [--resume]
//                 [--shard K/N]
//
// Cases: reports/results.h (each line once per default fill, exact and real, unless it names
// one; seeds from the line). Backends: the named ones, or every available non-family backend
// (unavailable ones are skipped and recorded with the reason). `NAME=IMPL` runs backend IMPL
// under the name NAME: its records carry backend NAME and implementation IMPL, and the repro line
// names IMPL. That is how one run's backend is compared with another implementation standing in
// for it (`report diff` matches records by backend name): a plugin's new build against its old
// one, or a mutant planted in place of a backend to prove that `report diff` catches it.
//
// Files in DIR (default ${XDG_CACHE_HOME:-~/.cache}/convcheck/runs/<suite>[-shard-K-of-N]):
//   results.jsonl  appended with one write() per finished case (a killed run loses no finished
//                  case), fdatasync'ed at the end and on interruption
//   run.json, summary.json, junit.xml, report.html   written atomically at the start (run.json)
//                  and at the end (all four)
// An existing non-empty results.jsonl is an error unless --resume: the run then checks that
// run.json names the same suite, backends and shard, drops a last line cut short by a kill,
// skips the (case, backend) pairs already recorded, and appends the rest. A case with some of its
// backends missing is rerun on all of them (the exact fill depends on every backend's contract),
// and only the missing records are appended.
//
// Exit codes: 0 every pair passed, was unsupported or mistrusted (mistrusted does not fail a run,
// and is shown in every report); 1 a pair failed, crashed or timed out; 2 bad usage or input (an
// unwritable DIR, a results.jsonl without --resume); 3 a named backend is unavailable; 130/143/141
// stopped by SIGINT/SIGTERM/a closed stdout after the case in flight (the reports then cover what
// finished; rerun with --resume).
#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/suite.h"
#include "oracle/oracle.h"
#include "plugins/plugins.h"
#include "reports/render.h"
#include "reports/results.h"
#include "reports/summary.h"
#include "tools/commands.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace convcheck::cli {

// --- interruption --------------------------------------------------------------------------

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_signal(int sig) {
  g_signal = sig;
}

// A closed stdout (`convcheck run ... | head`) is an interrupt too (issue 19): the first write
// after the reader left stops the command after the case in flight, like SIGINT, instead of
// killing it with its reports unwritten. Later writes to stdout then fail quietly (EPIPE), so
// SIGPIPE stays caught rather than reset.
extern "C" void on_sigpipe(int sig) {
  if (g_signal == 0) g_signal = sig;
}

struct sigaction g_old_int, g_old_term, g_old_pipe;

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a second signal is not caught: it ends the process at once
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  struct sigaction pipe {};
  pipe.sa_handler = on_sigpipe;
  sigemptyset(&pipe.sa_mask);
  sigaction(SIGPIPE, &pipe, &g_old_pipe);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGPIPE, &g_old_pipe, nullptr);
}

int InterruptGuard::signal() {
  return g_signal;
}

// --- progress ------------------------------------------------------------------------------

namespace {

std::string duration(double s) {
  if (!(s >= 0) || s > 1e7) return "?";
  const long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  } else if (t >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", t);
  }
  return buf;
}

}  // namespace

Progress::Progress(std::string what, std::string failing, int64_t total, int64_t already,
                   double seconds)
    : what_(std::move(what)),
      failing_(std::move(failing)),
      total_(total),
      start_done_(already),
      seconds_(seconds) {
  tty_ = ::isatty(STDERR_FILENO) == 1;
  start_ = last_ = Clock::now();
  last_tenth_ = tenth(already, 0);  // a resumed run's first line comes at its next tenth
}

int64_t Progress::tenth(int64_t done, double elapsed) const {
  if (seconds_ > 0) return static_cast<int64_t>(10 * elapsed / seconds_);
  return total_ > 0 ? 10 * done / total_ : 10;
}

void Progress::update(int64_t done, int64_t failures) {
  const Clock::time_point now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const bool end = seconds_ <= 0 && done >= total_;
  const bool line_due = end || since >= 30 || tenth(done, elapsed) != last_tenth_;
  if (tty_ ? (since < 0.2 && !end) : !line_due) return;
  last_ = now;
  last_tenth_ = tenth(done, elapsed);
  // The rate of this segment only: cases recorded before a --resume took no time here.
  const int64_t ran = done - start_done_;
  const double rate = elapsed > 0 ? static_cast<double>(ran) / elapsed : 0;
  double eta = -1;
  if (seconds_ > 0) {
    eta = std::max(0.0, seconds_ - elapsed);
  } else if (ran > 0) {
    eta = static_cast<double>(total_ - done) / rate;
  }
  char buf[240];
  if (seconds_ > 0) {
    std::snprintf(buf, sizeof buf, "%s: %lld cases (%d%% of %s), %.1f cases/s, %lld %s%s, ETA %s",
                  what_.c_str(), static_cast<long long>(done),
                  static_cast<int>(std::min(100.0, 100 * elapsed / seconds_)),
                  duration(seconds_).c_str(), rate, static_cast<long long>(failures),
                  failing_.c_str(), failures == 1 ? "" : "s", duration(eta).c_str());
  } else {
    std::snprintf(buf, sizeof buf, "%s: %lld/%lld cases (%d%%), %.1f cases/s, %lld %s%s, ETA %s",
                  what_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
                  total_ ? static_cast<int>(100 * done / total_) : 100, rate,
                  static_cast<long long>(failures), failing_.c_str(), failures == 1 ? "" : "s",
                  end ? "0s" : duration(eta).c_str());
  }
  if (tty_) {
    std::fprintf(stderr, "\r%s\033[K", buf);
    open_ = true;
  } else {
    std::fprintf(stderr, "%s\n", buf);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (tty_ && open_) std::fprintf(stderr, "\n");
  open_ = false;
}

// --- fuzz scale-out and resume ---------------------------------------------------------------

void shard_of(const std::string& text, int64_t* k, int64_t* n) {
  const reports::Shard s = reports::parse_shard(text);
  *k = s.k;
  *n = s.n;
}

namespace {

json::Value fuzz_state_json(const FuzzState& s) {
  using namespace json;
  Value o = Value::object();
  o["format"] = "convcheck-fuzz/1";
  o["seed"] = std::to_string(s.seed);
  o["shard"] = s.shard;
  o["limit"] = s.limit;
  Value b = Value::array();
  for (const std::string& x : s.backends) b.push_back(x);
  o["backends"] = b;
  o["next_case"] = s.next_case;
  o["cases_run"] = s.cases_run;
  Value f = Value::array();
  for (const std::string& x : s.failed) f.push_back(x);
  o["failed_backends"] = f;
  o["interrupted"] = s.interrupted;
  return o;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

void write_fuzz_state(const std::string& dir, const FuzzState& state) {
  reports::write_file_atomic(dir + "/fuzz.json", json::dump(fuzz_state_json(state), 1) + "\n");
}

void resume_fuzz_state(const std::string& dir, FuzzState* state) {
  const std::string path = dir + "/fuzz.json";
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InvalidArgument("--resume: " + path + " is missing (no campaign to continue)");
  std::ostringstream text;
  text << f.rdbuf();
  FuzzState old;
  try {
    const json::Value o = json::parse(text.str());
    if (json::string_of(o, "format") != "convcheck-fuzz/1") throw std::runtime_error("format");
    old.seed = std::stoull(json::string_of(o, "seed"));
    old.shard = json::string_of(o, "shard");
    old.limit = json::string_of(o, "limit");
    for (const json::Value& x : json::array_of(o, "backends"))
      old.backends.push_back(x.is_string() ? x.get<std::string>() : json::dump(x));
    old.next_case = json::integer_of(o, "next_case");
    old.cases_run = json::integer_of(o, "cases_run");
    for (const json::Value& x : json::array_of(o, "failed_backends"))
      old.failed.push_back(x.is_string() ? x.get<std::string>() : json::dump(x));
  } catch (const std::exception& e) {
    throw InvalidArgument("--resume: " + path + " is not a convcheck fuzz state: " + e.what());
  }
  auto differs = [&](const char* what, const std::string& was, const std::string& now) {
    if (was != now)
      throw InvalidArgument("--resume: " + path + " records a campaign with " + what + " " + was +
                            ", this command asks for " + now);
  };
  differs("seed", std::to_string(old.seed), std::to_string(state->seed));
  differs("shard", old.shard, state->shard);
  differs("limit", old.limit, state->limit);
  differs("backends", joined(old.backends), joined(state->backends));
  state->next_case = old.next_case;
  state->cases_run = old.cases_run;
  state->failed = old.failed;
}

// --- run -------------------------------------------------------------------------------------

namespace {

// Without --out (issue 19), a run writes under the user's cache directory, never into the
// current one, which is often a checkout (an untracked folder there is noise in every `git
// status`): ${XDG_CACHE_HOME:-$HOME/.cache}/convcheck/runs/<suite>[-shard-K-of-N].
const char* const kDefaultOutText = "${XDG_CACHE_HOME:-~/.cache}/convcheck/runs/<suite>";

std::string default_out(const std::string& suite, const reports::Shard& shard) {
  std::string root;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/') {
    root = std::string(xdg) + "/convcheck/runs";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    root = std::string(home) + "/.cache/convcheck/runs";
  } else {
    root = "/tmp/convcheck-" + std::to_string(::getuid()) + "/runs";
  }
  return root + "/" + suite +
         (shard.whole() ? ""
                        : "-shard-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.n));
}

struct Label {
  std::string name, impl;
};

std::vector<Label> parse_labels(const std::string& text) {
  std::vector<Label> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) throw InvalidArgument("--backends: empty backend name in '" + text + "'");
    const std::size_t eq = item.find('=');
    Label l;
    if (eq == std::string::npos) {
      l.name = l.impl = item;
    } else {
      l.name = item.substr(0, eq);
      l.impl = item.substr(eq + 1);
      if (l.name.empty() || l.impl.empty())
        throw InvalidArgument("--backends: '" + item + "': expected NAME=IMPL");
    }
    for (const Label& x : out)
      if (x.name == l.name)
        throw InvalidArgument("--backends: backend name '" + l.name + "' given twice");
    out.push_back(l);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Fails early, with the system's reason, when DIR cannot be created or written.
void check_writable(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InvalidArgument("--out " + dir + ": cannot create the directory: " + ec.message());
  if (!std::filesystem::is_directory(dir))
    throw InvalidArgument("--out " + dir + ": not a directory");
  std::string probe = dir + "/" + reports::kWriteTestPrefix + "XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw InvalidArgument("--out " + dir + ": cannot write there: " + std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

// Appends to results.jsonl: one write() per case, so a kill leaves whole lines (or, mid-write, one
// last line cut short that readers ignore and --resume removes).
class Appender {
 public:
  Appender(const std::string& path, std::size_t keep_bytes, bool truncate_tail) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (fd_ < 0) throw InvalidArgument("cannot open " + path + ": " + std::strerror(errno));
    if (truncate_tail && ::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0)
      throw InvalidArgument("cannot truncate " + path + ": " + std::strerror(errno));
    // A last record without its newline (written by hand, or cut exactly there): add it.
    const off_t size = ::lseek(fd_, 0, SEEK_END);
    if (size > 0) {
      char last = '\n';
      const int rfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (rfd >= 0) {
        if (::pread(rfd, &last, 1, size - 1) != 1) last = '\n';
        ::close(rfd);
      }
      if (last != '\n') append("\n");
    }
  }
  ~Appender() {
    if (fd_ >= 0) ::close(fd_);
  }
  void append(const std::string& text) {
    const char* p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw InvalidArgument("cannot append to " + path_ + ": " + std::strerror(errno) +
                              " (the records before this case are intact; free space and rerun "
                              "with --resume)");
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  void sync() {
    if (::fdatasync(fd_) != 0)
      throw InvalidArgument("cannot sync " + path_ + ": " + std::strerror(errno));
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::string command_line(const Args& args) {
  std::string s = "convcheck run";
  for (const std::string& a : args) {
    const bool plain = a.find_first_of(" '\"$`\\*?;&|<>()") == std::string::npos && !a.empty();
    s += " " + (plain ? a : "'" + a + "'");
  }
  return s;
}

// --- run: reading (arguments -> suite cases, backends, report directory, resume state) --------

/// What a run runs, and where it writes.
struct RunPlan {
  Suite suite;
  std::vector<reports::RunCase> all_cases;
  reports::Shard shard;
  std::vector<const reports::RunCase*> planned;  // the cases of this shard, in suite order
  std::vector<Label> labels;                     // backend names and implementations
  std::vector<std::string> names;                // the labels' names
  Chosen chosen;                                 // the implementations, in the labels' order
  std::string dir, results_path;
  bool resume = false;
  reports::RunInfo info;  // run.json
};

/// What is already recorded (empty unless --resume), and what remains.
struct RunState {
  reports::ReadResult existing;  // results.jsonl as read (its valid bytes, a cut last line)
  std::vector<reports::Record> records;
  std::unordered_set<std::string> done;       // Record::key() of the recorded pairs
  std::vector<const reports::RunCase*> todo;  // cases with a backend still to run
  int64_t already = 0;                        // cases with every backend recorded
  int64_t failing = 0;                        // failing pairs so far
};

std::string case_key(const reports::RunCase& c) {
  return to_string(c.c.problem) + "|" + std::to_string(c.c.seed) + "|" + fill_name(c.c.fill);
}

// Says on stderr what a slow start is doing (issue 19: a 10^6-line suite took 11-28 s to load in
// silence): after 1 s, and then every 5 s, the phase and the time so far. Quiet when the start
// is quick, so small runs print nothing more.
class Heartbeat {
 public:
  Heartbeat() : thread_([this] { loop(); }) {}
  ~Heartbeat() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;
  void phase(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    phase_ = std::move(what);
  }

 private:
  void loop() {
    using namespace std::chrono_literals;
    std::unique_lock<std::mutex> lock(mu_);
    const auto start = std::chrono::steady_clock::now();
    auto next = start + 1s;
    while (!cv_.wait_until(lock, next, [this] { return done_; })) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "run: %s (%.0f s so far)\n", phase_.c_str(), s);
      std::fflush(stderr);
      next += 5s;
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string phase_ = "starting";
  std::thread thread_;  // last: starts once the rest is constructed
};

// The suite's cases; every one must fit the memory limit (--max-bytes) before the first one runs,
// so a run never stops part-way for a problem it could have refused at the start (issue 8).
void read_cases(const po::variables_map& vm, RunPlan& plan, Heartbeat& heartbeat) {
  heartbeat.phase("reading suite " + vm["suite"].as<std::string>());
  plan.suite = read_suite(vm["suite"].as<std::string>());
  heartbeat.phase("listing the cases of " + std::to_string(plan.suite.entries.size()) +
                  " problems");
  plan.all_cases = reports::suite_cases(plan.suite);
  heartbeat.phase("checking " + std::to_string(plan.all_cases.size()) +
                  " cases against the memory limit");
  for (const reports::RunCase& c : plan.all_cases)
    require_memory(c.c.problem, geometry(c.c.problem), MemoryUse::oracle);
  if (vm.count("shard")) plan.shard = reports::parse_shard(vm["shard"].as<std::string>());
  for (const reports::RunCase& c : plan.all_cases)
    if (plan.shard.takes(c.index)) plan.planned.push_back(&c);
}

// Backends, by name (labels) and implementation. False: a named backend is unavailable.
bool read_backends(const po::variables_map& vm, RunPlan& plan) {
  po::variables_map bvm;
  if (vm.count("backends")) {
    plan.labels = parse_labels(vm["backends"].as<std::string>());
    std::string impls;
    for (const Label& l : plan.labels) impls += (impls.empty() ? "" : ",") + l.impl;
    bvm.insert({"backends", po::variable_value(impls, false)});
  }
  std::optional<Chosen> chosen = choose_backends(bvm);
  if (!chosen) return false;
  plan.chosen = std::move(*chosen);
  if (plan.labels.empty())
    for (Backend* b : plan.chosen.list) plan.labels.push_back({b->name(), b->name()});
  // Records name a backend as the backend names itself (a plugin by its absolute path, issue
  // 19), unless NAME=IMPL gave it another name.
  for (std::size_t i = 0; i < plan.labels.size(); ++i) {
    Label& l = plan.labels[i];
    if (l.name == l.impl) l.name = plan.chosen.list[i]->name();
    l.impl = plan.chosen.list[i]->name();
  }
  for (const Label& l : plan.labels) plan.names.push_back(l.name);
  if (plan.chosen.list.empty())
    throw InvalidArgument("no backend is available to run (convcheck list says why)");
  return true;
}

void describe_run(const Args& args, RunPlan& plan) {
  reports::RunInfo& info = plan.info;
  info.suite = plan.suite.name;
  info.suite_path = plan.suite.path;
  info.suite_cases = static_cast<int64_t>(plan.all_cases.size());
  for (const Label& l : plan.labels) info.backends.push_back({l.name, l.impl});
  for (const std::string& s : plan.chosen.skipped) {
    const std::size_t paren = s.find(" (");
    info.skipped.emplace_back(s.substr(0, paren), paren == std::string::npos
                                                      ? ""
                                                      : s.substr(paren + 2, s.size() - paren - 3));
  }
  info.shard = plan.shard;
  info.command = command_line(args);
  info.started = reports::utc_now();
}

std::string backends_of(const reports::RunInfo& r) {
  std::string s;
  for (const reports::BackendLabel& b : r.backends)
    s += (s.empty() ? "" : ",") + b.name +
         (b.name == b.implementation ? "" : "=" + b.implementation);
  return s;
}

// --resume: DIR/run.json must name the same suite, backends and shard; the run keeps the
// environment it began in (the summary must not change because a run was resumed).
void resume_run_json(RunPlan& plan) {
  const std::string path = plan.dir + "/run.json";
  std::ifstream f(path, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  const reports::RunInfo old = reports::parse_run_json(text.str(), path);
  reports::RunInfo& info = plan.info;
  auto differs = [&](const char* what, const std::string& was, const std::string& now) {
    if (was != now)
      throw InvalidArgument("--resume: " + plan.dir + " holds a run with " + what + " " + was +
                            "; this command asks for " + now +
                            " (rerun it as it was, or choose another --out directory)");
  };
  differs("suite", old.suite, info.suite);
  differs("backends", backends_of(old), backends_of(info));
  differs("shard", reports::to_string(old.shard), reports::to_string(info.shard));
  if (old.suite_cases != info.suite_cases)
    differs("suite size", std::to_string(old.suite_cases), std::to_string(info.suite_cases));
  // The environment is kept, so the sandbox it names must be the one the rest runs in.
  if (old.environment.is_object() && old.environment.contains("plugin_sandbox") &&
      old.environment["plugin_sandbox"].contains("mode"))
    differs("plugin sandbox", old.environment["plugin_sandbox"]["mode"].get<std::string>(),
            plugin_sandbox::mode_name(plugin_sandbox_mode()));
  info.environment = old.environment;
  info.skipped = old.skipped;
  info.started = old.started;
  info.elapsed_s = old.elapsed_s;  // the segments before this one (run.json: total elapsed)
}

// The environment of a new run, with the ISA each backend's kernels chose at run time (a figure
// is only comparable with one taken on the same ISA).
void record_environment(RunPlan& plan) {
  reports::RunInfo& info = plan.info;
  info.environment = reports::environment();
  info.environment["threads"] = omp_get_max_threads();
  json::Value isas = json::Value::object();
  for (std::size_t i = 0; i < plan.chosen.list.size(); ++i)
    if (!plan.chosen.list[i]->isa().empty()) isas[plan.labels[i].name] = plan.chosen.list[i]->isa();
  info.environment["kernel_isa"] = isas;
  // A run with a plugin says how its hosts were confined (plugins/sandbox.h), never silently less.
  bool plugins = false;
  for (const Label& l : plan.labels) plugins = plugins || l.impl.rfind("plugin:", 0) == 0;
  if (plugins) {
    namespace sb = plugin_sandbox;
    const sb::Mode m = plugin_sandbox_mode();
    const uint32_t active = sb::planned(m);
    json::Value s;
    s["mode"] = sb::mode_name(m);
    s["active"] = json::Value::array();
    s["not_active"] = json::Value::array();
    for (const sb::ProtectionInfo& p : sb::protections())
      s[(active & p.bit) ? "active" : "not_active"].push_back(p.name);
    for (const auto& [what, why] : sb::missing_here()) s[what + "_unavailable"] = why;
    info.environment["plugin_sandbox"] = s;
  }
}

// What DIR already holds: nothing (a new run), or, with --resume, the run to continue.
reports::ReadResult read_existing(RunPlan& plan) {
  std::error_code ec;
  const bool has_results = std::filesystem::exists(plan.results_path, ec) &&
                           std::filesystem::file_size(plan.results_path, ec) > 0;
  if (has_results && !plan.resume) {
    throw InvalidArgument(plan.results_path +
                          " already holds results: pass --resume to continue that run, or "
                          "choose another --out directory");
  }
  reports::ReadResult existing;
  if (plan.resume && std::filesystem::exists(plan.dir + "/run.json")) {
    resume_run_json(plan);
  } else if (has_results) {
    throw InvalidArgument("--resume: " + plan.dir + " has results.jsonl but no run.json");
  }
  if (plan.resume) {
    existing = reports::read_results(plan.results_path);
    if (existing.truncated_tail)
      std::cerr << "run: " << plan.results_path
                << ": the last line was cut short (a killed run); it is dropped and rerun\n";
  }
  if (plan.info.environment.is_null()) record_environment(plan);
  return existing;
}

// The recorded pairs, checked against the suite, and the cases still to run. A case with some
// of its backends missing is rerun on all of them.
RunState read_state(const RunPlan& plan, reports::ReadResult existing) {
  RunState st;
  std::unordered_set<std::string> planned_keys;
  for (const reports::RunCase* c : plan.planned) planned_keys.insert(case_key(*c));
  st.records = reports::deduplicate(std::move(existing.records), plan.results_path);
  st.existing = std::move(existing);
  for (const reports::Record& r : st.records) {
    if (!planned_keys.count(r.case_key()))
      throw InvalidArgument("--resume: " + plan.results_path + " holds case " + r.case_key() +
                            ", which is not in suite " + plan.suite.path + " (shard " +
                            reports::to_string(plan.shard) +
                            "): the suite changed since; choose another --out directory");
    st.done.insert(r.key());
  }
  return st;
}

void plan_todo(const RunPlan& plan, RunState& st) {
  for (const reports::RunCase* c : plan.planned) {
    bool all_done = true;
    const std::string ck = case_key(*c);
    for (const std::string& n : plan.names) all_done = all_done && st.done.count(ck + "|" + n);
    if (all_done) {
      ++st.already;
    } else {
      st.todo.push_back(c);
    }
  }
  for (const reports::Record& r : st.records) st.failing += is_failure(r.result.verdict);
}

void announce(const RunPlan& plan, const RunState& st) {
  std::string backend_list;
  for (const Label& l : plan.labels)
    backend_list +=
        (backend_list.empty() ? "" : ",") + l.name + (l.name == l.impl ? "" : "=" + l.impl);
  std::cout << "run: suite " << plan.suite.name << " (" << plan.suite.path << "), "
            << plan.planned.size() << " cases"
            << (plan.shard.whole() ? ""
                                   : " of " + std::to_string(plan.all_cases.size()) + " (shard " +
                                         reports::to_string(plan.shard) + ")")
            << ", backends " << backend_list << "\n";
  for (const auto& [name, reason] : plan.info.skipped)
    std::cout << "run: skipped " << name << " (" << reason << ")\n";
  // Said before the first case, as in run.json and the report: never a silently weaker sandbox.
  if (plan.info.environment.is_object() && plan.info.environment.contains("plugin_sandbox")) {
    const plugin_sandbox::Mode m = plugin_sandbox_mode();
    std::cout << "run: plugin sandbox " << plugin_sandbox::describe(m, plugin_sandbox::planned(m))
              << "\n";
  }
  if (plan.resume) std::cout << "run: resuming: " << st.already << " cases already recorded\n";
  std::cout << "run: writing " << plan.dir << "/" << std::endl;
}

// --- run: running ------------------------------------------------------------------------------

// Runs the cases still to do, appending each one's new records as it ends, until all are done or
// a signal came. Returns the number of cases finished (those already recorded included).
int64_t run_cases(const RunPlan& plan, RunState& st, Appender& out) {
  Progress progress("run", "failing pair", static_cast<int64_t>(plan.planned.size()), st.already);
  int64_t finished = st.already;
  for (const reports::RunCase* c : st.todo) {
    if (InterruptGuard::signal()) break;
    const CaseReport report = run_case(c->c, plan.chosen.list);
    std::vector<reports::Record> rs = reports::records_of(report, *c, plan.names);
    std::string lines;
    for (reports::Record& r : rs) {
      if (st.done.count(r.key())) continue;
      lines += reports::to_jsonl(r) + "\n";
      st.failing += is_failure(r.result.verdict);
      st.records.push_back(std::move(r));
    }
    out.append(lines);
    ++finished;
    progress.update(finished, st.failing);
  }
  progress.finish();
  out.sync();
  return finished;
}

// --- run: writing (reports and the closing lines) ----------------------------------------------

// Writes summary.json, junit.xml and report.html over every record, and says what happened.
// Returns the exit code.
// At most this many failing pairs are printed after the counts; the rest are in the reports.
constexpr int kShownFailures = 5;

// The first failing pairs, each with what failed and its repro line (issue 19: a failing run
// shows its failures without the report being opened).
void print_failures(std::ostream& out, const RunPlan& plan, const RunState& st) {
  if (st.failing == 0) return;
  out << "run: " << st.failing << " failing pair" << (st.failing == 1 ? "" : "s")
      << (st.failing > kShownFailures ? "; the first " + std::to_string(kShownFailures) : "")
      << ":\n";
  int shown = 0;
  for (const reports::Record& r : st.records) {
    if (!is_failure(r.result.verdict)) continue;
    if (shown++ == kShownFailures) break;
    out << "  " << verdict_name(r.result.verdict) << " " << r.backend
        << (r.result.check.empty() ? "" : " [" + r.result.check + "]") << " " << r.descriptor
        << "  seed " << r.seed << "  fill " << fill_name(r.fill) << "\n";
    if (!r.result.reason.empty()) out << "    " << r.result.reason << "\n";
    out << "    repro: " << r.result.repro << "\n";
  }
  out << "run: "
      << (st.failing > kShownFailures ? "all " + std::to_string(st.failing) : "their details")
      << " in " << plan.dir
      << "/report.html (Failures: click a row for every check and a heat map) and " << plan.dir
      << "/results.jsonl\n";
}

// Writes summary.json, junit.xml and report.html over every record, and says what happened.
// Returns the exit code.
int finish_run(RunPlan& plan, const RunState& st, int64_t finished, int sig, double elapsed_s) {
  reports::RunInfo& info = plan.info;
  info.interrupted = sig != 0;
  info.finished = reports::utc_now();
  info.elapsed_s += elapsed_s;  // over every segment of a resumed run
  reports::write_reports(plan.dir, info, st.records);

  // Stdout closed under us (SIGPIPE): the closing lines go where someone may still read them.
  std::ostream& out = sig == SIGPIPE ? std::cerr : std::cout;
  std::map<std::string, int64_t> counts;
  for (const reports::Record& r : st.records) ++counts[verdict_name(r.result.verdict)];
  out << "run: " << finished << " of " << plan.planned.size() << " cases, " << st.records.size()
      << " (case, backend) pairs:";
  for (Verdict v : kAllVerdicts)
    out << " " << counts[verdict_name(v)] << " " << verdict_name(v) << ",";
  out << " in " << duration(elapsed_s)
      << (info.elapsed_s > elapsed_s + 0.5 ? " (" + duration(info.elapsed_s) + " in all segments)"
                                           : "")
      << "\n";
  print_failures(out, plan, st);
  out << "run: reports in " << plan.dir << "/: results.jsonl summary.json junit.xml report.html\n";
  if (sig) {
    out << "run: interrupted by signal " << sig << (sig == SIGPIPE ? " (stdout closed)" : "")
        << " after " << finished - st.already << " cases; rerun with --resume to continue"
        << std::endl;
    return 128 + sig;
  }
  out << std::flush;
  return st.failing > 0 ? kCheckFailed : kOk;
}

}  // namespace

int cmd_run(const Args& args) {
  po::options_description desc("run");
  // clang-format off
  desc.add_options()
      ("suite", po::value<std::string>()->value_name("NAME|FILE"),
       "a suite in suites/ (smoke, conformance, regressions, tf_tests, ...) or a file: one "
       "descriptor a line, optional --tag T and --fill F after it; a line without --fill runs "
       "twice, with the exact and the real fill (required)")
      ("backends", po::value<std::string>()->value_name("LIST"),
       "comma-separated backends (default: every available one; unavailable ones are skipped, "
       "with the reason in summary.json). NAME=IMPL runs IMPL under the name NAME (e.g. "
       "optimized=mutant:same_pad_before), so that `report diff` compares it with NAME of "
       "another run")
      ("out", po::value<std::string>()->value_name("DIR"),
       (std::string("where the reports go (default: ") + kDefaultOutText +
        "[-shard-K-of-N], outside any checkout)").c_str())
      ("resume", "continue a run in DIR: skip the pairs in results.jsonl, append the rest "
       "(default: off)")
      ("shard", po::value<std::string>()->value_name("K/N"),
       "run only case i (suite order, from 0) with i mod N == K-1; N shards together run the "
       "whole suite; `convcheck report merge` joins them (default: 1/1)");
  // clang-format on
  const po::variables_map vm = parse_options("run", args, desc);
  if (!vm.count("suite"))
    throw InvalidArgument("missing --suite NAME|FILE (see convcheck run --help)");

  // Reading.
  RunPlan plan;
  std::optional<Heartbeat> heartbeat(std::in_place);
  read_cases(vm, plan, *heartbeat);
  if (!read_backends(vm, plan)) return kUnavailable;
  const reports::Shard& shard = plan.shard;
  plan.dir = vm.count("out") ? vm["out"].as<std::string>() : default_out(plan.suite.name, shard);
  check_writable(plan.dir);
  plan.results_path = plan.dir + "/results.jsonl";
  plan.resume = vm.count("resume") > 0;
  // One run per directory, for the whole run (exit 2 naming the holder); then what a killed report
  // write left behind can be removed: no one else is writing here.
  const reports::OutputLock lock(plan.dir, plan.resume ? "run --resume" : "run");
  if (const int n = reports::remove_stale_temporaries(plan.dir))
    std::cerr << "run: removed " << n << " temporary file" << (n == 1 ? "" : "s")
              << " of an interrupted report write in " << plan.dir << "\n";
  describe_run(args, plan);
  heartbeat->phase("reading " + plan.results_path + " to resume");
  RunState st = read_state(plan, read_existing(plan));
  Appender out(plan.results_path, st.existing.valid_bytes, st.existing.truncated_tail);
  reports::write_file_atomic(plan.dir + "/run.json",
                             json::dump(reports::run_json(plan.info, 0), 1) + "\n");
  plan_todo(plan, st);
  heartbeat.reset();
  InterruptGuard interrupt;  // from the first line on stdout: a closed pipe is an interrupt
  announce(plan, st);

  // Running, then writing.
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t finished = run_cases(plan, st, out);
  // A signal that came after the last case interrupted nothing.
  const int sig =
      finished < static_cast<int64_t>(plan.planned.size()) ? InterruptGuard::signal() : 0;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return finish_run(plan, st, finished, sig, elapsed);
}

}  // namespace convcheck::cli
