#define BOOST_TEST_MODULE gpu
// What is special to the "gpu" backend on a device (issue 5 items 2-4). Every code path (stride
// phases, backprop filter chunks, groups, depthwise multipliers, NCHW, empty tensors), every
// dtype, the tf32 mode and special values pass through the oracle in the backend testbed
// (tests/test_backends.cpp, CTest test_backends_gpu and test_backends_gpu_tf32). Here: the
// device's results are bit for bit those of the host emulation (gpu/emulator.h) that
// tests/test_gpu_kernels.cpp verifies everywhere, on the same tables; the tiled layers pass;
// larger layers rerun bitwise and report the device time; oversized problems are declined.
//
// Every test but the first needs a usable device: without one (no GPU, no driver, built without
// a toolkit) it is reported SKIPPED with the reason, and CTest reports the executable skipped
// (tests/CMakeLists.txt), never passed.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "gpu/emulator.h"
#include "gpu/gpu.h"
#include "oracle/oracle.h"
#include "tests/backend_cases.h"
#include "tests/backend_testbed.h"

using namespace convcheck;
namespace utf = boost::unit_test;
using testbed::bytes;
using testbed::result_of;

namespace {

Backend& backend(const std::string& name) {
  static const bool registered = [] {
    register_gpu_backend(Registry::instance());
    return true;
  }();
  (void)registered;
  static std::unique_ptr<Backend> gpu = Registry::instance().make("gpu"),
                                  tf32 = Registry::instance().make("gpu-tf32");
  return name == "gpu-tf32" ? *tf32 : *gpu;
}

// Precondition of every device test: the backend is available; otherwise skipped, with why.
boost::test_tools::assertion_result available(utf::test_unit_id) {
  const Status s = backend("gpu").available();
  boost::test_tools::assertion_result r(s.ok());
  if (!s.ok()) r.message() << "gpu backend unavailable: " << s.reason();
  return r;
}

testbed::Operands2 random_operands(const Problem& p, uint64_t seed) {
  return testbed::random_operands(p, seed, 1e6);
}

}  // namespace

// Runs everywhere: unavailability always comes with a reason, and it is the device layer's.
BOOST_AUTO_TEST_CASE(availability_is_the_device_status_with_a_reason) {
  const Status device = gpu::device_status();
  for (const char* name : {"gpu", "gpu-tf32"}) {
    const Status s = backend(name).available();
    BOOST_TEST(s.ok() == device.ok(), name);
    if (!s.ok()) {
      BOOST_TEST(!s.reason().empty(), name);
      BOOST_TEST(s.reason() == device.reason(), name);
      // Logged at warning level, so CTest's output says why the device tests were skipped.
      BOOST_WARN_MESSAGE(s.ok(), name << " unavailable: " << s.reason());
    }
  }
  // can_implement declines with the same reason where there is no device.
  const Status can =
      backend("gpu").can_implement(CheckedProblem(parse_problem(backend_cases::kPaths[0].problem)));
  BOOST_TEST(can.ok() == device.ok());
  if (!device.ok()) BOOST_TEST(can.reason() == device.reason());
}

BOOST_AUTO_TEST_SUITE(on_a_device, *utf::precondition(available))

// The device computes exactly what the host emulation computes (same plan, same per-element
// order, explicit FMAs): bit for bit, on real data, in every dtype and both modes, on the direct
// path (the testbed's code-path table) and the tiled one (kTiledLayers).
const char* const kTiledLayers[] = {
    "conv2d:input=2x16x16x64,filter=3x3x64x64,padding=SAME",
    "conv2d:input=2x15x15x48,filter=3x3x24x80,stride=2x2,padding=SAME,format=NCHW",
    "conv2d_backprop_input:input=2x16x16x64,filter=3x3x64x64,stride=2x2,padding=SAME",
    "conv2d_transpose:input=2x14x14x40,filter=5x5x40x72,stride=2x2,padding=SAME",
    "conv2d_backprop_filter:input=4x16x16x64,filter=3x3x64x64,padding=SAME",
    "conv2d_backprop_filter:input=8x14x14x32,filter=1x1x32x128",
};

