// The sandboxed plugin runner: the "plugin:" backend family (plugins/plugins.h has the design).
#include <fcntl.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/limits.h"
#include "plugins/abi.h"
#include "plugins/plugins.h"
#include "plugins/protocol.h"
#include "plugins/sandbox.h"

extern char** environ;

namespace convcheck {

namespace pp = plugin_protocol;

namespace {

double initial_timeout() {
  if (const char* e = std::getenv("CONVCHECK_PLUGIN_TIMEOUT")) {
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (end != e && *end == 0 && v > 0) return v;
  }
  return 60;
}

std::atomic<double> g_timeout{initial_timeout()};

namespace sb = plugin_sandbox;

// --plugin-sandbox, else $CONVCHECK_PLUGIN_SANDBOX, else the strongest mode this machine offers
// (the CLI refuses an unknown or unavailable mode in either, naming it).
sb::Mode initial_mode() {
  if (const char* e = std::getenv("CONVCHECK_PLUGIN_SANDBOX"); e && *e)
    if (const auto m = sb::parse_mode(e); m && sb::unavailable_reason(*m).empty()) return *m;
  return sb::default_mode();
}
std::atomic<sb::Mode> g_mode{initial_mode()};

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

const char* signal_abbrev(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGSYS:
      return "SIGSYS";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGSTOP:
      return "SIGSTOP";
  }
  return nullptr;
}

std::string signal_text(int sig) {
  const char* a = signal_abbrev(sig);
  return (a ? std::string(a) : "signal " + std::to_string(sig)) + " (" + strsignal(sig) + ")";
}

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// Where each buffer of one run lies in the shared memory. Each slot takes whole pages, from
// `pages` (page aligned), between guard pages; its data starts at `offset`: the slot's first byte
// (start-flush), or as late as the ABI's 64-byte alignment allows (end-flush: flush against the
// next guard page when the size is a multiple of 64 bytes). The other bytes of its pages hold
// canaries.
struct Layout {
  uint64_t page = 4096;
  uint64_t total = 0;
  int64_t offset[pp::kSlots] = {-1, -1, -1, -1};
  uint64_t pages[pp::kSlots] = {};
  uint64_t bytes[pp::kSlots] = {};
  std::string name[pp::kSlots];
  uint64_t span(int s) const { return (bytes[s] + page - 1) / page * page; }
};
constexpr uint64_t kAbiAlignment = 64;  // plugins/convcheck_plugin.h: run()'s pointers

unsigned char canary(uint64_t offset) {
  return static_cast<unsigned char>((offset * 131u + 0x5Au) & 0xFFu);
}

// The child process and the shared memory of one plugin.
class Sandbox {
 public:
  Sandbox(std::string label, std::string path) : label_(std::move(label)), path_(std::move(path)) {}
  ~Sandbox() {
    stop();
    if (map_) munmap(map_, map_bytes_);
    if (memfd_ >= 0) close(memfd_);
  }

  // The plugin's output since the last call of this function: its last kOutputCap bytes, printable
  // ASCII and newlines, after a line saying how much there was when some was cut. Empty: none.
  std::string take_output() {
    if (out_total_ == 0) return "";
    std::string text;
    if (out_total_ > out_tail_.size())
      text = "[" + std::to_string(out_total_) + " bytes of output; the last " +
             std::to_string(out_tail_.size()) + " kept]\n";
    for (char c : out_tail_) text += (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7f)) ? c : '?';
    out_tail_.clear();
    out_total_ = 0;
    return text;
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  // Starts the host if none runs; returns its hello. Throws Crash or Timeout when it dies or hangs
  // while loading the plugin, std::runtime_error when it cannot be started at all.
  const pp::Hello& ensure() {
    if (pid_ > 0) return hello_;
    start();
    return hello_;
  }

  // Ends the host process if one runs; the next call starts a fresh one.
  void restart() { stop(); }

