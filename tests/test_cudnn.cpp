#define BOOST_TEST_MODULE cudnn
// What is special to the "cudnn" comparator. Its tables (every op it has, both formats, strides,
// dilations (also with stride > 1), SAME with an odd total (asymmetric: the explicit pad copy),
// VALID, explicit asymmetric pads and pads larger than the filter, groups and depthwise
// multipliers: exact fill bitwise, real fill within the declared f32-fma contract; f64, f16 and
// bf16 pass or are unsupported with cuDNN's reason), the empty operands and repeated runs run in
// the backend testbed (tests/test_backends.cpp, CTest test_backends_cudnn). Here: the contract and
// the record's note naming cuDNN's algorithm, the large problems whose layouts are timed on their
// first run, and int32 unsupported with a reason.
//
// The device tests need a usable device and cuDNN: without one (no GPU, no driver, built without
// cuDNN) they are reported SKIPPED with the reason, and CTest reports test_cudnn skipped
// (tests/CMakeLists.txt), never passed. The last two cases run everywhere, registered again as
// test_cudnn_everywhere without the skip rule, so a failure of theirs is never hidden: int32 is
// unsupported with a reason, and an unavailable backend says why in one line. The layouts given to
// cuDNN are checked on every machine by tests/test_cudnn_layout.cpp.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comparators/comparators.h"
#include "oracle/oracle.h"
#include "tests/backend_testbed.h"

using namespace convcheck;
namespace utf = boost::unit_test;
namespace bdata = boost::unit_test::data;

namespace {

Backend& cudnn() {
  static std::unique_ptr<Backend> backend = [] {
    register_cudnn_backend(Registry::instance());
    return Registry::instance().make("cudnn");
  }();
  return *backend;
}

// Precondition of every device test: the backend is available; otherwise skipped, with why.
boost::test_tools::assertion_result available(utf::test_unit_id) {
  const Status s = cudnn().available();
  boost::test_tools::assertion_result r(s.ok());
  if (!s.ok()) r.message() << "cudnn backend unavailable: " << s.reason();
  return r;
}

CaseReport check(const std::string& text, FillKind fill, uint64_t seed = 11) {
  return testbed::check(cudnn(), text, fill, seed);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cudnn_backend, *utf::precondition(available))

// The contract: FP32 FMA (no TF32), a linear chain (k = n), and determinism as cuDNN's chosen
// algorithm says; the record names that algorithm.
BOOST_AUTO_TEST_CASE(contract_and_note) {
  const Problem p =
      parse_problem("conv2d_backprop_filter:input=2x8x8x8,filter=3x3x8x8,stride=2x2,padding=SAME");
  const NumericContract k = cudnn().contract(CheckedProblem(p));
  BOOST_TEST(k.name == "f32-fma");
  BOOST_TEST(k.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(k.u_out == 0.0);
  BOOST_TEST((k.chain == NumericContract::Chain::linear));
  BOOST_TEST(k.chain_length(1000) == 1000);
  const CaseReport r = check(to_string(p), FillKind::real);
  BOOST_TEST(std::string(verdict_name(r.records.at(0).verdict)) == "pass", to_text(r));
  const std::string note = cudnn().last_note();
  BOOST_TEST(note.find("bwd_filter=") == 0, note);
  BOOST_TEST(note.find("pad copy") != std::string::npos, note);  // SAME, stride 2: asymmetric
  BOOST_TEST((note.find("nondeterministic") == std::string::npos) == k.deterministic, note);
  BOOST_TEST(cudnn().last_device_ms() >= 0);
}

// Problems of at least 2^24 multiply-adds build both layouts and time them on their first run;
// whichever wins must pass, and later runs reuse it.
BOOST_DATA_TEST_CASE(
    large_problems_pass,
    bdata::make(std::vector<std::string>{
        "conv2d_backprop_input:input=4x16x16x64,filter=1x1x64x256",
        "conv2d_backprop_filter:input=2x16x16x64,filter=3x3x64x64,padding=SAME",
        "conv2d_transpose:input=2x16x16x64,filter=3x3x64x64,stride=2x2,padding=SAME,format=NCHW",
        "depthwise_conv2d_backprop_input:input=4x32x32x64,filter=3x3x64x2,padding=SAME",
    }),
    text) {
  BOOST_TEST_CONTEXT(text) {
    testbed::Expect strict;
    strict.degenerate_ok = false;
    strict.nan_footprint_known = testbed::kCudnnBackwardData;
    testbed::expect_pass_exact_and_real(cudnn(), text, strict);
    BOOST_TEST_MESSAGE(text << ": " << cudnn().last_note());
  }
}

BOOST_AUTO_TEST_SUITE_END()

// Always runs: registered under its name; an unavailable backend says why, in one line.
BOOST_AUTO_TEST_CASE(registered_and_reports_availability) {
  Backend& b = cudnn();
  BOOST_TEST(b.name() == "cudnn");
  const Status s = b.available();
  if (!s.ok()) {
    BOOST_TEST(!s.reason().empty());
    BOOST_TEST(s.reason().find('\n') == std::string::npos, s.reason());
    // Logged at warning level (CTest runs the suite so), so that CTest's output and the skip
    // list (scripts/ctest-skips.py) say why the device tests were skipped, as test_gpu's do.
    BOOST_WARN_MESSAGE(s.ok(), "cudnn unavailable: " << s.reason());
  }
}

// Always runs: int32 is declined with a reason, on every machine (with or without a device).
BOOST_AUTO_TEST_CASE(int32_is_unsupported_with_a_reason) {
  for (const char* text :
       {"conv2d:input=1x5x5x2,filter=3x3x2x2,dtype=i32",
        "conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x2,stride=2x2,dtype=i32",
        "conv2d_transpose:input=1x5x5x2,filter=3x3x2x2,padding=SAME,dtype=i32"}) {
    BOOST_TEST_CONTEXT(text) {
      const Status s = cudnn().can_implement(CheckedProblem(parse_problem(text)));
      BOOST_TEST(!s.ok());
      BOOST_TEST(!s.reason().empty());
      // The int32 reason, or (built without cuDNN) why the backend is missing altogether.
      BOOST_TEST((s.reason().find("int32") != std::string::npos ||
                  s.reason() == cudnn().available().reason()),
                 s.reason());
      const CaseReport r = check(text, FillKind::exact);
      BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
      BOOST_TEST(std::string(verdict_name(r.records[0].verdict)) == "unsupported");
      BOOST_TEST(!r.records[0].reason.empty());
    }
  }
}
