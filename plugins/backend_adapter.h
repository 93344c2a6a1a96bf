// A convcheck Backend behind the plugin C ABI: how the oneDNN and cuDNN comparators become plugins
// (examples/plugins/onednn_adapter.cpp, cudnn_adapter.cpp) without a second implementation. The
// adapter is a thin shared library: its convcheck_plugin_get() returns backend_plugin_table(...)
// for a factory that makes the comparator through its registration function.
//
// One Backend per process (the plugin host loads one plugin). Exceptions never cross the C ABI:
// a throwing backend returns nonzero with the exception's text.
#pragma once

#include <functional>
#include <memory>

#include "core/backend.h"
#include "plugins/convcheck_plugin.h"

namespace convcheck {

/// The table for `make()`'s backend (made on first use). `name` and `description` must be static
/// strings. The table's available() is the backend's, can_implement() its capability query, and
/// contract() its contract, so the plugin's verdicts are the backend's.
const convcheck_plugin* backend_plugin_table(const char* name, const char* description,
                                             std::function<std::unique_ptr<Backend>()> make);

/// The backend named `name` made by `register_fn` on a private registry (no global state).
std::unique_ptr<Backend> make_registered_backend(void (*register_fn)(Registry&),
                                                 const std::string& name);

}  // namespace convcheck
