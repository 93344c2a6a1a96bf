/* abi_mismatch.c: a plugin built against another ABI version (999). convcheck refuses to load it,
 * naming both versions: the backend is unavailable (exit code 3 when named with --backends). */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static const convcheck_plugin future_table = {999, /* not CONVCHECK_PLUGIN_ABI_VERSION */
                                              CONVCHECK_MEMORY_HOST,
                                              "abi_mismatch",
                                              "faulty example: reports ABI version 999",
                                              NULL,
                                              can_implement,
                                              contract,
                                              run};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &future_table;
}
