/* signal_parent.c: run() sends SIGTERM twice, SIGSTOP and SIGKILL to its parent (convcheck) and to
 * convcheck's process group. Sandboxed: every one refused (EPERM); `pass`, and the run finishes. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  const pid_t parent = getppid();
  const pid_t group = getpgid(parent);
  (void)p, (void)err, (void)len;
  said("kill(parent, SIGTERM)", kill(parent, SIGTERM));
  said("kill(parent, SIGTERM) again", kill(parent, SIGTERM));
  said("kill(parent, SIGSTOP)", kill(parent, SIGSTOP));
  if (group > 1) said("kill(-parent's group, SIGSTOP)", kill(-group, SIGSTOP));
  said("kill(parent, SIGKILL)", kill(parent, SIGKILL));
  return 0;
}
PROBE_TABLE("signal_parent", "probe: SIGTERM twice, SIGSTOP and SIGKILL to convcheck")
