// The named contracts a result computed elsewhere is judged under (`convcheck verify --contract`,
// the Python package's judge() and check(contract=...)): one home for the names and their numbers.
//
//   f32    f32 accumulation (u_acc 2^-24); f64 operands rounded to f32 on the way in
//   tf32   TF32 inputs (u_in 2^-11, for f32/f64 data) with f32 accumulation (cuDNN/cuBLAS TF32)
//   f16    f16 accumulation (u_acc 2^-11)
//   bf16   bf16 accumulation (u_acc 2^-8)
//   f64    f64 accumulation (u_acc 2^-53)
//   exact  the correctly rounded exact value, bit for bit
//   i32    int32, exact modulo 2^32 (the only contract, besides exact, for i32 problems)
// The result is always rounded into the dtype once at the end (u_out = the dtype's unit roundoff
// when it is narrower than the accumulation, else 0); any summation order is allowed (a linear
// chain of n roundings bounds every order). Default: f32 for f16/bf16/f32, f64 for f64, i32 for
// i32.
#pragma once

#include <string>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"

namespace convcheck {

struct NamedContract {
  std::string name;
  NumericContract contract;
  bool bitwise = false;  // "exact": bit-for-bit equality
};

/// The comma-separated contract names `names` (empty: the dtype's default) for results of `p`.
/// Throws InvalidArgument for an unknown name or one that does not apply to p's dtype, the
/// message starting "--contract NAME: ".
std::vector<NamedContract> parse_contracts(const std::string& names, const Problem& p);

}  // namespace convcheck
