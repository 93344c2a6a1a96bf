/* memory_hog.c: run() allocates and touches 30 GiB, 256 MiB at a time. Sandboxed, RLIMIT_AS
 * (--max-bytes + 1 GiB) makes an allocation fail first; the probe then aborts: `crashed`
 * [SIGABRT], the reason naming the address-space limit. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  const size_t chunk = (size_t)256 << 20;
  int i;
  (void)p, (void)err, (void)len;
  for (i = 0; i < 30 * 4; ++i) {
    char* m = (char*)malloc(chunk);
    if (!m) {
      fprintf(stderr, "probe: malloc failed after %d MiB\n", i * 256);
      abort();
    }
    memset(m, 1, chunk);
  }
  return 0;
}
PROBE_TABLE("memory_hog", "probe: touches 30 GiB")
