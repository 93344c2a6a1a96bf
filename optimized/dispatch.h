// Which kernels run: the widest compiled-in ISA the CPU supports (dispatch.cpp), capped by the
// environment variable CONVCHECK_OPTIMIZED_ISA=generic|avx2|avx512 or by limit_isa().
#pragma once

#include <vector>

#include "optimized/kernels.h"

namespace convcheck::opt {

/// The ISAs compiled in and supported by this CPU, narrowest first (always includes generic).
std::vector<Isa> available_isas();
/// The ISA whose kernels run now.
Isa active_isa();
/// Caps the ISA (process-wide; for tests and comparisons). clear_isa_limit() undoes it.
void limit_isa(Isa isa);
void clear_isa_limit();

}  // namespace convcheck::opt