  pp::Reply call(pp::Request& req, const char* what, const Layout* layout) {
    ensure();
    if (!hello_.loaded) throw Crash("the plugin is not loaded: " + text(hello_.error));
    req.threads = omp_get_max_threads();
    if (send(sock_, &req, sizeof req, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req)) {
      died(what, layout);  // the host is gone (EPIPE): report how it died
    }
    pp::Reply reply;
    receive(&reply, sizeof reply, pp::Type::reply, what, layout);
    return reply;
  }

  // Makes the shared memory at least `bytes` long and mapped here; returns its base.
  unsigned char* shared(uint64_t bytes) {
    if (memfd_ < 0) open_memfd();
    if (bytes > map_bytes_) {
      if (ftruncate(memfd_, static_cast<off_t>(bytes)) != 0)
        throw std::runtime_error(errno_text("plugin runner: cannot grow the shared memory"));
      if (map_) munmap(map_, map_bytes_);
      map_ = nullptr;
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
      if (m == MAP_FAILED)
        throw std::runtime_error(errno_text("plugin runner: cannot map the shared memory"));
      map_ = static_cast<unsigned char*>(m);
      map_bytes_ = bytes;
    }
    return map_;
  }
  uint64_t shared_bytes() const { return map_bytes_; }

  const std::string& label() const { return label_; }

 private:
  static std::string text(const char* t) { return plugin_abi::sanitize(t, pp::kText); }

  void open_memfd() {
    memfd_ = memfd_create("convcheck-plugin", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (memfd_ < 0) throw std::runtime_error(errno_text("plugin runner: memfd_create"));
    // The child may grow the file but never shrink it: pages the harness has mapped stay there.
    fcntl(memfd_, F_ADD_SEALS, F_SEAL_SHRINK);
  }

  void start() {
    if (memfd_ < 0) open_memfd();
    mode_ = g_mode.load();
    make_scratch();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      throw std::runtime_error(errno_text("plugin runner: socketpair"));
    // The host's stdout and stderr: a pipe read while waiting for each reply (never passed
    // through).
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(sv[0]);
      close(sv[1]);
      throw std::runtime_error(errno_text("plugin runner: pipe"));
    }
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    const int child_out = fcntl(out[1], F_DUPFD_CLOEXEC, 10);
    close(out[1]);
    // Duplicates above the fds the child gets, so the dup2 actions never clobber each other.
    const int child_sock = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    const int child_shm = fcntl(memfd_, F_DUPFD_CLOEXEC, 10);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, child_sock, pp::kSocketFd);
    posix_spawn_file_actions_adddup2(&fa, child_shm, pp::kShmFd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, child_out, 1);
    posix_spawn_file_actions_adddup2(&fa, child_out, 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    // Its own session and process group, without a terminal: a timeout kills all of it, and a
    // terminal's signals never reach it.
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
    const std::string host = plugin_host_path();
    const std::string parent = std::to_string(getpid());
    const std::string max_bytes = std::to_string(memory_limit());
    char* argv[] = {const_cast<char*>(host.c_str()),
                    const_cast<char*>(parent.c_str()),
                    const_cast<char*>(path_.c_str()),
                    const_cast<char*>(sb::mode_name(mode_)),
                    const_cast<char*>(scratch_.c_str()),
                    const_cast<char*>(max_bytes.c_str()),
                    nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, host.c_str(), &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(child_sock);
    close(child_shm);
    close(child_out);
    close(sv[1]);
    if (rc != 0) {
      close(sv[0]);
      close(out[0]);
      throw std::runtime_error("plugin runner: cannot start " + host + ": " + std::strerror(rc) +
                               " (set CONVCHECK_PLUGIN_HOST to the convcheck-plugin-host binary)");
    }
    pid_ = pid;
    pgid_ = pid;
    sock_ = sv[0];
    out_ = out[0];
    // Its exit is seen at once, even when a child of it keeps the socket open (sandbox off).
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    hello_ = pp::Hello();
    receive(&hello_, sizeof hello_, pp::Type::hello, "loading the plugin", nullptr);
    // Never a weaker host than planned: one that lacks a protection it should have applied is
    // refused (its own error, when it had one, says which step failed).
    const uint32_t want = sb::planned(mode_);
    if (!hello_.error[0] && (hello_.protections & want) != want) {
      hello_.loaded = 0;
      std::snprintf(hello_.error, sizeof hello_.error,
                    "the plugin host did not apply the %s sandbox: %s", sb::mode_name(mode_),
                    sb::describe(mode_, hello_.protections).c_str());
    }
    if (!hello_.loaded) stop();  // it exits by itself; reap it
  }

  // A private directory for the host's files (its cwd and TMPDIR), removed when the host ends:
  // convcheck-plugin-<harness pid>-XXXXXX. Those of a harness that was killed (SIGKILL: no
  // cleanup) are removed here when no process has that pid any more.
  void make_scratch() {
    if (!scratch_.empty()) return;
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    const std::string prefix = "convcheck-plugin-";
    for (const auto& e : std::filesystem::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
      std::error_code rm;
      if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH &&
          e.is_directory(rm) && !e.is_symlink(rm))
        std::filesystem::remove_all(e.path(), rm);
    }
    std::string tmpl = base + "/" + prefix + std::to_string(getpid()) + "-XXXXXX";
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error(errno_text(("plugin runner: cannot create " + tmpl).c_str()));
    scratch_ = tmpl;
  }
  void remove_scratch() {
    if (scratch_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(scratch_, ec);
    scratch_.clear();
  }

  // Reads what the host printed, up to `limit` bytes now: the total counted, the last kOutputCap
  // bytes kept.
  void drain_output(uint64_t limit = UINT64_MAX) {
    if (out_ < 0) return;
    char buf[16384];
    for (uint64_t read_now = 0; read_now < limit; read_now += sizeof buf) {
      const ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) return;  // EAGAIN (nothing now), EOF, or an error: nothing more now
      out_total_ += static_cast<uint64_t>(n);
      out_tail_.append(buf, static_cast<std::size_t>(n));
      if (out_tail_.size() > sb::kOutputCap) out_tail_.erase(0, out_tail_.size() - sb::kOutputCap);
    }
  }

