// `convcheck verify` (design §8): judges a result computed elsewhere (TensorFlow, PyTorch, a
// vendor library, a user's kernel run by hand) against the exact reference.
//
//   convcheck verify PROBLEM --filter F --out-backprop F --result F [--contract C[,C...]] [--json]
//
// The two operands the op reads are required (as for `compute`); a third operand flag is accepted
// and ignored with a note on stderr, so a script may pass all three files for every op. The
// result is a .npy file in the result's storage layout and the problem's dtype.
//
// Contracts (the accumulation the result is held to; u_in and u_out follow from the dtype):
//   f32    f32 accumulation (u_acc 2^-24); f64 operands rounded to f32 on the way in
//   tf32   TF32 inputs (u_in 2^-11, for f32/f64 data) with f32 accumulation (cuDNN/cuBLAS TF32)
//   f16    f16 accumulation (u_acc 2^-11)
//   bf16   bf16 accumulation (u_acc 2^-8)
//   f64    f64 accumulation (u_acc 2^-53)
//   exact  the correctly rounded exact value, bit for bit
//   i32    int32, exact modulo 2^32 (the only contract, besides exact, for i32 problems)
// The result is always rounded into the dtype once at the end (u_out = the dtype's unit roundoff
// when it is narrower than the accumulation, else 0); any summation order is allowed (a linear
// chain of n roundings bounds every order). Default: f32 for f16/bf16/f32, f64 for f64, i32 for
// i32. Several comma-separated contracts give one record each.
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
