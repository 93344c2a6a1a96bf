// Suite files: the grammar (descriptor, --tag, --fill, comments), errors with file:line, lookup by
// name, and every shipped suite parses.
#define BOOST_TEST_MODULE suite
#include <boost/test/unit_test.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/suite.h"

using namespace convcheck;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(entries_tags_fills_and_comments) {
  const Suite s = parse_suite(
      "# header\n\n"
      "conv2d:input=1x4x4x1,filter=2x2x1x1 --tag first   # trailing comment\n"
      "   conv2d_backprop_input:input=1x4x4x2,filter=3x3x2x2,padding=SAME --fill real --tag T1.x\n"
      "depthwise_conv2d:input=1x4x4x2,filter=1x1x2x3\n",
      "/x/demo.txt");
  BOOST_TEST(s.name == "demo");
  BOOST_TEST_REQUIRE(s.entries.size() == 3u);
  BOOST_TEST(s.entries[0].tag == "first");
  BOOST_TEST(s.entries[0].line == 3);
  BOOST_TEST(!s.entries[0].fill.has_value());
  BOOST_TEST(s.entries[1].tag == "T1.x");
  BOOST_TEST(*s.entries[1].fill == "real");
  BOOST_TEST((s.entries[1].problem.padding.kind == PaddingKind::SAME));
  BOOST_TEST(s.entries[2].tag.empty());
}

BOOST_AUTO_TEST_CASE(errors_name_file_and_line) {
  BOOST_TEST(error_of([] {
               parse_suite("conv2d:input=1x4x4x1,filter=2x2x1x1\nconv2d:input=1x4x4x1\n", "s.txt");
             }).find("s.txt:2: descriptor 'conv2d:input=1x4x4x1': missing required key 'filter'") ==
             0);
  BOOST_TEST(error_of([] {
               parse_suite("conv2d:input=1x1x1x1,filter=3x3x1x1\n", "s.txt");
             }).find("s.txt:1: conv2d: Computed output size would be negative") == 0);
  BOOST_TEST(error_of([] {
               parse_suite("conv2d:input=1x4x4x1,filter=2x2x1x1 --speed 3\n", "s.txt");
             }).find("s.txt:1: unknown option '--speed'") == 0);
  BOOST_TEST(error_of([] {
               parse_suite("conv2d:input=1x4x4x1,filter=2x2x1x1 --tag\n", "s.txt");
             }).find("option '--tag' has no value") != std::string::npos);
  const std::string unknown = error_of([] { read_suite("no_such_suite"); });
  BOOST_TEST(unknown.find("unknown suite 'no_such_suite'") == 0);
  BOOST_TEST(unknown.find("tf_tests") != std::string::npos, unknown);
}

BOOST_AUTO_TEST_CASE(shipped_suites_parse) {
  for (const std::string& name : suite_names()) {
    const Suite s = read_suite(name);
    BOOST_TEST(!s.entries.empty(), name);
  }
  BOOST_TEST(read_suite("tf_tests").entries.size() >= 150u);
  BOOST_TEST(read_suite("perf_cpu").entries.size() >= 24u);
}

// perf_gpu (issue 5): perf_cpu's layers at N = 32 with the same tags, in the same order, then the
// ResNet-50 layers again in NCHW, tagged "<tag>-nchw".
BOOST_AUTO_TEST_CASE(perf_gpu_is_perf_cpu_at_n32_plus_resnet_nchw) {
  const Suite cpu = read_suite("perf_cpu"), gpu = read_suite("perf_gpu");
  std::vector<SuiteEntry> resnet;
  for (const SuiteEntry& e : cpu.entries)
    if (e.tag.rfind("resnet50.", 0) == 0) resnet.push_back(e);
  BOOST_TEST(resnet.size() == 12u);
  BOOST_TEST_REQUIRE(gpu.entries.size() == cpu.entries.size() + resnet.size());
  for (std::size_t i = 0; i < cpu.entries.size(); ++i) {
    Problem p = cpu.entries[i].problem;
    p.input[0] = 32;
    BOOST_TEST((gpu.entries[i].problem == p), to_string(gpu.entries[i].problem));
    BOOST_TEST(gpu.entries[i].tag == cpu.entries[i].tag);
  }
  for (std::size_t j = 0; j < resnet.size(); ++j) {
    Problem p = resnet[j].problem;
    p.input[0] = 32;
    p.format = Format::NCHW;
    const SuiteEntry& e = gpu.entries[cpu.entries.size() + j];
    BOOST_TEST((e.problem == p), to_string(e.problem));
    BOOST_TEST(e.tag == resnet[j].tag + "-nchw");
  }
}
