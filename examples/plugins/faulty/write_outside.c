/* write_outside.c: run() writes a file in its working directory (the scratch directory: allowed)
 * and one in $CONVCHECK_PROBE_DIR (outside it). Strict sandbox (Landlock): the second is refused;
 * `pass`, and no file appears there. */
#include <fcntl.h>
#include <stdio.h>

#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  char path[4096];
  const char* outside = getenv("CONVCHECK_PROBE_DIR");
  int fd;
  (void)p, (void)err, (void)len;
  fd = open("inside.txt", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  said("open(scratch/inside.txt)", fd);
  if (fd >= 0) close(fd);
  snprintf(path, sizeof path, "%s/escaped.txt", outside ? outside : "/tmp");
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  said("open($CONVCHECK_PROBE_DIR/escaped.txt)", fd);
  if (fd >= 0) close(fd);
  return 0;
}
PROBE_TABLE("write_outside", "probe: writes a file outside its scratch directory")
