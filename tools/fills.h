// Simple deterministic operand fills for the command line (`convcheck operands`): TF's test
// patterns. The oracle's fills (exact, real, cancel, special) live in oracle/.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace convcheck::cli {

/// "ones": all 1 (TF's conv2d_transpose tests); "ramp": 1, 2, ..., n in storage order (TF's
/// np.arange(1, n+1) pattern, spec B §5; it exceeds f16's range past 65504 and loses integers
/// past 2^p, as the dtype dictates); "random": integers in [-8, 8] from `seed`.
/// Throws InvalidArgument for an unknown fill name.
void fill_tensor(Tensor& t, const std::string& fill, uint64_t seed);

}  // namespace convcheck::cli
