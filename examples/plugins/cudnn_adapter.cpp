// cudnn_adapter: the "cudnn" comparator (comparators/cudnn.cpp) behind the plugin ABI, made through
// its registration function (one implementation, two entry points). The comparator stages host
// buffers on the device itself, so the plugin declares host memory. In a build without CUDA, or on
// a machine without a device, its available() declines with the comparator's own reason.
#include "comparators/comparators.h"
#include "plugins/backend_adapter.h"

extern "C" CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t) {
  return convcheck::backend_plugin_table(
      "cudnn", "the cudnn comparator (comparators/cudnn.cpp) as a plugin", [] {
        return convcheck::make_registered_backend(convcheck::register_cudnn_backend, "cudnn");
      });
}
