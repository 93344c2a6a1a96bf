// convcheck-plugin-host: the child process that loads a plugin and calls it (plugins/protocol.h).
//
//   convcheck-plugin-host PARENT_PID PLUGIN_PATH MODE SCRATCH_DIR MAX_BYTES
//   (fd 3: the socket, fd 4: the shared memory, fds 1 and 2: a pipe the harness reads)
//
// It is started by the harness with posix_spawn in a session of its own (a fresh exec: no OpenMP
// threads or locks inherited from the harness), closes every other inherited descriptor, confines
// itself as MODE asks (plugins/sandbox.h: rlimits, no new privileges, Landlock, the seccomp filter)
// before the plugin's first instruction runs (dlopen runs its constructors), and says in its hello
// which protections it applied; one it could not apply is an error, never a silently weaker host.
// It dies with its parent (PR_SET_PDEATHSIG and a watchdog thread), dumps no core, and reports a
// fatal signal's number and address to the parent before dying of it. Guard pages (PROT_NONE)
// surround every buffer; operands are mapped read-only.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <optional>

#include "plugins/protocol.h"
#include "plugins/sandbox.h"
#include "plugins/sandbox_apply.h"

namespace pp = convcheck::plugin_protocol;

namespace {

// Read by the fatal-signal handler: the shared mapping, to report faults relative to it.
volatile sig_atomic_t g_mapped = 0;
unsigned char* volatile g_base = nullptr;
volatile uint64_t g_size = 0;

void on_fatal(int sig, siginfo_t* si, void* context) {
  pp::Fault f;
  f.signo = sig;
  f.code = si->si_code;
  f.address = reinterpret_cast<uint64_t>(si->si_addr);
  const auto* a = static_cast<unsigned char*>(si->si_addr);
  if (g_mapped && a >= g_base && a < g_base + g_size) {
    f.in_shm = 1;
    f.offset = static_cast<uint64_t>(a - g_base);
  }
#if defined(__x86_64__)
  if (sig == SIGSEGV && context) {
    // x86 page-fault error code: bit 1 set for a write.
    const auto* uc = static_cast<const ucontext_t*>(context);
    f.access = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
  }
#else
  (void)context;
#endif
  send(pp::kSocketFd, &f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
  // SA_RESETHAND restored the default action: the re-raised signal (or the faulting instruction,
  // re-executed) kills the process with this signal.
  raise(sig);
}

void install_handlers() {
  static char altstack[1 << 16];  // a plugin's stack overflow still reports its SIGSEGV
  stack_t ss{};
  ss.ss_sp = altstack;
  ss.ss_size = sizeof altstack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS})
    sigaction(s, &sa, nullptr);
}

void set_text(char* dst, std::size_t cap, const char* src) {
  std::snprintf(dst, cap, "%s", src ? src : "");
}

template <class M>
void send_message(const M& m) {
  if (send(pp::kSocketFd, &m, sizeof m, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof m)) _exit(3);
}

// The shared memory, mapped whole; remapped when the harness grew it.
unsigned char* g_map = nullptr;
uint64_t g_map_bytes = 0;

bool map_shared(uint64_t bytes, char* err, std::size_t cap) {
  if (bytes == g_map_bytes && g_map) return true;
  g_mapped = 0;
  if (g_map) munmap(g_map, g_map_bytes);
  g_map = nullptr;
  g_map_bytes = 0;
  void* m = mmap(nullptr, bytes, PROT_NONE, MAP_SHARED, pp::kShmFd, 0);
  if (m == MAP_FAILED) {
    std::snprintf(err, cap, "the plugin host could not map %llu bytes of shared memory: %s",
                  static_cast<unsigned long long>(bytes), std::strerror(errno));
    return false;
  }
  g_map = static_cast<unsigned char*>(m);
  g_map_bytes = bytes;
  g_base = g_map;
  g_size = bytes;
  g_mapped = 1;
  return true;
}

pid_t g_parent = 0;

void* watch_parent(void*) {
  for (;;) {
    usleep(200 * 1000);
    if (getppid() != g_parent) _exit(0);
  }
  return nullptr;
}

uint64_t round_pages(uint64_t bytes, uint64_t page) {
  return (bytes + page - 1) / page * page;
}

}  // namespace

