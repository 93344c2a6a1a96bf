// Mutant backends `mutant:<name>`: each a copy of the reference with one planted bug. They prove
// the oracle works: every one must be caught (issue 3). Registered like any backend.
#pragma once

#include <string>
#include <vector>

#include "core/backend.h"

namespace convcheck {

/// The mutants' names, e.g. "same_pad_before" (without the "mutant:" prefix).
std::vector<std::string> mutant_names();
/// Registers the "mutant:" family; an unknown name is an InvalidArgument listing the known ones.
void register_mutant_backends(Registry& registry);

}  // namespace convcheck
