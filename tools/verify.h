// `convcheck verify` (design §8): judges a result computed elsewhere (TensorFlow, PyTorch, a
// vendor library, a user's kernel run by hand) against the exact reference.
//
//   convcheck verify PROBLEM --filter F --out-backprop F --result F [--contract C[,C...]] [--json]
//
// The two operands the op reads are required (as for `compute`); a third operand flag is accepted
// and ignored with a note on stderr, so a script may pass all three files for every op. The
// result is a .npy file in the result's storage layout and the problem's dtype.
//
// Contracts (the accumulation the result is held to; several comma-separated give one record
// each): the names and numbers are oracle/contracts.h's.
//
// Output as `check`: the verdict (pass, fail [compare], mistrusted), the bound usage, the number of
// elements over their bound and the first offender's logical coordinates; --json prints one object
// shaped like check's (problem, tf_admission, backends[] records). Exit code 0 when nothing
// failed, 1 when a result failed, 2 for bad usage or a file that does not fit the problem.
#pragma once

#include "tools/commands.h"

namespace convcheck::cli {

int cmd_verify(const Args& args);

/// The CLI's one global option for third-party kernels: removes `--plugin-timeout S` (or
/// `--plugin-timeout=S`) from `args`, wherever it stands, and sets the plugin runner's time limit
/// per call (plugins/plugins.h). Every command accepts it (check, fuzz, run, bench, ...).
/// Throws InvalidArgument for a missing or non-positive value.
void take_plugin_timeout(Args& args);

/// Takes `--plugin-sandbox strict|basic|off` (or `=`) from `args`, after
/// $CONVCHECK_PLUGIN_SANDBOX, and sets the mode of every plugin host (plugins/sandbox.h). Throws
/// InvalidArgument for an unknown mode or one this machine cannot give.
void take_plugin_sandbox(Args& args);

}  // namespace convcheck::cli
