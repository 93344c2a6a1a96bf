// RapidCheck generators (design §7): valid problems by construction (dependent generation, no
// suchThat loops), invalid problems, and cases (problem + seed + fill). Tensor contents come from
// the seed, never from shrinkable element lists. Keep max_size <= 100 (the Debian RapidCheck build
// has a known issue above it).
#pragma once

#include <rapidcheck.h>

#include <string>

#include "core/problem.h"
#include "oracle/oracle.h"

namespace convcheck::gen {

/// Valid problems over the whole space: every op, dtype the op takes, format, padding kind
/// (asymmetric SAME, explicit pads larger than the filter), strides larger than the filter,
/// dilations (also with stride > 1), groups, depthwise multipliers, empty tensors. Sizes stay small
/// enough that one oracle case runs in milliseconds. Shrinks towards small, plain problems.
rc::Gen<Problem> valid_problem();
/// The same, restricted to one op.
rc::Gen<Problem> valid_problem(Op op);
/// A case: a valid problem, a seed (not shrunk) and a fill.
rc::Gen<Case> any_case();

/// An invalid problem, and the words its refusal must contain ("the rule").
struct InvalidProblem {
  std::string descriptor;
  std::string rule;
};
/// Descriptors that break one rule each: grammar (unknown op/key, repeated key, missing key, bad
/// numbers) or semantics (non-positive stride/dilation, negative padding, channel mismatch,
/// negative output size, dtype the op does not take, overflow).
rc::Gen<InvalidProblem> invalid_problem();

}  // namespace convcheck::gen
