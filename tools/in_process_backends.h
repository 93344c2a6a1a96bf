// The backends that run inside this process, registered in one place for the command line
// (tools/commands.cpp, which adds the plugin: family) and the Python package
// (python/src/module.cpp, where a Python kernel is `fn` itself). Header-only so that the package
// links only the libraries named here, not tools/. gpu and cudnn register as unavailable, with the
// reason, in a build without CUDA.
#pragma once

#include "comparators/comparators.h"
#include "core/backend.h"
#include "gpu/gpu.h"
#include "mutants/mutants.h"
#include "optimized/optimized.h"
#include "reference/reference.h"

namespace convcheck {

inline void register_in_process_backends(Registry& registry) {
  register_reference_backend(registry);
  register_optimized_backend(registry);
  register_onednn_backend(registry);
  register_eigen_backend(registry);
  register_gpu_backend(registry);
  register_cudnn_backend(registry);
  register_mutant_backends(registry);
}

}  // namespace convcheck
