// Resource limits (issue 8): how much memory a command may allocate for one problem, checked
// before anything is allocated, by one function that every command uses.
//
// The rule. A problem's *footprint* is
//     factor x sum over its three roles (input, filter, out_backprop) of elements x (size + 32)
// bytes, where `size` is the dtype's element size and 32 bytes per element stand for the exact
// reference's companions (the exact value as a double-double, the magnitude, the term count) and
// the double copies it makes of the operands. The three roles are exactly an op's two operands and
// its result. The factor depends on what the command does with the problem (MemoryUse):
//   compute, operands, bench   2   the operands, the result, a backend's workspace
//   check, fuzz, run (oracle)  4   the oracle's fills of all three roles, guarded copies, every
//                                  backend's result, the adjoint and metamorphic derived runs
// and with explicit padding the oracle also counts the zero-padded input its valid_padded relation
// materialises. Measured peaks (`/usr/bin/time`): check with one to five backends used 2.1-3.4x
// the sum above, the reference's compute about 1.1x, the optimized backend's about 0.2x.
//
// A problem whose footprint exceeds the limit is refused (ResourceLimit, an InvalidArgument: exit
// code 2 in the CLI) with the footprint, the tensors it comes from and the limit. The limit is
// process-wide: half of physical memory unless set (the CLI's --max-bytes). Sizes are summed with
// overflow checks; a footprint past 2^64 saturates and is refused like any other.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/problem.h"

namespace convcheck {

/// Physical memory (sysconf(_SC_PHYS_PAGES) x page size); 0 when unknown.
uint64_t physical_memory_bytes();
/// The default limit: half of physical memory (4 GiB when physical memory is unknown).
uint64_t default_memory_limit();
/// The process-wide limit every command checks against: default_memory_limit() until set.
uint64_t memory_limit();
/// Sets the process-wide limit (bytes, > 0). Call before any work starts (not thread-safe).
void set_memory_limit(uint64_t bytes);
/// Back to the default (tests).
void reset_memory_limit();
/// Whether the limit was set explicitly (messages then name --max-bytes rather than the default).
bool memory_limit_is_default();

/// The memory `convcheck fuzz` needs at least: the generators' cases (properties/generators.h)
/// stay far below it (an eighth), which tests/test_limits.cpp checks on thousands of them. 512 MiB
/// since issue 15's tiers: a big-tier input past 2^16 elements alone takes the oracle ~10 MiB, and
/// the largest medium and big cases ~35 MiB.
inline constexpr uint64_t kFuzzMemoryBytes = uint64_t{512} << 20;

/// The oracle's page-guarded passes (oracle/guards.cpp) copy a case's two operands and result
/// into mappings flush against PROT_NONE pages only up to this many bytes in all; a bigger case is
/// judged without them, and a passing record's reason says so. Far below every case but the
/// `large` suite's, which crosses 2^31 bytes on purpose.
inline constexpr uint64_t kPageGuardedBytes = uint64_t{256} << 20;

/// What a command does with a problem, which decides the factor (see the file comment).
enum class MemoryUse {
  compute,  // compute, operands: two operands and the result, a backend's workspace
  bench,    // bench: the same, per backend in turn
  oracle,   // check, fuzz, run: the oracle's copies and derived runs
};
const char* memory_use_name(MemoryUse use);
int memory_factor(MemoryUse use);

struct MemoryEstimate {
  uint64_t bytes = 0;     // the footprint; UINT64_MAX when it does not fit in 64 bits
  std::string breakdown;  // "input [2, 7, 7, 128] f32 25088 elements, ..., x4 (oracle)"
};
/// The footprint of `p` for `use` (g = geometry(p)). Never throws.
MemoryEstimate estimate_memory(const Problem& p, const Geometry& g, MemoryUse use);

/// Ok, or the refusal: "<op>: the problem needs 1.50 GiB (1610612736 bytes: ...), more than the
/// memory limit of 1.00 GiB (1073741824 bytes, --max-bytes)".
Status check_memory(const Problem& p, const Geometry& g, MemoryUse use, uint64_t max_bytes);
/// check_memory against `max_bytes`; throws ResourceLimit with its message when refused.
void require_memory(const Problem& p, const Geometry& g, MemoryUse use, uint64_t max_bytes);
/// The same against memory_limit().
void require_memory(const Problem& p, const Geometry& g, MemoryUse use);

/// Refuses (ResourceLimit) an allocation of `bytes` for `what` (e.g. "x.npy: the data of shape
/// [2, 3] <f4") above memory_limit(); the message gives both sizes.
void require_allocation(uint64_t bytes, const std::string& what);

/// A byte count for people: "512 B", "1.50 KiB", "12.0 GiB", "164 PiB".
std::string format_bytes(uint64_t bytes);
/// Parses a --max-bytes value: a positive integer with an optional binary suffix K, M, G, T, P (or
/// KiB, MiB, GiB, TiB, PiB; case-insensitive; also KB.. read as binary). Throws InvalidArgument
/// naming `what` and the rule on anything else, zero, or overflow.
uint64_t parse_byte_size(std::string_view text, const std::string& what);

/// Threads (issue 18): OpenMP teams of 100000 threads crashed libgomp, and 1000 threads on 2 cores
/// did not finish a small bench. A thread count is at most kThreadsPerCpu times the CPUs this
/// process may run on (sched_getaffinity), and never less than kMinThreadCap.
inline constexpr int kThreadsPerCpu = 8;
inline constexpr int kMinThreadCap = 16;
int max_threads();
/// Refuses (InvalidArgument, naming `what`) a thread count below 1 or above max_threads().
void check_thread_count(long long n, const std::string& what);
/// A comma-separated list of thread counts ("8", "4,2"), each checked by check_thread_count
/// against `what`; an item that is not a decimal integer (empty, another character, out of range)
/// is an InvalidArgument naming `what` and `expected` (OMP_NUM_THREADS, `bench --threads`).
std::vector<int> parse_thread_counts(std::string_view text, const std::string& what,
                                     const std::string& expected);
/// Checks the thread settings the OpenMP runtime reads from the environment (OMP_NUM_THREADS,
/// every level of its list; OMP_THREAD_LIMIT, one count) before any parallel region runs.
void check_thread_environment();

}  // namespace convcheck
