// Which kernels run: the widest compiled-in ISA that this CPU and its OS can execute
// (core/cpu.h), capped by the environment variable CONVCHECK_OPTIMIZED_ISA=generic|avx2|avx512 or
// by limit_isa().
//
// The rule that keeps every CPU safe: code compiled for an ISA (kernels_avx2.cpp,
// kernels_avx512.cpp) is entered only after the CPU + OS check says yes for it, table
// construction included. Each ISA's kernel table is built on first use of that ISA, and only
// active_isa() (which never returns an ISA the machine lacks) picks the table.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

/// The ISAs whose kernels were compiled into this build, narrowest first (always generic).
std::vector<Isa> compiled_isas();
/// The compiled ISAs this CPU and OS can execute, narrowest first (always includes generic).
std::vector<Isa> available_isas();
/// The ISA whose kernels run now: the widest available one at or below the cap; with no cap, the
/// widest that is not emulated.
Isa active_isa();
/// Whether this build runs the ISA's kernels emulated: AVX-512's through SIMDe on AVX2 in a build
/// configured with CONVCHECK_OPTIMIZED_ISA=avx512-emulated (optimized/CMakeLists.txt), for tests
/// on CPUs without AVX-512. Such an ISA is available wherever AVX2 is, and runs only when asked
/// for (CONVCHECK_OPTIMIZED_ISA, limit_isa, or the tests' loops over available_isas()).
bool isa_emulated(Isa isa);
/// The ISA's name, "-emulated" appended for an emulated one: what records and summaries say.
std::string isa_label(Isa isa);
/// Whether CONVCHECK_OPTIMIZED_ISA can be honoured: ok when it is unset or names an available ISA
/// (or one below it, which caps); otherwise why not (an unknown name, or an ISA this build or
/// this CPU cannot run). The backend refuses to start with that reason (exit 2 at the CLI).
Status isa_request();
/// One line for `convcheck list`, e.g. "avx2 (compiled: generic avx2 avx512; this machine runs:
/// generic avx2; CONVCHECK_OPTIMIZED_ISA unset)". int32 always runs the generic kernels (its
/// wrapping arithmetic has no vector kernels); the ISA named is that of f32/f64/f16/bf16.
std::string isa_summary();
/// Caps the ISA (process-wide; for tests and comparisons). clear_isa_limit() undoes it.
void limit_isa(Isa isa);
void clear_isa_limit();

}  // namespace convcheck::opt
