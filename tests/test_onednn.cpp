#define BOOST_TEST_MODULE onednn
// What is special to the "onednn" comparator. Its tables (every op it has, both formats, strides,
// dilations, SAME / VALID / explicit asymmetric padding, groups and depthwise multipliers: exact
// fill bitwise, real fill within its declared contract; bf16 / f16 where oneDNN implements them on
// this CPU, else unsupported with oneDNN's reason), the empty operands and repeated runs run in the
// backend testbed (tests/test_backends.cpp, CTest test_backends_onednn). Here: f64 and int32
// declined with a reason, and the large problems whose layouts are timed on their first run. When
// the backend is unavailable (oneDNN was not found at build time), every test here but the last is
// reported SKIPPED with the reason.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
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

Backend& onednn() {
  static std::unique_ptr<Backend> backend = [] {
    register_onednn_backend(Registry::instance());
    return Registry::instance().make("onednn");
  }();
  return *backend;
}

// Precondition of every test: the backend is available; otherwise the test is skipped, with why.
boost::test_tools::assertion_result available(utf::test_unit_id) {
  const Status s = onednn().available();
  boost::test_tools::assertion_result r(s.ok());
  if (!s.ok()) r.message() << "onednn backend unavailable: " << s.reason();
  return r;
}

std::string name_of(Verdict v) {
  return verdict_name(v);
}

CaseReport check(const std::string& text, FillKind fill) {
  return testbed::check(onednn(), text, fill);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(onednn_backend, *utf::precondition(available))

BOOST_AUTO_TEST_CASE(f64_and_i32_are_unsupported_with_a_reason) {
  for (const char* text :
       {"conv2d:input=1x5x5x2,filter=3x3x2x2,dtype=f64",
        "conv2d_backprop_filter:input=1x5x5x2,filter=3x3x2x2,padding=SAME,dtype=f64",
        "depthwise_conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x2,dtype=f64",
        "conv2d:input=1x5x5x2,filter=3x3x2x2,dtype=i32",
        "conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x2,stride=2x2,dtype=i32",
        "conv2d_transpose:input=1x5x5x2,filter=3x3x2x2,padding=SAME,dtype=i32"}) {
    BOOST_TEST_CONTEXT(text) {
      const CaseReport r = check(text, FillKind::exact);
      BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
      BOOST_TEST(name_of(r.records[0].verdict) == "unsupported");
      BOOST_TEST(r.records[0].reason.find("oneDNN") != std::string::npos, r.records[0].reason);
    }
  }
}

// Problems of at least 2^24 multiply-adds time oneDNN's preferred formats against TF's on their
// first run and keep the faster; whichever wins must pass.
BOOST_DATA_TEST_CASE(
    large_problems_pass,
    bdata::make(std::vector<std::string>{
        "conv2d_backprop_input:input=4x16x16x64,filter=1x1x64x256",
        "conv2d_backprop_filter:input=2x16x16x64,filter=3x3x64x64,padding=SAME",
        "conv2d:input=2x16x16x64,filter=3x3x64x64,stride=2x2,padding=SAME,format=NCHW",
    }),
    text) {
  BOOST_TEST_CONTEXT(text) {
    testbed::Expect strict;
    strict.degenerate_ok = false;
    testbed::expect_pass_exact_and_real(onednn(), text, strict);
  }
}

// A record names the implementation oneDNN ran for the case's main run (Backend::last_note, as
// bench's records do: e.g. "jit:avx512_core"), in results.jsonl too.
BOOST_AUTO_TEST_CASE(records_name_the_implementation_that_ran) {
  const CaseReport r =
      check("conv2d_backprop_input:input=2x8x8x16,filter=3x3x16x16,padding=SAME", FillKind::real);
  BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
  const BackendRecord& rec = r.records[0];
  BOOST_TEST(name_of(rec.verdict) == "pass");
  BOOST_TEST(rec.note.find(':') != std::string::npos, "not an implementation name: " << rec.note);
  const std::string json = to_json(r);
  BOOST_TEST(json.find("\"note\":\"" + rec.note + "\"") != std::string::npos, json);
  BOOST_TEST(to_text(r).find("    ran " + rec.note + "\n") != std::string::npos, to_text(r));
}

BOOST_AUTO_TEST_SUITE_END()

// Always runs: the backend is registered under its name and says whether it is available.
BOOST_AUTO_TEST_CASE(registered_and_reports_availability) {
  Backend& b = onednn();
  BOOST_TEST(b.name() == "onednn");
  const Status s = b.available();
  if (!s.ok()) BOOST_TEST(!s.reason().empty());
}
