// The sandbox modes and protections (plugins/sandbox.h), and what this machine offers.
#include "plugins/sandbox.h"

#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace convcheck::plugin_sandbox {

namespace {
constexpr Mode kModes[] = {Mode::strict, Mode::basic, Mode::off};
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::strict:
      return "strict";
    case Mode::basic:
      return "basic";
    case Mode::off:
      return "off";
  }
  return "?";
}

std::optional<Mode> parse_mode(std::string_view s) {
  for (Mode m : kModes)
    if (s == mode_name(m)) return m;
  return std::nullopt;
}

std::string mode_names() {
  return "strict, basic or off";
}

const std::vector<ProtectionInfo>& protections() {
  // clang-format off
  static const std::vector<ProtectionInfo> table = {
    {kOwnSession, "own_session", Mode::off,
     "its own session and process group, no terminal; the group killed after a crash or timeout"},
    {kDiesWithHarness, "dies_with_harness", Mode::off,
     "killed when convcheck ends (PR_SET_PDEATHSIG and a watchdog)"},
    {kOutputCaptured, "output_captured", Mode::off,
     "stdout and stderr go to the case's record (its last 64 KiB), never to the terminal"},
    {kClosedFds, "closed_fds", Mode::off,
     "no descriptor of convcheck's but the protocol socket and the shared buffers"},
    {kNoNewPrivs, "no_new_privs", Mode::basic,
     "PR_SET_NO_NEW_PRIVS: no set-user-ID gains"},
    {kNotDumpable, "not_dumpable", Mode::basic,
     "PR_SET_DUMPABLE 0 and no core file"},
    {kAddressSpaceLimit, "address_space_limit", Mode::basic,
     "RLIMIT_AS: --max-bytes plus 1 GiB (not in sanitizer builds)"},
    {kFileSizeLimit, "file_size_limit", Mode::basic,
     "RLIMIT_FSIZE: no file larger than --max-bytes"},
    {kScratchDir, "scratch_dir", Mode::basic,
     "working directory and TMPDIR a private directory, removed when the host ends"},
    {kNoCapabilities, "no_capabilities", Mode::basic,
     "every capability dropped: a host started by root cannot reach convcheck's /proc entries"},
    {kSeccomp, "seccomp", Mode::basic,
     "system-call filter: no fork, exec, ptrace, setsid, namespaces, io_uring, network sockets; "
     "signals only to itself; limits cannot be raised"},
    {kLandlockWrites, "landlock_writes", Mode::strict,
     "Landlock: writes only in the scratch directory (and /dev/null, GPU device files)"},
    {kLandlockScope, "landlock_scope", Mode::strict,
     "Landlock: no ptrace or /proc access to convcheck; no signals or abstract sockets outside"},
  };
  // clang-format on
  return table;
}

const Capabilities& capabilities() {
  static const Capabilities caps = [] {
    Capabilities c;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    c.sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    c.sanitizer = true;
#endif
#endif
#ifdef CONVCHECK_HAVE_SECCOMP
    // EFAULT for the null filter: the kernel has seccomp filters. EINVAL: it has none.
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, nullptr) != 0 && errno == EFAULT) {
      c.seccomp = true;
    } else {
      c.seccomp_missing = "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)";
    }
#else
    c.seccomp_missing = "built without libseccomp (install libseccomp-dev and reconfigure)";
#endif
    const long abi =
        syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi > 0) {
      c.landlock_abi = static_cast<int>(abi);
    } else {
      c.landlock_missing = std::string("Landlock is not available: ") + std::strerror(errno) +
                           (errno == EOPNOTSUPP ? " (disabled at boot: lsm=...,landlock)"
                            : errno == ENOSYS   ? " (kernel older than 5.13)"
                                                : "");
    }
    return c;
  }();
  return caps;
}

std::string unavailable_reason(Mode m) {
  const Capabilities& c = capabilities();
  if (m >= Mode::basic && !c.seccomp) return c.seccomp_missing;
  if (m >= Mode::strict && !c.landlock_abi) return c.landlock_missing;
  return "";
}

Mode default_mode() {
  for (Mode m : kModes)
    if (unavailable_reason(m).empty()) return m;
  return Mode::off;
}

uint32_t planned(Mode m) {
  const Capabilities& c = capabilities();
  uint32_t mask = 0;
  for (const ProtectionInfo& p : protections())
    if (m >= p.from) mask |= p.bit;
  if (c.sanitizer) mask &= ~static_cast<uint32_t>(kAddressSpaceLimit);
  if (!c.seccomp) mask &= ~static_cast<uint32_t>(kSeccomp);
  if (!c.landlock_abi) mask &= ~static_cast<uint32_t>(kLandlockWrites | kLandlockScope);
  // Before ABI 6, Landlock still denies ptrace and /proc access across domains; signals are
  // confined by the seccomp filter then.
  return mask;
}

std::vector<std::pair<std::string, std::string>> missing_here() {
  std::vector<std::pair<std::string, std::string>> out;
  for (Mode m : {Mode::strict, Mode::basic})
    if (std::string why = unavailable_reason(m); !why.empty()) out.emplace_back(mode_name(m), why);
  if (capabilities().sanitizer)
    out.emplace_back("address_space_limit",
                     "a sanitizer build: its shadow memory reserves terabytes of address space");
  return out;
}

std::vector<std::string> names(uint32_t mask) {
  std::vector<std::string> out;
  for (const ProtectionInfo& p : protections())
    if (mask & p.bit) out.push_back(p.name);
  return out;
}

std::string describe(Mode m, uint32_t active) {
  std::string s = std::string(mode_name(m)) + ":";
  for (const std::string& n : names(active)) s += " " + n;
  std::string missing;
  for (const ProtectionInfo& p : protections())
    if (!(active & p.bit)) missing += " " + std::string(p.name);
  if (!missing.empty()) s += "; not active:" + missing;
  return s;
}

}  // namespace convcheck::plugin_sandbox
