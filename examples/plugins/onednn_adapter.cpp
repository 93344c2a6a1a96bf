// onednn_adapter: the "onednn" comparator (comparators/onednn.cpp) behind the plugin ABI. Not a
// second oneDNN implementation: the plugin makes the very backend `--backends onednn` runs, through
// its registration function, so `plugin:onednn_adapter.so` and `onednn` give the same verdicts,
// with oneDNN isolated in the sandbox.
#include "comparators/comparators.h"
#include "plugins/backend_adapter.h"

extern "C" CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t) {
  return convcheck::backend_plugin_table(
      "onednn", "the onednn comparator (comparators/onednn.cpp) as a plugin", [] {
        return convcheck::make_registered_backend(convcheck::register_onednn_backend, "onednn");
      });
}
