/* fork_abort.c: run() forks a child that sleeps (holding every descriptor of the host), then
 * aborts. `crashed` naming SIGABRT at once, not a timeout: the host's exit is seen through its
 * pidfd, and its process group (the child, when fork is allowed: --plugin-sandbox off) is killed.
 */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  const pid_t child = fork();
  (void)p, (void)err, (void)len;
  if (child == 0) {
    sleep(600);
    _exit(0);
  }
  said("fork()", child);
  abort();
}
PROBE_TABLE("fork_abort", "probe: forks a sleeping child, then aborts")