BOOST_AUTO_TEST_CASE(device_bits_equal_the_host_emulation) {
  gpu::EmulatedGpu host_fma(gpu::Mode::fma), host_tf32(gpu::Mode::tf32);
  std::vector<const char*> problems;
  for (const backend_cases::PathCase& c : backend_cases::kPaths) problems.push_back(c.problem);
  problems.insert(problems.end(), std::begin(kTiledLayers), std::end(kTiledLayers));
  for (const char* base : problems) {
    for (const char* dtype : {"f16", "bf16", "f32", "f64", "i32"}) {
      Problem p = parse_problem(base);
      p.dtype = *parse_dtype(dtype);
      if (!op_takes_dtype(p.op, p.dtype)) continue;
      const testbed::Operands2 in = random_operands(p, 3);
      BOOST_TEST((bytes(result_of(backend("gpu"), p, in)) == bytes(result_of(host_fma, p, in))),
                 to_string(p));
      if (p.dtype == DType::f32)
        BOOST_TEST(
            (bytes(result_of(backend("gpu-tf32"), p, in)) == bytes(result_of(host_tf32, p, in))),
            to_string(p) << " tf32");
    }
  }
}

// Larger layers (many blocks, long chains, many chunks) pass on real data, rerun bitwise, and
// report a device time.
BOOST_AUTO_TEST_CASE(layers_pass_rerun_bitwise_and_are_timed) {
  for (const char* p :
       {"conv2d:input=4x28x28x64,filter=3x3x64x64,padding=SAME",
        "conv2d_backprop_input:input=4x28x28x64,filter=3x3x64x64,stride=2x2,padding=SAME",
        "conv2d_transpose:input=4x28x28x32,filter=3x3x32x64,stride=2x2,padding=SAME,format=NCHW",
        "conv2d_backprop_filter:input=8x28x28x32,filter=3x3x32x32,padding=SAME",
        "depthwise_conv2d_backprop_input:input=8x56x56x32,filter=3x3x32x1,padding=SAME",
        "depthwise_conv2d_backprop_filter:input=8x56x56x32,filter=3x3x32x1,stride=2x2,"
        "padding=SAME"}) {
    testbed::expect_pass(backend("gpu"), p, FillKind::real);
    const Problem pr = parse_problem(p);
    const testbed::Operands2 in = random_operands(pr, 9);
    const std::vector<unsigned char> first = bytes(result_of(backend("gpu"), pr, in));
    BOOST_TEST(backend("gpu").last_device_ms() >= 0.0, p);
    for (int run = 0; run < 2; ++run)
      BOOST_TEST((bytes(result_of(backend("gpu"), pr, in)) == first), p << " run " << run);
  }
  BOOST_TEST(!backend("gpu").device_peaks().device.empty());
}

BOOST_AUTO_TEST_CASE(tiled_layers_pass) {
  for (const char* p : kTiledLayers) testbed::expect_pass_exact_and_real(backend("gpu"), p);
}

// A problem whose buffers exceed the device's memory is declined with the reason, not crashed.
// Its input is 1 TiB, more than any GPU has (a 64 GiB one fitted an H200's 141 GiB, 2026-11-27).
BOOST_AUTO_TEST_CASE(oversized_problem_is_declined_with_a_reason) {
  const Status s = backend("gpu").can_implement(
      CheckedProblem(parse_problem("conv2d:input=1024x1024x1024x256,filter=1x1x256x1")));
  BOOST_TEST(!s.ok());
  BOOST_TEST(s.reason().find("device memory") != std::string::npos, s.reason());
}

BOOST_AUTO_TEST_SUITE_END()
