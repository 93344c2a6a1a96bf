/* operand_write.c: a faulty plugin that chats on stdout and then writes into an operand it only
 * reads (out_backprop). convcheck's verdict: `fail [operand_modified]` (the operands are mapped
 * read-only in the plugin's process: the write faults and is classified by its address). Its
 * stdout is captured into the case's record (`output`), so a --json report stays clean. */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_operand_write(const convcheck_problem* p, const void* input, const void* filter,
                             const void* out_backprop, void* result, char* err, size_t len) {
  printf("operand_write: hello on stdout\n");
  fflush(stdout);
  ((float*)out_backprop)[0] = 0.0f; /* casts away const: a bug */
  return run(p, input, filter, out_backprop, result, err, len);
}

static const convcheck_plugin operand_write_table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
    "operand_write",
    "faulty example: prints to stdout and writes into out_backprop",
    NULL,
    can_implement,
    contract,
    run_operand_write};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &operand_write_table;
}