int main(int argc, char** argv) {
  // Only fds 0-4 are ours: close whatever else the harness had open (its report files).
  if (close_range(5, ~0U, 0) != 0) {
    for (int fd = 5; fd < 65536; ++fd) close(fd);
  }
  if (argc != 6) {
    std::fprintf(stderr,
                 "usage: convcheck-plugin-host PARENT_PID PLUGIN MODE SCRATCH MAX_BYTES (started "
                 "by convcheck)\n");
    return 2;
  }
  namespace sb = convcheck::plugin_sandbox;
  // Die with the harness: PR_SET_PDEATHSIG follows the thread that spawned us, so a watchdog
  // thread also checks the parent every 200 ms (a plugin stuck in a call is not left behind).
  g_parent = static_cast<pid_t>(std::atol(argv[1]));
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != g_parent) _exit(0);  // the parent already died
  const struct rlimit no_core { 0, 0 };
  setrlimit(RLIMIT_CORE, &no_core);
  install_handlers();

  pp::Hello hello;
  const std::optional<sb::Mode> mode = sb::parse_mode(argv[3]);
  sb::Applied applied;
  if (!mode) {
    std::snprintf(hello.error, sizeof hello.error, "unknown sandbox mode '%s'", argv[3]);
  } else {
    // Before the watchdog thread: Landlock confines the calling thread and those it creates.
    applied = sb::apply(*mode, g_parent, argv[4], std::strtoull(argv[5], nullptr, 10));
    hello.protections = applied.protections;
    hello.sandbox_mode = static_cast<uint32_t>(*mode);
    if (!applied.error.empty()) set_text(hello.error, sizeof hello.error, applied.error.c_str());
  }
  pthread_t watchdog;
  pthread_create(&watchdog, nullptr, watch_parent, nullptr);
  if (hello.error[0]) {
    send_message(hello);
    _exit(0);
  }

  void* handle = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  const convcheck_plugin* table = nullptr;
  if (!handle) {
    set_text(hello.error, sizeof hello.error, dlerror());
  } else if (auto get = reinterpret_cast<convcheck_plugin_get_fn>(
                 dlsym(handle, CONVCHECK_PLUGIN_ENTRY_NAME));
             !get) {
    std::snprintf(hello.error, sizeof hello.error,
                  "%s does not export %s (see plugins/convcheck_plugin.h)", argv[2],
                  CONVCHECK_PLUGIN_ENTRY_NAME);
  } else if (!(table = get(CONVCHECK_PLUGIN_ABI_VERSION))) {
    std::snprintf(hello.error, sizeof hello.error,
                  "%s refused to load: its %s returned NULL for convcheck plugin ABI version %d",
                  argv[2], CONVCHECK_PLUGIN_ENTRY_NAME, CONVCHECK_PLUGIN_ABI_VERSION);
  } else if (table->abi_version != CONVCHECK_PLUGIN_ABI_VERSION) {
    hello.plugin_abi = table->abi_version;
    std::snprintf(hello.error, sizeof hello.error,
                  "%s was built for convcheck plugin ABI version %u; this convcheck speaks "
                  "version %d (rebuild it against this convcheck's plugins/convcheck_plugin.h)",
                  argv[2], table->abi_version, CONVCHECK_PLUGIN_ABI_VERSION);
  } else if (!table->can_implement || !table->contract || !table->run) {
    hello.plugin_abi = table->abi_version;
    std::snprintf(hello.error, sizeof hello.error,
                  "%s's plugin table lacks a can_implement, contract or run function", argv[2]);
  } else {
    hello.loaded = 1;
    hello.plugin_abi = table->abi_version;
    hello.memory = table->memory;
    hello.has_available = table->available != nullptr;
    set_text(hello.name, sizeof hello.name, table->name);
    set_text(hello.description, sizeof hello.description, table->description);
  }
  send_message(hello);
  if (!hello.loaded) _exit(0);

  using SetThreads = void (*)(int);
  auto set_threads = reinterpret_cast<SetThreads>(dlsym(handle, "omp_set_num_threads"));
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));

  static pp::Request req;
  for (;;) {
    const ssize_t got = recv(pp::kSocketFd, &req, sizeof req, 0);
    if (got == 0) _exit(0);  // the harness closed the socket: done (skip exit-time handlers)
    if (got < 0) {
      if (errno == EINTR) continue;
      _exit(3);
    }
    if (got != static_cast<ssize_t>(sizeof req)) _exit(3);
    req.descriptor[sizeof req.descriptor - 1] = 0;
    req.problem.descriptor = req.descriptor;
    if (req.threads > 0 && set_threads) set_threads(req.threads);

    pp::Reply reply;
    char* text = reply.text;
    const std::size_t cap = sizeof reply.text;
    switch (req.type) {
      case pp::Type::available:
        reply.rc = table->available ? table->available(text, cap) : 0;
        break;
      case pp::Type::can_implement:
        reply.rc = table->can_implement(&req.problem, text, cap);
        break;
      case pp::Type::contract:
        reply.rc = table->contract(&req.problem, &reply.contract, text, cap);
        break;
      case pp::Type::run: {
        if (!map_shared(req.shm_bytes, text, cap)) {
          reply.host_error = 1;
          break;
        }
        // Everything inaccessible, then each buffer's pages opened: operands read-only.
        mprotect(g_map, g_map_bytes, PROT_NONE);
        const void* ptr[pp::kSlots] = {};
        bool ok = true;
        for (int s = 0; s < pp::kSlots && ok; ++s) {
          if (req.offset[s] < 0) continue;
          unsigned char* p = g_map + req.offset[s];
          ptr[s] = p;
          // The data's pages (it may start mid-page: placed with its end against a guard page).
          const uint64_t first = static_cast<uint64_t>(req.offset[s]) / page * page;
          const uint64_t span = round_pages(req.offset[s] + req.bytes[s], page) - first;
          if (span && mprotect(g_map + first, span,
                               s == pp::kResult ? PROT_READ | PROT_WRITE : PROT_READ)) {
            std::snprintf(text, cap, "the plugin host could not protect its buffers: %s",
                          std::strerror(errno));
            ok = false;
          }
        }
        if (!ok) {
          reply.host_error = 1;
          break;
        }
        timespec t0{}, t1{};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        reply.rc =
            table->run(&req.problem, ptr[pp::kInput], ptr[pp::kFilter], ptr[pp::kOutBackprop],
                       const_cast<void*>(ptr[pp::kResult]), text, cap);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        reply.ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6;
        break;
      }
      default:
        _exit(3);
    }
    text[cap - 1] = 0;
    reply.contract.name[sizeof reply.contract.name - 1] = 0;
    send_message(reply);
  }
}
