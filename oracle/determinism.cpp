// Nondeterminism as a verdict (issue 15 item 4). Every case runs at least twice per backend
// (OracleOptions::runs): the reruns vary the OpenMP thread count (the backends that take it run
// with another split of the work) and ask a backend in another process to start a fresh one
// (Backend::start_afresh: plugins), and each rerun's bits are compared with the first run's. A
// backend whose contract claims determinism promises the same bits on every run, whatever its
// thread count and process; a difference is `nondeterministic` whatever else failed, since a racy
// kernel otherwise fails under whichever check its race happened to hit. Two NaNs count as equal
// (their payloads follow operand order, which a deterministic kernel may still vary by ISA).
#include <cmath>
#include <cstring>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "oracle/internal.h"

namespace convcheck::oracle_detail {

namespace {

// The thread count of rerun r (1-based) when the first run had `t`: half, then all, alternating,
// so a two-core machine compares 2 threads with 1 and a single core compares 1 with 1.
int rerun_threads(int t, int r) {
  return r % 2 == 1 ? std::max(1, t / 2) : t;
}

bool same_element(const Tensor& a, const Tensor& b, int64_t i) {
  const std::size_t w = dtype_size(a.dtype());
  const auto* x = static_cast<const unsigned char*>(a.data()) + i * w;
  const auto* y = static_cast<const unsigned char*>(b.data()) + i * w;
  if (std::memcmp(x, y, w) == 0) return true;
  return a.dtype() != DType::i32 && std::isnan(a.get(i)) && std::isnan(b.get(i));
}

// Restores the thread count on every exit, a backend's exception included.
class ThreadCount {
 public:
#ifdef _OPENMP
  ThreadCount() : saved_(omp_get_max_threads()) {}
  ~ThreadCount() {
    omp_set_num_threads(saved_);
  }
  int initial() const {
    return saved_;
  }
  void set(int t) {
    omp_set_num_threads(t);
  }

 private:
  int saved_;
#else
  int initial() const {
    return 1;
  }
  void set(int) {}
#endif
};

std::string describe_difference(const CheckedProblem& cp, const Tensor& first, const Tensor& again,
                                int64_t at, int64_t count, int rerun, int runs, int threads) {
  const auto c = result_coord(cp.problem(), cp.geometry(), at);
  return "run " + std::to_string(rerun + 1) + " of " + std::to_string(runs) + " (" +
         std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") +
         ") differs from run 1 in " + std::to_string(count) + " of " +
         std::to_string(first.size()) + " elements; first at [" + std::to_string(c[0]) + "," +
         std::to_string(c[1]) + "," + std::to_string(c[2]) + "," + std::to_string(c[3]) +
         "] (index " + std::to_string(at) + "): " + format_value(first.get(at)) + " then " +
         format_value(again.get(at));
}

}  // namespace

RelationResult determinism_check(Backend& b, const CheckedProblem& cp, const Roles& operands,
                                 const Tensor* reference, const Tensor& first,
                                 const NumericContract& k, int runs) {
  RelationResult rel;
  rel.name = "metamorphic:determinism";
  rel.slack = 1;
  ThreadCount threads;
  for (int r = 1; r < runs; ++r) {
    const int t = rerun_threads(threads.initial(), r);
    threads.set(t);
    b.start_afresh();
    const Run again = run_guarded(b, cp, operands, reference);
    if (!again.ran || !again.check.empty()) {
      rel.passed = false;
      rel.detail =
          "run " + std::to_string(r + 1) + " of " + std::to_string(runs) +
          " broke where run 1 did not: " + (again.check.empty() ? "" : again.check + ": ") +
          again.error;
      break;
    }
    int64_t count = 0, at = -1;
    for (int64_t i = 0; i < first.size(); ++i) {
      if (same_element(first, again.result, i)) continue;
      if (count++ == 0) at = i;
    }
    if (count > 0) {
      rel.passed = false;
      rel.residual = static_cast<double>(count);
      rel.detail = describe_difference(cp, first, again.result, at, count, r, runs, t);
      break;
    }
  }
  if (rel.passed) {
    rel.detail = std::to_string(runs - 1) + " rerun" + (runs == 2 ? "" : "s") +
                 " (other thread counts, a fresh process for a backend in another) gave the same "
                 "bits";
  }
  if (!k.deterministic) {
    // Recorded, never a failure: the contract makes no such promise.
    rel.applicable = false;
    rel.detail = "the contract does not claim determinism; " + rel.detail;
  }
  return rel;
}

}  // namespace convcheck::oracle_detail
