/* daemon.c: run() double-forks a daemon in a session of its own that sleeps for 10 minutes.
 * Sandboxed: fork is refused (EPERM); `pass`, and no daemon. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  const pid_t child = fork();
  (void)p, (void)err, (void)len;
  if (child == 0) {
    setsid();
    if (fork() == 0) {
      sleep(600);
      _exit(0);
    }
    _exit(0);
  }
  said("fork() for a daemon", child);
  return 0;
}
PROBE_TABLE("daemon", "probe: double-forks a daemon that sleeps 600 s")
