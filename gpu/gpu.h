// The CUDA backend ("gpu"), design §4 and issue 5 (the cuDNN comparator is in comparators/).
//
// Both are always registered. Where the project was built without a CUDA toolkit, or the machine
// has no usable device or driver, they are registered as unavailable with the reason, so `list`,
// `check`, `fuzz`, `run` and `bench` say why they skipped them and every CPU path still runs (the
// CUDA runtime is linked statically; the driver is loaded at run time by the runtime).
#pragma once

#include <string>

#include "core/backend.h"

namespace convcheck {

/// Registers "gpu": all seven ops in every dtype and format on the device (gpu/*.cu).
void register_gpu_backend(Registry& registry);

}  // namespace convcheck
