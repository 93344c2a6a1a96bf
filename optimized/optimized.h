// The optimized CPU backend ("optimized"): OpenMP-blocked, vectorized implementations of all seven
// ops (issue 4). Results are deterministic for a given thread count.
#pragma once

#include "core/backend.h"

namespace convcheck {

/// Registers the "optimized" backend.
void register_optimized_backend(Registry& registry);

}  // namespace convcheck
