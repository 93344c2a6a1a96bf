#define BOOST_TEST_MODULE onednn
// The "onednn" comparator through the oracle: every op it has, both formats, strides, dilations
// (also with stride > 1), SAME / VALID / explicit asymmetric padding, groups and depthwise
// multipliers pass with the exact fill (bitwise) and the real fill (within its declared contract);
// dtypes oneDNN lacks are unsupported with a reason. When the backend is unavailable (oneDNN was
// not found at build time), every test here is reported SKIPPED with the reason.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comparators/comparators.h"
#include "oracle/oracle.h"

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

// Geometries of the dense ops (conv2d, backprop input, transpose, backprop filter).
const char* const kConvGeometries[] = {
    "input=2x7x6x4,filter=3x3x4x5,padding=SAME",
    "input=2x7x6x4,filter=3x2x4x6,stride=2x1,format=NCHW",
    "input=1x9x8x3,filter=3x3x3x4,dilation=2x2,padding=SAME,format=NCHW",
    "input=1x11x10x4,filter=3x2x4x4,stride=2x2,dilation=2x3,padding=1:2:0:3",
    "input=1x9x9x2,filter=3x3x2x3,stride=2x2,dilation=2x2,padding=SAME",
    "input=2x6x6x6,filter=3x3x2x9,padding=SAME",                            // 3 groups
    "input=2x6x7x8,filter=2x3x4x6,stride=2x2,padding=0:3:2:1,format=NCHW",  // 2 groups
    "input=1x8x8x3,filter=2x2x3x4,padding=4:0:3:1",  // pads larger than the filter
    "input=2x10x9x3,filter=2x2x3x5,stride=3x3",      // stride larger than the filter
    "input=2x5x5x8,filter=1x1x8x16,format=NCHW",
    "input=1x5x6x3,filter=5x6x3x2",  // filter covers the whole input: 1x1 output
};
const char* const kConvOps[] = {"conv2d", "conv2d_backprop_input", "conv2d_transpose",
                                "conv2d_backprop_filter"};

// Geometries of the depthwise ops (filter RSCM: multiplier last).
const char* const kDepthwiseGeometries[] = {
    "input=2x7x6x3,filter=3x3x3x1,padding=SAME",
    "input=1x7x5x3,filter=3x2x3x2,stride=2x1,dilation=1x2,padding=SAME",
    "input=2x6x6x4,filter=2x2x4x3,padding=2:0:1:1,format=NCHW",
    "input=1x9x8x2,filter=3x3x2x4,stride=2x2,format=NCHW",
    "input=2x8x8x5,filter=3x3x5x1,stride=2x2,padding=SAME,format=NCHW",
    "input=1x10x9x3,filter=3x2x3x2,dilation=2x2,padding=0:1:3:0",
};
const char* const kDepthwiseOps[] = {"depthwise_conv2d", "depthwise_conv2d_backprop_input",
                                     "depthwise_conv2d_backprop_filter"};

std::vector<std::string> f32_problems() {
  std::vector<std::string> out;
  for (const char* op : kConvOps)
    for (const char* geo : kConvGeometries) out.push_back(std::string(op) + ":" + geo);
  for (const char* op : kDepthwiseOps)
    for (const char* geo : kDepthwiseGeometries) out.push_back(std::string(op) + ":" + geo);
  return out;
}

// One problem of each op in a 16-bit dtype.
std::vector<std::string> half_problems() {
  std::vector<std::string> out;
  for (const char* dtype : {"bf16", "f16"}) {
    for (const char* op : kConvOps)
      out.push_back(std::string(op) +
                    ":input=2x7x6x4,filter=3x3x4x5,stride=2x1,padding=SAME,dtype=" + dtype);
    for (const char* op : kDepthwiseOps)
      out.push_back(std::string(op) +
                    ":input=1x7x5x3,filter=3x2x3x2,padding=1:0:0:2,dtype=" + dtype);
  }
  return out;
}

std::string name_of(Verdict v) {
  return verdict_name(v);
}

CaseReport check(const std::string& text, FillKind fill, uint64_t seed = 11) {
  Case c;
  c.problem = parse_problem(text);
  c.seed = seed;
  c.fill = fill;
  return run_case(c, {&onednn()});
}

