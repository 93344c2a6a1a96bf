/* stop_self.c: run() stops its own process (SIGSTOP). `timeout`, naming the stop, after
 * --plugin-timeout seconds; the stopped host is killed. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  (void)p, (void)err, (void)len;
  raise(SIGSTOP);
  return 0;
}
PROBE_TABLE("stop_self", "probe: stops itself with SIGSTOP")
