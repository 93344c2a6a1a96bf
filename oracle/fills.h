// Operand fills (design §6.1): one vocabulary, one table (kFills in oracle/fills.cpp), shared by
// the oracle (`check`, `run`, `fuzz`, a suite line's `--fill`, results.jsonl's "fill") and by
// `convcheck operands`. Names, parsing, the CLI's usage and option help and the "expected ..."
// of every unknown-fill message are generated from the table.
//
// Each fill is a pure function of (seed, role, storage index, dtype), so fills are reproducible
// and independent of the thread count and of the order of filling.
//
// Where a name is accepted (`uses`): the oracle's fills are the ones a case can name and a record
// holds; `operands` writes TF's test patterns into .npy files. A fill may serve both.
//
// The two ramps (decision, issue 14 item 6). Both are TF's 1, 2, ..., n in storage order, and
// both keep their values bit for bit, so both stay, as two rows with distinct documented
// meanings, each named `ramp` where it is used:
//   - FillKind::ramp (oracle): 16-bit types wrap at the last exactly representable integer
//     (f16 at 2048, bf16 at 256), so a case's operands stay exact integers; saved records and
//     suites name it `ramp`.
//   - FillKind::ramp_unwrapped (operands): np.arange(1, n+1) cast to the dtype, exactly as TF's
//     tests build their inputs: past 2^p it rounds and past 65504 it overflows f16. `operands
//     --fill ramp` writes it, byte for byte as before.
// They differ only for f16/bf16 tensors of more than 2048/256 elements. A name is unique within
// each use; parse_fill takes the use.
//
// Adding a fill: a FillKind value here, a row and its generator in fills.cpp (its fuzz weight
// included: `fuzz` draws every fill of the table by it), a test.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.h"
#include "core/tensor.h"

namespace convcheck {

enum class FillKind {
  exact,           // small integers, sized so every partial sum is exact in the backends' sums
  real,            // N(0,1) rounded into the dtype (int32: full-range integers, so sums wrap)
  cancel,          // large values of both signs, heavy cancellation
  special,         // a real background with NaN, +-Inf, subnormals and -0 sprinkled in
  ramp,            // TF's 1..n (storage order), 16-bit types wrapping (see above)
  ones,            // all 1
  ramp_unwrapped,  // TF's 1..n (storage order) as the dtype rounds it (see above)
  random,          // integers in [-8, 8]
  scaled,  // N(0,1) per role with its own scale: input ~1, filter ~1e-1, out_backprop ~1e-3..1e-6
  tiny,    // values whose products straddle the dtype's smallest normal (subnormal results)
};

/// Where a fill's name is accepted (bits of FillInfo::uses).
enum FillUse : unsigned {
  kOracleFill = 1,    // check, run, fuzz, suite lines, results.jsonl
  kOperandsFill = 2,  // convcheck operands
};

/// One element being filled. `range` and `density` are the exact fill's (oracle/internal.h).
struct FillSite {
  DType dtype;
  Role role;
  int64_t index;  // storage index
  uint64_t seed;
  int64_t range = 8;
  double density = 1.0;
};

struct FillInfo {
  FillKind kind;
  const char* name;  // as typed after --fill; unique within each use
  unsigned uses;     // FillUse bits
  const char* help;  // one line
  double (*value)(const FillSite&);
  int fuzz_weight;  // how often `fuzz` (properties/generators.cpp) draws it, relative to the
                    // others (the weights sum to 100); 0: never
};

/// Every fill, in the order names are listed.
const std::vector<FillInfo>& fills();
const FillInfo& fill_info(FillKind f);
const char* fill_name(FillKind f);
/// The fill named `s` among those of `use`.
std::optional<FillKind> parse_fill(std::string_view s, FillUse use = kOracleFill);
/// The names of `use`'s fills: "exact, real, cancel, special, ramp, scaled or tiny" (sep ", ", last
/// " or "), or "ones|ramp|random" (sep "|", last "|").
std::string fill_names(FillUse use, const char* sep = ", ", const char* last = " or ");
/// The oracle's fills (the ones a case can name), in table order.
extern const std::vector<FillKind> kAllFills;

/// Fills every element of `t` (role `r`) with `f` from `seed`.
void fill_tensor(Tensor& t, FillKind f, Role r, uint64_t seed);

}  // namespace convcheck
