// The one backend testbed: the check every backend test makes through the oracle, and the runs
// it shares. tests/test_backends.cpp runs every registered backend over the tables of
// tests/backend_cases.h and a sample of suites/conformance.txt with it; the per-backend test
// files use the same routine for what is special to their backend.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/tensor.h"
#include "oracle/oracle.h"

namespace convcheck::testbed {

// Where a library's NaN propagation is known to differ from TF's (a NaN reaching results that
// no term connects it to), and why. Empty reason: none known.
struct KnownNanFootprint {
  std::string reason;
  std::vector<DType> dtypes;  // the cases' dtypes; empty: every dtype
  std::vector<OpKind> kinds;  // the cases' op kinds; empty: every op
  bool covers(const Problem& p) const;
};

/// cuDNN's backward data on a device (the definition says what was seen): shared by the cudnn
/// tables of test_backends and test_cudnn.
extern const KnownNanFootprint kCudnnBackwardData;

/// What a case may end in besides a pass.
struct Expect {
  // An empty or all-zero exact result is the oracle's "degenerate" mistrust: nothing to judge,
  // but guards and poison were still checked. Strict comparator tables want a plain pass.
  bool degenerate_ok = true;
  // The oracle's "bound" mistrust on a 16-bit dtype: a backend that accumulates in f16 / bf16
  // (eigen) declares so, and sums longer than 2^(p-1) terms leave its bound meaningless.
  bool long_16bit_sums_ok = false;
  // Non-empty: the backend may decline the problem, with a can_implement reason naming this
  // (its library: "cuDNN", "oneDNN"); the oracle's record is then "unsupported" with that reason.
  // Empty: the backend must implement it.
  std::string declines_naming;
  // A known difference of the backend's library from TF's NaN propagation, on the cases it
  // names: such a case may fail metamorphic:nan_footprint and nothing else (no mismatch, every
  // other relation held); the reason is printed with each case it excuses.
  KnownNanFootprint nan_footprint_known;
};

/// One case through the oracle, on one backend.
CaseReport check(Backend& b, const std::string& problem, FillKind fill, uint64_t seed = 11);

/// Whether a one-backend report ends as `expect` allows (a pass, or an excused verdict).
bool accepted(const CaseReport& r, const Expect& expect);

/// The check: passes (exact fills: no mismatch, relations bit for bit; other fills within the
/// declared contract), or ends as `expect` allows. `context` names the variant (an ISA, a path).
void expect_pass(Backend& b, const std::string& problem, FillKind fill, uint64_t seed = 11,
                 const Expect& expect = {}, const std::string& context = "");

/// The same over the exact and the real fill.
void expect_pass_exact_and_real(Backend& b, const std::string& problem, const Expect& expect = {},
                                const std::string& context = "");

/// Two operands (op_io order) from a fixed pseudo-random stream: uniform in [-1, 1) (int32:
/// integers in [-int_range, int_range)).
struct Operands2 {
  Tensor a, b;
};
Operands2 random_operands(const Problem& p, uint64_t seed, double int_range = 1000);

/// The backend's result on the given operands (unguarded), and the bytes of a tensor.
Tensor result_of(Backend& b, const Problem& p, const Operands2& in);
std::vector<unsigned char> bytes(const Tensor& t);

/// An empty operand with a non-empty result: TF's sum of no terms, every element written as 0
/// (over a result filled with NaN first).
void expect_empty_operand_gives_zeros(Backend& b, const std::string& problem);

}  // namespace convcheck::testbed
