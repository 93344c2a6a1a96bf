// The host confining itself (plugins/sandbox_apply.h). Each step is one row of the protections
// table (plugins/sandbox.h); a planned step that fails is an error the host reports instead of
// loading the plugin.
#include "plugins/sandbox_apply.h"

#include <fcntl.h>
#include <glob.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifdef CONVCHECK_HAVE_SECCOMP
#include <seccomp.h>
#endif

namespace convcheck::plugin_sandbox {

namespace {

std::string failed(const char* what) {
  return std::string("the plugin sandbox could not be set up: ") + what + ": " +
         std::strerror(errno);
}

bool set_limit(int resource, uint64_t bytes) {
  const rlimit r{static_cast<rlim_t>(bytes), static_cast<rlim_t>(bytes)};
  return setrlimit(resource, &r) == 0;
}

// Landlock's ABI past the kernel headers of Debian 12 (6.1): the ruleset grew fields for TCP
// (ABI 4) and scopes (ABI 6); the kernel takes the struct's size and ignores nothing but zeros.
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;
  uint64_t scoped = 0;
};
constexpr uint64_t kTruncate = 1ull << 14;      // LANDLOCK_ACCESS_FS_TRUNCATE, ABI 3
constexpr uint64_t kNetTcp = 3;                 // BIND_TCP | CONNECT_TCP, ABI 4
constexpr uint64_t kScopeAbstract = 1ull << 0;  // LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, ABI 6
constexpr uint64_t kScopeSignal = 1ull << 1;    // LANDLOCK_SCOPE_SIGNAL, ABI 6

// Writes only under `scratch` and to the device files kernels open read-write; reads are not
// restricted (a plugin loads its libraries and data from anywhere). Also, by Landlock's nature,
// no ptrace or /proc access to processes outside the domain: convcheck's /proc/PID/fd,
// /proc/PID/mem and /proc/PID/environ are closed to the plugin.
std::string landlock(const char* scratch, int abi, uint32_t& applied) {
  uint64_t writes = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                    LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                    LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) writes |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) writes |= kTruncate;
  RulesetAttr attr;
  attr.handled_access_fs = writes;
  std::size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4) {
    attr.handled_access_net = kNetTcp;  // no rule: no TCP bind or connect at all
    size = offsetof(RulesetAttr, scoped);
  }
  if (abi >= kLandlockScopeAbi) {
    attr.scoped = kScopeAbstract | kScopeSignal;
    size = sizeof attr;
  }
  const int rs = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (rs < 0) return failed("landlock_create_ruleset");
  auto allow = [&](const char* path, uint64_t access) -> bool {
    const int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    fstat(fd, &st);
    // Rights that only apply to directories are refused on a file's rule.
    if (!S_ISDIR(st.st_mode)) access &= LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? kTruncate : 0);
    landlock_path_beneath_attr pb{};
    pb.allowed_access = access;
    pb.parent_fd = fd;
    const long r = syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    close(fd);
    return r == 0;
  };
  if (!allow(scratch, writes)) {
    close(rs);
    return failed("landlock_add_rule (the scratch directory)");
  }
  for (const char* dev : {"/dev/null", "/dev/zero", "/dev/full"}) allow(dev, writes);
  // GPU kernels open their device files read-write (CUDA's /dev/nvidia*, DRM's render nodes).
  glob_t g{};
  for (const char* pattern : {"/dev/nvidia*", "/dev/dri/renderD*"})
    if (glob(pattern, g.gl_pathc ? GLOB_APPEND : 0, nullptr, &g) != 0) continue;
  for (std::size_t i = 0; i < g.gl_pathc; ++i) allow(g.gl_pathv[i], writes);
  globfree(&g);
  if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) {
    close(rs);
    return failed("landlock_restrict_self");
  }
  close(rs);
  applied |= kLandlockWrites | kLandlockScope;
  return "";
}

// Drops every capability, the bounding set's first (a root host keeps none): the kernel's ptrace
// check then refuses a capability-less host access to a harness that has capabilities (its
// /proc/PID/fd, mem, environ), whatever Landlock offers. A host without capabilities does nothing.
bool drop_capabilities() {
  for (int cap = 0; cap <= 63; ++cap)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL && errno != EPERM)
      return false;
  struct {
    uint32_t version;
    int pid;
  } header{0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
  struct {
    uint32_t effective, permitted, inheritable;
  } data[2] = {};
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return false;
  return syscall(SYS_capset, &header, data) == 0;
}

#ifdef CONVCHECK_HAVE_SECCOMP
// One comparison on argument `index` (libseccomp's SCMP_A* macros leave fields to the compiler,
// which clang's -Wmissing-field-initializers refuses).
scmp_arg_cmp arg(unsigned index, scmp_compare op, uint64_t a, uint64_t b = 0) {
  scmp_arg_cmp c{};
  c.arg = index;
  c.op = op;
  c.datum_a = a;
  c.datum_b = b;
  return c;
}

