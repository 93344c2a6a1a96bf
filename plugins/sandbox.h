// What confines a plugin host (issue 18): the sandbox modes, the protections each applies, and
// what this kernel and build offer. One home for these facts: the harness (plugins/runner.cpp)
// plans and reports them (run.json, `list`, the report), the host (plugins/host.cpp) applies them
// and answers with the ones it applied, and the README's "Security model" describes this table.
//
// Modes (--plugin-sandbox, or $CONVCHECK_PLUGIN_SANDBOX):
//   strict  everything below: the default where the kernel has seccomp and Landlock.
//   basic   everything but Landlock: the default where Landlock is missing (a plugin may then write
//           wherever the user may, and read the harness's /proc entries when it runs as the same
//           user). Named in every report, never silent.
//   off     crash containment only (a process of its own, guard pages, timeouts, captured output):
//           for debugging a plugin, e.g. under a debugger that must attach to the host.
// Policy on processes: threads are allowed (kernels use OpenMP and pthreads); fork, vfork, clone of
// a new process and exec are refused with EPERM under seccomp, so a host never has children and
// nothing of it outlives its call's end. Under `off` a child a plugin forks is in the host's
// process group and is killed with it (after a crash, a timeout, and when the run ends).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace convcheck::plugin_sandbox {

enum class Mode : uint32_t { off = 0, basic = 1, strict = 2 };

const char* mode_name(Mode m);
std::optional<Mode> parse_mode(std::string_view s);
/// "strict, basic or off", for messages.
std::string mode_names();

// The protections, each a bit in the host's Hello (plugins/protocol.h).
enum Protection : uint32_t {
  kOwnSession = 1u << 0,         // setsid: its own session and process group, no terminal
  kDiesWithHarness = 1u << 1,    // PR_SET_PDEATHSIG and a watchdog thread
  kOutputCaptured = 1u << 2,     // stdout and stderr to the harness, capped, into the record
  kClosedFds = 1u << 3,          // only the protocol's descriptors are open
  kNoNewPrivs = 1u << 4,         // PR_SET_NO_NEW_PRIVS
  kNotDumpable = 1u << 5,        // PR_SET_DUMPABLE 0, RLIMIT_CORE 0
  kAddressSpaceLimit = 1u << 6,  // RLIMIT_AS from --max-bytes
  kFileSizeLimit = 1u << 7,      // RLIMIT_FSIZE from --max-bytes
  kScratchDir = 1u << 8,         // cwd and TMPDIR a private directory, removed afterwards
  kSeccomp = 1u << 9,            // the system-call filter (no fork/exec, signals only to itself)
  kLandlockWrites = 1u << 10,    // writes only under the scratch directory
  kLandlockScope = 1u << 11,     // no ptrace or /proc access, no signals outside the sandbox
  kNoCapabilities = 1u << 12,    // every capability dropped (bounding set included)
};

struct ProtectionInfo {
  Protection bit;
  const char* name;  // in run.json, `list`, the report
  Mode from;         // the weakest mode that applies it
  const char* what;  // one line for `list` and the README
};
/// Every protection, in the order reports list them.
const std::vector<ProtectionInfo>& protections();

/// What this kernel and build offer.
struct Capabilities {
  bool seccomp = false;    // the build has libseccomp and the kernel seccomp filters
  int landlock_abi = 0;    // 0: no Landlock
  bool sanitizer = false;  // a sanitizer build: no address-space limit (the shadow memory)
  std::string seccomp_missing, landlock_missing;  // why not, when not
};
const Capabilities& capabilities();

/// The mode a run gets without --plugin-sandbox: the strongest this machine offers.
Mode default_mode();
/// Why `m` cannot run here (empty: it can).
std::string unavailable_reason(Mode m);
/// The protections a host in mode `m` applies on this machine.
uint32_t planned(Mode m);
/// The Landlock ABI that scopes signals and abstract sockets (kernel 6.12).
constexpr int kLandlockScopeAbi = 6;

/// Why what is missing here is missing: ("strict", why) and ("basic", why) for an unavailable
/// mode, ("address_space_limit", why) in a sanitizer build. For `list` and run.json.
std::vector<std::pair<std::string, std::string>> missing_here();

/// "strict: own_session, ..., landlock_scope; missing: ..." for `list` and messages.
std::string describe(Mode m, uint32_t active);
/// The names of the bits set in `mask`, in table order.
std::vector<std::string> names(uint32_t mask);

/// The cap of a plugin's captured output per case record (its tail is kept).
constexpr std::size_t kOutputCap = 64 * 1024;
/// Address space a host needs beyond --max-bytes: its libraries, thread stacks, malloc arenas.
constexpr uint64_t kAddressSpaceSlack = 1ull << 30;

}  // namespace convcheck::plugin_sandbox