  // Closes the host's descriptors here, once it is reaped, and removes its scratch directory.
  void forget_host() {
    // What is still in the pipe; bounded, since a child that escaped the group (sandbox off,
    // setsid) may still hold it and write.
    drain_output(sb::kOutputCap * 4);
    for (int* fd : {&sock_, &pidfd_, &out_}) {
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
    pid_ = -1;
    pgid_ = -1;
    remove_scratch();
  }

  // Closes the socket (the host exits on EOF) and reaps it, killing it if it lingers.
  void stop() {
    if (pid_ <= 0) {
      remove_scratch();
      return;
    }
    close(sock_);
    sock_ = -1;
    if (exited_within(1000)) {
      reap();
    } else {
      kill_child();
    }
  }

  // Whether the host has exited (a zombie, not yet reaped: its pid, and so its process group's
  // id, stays reserved), waiting up to `ms` milliseconds.
  bool exited_within(int ms) {
    for (int waited = 0;; waited += 5) {
      siginfo_t si{};
      if (waitid(P_PID, static_cast<id_t>(pid_), &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          si.si_pid == pid_)
        return true;
      if (waited >= ms) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // Kills what is left of an exited host's process group (children a plugin forked with the
  // sandbox off), then reaps the host. Returns its wait status.
  int reap() {
    kill(-pgid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    forget_host();
    return status;
  }

  // Kills the host's whole process group (its session: posix_spawn's setsid made the host its
  // leader, so the group's id is the host's pid and stays reserved while any member lives).
  int kill_child() {
    int status = 0;
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
    forget_host();
    return status;
  }

  // Waits for a message of type `want` (a Fault may come first: the host is dying).
  void receive(void* out, std::size_t size, pp::Type want, const char* what, const Layout* layout) {
    const double limit = g_timeout.load();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit);
    alignas(8) unsigned char buf[sizeof(pp::Request) + sizeof(pp::Hello)];
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) timed_out(what, limit);
      // The socket, the host's exit (its pidfd), its output. A host that is stopped (SIGSTOP)
      // answers nothing and is a timeout.
      pollfd pf[3] = {{sock_, POLLIN, 0}, {pidfd_, POLLIN, 0}, {out_, POLLIN, 0}};
      const int r = poll(pf, 3, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;  // re-check the deadline
      if (pf[2].revents) drain_output();
      const ssize_t got = recv(sock_, buf, sizeof buf, MSG_DONTWAIT);
      if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (pf[1].revents) died(what, layout);  // exited with nothing more queued
        if (pf[2].revents & (POLLHUP | POLLERR) && !(pf[0].revents || pf[1].revents)) {
          // Its output closed but it lives: stop polling the pipe (a host may close fds 1, 2).
          close(out_);
          out_ = -1;
        }
        continue;
      }
      if (got <= 0) died(what, layout);
      pp::Type type;
      std::memcpy(&type, buf, sizeof type);
      if (type == pp::Type::fault && got == static_cast<ssize_t>(sizeof(pp::Fault))) {
        pp::Fault f;
        std::memcpy(&f, buf, sizeof f);
        fault_ = f;
        continue;
      }
      if (type != want || got != static_cast<ssize_t>(size)) {
        kill_child();
        throw Crash("the plugin process broke the protocol while " + std::string(what) +
                    " (a message of " + std::to_string(got) + " bytes, type " +
                    std::to_string(static_cast<uint32_t>(type)) +
                    "): did the plugin write to its file descriptors 3 or 4?");
      }
      std::memcpy(out, buf, size);
      return;
    }
  }

  [[noreturn]] void timed_out(const char* what, double limit) {
    // A host stopped by a signal (its own SIGSTOP) is named: it did not hang, it stopped.
    siginfo_t si{};
    const bool stopped =
        pid_ > 0 &&
        waitid(P_PID, static_cast<id_t>(pid_), &si, WSTOPPED | WNOHANG | WNOWAIT) == 0 &&
        si.si_pid == pid_;
    kill_child();
    fault_.reset();
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", limit);
    throw Timeout(label_ + " did not finish " + what + " within the plugin timeout of " + secs +
                  " s (--plugin-timeout)" +
                  (stopped
                       ? std::string(": its process was stopped by ") + signal_text(si.si_status)
                       : std::string()) +
                  "; its process group was killed (SIGKILL) and is restarted for the next call");
  }

  // The host is gone: reap it and say how it died, as a guard violation when the fault address
  // lies in a guard page, a canary tail or an operand.
  [[noreturn]] void died(const char* what, const Layout* layout) {
    // Give a dying host a moment to be reaped; one that merely closed its socket is killed.
    const int status = exited_within(2000) ? reap() : kill_child();
    // A fault message may still be queued behind the EOF: it was read before, or is lost.
    const std::optional<pp::Fault> fault = fault_;
    fault_.reset();
    std::string how;
    if (WIFSIGNALED(status)) {
      how = "the plugin process died of " + signal_text(WTERMSIG(status));
    } else if (WIFEXITED(status)) {
      how = "the plugin process exited with status " + std::to_string(WEXITSTATUS(status));
    } else {
      how = "the plugin process ended";
    }
    if (fault && (fault->signo == SIGSEGV || fault->signo == SIGBUS))
      how += " at address " + hex(fault->address) +
             (fault->in_shm ? "" : " (outside the buffers convcheck passed)");
    how += " while " + std::string(what);
    // How a failed allocation ends (malloc's NULL dereferenced, or an abort): name the limit.
    const bool memory_like =
        WIFSIGNALED(status) &&
        (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS || WTERMSIG(status) == SIGABRT);
    if (memory_like && (hello_.protections & sb::kAddressSpaceLimit))
      how += " (its address space is limited to " +
             format_bytes(memory_limit() + sb::kAddressSpaceSlack) +
             ": RLIMIT_AS, --max-bytes + 1 GiB; an allocation past it fails)";
    if (fault && layout && fault->in_shm) classify(*fault, *layout, how);
    throw Crash(how + "; it is restarted for the next call");
  }

  // Throws GuardViolation when the fault is an out-of-bounds access or an operand write.
  static void classify(const pp::Fault& f, const Layout& L, const std::string& how) {
    const uint64_t o = f.offset;
    const char* verb = f.access == 1 ? "wrote" : f.access == 0 ? "read" : "accessed";
    auto bytes = [](uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); };
    for (int s = 0; s < pp::kSlots; ++s) {
      if (L.offset[s] < 0) continue;
      const uint64_t start = static_cast<uint64_t>(L.offset[s]), end = start + L.bytes[s];
      if (o >= start && o < end && s != pp::kResult && f.access != 0)
        throw GuardViolation("operand_modified", std::string(verb) + " the operand " + L.name[s] +
                                                     ", which it only reads (byte " +
                                                     std::to_string(o - start) +
                                                     "; mapped read-only): " + how);
      if (o >= end && o < L.pages[s] + L.span(s))
        throw GuardViolation("out_of_bounds", std::string(verb) + " " + bytes(o - end + 1) +
                                                  " past the end of " + L.name[s] + ": " + how);
      if (o >= L.pages[s] && o < start)
        throw GuardViolation("out_of_bounds", std::string(verb) + " " + bytes(start - o) +
                                                  " before the start of " + L.name[s] + ": " + how);
    }
    // A guard page: name the nearer buffer edge.
    std::optional<std::pair<uint64_t, int>> after, before;  // (distance, slot)
    for (int s = 0; s < pp::kSlots; ++s) {
      if (L.offset[s] < 0) continue;
      const uint64_t start = static_cast<uint64_t>(L.offset[s]), end = start + L.bytes[s];
      if (o >= end && (!after || o - end < after->first)) after = {o - end, s};
      if (o < start && (!before || start - o < before->first)) before = {start - o, s};
    }
    if (after && (!before || after->first < before->first))
      throw GuardViolation("out_of_bounds", std::string(verb) + " " + bytes(after->first + 1) +
                                                " past the end of " + L.name[after->second] +
                                                " (a guard page): " + how);
    if (before)
      throw GuardViolation("out_of_bounds", std::string(verb) + " " + bytes(before->first) +
                                                " before the start of " + L.name[before->second] +
                                                " (a guard page): " + how);
  }

  std::string label_, path_;
  sb::Mode mode_ = sb::Mode::strict;
  std::string scratch_;
  pid_t pid_ = -1;
  pid_t pgid_ = -1;
  int pidfd_ = -1;
  int out_ = -1;  // the host's stdout and stderr
  std::string out_tail_;
  uint64_t out_total_ = 0;  // bytes it printed since take_output()
  int sock_ = -1;
  int memfd_ = -1;
  unsigned char* map_ = nullptr;
  uint64_t map_bytes_ = 0;
  pp::Hello hello_;
  std::optional<pp::Fault> fault_;
};

int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class PluginBackend final : public Backend {
 public:
  // A relative PATH is taken from the current directory (issue 19), never from dlopen's library
  // search, and the backend is named by the absolute path, so that a repro line or a record
  // still names the plugin when read from another directory.
  explicit PluginBackend(const std::string& path)
      : name_("plugin:" + absolute(path)), path_(absolute(path)), sandbox_(name_, resolve(path_)) {}

  std::string name() const override { return name_; }
  // The child reads copies in shared memory, placed against guard pages here (compute()).
  bool reads_caller_memory() const override { return false; }

  Status available() const override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!availability_) availability_ = probe();
    return *availability_;
  }

