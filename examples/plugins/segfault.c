/* segfault.c: a faulty plugin whose run() dereferences a null pointer. convcheck's verdict:
 * `crashed`, naming SIGSEGV and the address; the host is restarted for the next call. */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_segfault(const convcheck_problem* p, const void* input, const void* filter,
                        const void* out_backprop, void* result, char* err, size_t len) {
  volatile float* volatile nowhere = NULL; /* volatile: the store must happen, as written */
  (void)p, (void)input, (void)filter, (void)out_backprop, (void)result, (void)err, (void)len;
  (void)run; /* minimal.c's correct run(), unused here */
  *nowhere = 1.0f;
  return 0;
}

static const convcheck_plugin segfault_table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
    "segfault",
    "faulty example: run() writes through a null pointer",
    NULL,
    can_implement,
    contract,
    run_segfault};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &segfault_table;
}
