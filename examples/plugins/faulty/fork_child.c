/* fork_child.c: run() forks a child that runs `sleep 600`. Sandboxed: fork is refused (EPERM),
 * the result is correct: `pass`, and nothing outlives the call. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  const pid_t child = fork();
  (void)p, (void)err, (void)len;
  if (child == 0) {
    execlp("sleep", "sleep", "600", (char*)NULL);
    _exit(127);
  }
  said("fork()", child);
  return 0;
}
PROBE_TABLE("fork_child", "probe: forks a child running sleep 600")
