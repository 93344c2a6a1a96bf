#define BOOST_TEST_MODULE eigen
// What is special to the "eigen" comparator (comparators/eigen.cpp). Its tables (every op, dtype,
// format and padding, special values, empty operands, repeated runs, a conformance sample) run in
// the backend testbed (tests/test_backends.cpp, CTest test_backends_eigen) on the widest ISA the
// machine runs. Here: the facts its contract rests on, measured on the Eigen this build uses, its
// thread count, and its ISA modules (each ISA the machine runs passes a table of every op and
// dtype; the cap and a missing module are reported).
#include <omp.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "comparators/comparators.h"
#include "core/cpu.h"
#include "core/error.h"
#include "oracle/oracle.h"
#include "tests/backend_testbed.h"

using namespace convcheck;

namespace {

Backend& eigen() {
  static std::unique_ptr<Backend> backend = [] {
    register_eigen_backend(Registry::instance());
    return Registry::instance().make("eigen");
  }();
  return *backend;
}

// A fresh eigen backend made with CONVCHECK_EIGEN_ISA and CONVCHECK_EIGEN_MODULE_DIR set to cap
// and dir (null: unset), which it reads when made; both restored to unset after.
std::unique_ptr<Backend> eigen_with(const char* cap, const char* dir) {
  eigen();  // registered
  auto set = [](const char* name, const char* v) {
    if (v)
      setenv(name, v, 1);
    else
      unsetenv(name);
  };
  set("CONVCHECK_EIGEN_ISA", cap);
  set("CONVCHECK_EIGEN_MODULE_DIR", dir);
  std::unique_ptr<Backend> b;
  try {
    b = Registry::instance().make("eigen");
  } catch (...) {
    set("CONVCHECK_EIGEN_ISA", nullptr);
    set("CONVCHECK_EIGEN_MODULE_DIR", nullptr);
    throw;
  }
  set("CONVCHECK_EIGEN_ISA", nullptr);
  set("CONVCHECK_EIGEN_MODULE_DIR", nullptr);
  return b;
}

// The ISA modules this build made (comparators/CMakeLists.txt), e.g. "avx2,avx512".
bool module_built(const std::string& isa) {
  return ("," + std::string(CONVCHECK_EIGEN_MODULES_BUILT) + ",").find("," + isa + ",") !=
         std::string::npos;
}

// sum over c of x[c] * 1 for x = [big, 1, 1, ..., 1] (n values), through conv2d with a 1x1 filter.
double big_plus_ones(DType t, double big, int64_t n) {
  Problem p = parse_problem("conv2d:input=1x1x1x" + std::to_string(n) + ",filter=1x1x" +
                            std::to_string(n) + "x1");
  p.dtype = t;
  const Geometry g = geometry(p);
  testbed::Operands2 in{Tensor(t, storage_shape(p, g, Role::input)),
                        Tensor(t, storage_shape(p, g, Role::filter))};
  for (int64_t i = 0; i < n; ++i) {
    in.a.set(i, i == 0 ? big : 1.0);
    in.b.set(i, 1.0);
  }
  return testbed::result_of(eigen(), p, in).get(0);
}

}  // namespace

// The contract says Eigen 3.4 accumulates f16 and bf16 in the 16-bit type. Adding 4095 ones to
// 2048 (f16) or 256 (bf16), where one more 1 is a tie that rounds back down: an f32 accumulator
// gives 6143 (4351), rounded once to 6144 (4352); every 16-bit partial sum loses ones. Should a
// later Eigen accumulate in float, this fails and the contract (eigen.cpp) must follow.
BOOST_AUTO_TEST_CASE(sixteen_bit_types_accumulate_in_sixteen_bits) {
  const double f16 = big_plus_ones(DType::f16, 2048, 4096);
  const double bf16 = big_plus_ones(DType::bf16, 256, 4096);
  BOOST_TEST_MESSAGE("2048 + 4095 ones in f16: " << f16 << "; 256 + 4095 ones in bf16: " << bf16);
  BOOST_TEST(f16 < 6144);
  BOOST_TEST(bf16 < 4352);
  BOOST_TEST(big_plus_ones(DType::f32, 2048, 4096) == 6143);  // f32 sums stay exact here
}

