// Third-party kernels behind the C ABI (plugins/convcheck_plugin.h), run in a sandbox.
//
// `plugin:PATH` is a backend like any other (check, fuzz, run, bench): the Registry
// family "plugin:" makes one per path. The plugin never runs in the harness process:
//
//   processes   a helper, convcheck-plugin-host, is started with posix_spawn (a fresh exec, so no
//               OpenMP threads or locks are inherited) in its own session and process group,
//               confined as plugins/sandbox.h describes (--plugin-sandbox), dies with the
//               harness (PR_SET_PDEATHSIG, and a watchdog thread that polls its parent), dumps no
//               core, closes every inherited descriptor but its two, and loads the plugin with
//               dlopen. The two talk over an AF_UNIX SOCK_SEQPACKET socket pair
//               (plugins/protocol.h). Every call (available, can_implement, contract, run) is a
//               request and a reply; can_implement and contract answers are cached per problem.
//   memory      operands and the result live in one memfd (sealed against shrinking, so the
//               child cannot pull pages from under the harness), mapped by both. Each buffer
//               lies in its own pages, preceded and followed by a guard page the host maps
//               PROT_NONE; operands are mapped read-only. The other bytes of its pages hold
//               canaries (a position-dependent pattern). The op runs with every buffer starting
//               on a page boundary, then (once per problem) with every buffer ending as close to
//               the next guard page as the ABI's 64-byte alignment allows, so a read past either
//               end faults. The result starts as the oracle's poisoned buffer, so unwritten
//               elements are still found.
//   faults      the host's SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT/SIGTRAP/SIGSYS handler (on an
//               alternate stack, SA_SIGINFO) sends the signal, the fault address (relative to the
//               shared mapping) and, on x86-64, whether it was a write, then dies of the signal.
//               The harness classifies: an address in a guard page or an operand's canary tail is
//               GuardViolation("out_of_bounds"); a write into an operand's (read-only) data is
//               GuardViolation("operand_modified"); anything else is a Crash naming the signal.
//               After the run, changed canaries are GuardViolation("out_of_bounds").
//   timeout     each call waits at most plugin_timeout() seconds (--plugin-timeout, default 60,
//               or $CONVCHECK_PLUGIN_TIMEOUT); then the process group is killed (SIGKILL) and a
//               Timeout thrown.
//   restart     after a crash or timeout the next call starts a fresh host; the harness goes on.
// The oracle maps Crash to `crashed`, Timeout to `timeout`, GuardViolation to `fail` with its check
// (core/error.h, oracle/guards.cpp). A plugin's texts (name, reasons, errors) are cut to 1 KiB of
// printable ASCII before they reach a report. Its stdout and stderr are a pipe the runner reads
// while it waits for a reply: the last 64 KiB since the last record are kept and go into the case's
// record (Backend::take_output), never to convcheck's own stdout or stderr. The host's exit is seen
// through a pidfd at once (a child holding the socket open does not hide it), and its whole process
// group is killed with it.
//
// The host executable is found as $CONVCHECK_PLUGIN_HOST, else next to the running executable,
// else at its build-tree path.
#pragma once

#include "core/backend.h"
#include "plugins/sandbox.h"

namespace convcheck {

/// Registers the "plugin:" family: `plugin:PATH` loads the shared library at PATH in a sandbox.
void register_plugin_backends(Registry& registry);

/// The time limit, in seconds, for one call into a plugin (must be > 0). The default is
/// $CONVCHECK_PLUGIN_TIMEOUT when set, else 60.
void set_plugin_timeout(double seconds);
double plugin_timeout();

/// The sandbox every plugin host starts in (plugins/sandbox.h). Throws InvalidArgument when `mode`
/// needs a mechanism this machine lacks, naming it. The default: $CONVCHECK_PLUGIN_SANDBOX when
/// set (and available), else the strongest mode available.
void set_plugin_sandbox(plugin_sandbox::Mode mode);
plugin_sandbox::Mode plugin_sandbox_mode();

/// The path of the convcheck-plugin-host executable this process would start.
std::string plugin_host_path();

}  // namespace convcheck
