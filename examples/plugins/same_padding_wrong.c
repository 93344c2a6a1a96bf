/* same_padding_wrong.c: a faulty plugin that splits SAME padding the wrong way. TF puts the odd
 * padding element after (bottom, right); this one puts it before (top, left), a classic porting
 * bug (Caffe- and PyTorch-style symmetric pads). Right whenever the total padding is even, wrong
 * when it is odd. convcheck's verdict: `fail [compare]` with the first offending coordinates. */
#define MINIMAL_NO_ENTRY
#include "minimal.c"

static int run_wrong(const convcheck_problem* p, const void* input, const void* filter,
                     const void* out_backprop, void* result, char* err, size_t len) {
  convcheck_problem q = *p;
  if (q.padding == CONVCHECK_PADDING_SAME) {
    q.pad_top = p->pad_bottom; /* the larger half first */
    q.pad_bottom = p->pad_top;
    q.pad_left = p->pad_right;
    q.pad_right = p->pad_left;
  }
  return run(&q, input, filter, out_backprop, result, err, len);
}

static const convcheck_plugin wrong_table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
    "same_padding_wrong",
    "faulty example: SAME's odd padding element before instead of after",
    NULL,
    can_implement,
    contract,
    run_wrong};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &wrong_table;
}
