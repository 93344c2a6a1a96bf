/* per_process.c: a faulty plugin whose result depends on the process it runs in (state seeded per
 * process: a scratch buffer's address, a pool's thread count at start-up, the process id). Within
 * one process every run gives the same bits; in another process one element moves by one ulp. It
 * claims determinism, so convcheck's rerun in a fresh process (issue 15: reruns cross processes for
 * plugins) gives `fail [nondeterministic]`; reruns inside one process would never see it. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_per_process(const convcheck_problem* p, const void* input, const void* filter,
                           const void* out_backprop, void* result, char* err, size_t len) {
  const int rc = run(p, input, filter, out_backprop, result, err, len);
  const int64_t n = p->result_elements;
  if (rc == 0 && n > 0) {
    /* Consecutive processes have consecutive ids: a different element each. */
    unsigned char* dx = (unsigned char*)result;
    const int64_t at = (int64_t)getpid() % n;
    uint32_t bits;
    memcpy(&bits, dx + at * 4, 4);
    bits += 1; /* one ulp away from zero (no libm needed) */
    memcpy(dx + at * 4, &bits, 4);
  }
  return rc;
}

static const convcheck_plugin per_process_table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
    "per_process",
    "faulty example: one element one ulp off, at a place that depends on the process",
    NULL,
    can_implement,
    contract,
    run_per_process};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &per_process_table;
}
