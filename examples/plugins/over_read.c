/* over_read.c: a faulty plugin that computes the right result but reads one element past the end
 * of the filter (a loop bound off by one; the value is dropped, so the result and the canaries
 * never show it). convcheck's verdict: `fail [out_of_bounds]` from the run that places every
 * buffer's end against a guard page (`read 1 byte past the end of filter (a guard page)`), when
 * the filter's size is a multiple of 64 bytes (the ABI's alignment leaves up to 63 bytes of
 * canaries after the end otherwise). Built with UNDER_READ defined (under_read.c) it reads one
 * element before the start of out_backprop instead: `read 4 bytes before the start of
 * out_backprop`, for every size. */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static volatile float sink;

static int run_over_read(const convcheck_problem* p, const void* input, const void* filter,
                         const void* out_backprop, void* result, char* err, size_t len) {
#ifdef UNDER_READ
  sink = ((const volatile float*)out_backprop)[-1];
#else
  sink = ((const volatile float*)filter)[p->filter_elements];
#endif
  return run(p, input, filter, out_backprop, result, err, len);
}

static const convcheck_plugin over_read_table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
#ifdef UNDER_READ
    "under_read",
    "faulty example: reads one element before the start of out_backprop",
#else
    "over_read",
    "faulty example: reads one element past the end of the filter",
#endif
    NULL,
    can_implement,
    contract,
    run_over_read};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &over_read_table;
}
