/* close_fds.c: run() closes every descriptor it has, the protocol's socket and shared memory
 * included. `crashed`: the host cannot answer (it exits with status 3); the next call gets a fresh
 * host. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  int fd;
  (void)p, (void)err, (void)len;
  for (fd = 0; fd < 1024; ++fd) close(fd);
  return 0;
}
PROBE_TABLE("close_fds", "probe: closes all its file descriptors")