  Status can_implement(const CheckedProblem& p) const override {
    if (Status s = available(); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    const std::string d = to_string(p.problem());
    if (auto it = can_.find(d); it != can_.end()) return it->second;
    pp::Request req = request(pp::Type::can_implement, p, d);
    const pp::Reply r = sandbox_.call(req, "answering can_implement", nullptr);
    const std::string reason = plugin_abi::sanitize(r.text, sizeof r.text);
    const Status s =
        r.rc == 0 ? Status::Ok()
                  : Status::Error(reason.empty() ? "declined (the plugin gave no reason)" : reason);
    can_.emplace(d, s);
    return s;
  }

  std::string take_output() override {
    std::lock_guard<std::mutex> lock(mu_);
    return sandbox_.take_output();
  }

  // The next call starts a new host process (the oracle's reruns cross processes).
  void start_afresh() override {
    std::lock_guard<std::mutex> lock(mu_);
    sandbox_.restart();
  }

  NumericContract contract(const CheckedProblem& p) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string d = to_string(p.problem());
    if (auto it = contracts_.find(d); it != contracts_.end()) return it->second;
    pp::Request req = request(pp::Type::contract, p, d);
    const pp::Reply r = sandbox_.call(req, "declaring its contract", nullptr);
    if (r.rc != 0)
      throw Crash("the plugin's contract() failed (returned " + std::to_string(r.rc) +
                  "): " + plugin_abi::sanitize(r.text, sizeof r.text));
    NumericContract k;
    try {
      k = plugin_abi::from_abi(r.contract);
    } catch (const InvalidArgument& e) {
      throw Crash(std::string("the plugin declared an invalid contract: ") + e.what());
    }
    if (k.name.empty()) k.name = "plugin";
    contracts_.emplace(d, k);
    return k;
  }

