/* oob_write.c: a faulty plugin that computes the right result and then writes one element past its
 * end. convcheck's verdict: `fail [out_of_bounds]` (a changed canary after the result, or, when the
 * result fills whole pages, a fault in the guard page behind it). */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_oob(const convcheck_problem* p, const void* input, const void* filter,
                   const void* out_backprop, void* result, char* err, size_t len) {
  const int rc = run(p, input, filter, out_backprop, result, err, len);
  ((float*)result)[p->result_elements] = 42.0f; /* one past the last element */
  return rc;
}

static const convcheck_plugin oob_table = {CONVCHECK_PLUGIN_ABI_VERSION,
                                           CONVCHECK_MEMORY_HOST,
                                           "oob_write",
                                           "faulty example: writes one element past the result",
                                           NULL,
                                           can_implement,
                                           contract,
                                           run_oob};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &oob_table;
}
