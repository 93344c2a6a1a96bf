/* flood.c: run() prints 20 MiB, half on stdout, half on stderr. `pass`; the record keeps the last
 * 64 KiB (and says how much there was), convcheck's own output does not grow. */
#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  static char line[1024];
  int i;
  (void)p, (void)err, (void)len;
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 2] = '\n';
  for (i = 0; i < 10 * 1024; ++i) {
    fputs(line, stdout);
    fputs(line, stderr);
  }
  fflush(stdout);
  fprintf(stderr, "probe: flood done\n");
  return 0;
}
PROBE_TABLE("flood", "probe: prints 20 MiB per call")