  // Runs the op twice: every buffer's start right after a guard page (a write past its end shows
  // in the canaries after it, a read before its start faults), then every buffer's end against
  // the next guard page (a read past its end faults). The result comes from the first run; the
  // second starts from the same poisoned result. The second is left out when every buffer's size,
  // rounded up to 64 bytes, is whole pages (the two layouts are then the same), and after the first
  // run of a problem: bench's repetitions and the oracle's reruns of a problem (determinism,
  // linearity) pay for it once.
  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    std::lock_guard<std::mutex> lock(mu_);
    const bool flush_end = end_flushed_.insert(to_string(checked.problem())).second;
    const std::size_t result_bytes =
        static_cast<std::size_t>(elements(result.shape)) * dtype_size(result.dtype);
    const auto* poisoned = static_cast<const unsigned char*>(result.data);
    const std::vector<unsigned char> poison(poisoned, poisoned + result_bytes);
    const Layout first = layout(checked, in, result, false);
    run_placed(checked, in, poison.data(), first, "running the op", result.data);
    const Layout second = layout(checked, in, result, true);
    if (flush_end && !std::equal(first.offset, first.offset + pp::kSlots, second.offset))
      run_placed(checked, in, poison.data(), second,
                 "running the op with every buffer's end against a guard page", nullptr);
  }

 private:
  // Layout: [guard] input [guard] filter [guard] out_backprop [guard] result [guard], each slot
  // page aligned, the roles the op does not read left out; the data at the start of its slot or
  // (flush_end) at its end.
  static Layout layout(const CheckedProblem& checked, const Operands& in, const TensorView& result,
                       bool flush_end) {
    Layout L;
    L.page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const Role roles[] = {Role::input, Role::filter, Role::out_backprop};
    uint64_t at = L.page;
    for (int s = 0; s < pp::kSlots; ++s) {
      if (s < pp::kResult) {
        const ConstTensorView* v = in.get(roles[s]);
        if (!v) continue;
        L.bytes[s] = static_cast<uint64_t>(elements(v->shape)) * dtype_size(v->dtype);
        L.name[s] = role_name(roles[s]);
      } else {
        L.bytes[s] = static_cast<uint64_t>(elements(result.shape)) * dtype_size(result.dtype);
        L.name[s] = result_name(checked.problem().op);
      }
      L.pages[s] = at;
      const uint64_t aligned = (L.bytes[s] + kAbiAlignment - 1) / kAbiAlignment * kAbiAlignment;
      L.offset[s] = static_cast<int64_t>(flush_end ? at + L.span(s) - aligned : at);
      at += L.span(s) + L.page;
    }
    L.total = at;
    return L;
  }

  // One run with the buffers placed by `L`: operands from `in`, the result from `result_in`;
  // copies the result to `result_out` unless null. Throws GuardViolation, Crash, Timeout.
  void run_placed(const CheckedProblem& checked, const Operands& in, const unsigned char* result_in,
                  const Layout& L, const char* what, void* result_out) {
    const Problem& p = checked.problem();
    pp::Request req = request(pp::Type::run, checked, to_string(p));
    const void* src[pp::kSlots] = {};
    const Role roles[] = {Role::input, Role::filter, Role::out_backprop};
    for (int s = 0; s < pp::kResult; ++s)
      if (const ConstTensorView* v = in.get(roles[s])) src[s] = v->data;
    src[pp::kResult] = result_in;
    unsigned char* base = sandbox_.shared(L.total);
    for (int s = 0; s < pp::kSlots; ++s) {
      if (L.offset[s] < 0) continue;
      unsigned char* dst = base + L.offset[s];
      if (L.bytes[s]) std::memcpy(dst, src[s], L.bytes[s]);  // the result: the caller's poison
      for (uint64_t o = L.pages[s]; o < L.pages[s] + L.span(s); ++o)
        if (o < static_cast<uint64_t>(L.offset[s]) || o >= L.offset[s] + L.bytes[s])
          base[o] = canary(o);
      req.offset[s] = L.offset[s];
      req.bytes[s] = L.bytes[s];
    }
    req.shm_bytes = sandbox_.shared_bytes();

    const pp::Reply r = sandbox_.call(req, what, &L);
    last_ms_ = r.ms;
    if (r.host_error) throw Crash("the plugin host failed: " + plugin_abi::sanitize(r.text, 1024));
    base = sandbox_.shared(L.total);
    for (int s = 0; s < pp::kSlots; ++s) {
      if (L.offset[s] < 0) continue;
      const uint64_t start = L.offset[s], end = start + L.bytes[s];
      for (uint64_t o = L.pages[s]; o < start; ++o) {
        if (base[o] != canary(o))
          throw GuardViolation("out_of_bounds",
                               "wrote before the start of " + L.name[s] + " (its canary byte " +
                                   std::to_string(start - o) +
                                   " before the first element changed, while " + what + ")");
      }
      for (uint64_t o = end; o < L.pages[s] + L.span(s); ++o) {
        if (base[o] != canary(o))
          throw GuardViolation("out_of_bounds",
                               "wrote past the end of " + L.name[s] + " (its canary byte " +
                                   std::to_string(o - end) +
                                   " after the last element changed; the canaries fill the "
                                   "buffer's last page, a guard page follows)");
      }
      if (s != pp::kResult && L.bytes[s] && std::memcmp(base + L.offset[s], src[s], L.bytes[s]))
        throw GuardViolation("operand_modified",
                             "modified the operand " + L.name[s] + ", which it only reads");
    }
    if (r.rc != 0)
      throw Crash("the plugin's run() reported an error (returned " + std::to_string(r.rc) +
                  "): " + plugin_abi::sanitize(r.text, sizeof r.text));
    if (result_out && L.bytes[pp::kResult])
      std::memcpy(result_out, base + L.offset[pp::kResult], L.bytes[pp::kResult]);
  }

  static std::string absolute(const std::string& path) {
    if (path.empty() || path[0] == '/') return path;
    std::error_code ec;
    const std::filesystem::path a = std::filesystem::absolute(path, ec);
    return ec ? path : a.lexically_normal().string();
  }

  static std::string resolve(const std::string& path) {
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) ? std::string(buf) : path;
  }

  pp::Request request(pp::Type type, const CheckedProblem& p, const std::string& d) const {
    if (d.size() >= pp::kDescriptor)
      throw std::runtime_error("plugin runner: descriptor too long for the protocol: " + d);
    pp::Request req;
    req.type = type;
    req.problem = plugin_abi::to_abi(p.problem(), p.geometry(), d);
    std::memcpy(req.descriptor, d.c_str(), d.size() + 1);
    return req;
  }

  Status probe() const {
    if (path_.find('/') != std::string::npos && access(path_.c_str(), R_OK) != 0)
      return Status::Error("cannot read the plugin " + path_ + ": " + std::strerror(errno));
    try {
      const pp::Hello& h = sandbox_.ensure();
      if (!h.loaded)
        return Status::Error("cannot load the plugin: " +
                             plugin_abi::sanitize(h.error, sizeof h.error));
      if (h.memory == CONVCHECK_MEMORY_DEVICE)
        return Status::Error(
            "the plugin declares device memory (CONVCHECK_MEMORY_DEVICE); this convcheck's plugin "
            "runner stages host memory only");
      if (h.memory != CONVCHECK_MEMORY_HOST)
        return Status::Error("the plugin declares an unknown memory kind " +
                             std::to_string(h.memory));
      if (h.has_available) {
        pp::Request req;
        req.type = pp::Type::available;
        const pp::Reply r = sandbox_.call(req, "answering available", nullptr);
        if (r.rc != 0) return Status::Error(plugin_abi::sanitize(r.text, sizeof r.text));
      }
      return Status::Ok();
    } catch (const std::exception& e) {  // Crash, Timeout, or the host could not start
      return Status::Error(std::string("the plugin failed while loading: ") + e.what());
    }
  }

  std::string name_, path_;
  mutable std::mutex mu_;
  mutable Sandbox sandbox_;
  mutable std::optional<Status> availability_;
  mutable std::map<std::string, Status> can_;
  mutable std::map<std::string, NumericContract> contracts_;
  std::set<std::string> end_flushed_;  // problems already run with the end-flush layout
  double last_ms_ = 0;
};

}  // namespace