// The pool's size is the OpenMP setting every CPU backend follows (the oracle's reruns change it).
BOOST_AUTO_TEST_CASE(threads_follow_the_openmp_setting) {
  const int before = omp_get_max_threads();
  const char* p = "conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x8,stride=2x2,padding=SAME";
  for (int n : {1, 2, 3}) {
    omp_set_num_threads(n);
    const CaseReport r = testbed::check(eigen(), p, FillKind::real, 3);
    BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass");
    omp_set_num_threads(n);  // the oracle's reruns leave their own setting behind
    const Problem pr = parse_problem(p);
    testbed::result_of(eigen(), pr, testbed::random_operands(pr, 1));
    const std::string want = std::to_string(n) + (n == 1 ? " thread," : " threads,");
    BOOST_TEST(eigen().last_note().find(want) != std::string::npos, eigen().last_note());
  }
  omp_set_num_threads(before);
}

// Padding zeros times a non-finite filter element would be NaN where the index law has no term,
// so a non-finite operand takes the taps path, which forms only the law's terms; finite operands
// take TF's patches.
BOOST_AUTO_TEST_CASE(non_finite_operands_take_the_taps_path) {
  for (const char* p :
       {"conv2d:input=1x5x5x2,filter=3x3x2x2,padding=SAME",
        "conv2d_backprop_input:input=1x6x6x2,filter=3x3x2x2,stride=2x2,padding=SAME",
        "depthwise_conv2d_backprop_filter:input=1x5x5x2,filter=3x3x2x2,padding=SAME"}) {
    const Problem pr = parse_problem(p);
    testbed::Operands2 in = testbed::random_operands(pr, 2);
    testbed::result_of(eigen(), pr, in);
    BOOST_TEST(eigen().last_note().find("patches") != std::string::npos, eigen().last_note());
    in.b.set(0, INFINITY);
    testbed::result_of(eigen(), pr, in);
    BOOST_TEST(eigen().last_note().find("taps") != std::string::npos, eigen().last_note());
    for (uint64_t seed : {1, 2, 3}) {
      const CaseReport r = testbed::check(eigen(), p, FillKind::special, seed);
      BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass", p << "\n"
                                                                                 << to_text(r));
    }
  }
}

// Found by `fuzz --backends eigen` (seed 1): the exact value 65505 rounds to 65504 in f16, but
// partial sums accumulated in f16 round past 65520 and overflow to Inf. The contract allows it
// (65505 + its bound 483 is past f16's overflow threshold), and the oracle now says so.
BOOST_AUTO_TEST_CASE(sixteen_bit_overflow_within_the_bound_passes) {
  const char* p = "depthwise_conv2d:input=1x7x12x2,filter=3x5x2x2,padding=SAME,dtype=f16";
  const CaseReport r = testbed::check(eigen(), p, FillKind::ramp, 223884878);
  BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass", to_text(r));
}

// Found by `fuzz --backends optimized,eigen --cases 20000 --seed 26452` (2 threads): the same
// element summed in f16 by the depthwise run and by the grouped conv of the depthwise_grouped
// relation, in different orders, overflowed in one (Inf) and not in the other (65504); the
// relation accepted a pair only where both were finite, and failed. It now accepts an Inf within
// its bound beside a finite value near the overflow threshold (oracle/internal.h,
// overflow_pair_within). Eigen's blocking follows the thread count, so the count is the fuzz run's,
// and the test checks that the pair was there (the relation's usage is exactly 1, which only an
// admitted overflow gives) rather than passing without it.
BOOST_AUTO_TEST_CASE(sixteen_bit_overflow_in_one_of_a_relations_runs_passes) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const char* p =
      "depthwise_conv2d_backprop_input:input=1x76x124x5,filter=1x2x5x2,stride=3x3,dilation=1x3,"
      "padding=SAME,format=NCHW,dtype=f16";
  const CaseReport r = testbed::check(eigen(), p, FillKind::ramp, 4123916559u);
  omp_set_num_threads(before);
  const BackendRecord& b = r.records.at(0);
  BOOST_TEST(std::string(verdict_name(b.verdict)) == "pass", to_text(r));
  bool seen = false;
  for (const RelationResult& m : b.metamorphic) {
    if (m.name != "metamorphic:depthwise_grouped") continue;
    seen = true;
    BOOST_TEST(m.applicable, m.detail);
    BOOST_TEST(m.passed, m.detail);
    BOOST_TEST(m.residual == 1.0, m.residual << ": " << m.detail);
  }
  BOOST_TEST(seen);
}

