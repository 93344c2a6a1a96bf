// Pieces of the oracle shared by its files; not part of its public interface.
#pragma once

#include <string>
#include <vector>

#include "core/backend.h"
#include "core/problem.h"
#include "core/tensor.h"
#include "oracle/oracle.h"
#include "reference/reference.h"

namespace convcheck::oracle_detail {

/// All three roles of a problem, in its storage layouts (adjoint checks need all three).
using Roles = ByRole<Tensor>;

// ---- fills (fills.cpp) ----
/// Fills every role of `p` for `c.fill` and `c.seed`. `p_bits` (exact fill) is the number of
/// significand bits every partial sum must fit in; `density` (0, 1] thins one role to keep long
/// sums exact.
Roles make_operands(const Problem& p, const Geometry& g, FillKind fill, uint64_t seed, int p_bits,
                    double density);
/// The precision (bits) an exact fill must respect for these contracts and the dtype.
int exact_bits(DType t, const std::vector<NumericContract>& contracts);
/// The exact fill's operands: small integers whose every partial sum, in all three ops of the
/// triple, fits p_bits (thinned until it does), so every result is exact (fills.cpp).
Roles exact_operands(const Problem& p, const Geometry& g, uint64_t seed, int p_bits);
/// A case's operands as run_case fills them (oracle.cpp): the exact fill thinned until every
/// partial sum of the triple fits `p_bits`, any other fill as make_operands gives it.
Roles case_operands(const Problem& p, const Geometry& g, FillKind fill, uint64_t seed, int p_bits);

// ---- guarded runs (guards.cpp) ----
struct Run {
  bool ran = false;   // false: crashed (the backend threw)
  std::string error;  // the exception's text, or the guard violation
  std::string check;  // "crashed", "out_of_bounds", "unwritten", "operand_modified", or ""
  std::string note;   // a check that could not be made (page-guarded passes skipped), or ""
  std::string said;   // Backend::last_note() right after the first run, before any other
  Tensor result;
  double ms = 0;
};
/// Runs `b` on `p` with every buffer inside guard bands and a poisoned result; reports what broke.
/// `reference` (optional) lets unwritten detection ignore elements whose true value happens to
/// equal the poison. `page_guards`: when that run broke nothing, run twice more on copies placed
/// against PROT_NONE pages (start, then end; guards.cpp), so that a read past either end of a
/// buffer is `out_of_bounds` naming the buffer and the side; only for a backend that
/// reads_caller_memory().
Run run_guarded(Backend& b, const CheckedProblem& p, const Roles& operands, const Tensor* reference,
                bool page_guards = false);

// ---- reruns (determinism.cpp) ----
/// Runs `b` on the case `runs - 1` more times (other OpenMP thread counts; Backend::start_afresh
/// before each) and compares each result bitwise with `first`, the first run's (two NaNs equal).
/// "metamorphic:determinism": failed at the first rerun that differs (the count of differing
/// elements in `residual`, the first one in `detail`) or breaks; not applicable, with what was
/// seen, when the contract does not claim determinism.
RelationResult determinism_check(Backend& b, const CheckedProblem& p, const Roles& operands,
                                 const Tensor* reference, const Tensor& first,
                                 const NumericContract& k, int runs);

// ---- bounds (bounds.cpp) ----
/// tau_i of design §6.3 for element i of `ref` under contract `k` (output dtype t).
double tau(const NumericContract& k, const ReferenceResult& ref, int64_t i, DType t);
/// Whether a contract's bound is meaningful for sums of n terms (k(n) u_acc < 1/2).
bool bound_meaningful(const NumericContract& k, int64_t n);
/// Whether an overflowed result v (+-Inf) of an element whose exact value `exact` is finite is
/// within a bound `bound`: only where a value the bound allows (|exact| + bound, same sign) rounds
/// to Inf in dtype t (at or past its overflow threshold), as a sum accumulated in the dtype itself
/// may (eigen's f16: exact 65505, rounded partial sums past 65520).
bool overflow_within(double v, double exact, double bound, DType t);
/// Two results x, y of one element (bounds tx, ty), exactly one of them +-Inf, the exact value
/// finite: they agree where the Inf is within its own bound (overflow_within) and the finite one
/// lies within tx + ty of a value that both rounds to Inf and is within the Inf's bound (same sign;
/// the nearest such value is the larger of the overflow threshold and |exact| - the Inf's bound).
/// Two sums of one value in other orders can land either side of the threshold; a result
/// saturated far below an exact value past the threshold still fails. False for any other pair.
bool overflow_pair_within(double x, double y, double exact, double tx, double ty, DType t);

struct Comparison {
  bool passed = true;
  double usage = 0;
  int64_t mismatches = 0;
  std::optional<Offender> first;
  std::optional<ErrorMap> map;  // compare_to_reference, when it fails
  std::string detail;
};
/// Compares a backend result with the reference: bitwise (exact fills, int32), else |got-s| <= tau.
Comparison compare_to_reference(const Problem& p, const Geometry& g, const ReferenceResult& ref,
                                const Tensor& got, const NumericContract& k, bool bitwise);
/// Compares two results of the same maths (a relation): bitwise, or |a - b| <= 2 tau_i (tau from
/// the reference of either), or one overflowed (overflow_pair_within). `ref` may be null when
/// bitwise.
Comparison compare_results(const Problem& p, const Geometry& g, const Tensor& a, const Tensor& b,
                           const ReferenceResult* ref, const NumericContract& k, bool bitwise);
/// Logical coordinates (n,h,w,c or kh,kw,in,out) of storage index i of the result.
std::array<int64_t, 4> result_coord(const Problem& p, const Geometry& g, int64_t i);
/// The same for many elements: the result's storage shape and layout looked up once.
class ResultCoords {
 public:
  ResultCoords(const Problem& p, const Geometry& g);
  std::array<int64_t, 4> operator()(int64_t i) const;

 private:
  Shape shape_;
  bool nchw_;
};

ReferenceResult reference_of(const Problem& p, const Roles& r);
/// The same with the case's geometry (g = geometry(p)), carried rather than derived again.
ReferenceResult reference_of(const Problem& p, const Geometry& g, const Roles& r);

// ---- relations (relations.cpp) ----
struct RelationContext {
  const Case& c;
  const Geometry& g;
  const Roles& operands;
  const ReferenceResult& ref;  // reference of c.problem
  const Tensor& result;        // the backend's result for c.problem
  const NumericContract& contract;
  bool bitwise;  // exact fill: relations must hold bit for bit
  int runs;      // OracleOptions::runs: above 2, derived runs are repeated and compared too
};
std::vector<RelationResult> adjoint_checks(Backend& b, const RelationContext& ctx);
std::vector<RelationResult> metamorphic_checks(Backend& b, const RelationContext& ctx);
/// The state relations (state.cpp): "metamorphic:state" (the same problem, other data) and
/// "metamorphic:state_shapes" (the same tensor shapes, other strides/padding/dilation).
std::vector<RelationResult> state_checks(Backend& b, const RelationContext& ctx);
/// A relation that does not apply here, and why (relations.cpp).
RelationResult not_applicable(std::string name, std::string why);

}  // namespace convcheck::oracle_detail