void set_plugin_sandbox(plugin_sandbox::Mode mode) {
  if (const std::string why = sb::unavailable_reason(mode); !why.empty())
    throw InvalidArgument(std::string("--plugin-sandbox ") + sb::mode_name(mode) +
                          " is not available on this machine: " + why +
                          " (--plugin-sandbox basic or off runs with fewer protections)");
  g_mode = mode;
}

plugin_sandbox::Mode plugin_sandbox_mode() {
  return g_mode.load();
}

void set_plugin_timeout(double seconds) {
  if (!(seconds > 0))
    throw InvalidArgument("--plugin-timeout must be a positive number of seconds, got " +
                          std::to_string(seconds));
  g_timeout = seconds;
}

double plugin_timeout() {
  return g_timeout.load();
}

std::string plugin_host_path() {
  if (const char* e = std::getenv("CONVCHECK_PLUGIN_HOST"); e && *e) return e;
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    std::string dir(self);
    dir.erase(dir.find_last_of('/') + 1);
    const std::string beside = dir + "convcheck-plugin-host";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return CONVCHECK_PLUGIN_HOST_BUILD_PATH;
}

void register_plugin_backends(Registry& registry) {
  registry.add("plugin:",
               "a third-party kernel behind the C ABI (plugins/convcheck_plugin.h), run in a "
               "sandboxed child process: plugin:PATH/TO/LIB.so",
               [](const std::string& path) { return std::make_unique<PluginBackend>(path); });
}

}  // namespace convcheck