void expect_pass(const std::string& text) {
  for (FillKind fill : {FillKind::exact, FillKind::real}) {
    const CaseReport r = check(text, fill);
    BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
    const BackendRecord& rec = r.records[0];
    BOOST_TEST(name_of(rec.verdict) == "pass", text << " --fill " << fill_name(fill) << ": "
                                                    << verdict_name(rec.verdict) << " ("
                                                    << rec.check << ") " << rec.reason << "\n"
                                                    << to_text(r));
    if (fill == FillKind::exact) BOOST_TEST(rec.mismatches == 0);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(onednn_backend, *utf::precondition(available))

BOOST_DATA_TEST_CASE(f32_problems_pass, bdata::make(f32_problems()), text) {
  BOOST_TEST_CONTEXT(text) {
    BOOST_TEST_REQUIRE(onednn().can_implement(parse_problem(text)).ok(),
                       onednn().can_implement(parse_problem(text)).reason());
    expect_pass(text);
  }
}

// bf16 / f16: pass where oneDNN implements the op on this CPU, else unsupported with oneDNN's
// reason.
BOOST_DATA_TEST_CASE(half_problems_pass_or_say_why, bdata::make(half_problems()), text) {
  BOOST_TEST_CONTEXT(text) {
    const Status s = onednn().can_implement(parse_problem(text));
    if (s.ok()) {
      expect_pass(text);
    } else {
      BOOST_TEST_MESSAGE(text << ": unsupported: " << s.reason());
      BOOST_TEST(s.reason().find("oneDNN") != std::string::npos, s.reason());
      const CaseReport r = check(text, FillKind::real);
      BOOST_TEST(name_of(r.records.at(0).verdict) == "unsupported");
      BOOST_TEST(r.records.at(0).reason == s.reason());
    }
  }
}

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

// An empty operand with a non-empty result: TF's sum of no terms, every element written as 0.
BOOST_AUTO_TEST_CASE(empty_operand_gives_zeros) {
  for (const char* text : {"conv2d_backprop_filter:input=0x5x5x2,filter=3x3x2x3",
                           "conv2d_backprop_input:input=2x5x5x2,filter=3x3x2x0",
                           "depthwise_conv2d_backprop_filter:input=0x4x4x2,filter=2x2x2x2"}) {
    BOOST_TEST_CONTEXT(text) {
      const Problem p = parse_problem(text);
      const Geometry g = geometry(p);
      BOOST_TEST_REQUIRE(onednn().can_implement(p).ok());
      Tensor roles[3];
      ConstTensorView views[3];
      Operands in;
      for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
        const int i = static_cast<int>(r);
        roles[i] = Tensor(p.dtype, storage_shape(p, g, r), storage_layout(p, r));
        views[i] = view(static_cast<const Tensor&>(roles[i]));
      }
      const OpIO io = op_io(p.op);
      in.set(io.a, &views[static_cast<int>(io.a)]);
      in.set(io.b, &views[static_cast<int>(io.b)]);
      Tensor result(p.dtype, storage_shape(p, g, io.result_like),
                    storage_layout(p, io.result_like));
      BOOST_TEST_REQUIRE(result.size() > 0);
      for (int64_t i = 0; i < result.size(); ++i) result.set(i, NAN);
      onednn().run(p, g, in, view(result));
      for (int64_t i = 0; i < result.size(); ++i) BOOST_TEST(result.get(i) == 0.0);
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
    expect_pass(text);
  }
}

// Repeated runs reuse the cached primitives and give the same answer.
BOOST_AUTO_TEST_CASE(repeated_runs_agree) {
  const char* text =
      "conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x8,stride=2x2,padding=SAME,format=NCHW";
  const CaseReport a = check(text, FillKind::real, 5), b = check(text, FillKind::real, 5);
  BOOST_TEST(name_of(a.records.at(0).verdict) == "pass");
  BOOST_TEST(name_of(b.records.at(0).verdict) == "pass");
  BOOST_TEST(a.records.at(0).bound_usage == b.records.at(0).bound_usage);
}

BOOST_AUTO_TEST_SUITE_END()

// Always runs: the backend is registered under its name and says whether it is available.
BOOST_AUTO_TEST_CASE(registered_and_reports_availability) {
  Backend& b = onednn();
  BOOST_TEST(b.name() == "onednn");
  const Status s = b.available();
  if (!s.ok()) BOOST_TEST(!s.reason().empty());
}
