/* probe.h: the frame of the hostile probe plugins (issue 18). Each probe is minimal.c's correct
 * conv2d_backprop_input with one hostile act before it computes: `probe()`, defined by the file
 * that includes this one, then PROBE_TABLE(name, description). The act's outcome is printed on
 * stderr, which convcheck captures into the case's record (the output field), so the tests can read
 * what the sandbox let through. tests/cli/test_sandbox.sh runs each one; the README's "Security
 * model" lists the verdicts.
 *
 * $CONVCHECK_PROBE_DIR, when set, is a directory outside the sandbox's scratch directory the probes
 * aim at (write_outside). */
#ifndef _GNU_SOURCE /* set by the build (CMake) for the files that include system headers first */
#define _GNU_SOURCE
#endif
#define MINIMAL_NO_ENTRY
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "../minimal.c"

/* What a call returned, on stderr: "probe: kill(parent, SIGKILL) = -1 (Operation not permitted)".
 */
static void said(const char* what, long rc) {
  fprintf(stderr, "probe: %s = %ld (%s)\n", what, rc, rc < 0 ? strerror(errno) : "ok");
  fflush(stderr);
}

/* The act; a nonzero return is run()'s error code (err holds the text). */
static int probe(const convcheck_problem* p, char* err, size_t len);

static int run_probe(const convcheck_problem* p, const void* input, const void* filter,
                     const void* out_backprop, void* result, char* err, size_t len) {
  const int rc = probe(p, err, len);
  (void)said; /* not every probe reports a call */
  if (rc) return rc;
  return run(p, input, filter, out_backprop, result, err, len);
}

#define PROBE_TABLE(NAME, DESCRIPTION)                                                     \
  static const convcheck_plugin probe_table = {CONVCHECK_PLUGIN_ABI_VERSION,               \
                                               CONVCHECK_MEMORY_HOST,                      \
                                               NAME,                                       \
                                               DESCRIPTION,                                \
                                               NULL,                                       \
                                               can_implement,                              \
                                               contract,                                   \
                                               run_probe};                                 \
  CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t version) { \
    (void)version;                                                                         \
    return &probe_table;                                                                   \
  }