// The system-call filter: everything is allowed but what a kernel has no use for and an escape
// would need. Refused calls fail with EPERM (clone3 with ENOSYS, so that pthread_create falls
// back to clone, whose flags the filter can read).
std::string seccomp(pid_t harness, uint32_t& applied) {
  (void)harness;  // a signal may only target this process: the harness never is one
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return "the plugin sandbox could not be set up: seccomp_init failed";
  const uint64_t self = static_cast<uint64_t>(getpid());
  const int denied[] = {
      // new processes and programs (threads are created by clone with CLONE_THREAD, below)
      SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(execve), SCMP_SYS(execveat),
      // other processes' memory, descriptors, sessions
      SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
      SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_getfd), SCMP_SYS(pidfd_send_signal), SCMP_SYS(kcmp),
      SCMP_SYS(setsid), SCMP_SYS(setpgid), SCMP_SYS(tkill),
      // namespaces, mounts, file handles
      SCMP_SYS(unshare), SCMP_SYS(setns), SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root),
      SCMP_SYS(chroot), SCMP_SYS(open_tree), SCMP_SYS(move_mount), SCMP_SYS(fsopen),
      SCMP_SYS(fsconfig), SCMP_SYS(fsmount), SCMP_SYS(fspick), SCMP_SYS(mount_setattr),
      SCMP_SYS(name_to_handle_at), SCMP_SYS(open_by_handle_at),
      // the kernel's own machinery; io_uring's operations would bypass this filter
      SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(userfaultfd), SCMP_SYS(keyctl),
      SCMP_SYS(add_key), SCMP_SYS(request_key), SCMP_SYS(init_module), SCMP_SYS(finit_module),
      SCMP_SYS(delete_module), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(reboot),
      SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct), SCMP_SYS(io_uring_setup),
      SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
      // the limits set above stay
      SCMP_SYS(setrlimit)};
  int rc = 0;
  for (int nr : denied) rc = rc ? rc : seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
  // A new process: clone without CLONE_THREAD. clone3's flags are in memory, out of reach.
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                          arg(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // Signals to itself only: kill and sigqueue by this pid, tgkill within this thread group
  // (raise, abort, pthread_kill). Not the harness, its group, or -1 (everything).
  for (int nr :
       {SCMP_SYS(kill), SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    if (!rc) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1, arg(0, SCMP_CMP_NE, self));
  // prlimit64 reads limits (glibc's getrlimit) but may not set them.
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prlimit64), 1,
                          arg(2, SCMP_CMP_NE, 0));
  // Dying with the harness and staying undumpable are not the plugin's to change.
  for (int option : {PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_PTRACER})
    if (!rc)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
                            arg(0, SCMP_CMP_EQ, static_cast<uint64_t>(option)));
  // Sockets: AF_UNIX only (no network).
  if (!rc)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
                          arg(0, SCMP_CMP_NE, static_cast<uint64_t>(AF_UNIX)));
  // Every thread of the host, the sanitizer runtimes' included.
  if (!rc) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
  if (!rc) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc) {
    errno = -rc;
    return failed("the seccomp filter");
  }
  applied |= kSeccomp;
  return "";
}
#endif

}  // namespace

Applied apply(Mode m, pid_t harness, const char* scratch, uint64_t max_bytes) {
  Applied a;
  const uint32_t plan = planned(m);
  if (getsid(0) == getpid()) a.protections |= kOwnSession;
  a.protections |= kDiesWithHarness | kClosedFds;
  struct stat out {};
  if (fstat(1, &out) == 0 && S_ISFIFO(out.st_mode)) a.protections |= kOutputCaptured;
  auto step = [&](Protection p, bool ok, const char* what) {
    if (!(plan & p) || !a.error.empty()) return;
    if (ok) {
      a.protections |= p;
    } else {
      a.error = failed(what);
    }
  };
  if (plan & kScratchDir) {
    const bool ok = chdir(scratch) == 0 && setenv("TMPDIR", scratch, 1) == 0;
    step(kScratchDir, ok, "chdir to the scratch directory");
  }
  const uint64_t address_space = max_bytes > UINT64_MAX - kAddressSpaceSlack
                                     ? static_cast<uint64_t>(RLIM_INFINITY)
                                     : max_bytes + kAddressSpaceSlack;
  step(kAddressSpaceLimit, (plan & kAddressSpaceLimit) && set_limit(RLIMIT_AS, address_space),
       "setrlimit(RLIMIT_AS)");
  step(kFileSizeLimit, (plan & kFileSizeLimit) && set_limit(RLIMIT_FSIZE, max_bytes),
       "setrlimit(RLIMIT_FSIZE)");
  step(kNoNewPrivs, (plan & kNoNewPrivs) && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0,
       "PR_SET_NO_NEW_PRIVS");
  step(kNotDumpable, (plan & kNotDumpable) && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0,
       "PR_SET_DUMPABLE");
  step(kNoCapabilities, (plan & kNoCapabilities) && drop_capabilities(), "dropping capabilities");
  if (a.error.empty() && (plan & kLandlockWrites))
    a.error = landlock(scratch, capabilities().landlock_abi, a.protections);
#ifdef CONVCHECK_HAVE_SECCOMP
  if (a.error.empty() && (plan & kSeccomp)) a.error = seccomp(harness, a.protections);
#else
  (void)harness;
#endif
  return a;
}

}  // namespace convcheck::plugin_sandbox
