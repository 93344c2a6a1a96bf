#include "plugins/backend_adapter.h"

#include <cstdio>
#include <exception>
#include <string>

#include "plugins/abi.h"

namespace convcheck {

namespace {

std::function<std::unique_ptr<Backend>()> g_make;
std::unique_ptr<Backend> g_backend;
convcheck_plugin g_table;

int say(char* out, std::size_t len, const std::string& text) {
  std::snprintf(out, len, "%s", text.c_str());
  return 1;
}

Backend& backend() {
  if (!g_backend) g_backend = g_make();
  return *g_backend;
}

int available(char* reason, std::size_t len) {
  try {
    const Status s = backend().available();
    return s.ok() ? 0 : say(reason, len, s.reason());
  } catch (const std::exception& e) {
    return say(reason, len, e.what());
  }
}

int can_implement(const convcheck_problem* p, char* reason, std::size_t len) {
  try {
    Backend& b = backend();
    if (Status s = b.available(); !s.ok()) return say(reason, len, s.reason());
    const Status s = b.can_implement(plugin_abi::from_abi(*p));
    return s.ok() ? 0 : say(reason, len, s.reason());
  } catch (const std::exception& e) {
    return say(reason, len, e.what());
  }
}

int contract(const convcheck_problem* p, convcheck_contract* k, char* err, std::size_t len) {
  try {
    *k = plugin_abi::to_abi(backend().contract(plugin_abi::from_abi(*p)));
    return 0;
  } catch (const std::exception& e) {
    return say(err, len, e.what());
  }
}

int run(const convcheck_problem* ap, const void* input, const void* filter,
        const void* out_backprop, void* result, char* err, std::size_t len) {
  try {
    const CheckedProblem checked = plugin_abi::from_abi(*ap);
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const OpIO io = op_io(p.op);
    const void* data[] = {input, filter, out_backprop};
    ConstTensorView views[3];
    Operands ops;
    for (Role r : {io.a, io.b}) {
      const int i = static_cast<int>(r);
      views[i] = {data[i], p.dtype, storage_shape(p, g, r), storage_layout(p, r)};
      ops.set(r, &views[i]);
    }
    const TensorView out{result, p.dtype, storage_shape(p, g, io.result_like),
                         storage_layout(p, io.result_like)};
    backend().run(checked, ops, out);
    return 0;
  } catch (const std::exception& e) {
    return say(err, len, e.what());
  }
}

}  // namespace

const convcheck_plugin* backend_plugin_table(const char* name, const char* description,
                                             std::function<std::unique_ptr<Backend>()> make) {
  if (!g_make) {
    g_make = std::move(make);
    g_table.abi_version = CONVCHECK_PLUGIN_ABI_VERSION;
    g_table.memory = CONVCHECK_MEMORY_HOST;  // device backends mirror host buffers themselves
    g_table.name = name;
    g_table.description = description;
    g_table.available = available;
    g_table.can_implement = can_implement;
    g_table.contract = contract;
    g_table.run = run;
  }
  return &g_table;
}

std::unique_ptr<Backend> make_registered_backend(void (*register_fn)(Registry&),
                                                 const std::string& name) {
  Registry registry;
  register_fn(registry);
  return registry.make(name);
}

}  // namespace convcheck
