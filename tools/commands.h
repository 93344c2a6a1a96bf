// The convcheck subcommands (design §8). Each takes its own arguments (after the command word)
// and returns the process exit code: 0 success, 1 a check failed, 2 bad usage or bad input
// (message on stderr), 3 a requested backend is unavailable; 4 an internal error (a convcheck bug).
#pragma once

#include <string>
#include <vector>

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

/// Registers every backend built into this binary.
void register_builtin_backends();

/// Dispatches argv; catches everything and maps it to an exit code.
int run(int argc, char** argv);

}  // namespace convcheck::cli
