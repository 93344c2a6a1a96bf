/* hang.c: a faulty plugin whose run() never returns. convcheck's verdict: `timeout` after
 * --plugin-timeout seconds; the host is killed (SIGKILL) and restarted for the next call. */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_hang(const convcheck_problem* p, const void* input, const void* filter,
                    const void* out_backprop, void* result, char* err, size_t len) {
  volatile unsigned long spins = 0;
  (void)p, (void)input, (void)filter, (void)out_backprop, (void)result, (void)err, (void)len;
  (void)run; /* minimal.c's correct run(), unused here */
  for (;;) ++spins;
  return 0;
}

static const convcheck_plugin hang_table = {CONVCHECK_PLUGIN_ABI_VERSION,
                                            CONVCHECK_MEMORY_HOST,
                                            "hang",
                                            "faulty example: run() spins forever",
                                            NULL,
                                            can_implement,
                                            contract,
                                            run_hang};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &hang_table;
}