// Each ISA the machine runs, through the cap: the backend says which runs, and every op on every
// dtype it computes passes the oracle there (the testbed's whole tables run on the widest one).
// Where the CPU or the build lacks an ISA the cap falls back to the next narrower, and the test
// says so rather than passing it as that ISA.
BOOST_AUTO_TEST_CASE(each_isa_module_runs_and_passes) {
  const CpuFeatures& cpu = cpu_features();
  const std::string baseline = eigen_with("baseline", nullptr)->isa();
  BOOST_TEST(baseline.find("avx") == std::string::npos, baseline);
  struct Want {
    const char* cap;
    bool runs;
  };
  const Want wants[] = {{"baseline", true},
                        {"avx2", cpu.avx2_usable() && module_built("avx2")},
                        {"avx512", cpu.avx512_usable() && module_built("avx512")}};
  const char* problems[] = {
      "conv2d:input=2x9x9x8,filter=3x3x8x16,stride=2x2,padding=SAME",
      "conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x16,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=2x9x9x8,filter=3x3x8x16,dilation=2x2,padding=VALID",
      "conv2d_transpose:input=1x8x8x17,filter=5x5x17x9,stride=2x2,padding=SAME",
      "depthwise_conv2d:input=2x8x8x16,filter=3x3x16x2,padding=SAME",
      "depthwise_conv2d_backprop_input:input=2x8x8x16,filter=3x3x16x2,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=1x8x8x16,filter=3x3x16x2,padding=SAME"};  // bf16: <
                                                                                        // 128 terms
  for (const Want& w : wants) {
    if (!w.runs) {
      BOOST_TEST_MESSAGE(
          "eigen " << w.cap << ": not checked ("
                   << (module_built(w.cap) ? "the CPU or OS does not run it" : "module not built")
                   << ")");
      continue;
    }
    const std::unique_ptr<Backend> b = eigen_with(w.cap, nullptr);
    BOOST_TEST(b->isa() == (std::string(w.cap) == "baseline" ? baseline : w.cap));
    for (const char* p : problems) {
      for (const char* dtype : {"f32", "f64", "f16", "bf16", "i32"}) {
        const std::string d = std::string(p) + ",dtype=" + dtype;
        if (std::string(dtype) == "i32" &&
            (d.find("filter:") != std::string::npos || d.find("depthwise") != std::string::npos))
          continue;  // not in the contract for int32
        const CaseReport r = testbed::check(*b, d, FillKind::real, 5);
        BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass",
                   w.cap << ": " << to_text(r));
      }
    }
    const std::string note = b->last_note();
    BOOST_TEST(note.find("(" + b->isa()) != std::string::npos, note);
  }
}

// An unknown cap, or one naming an ISA this CPU cannot run, is an error naming it; a cap below
// what the CPU runs, and a module that is not there, are reported, and a narrower build runs.
BOOST_AUTO_TEST_CASE(a_bad_cap_fails_and_a_missing_module_is_named) {
  BOOST_CHECK_EXCEPTION(eigen_with("avx3", nullptr), InvalidArgument, [](const InvalidArgument& e) {
    return std::string(e.what()).find("'avx3'") != std::string::npos;
  });
  const CpuFeatures& cpu = cpu_features();
  if (!cpu.avx512_usable())
    BOOST_CHECK_EXCEPTION(
        eigen_with("avx512", nullptr), InvalidArgument, [](const InvalidArgument& e) {
          return std::string(e.what()).find("cannot run the avx512") != std::string::npos;
        });
  if (!cpu.avx2_usable()) return;  // no module would be looked for
  const Problem pr = parse_problem("conv2d:input=1x5x5x2,filter=3x3x2x2,padding=SAME");
  const std::unique_ptr<Backend> b = eigen_with(nullptr, "/nonexistent-convcheck-dir");
  BOOST_TEST(b->isa() == eigen_with("baseline", nullptr)->isa());
  testbed::result_of(*b, pr, testbed::random_operands(pr, 2));
  const std::string want = module_built("avx2")
                               ? "convcheck-eigen-avx2.so not found in /nonexistent-convcheck-dir"
                               : "built without the avx2 module";
  BOOST_TEST(b->last_note().find(want) != std::string::npos, b->last_note());
  if (cpu.avx512_usable()) {
    const std::unique_ptr<Backend> capped = eigen_with("avx2", nullptr);
    testbed::result_of(*capped, pr, testbed::random_operands(pr, 2));
    BOOST_TEST(capped->last_note().find("capped by CONVCHECK_EIGEN_ISA=avx2") != std::string::npos,
               capped->last_note());
  }
}
