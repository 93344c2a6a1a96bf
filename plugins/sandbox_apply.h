// The host's half of the sandbox (plugins/sandbox.h): confines the calling process. Linked into
// convcheck-plugin-host only (it needs libseccomp); the harness never confines itself.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "plugins/sandbox.h"

namespace convcheck::plugin_sandbox {

struct Applied {
  uint32_t protections = 0;  // Protection bits now in force
  std::string error;         // the first planned protection that failed (the host then refuses)
};

/// Applies mode `m` to this process: rlimits from `max_bytes`, the scratch directory `scratch`
/// (cwd, TMPDIR), no new privileges, not dumpable, Landlock (strict), the seccomp filter (basic
/// and strict; `harness` is never a signal's target). Call before any other thread exists.
Applied apply(Mode m, pid_t harness, const char* scratch, uint64_t max_bytes);

}  // namespace convcheck::plugin_sandbox
