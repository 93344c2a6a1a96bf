// What the "gpu" backend's files share (internal to gpu/): the device executor of a plan. The op
// entry points, one file each (gpu/conv2d.cu, ...), are declared in gpu/ops.h. The driver
// (gpu/backend.cu) converts operands, picks the compute type and calls these; the op files hold the
// kernels' launches, and the kernels' arithmetic lives in gpu/kernels/*.cuh (shared with the host
// emulation).
//
// Compute types: float (f32, f16, bf16, tf32), double (f64), uint32_t (int32, wrapping).
// Operands are canonical: activations NHWC, filters HWIO (RSCM for depthwise), on the device.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/plan.h"

namespace convcheck::gpu {

/// Runs a plan's kernels on the current device, in the default stream, in launch order. Every
/// launch is checked; errors name the call and `context` (the backend and the problem).
class DeviceExec {
 public:
  /// `flag`: one device int of scratch for all_finite.
  DeviceExec(const std::string& context, int* flag) : context_(context), flag_(flag) {}
  const std::string& context() const { return context_; }
  /// f(i) for every i < n, one device thread each (grid-stride). Defined in gpu/launch.cuh.
  template <class F>
  void for_each(const F& f, int64_t n);
  /// The CTAs of a tiled functor (gpu/kernels/tiled.cuh). Defined in gpu/launch.cuh.
  template <class F>
  void for_each_cta(const F& f);
  /// Whether p[0, n) (device memory) holds no NaN or Inf; waits for the answer.
  bool all_finite(const float* p, int64_t n);
  /// The plan's op on canonical operands (op_io order), into `out`. Defined in gpu/ops.h.
  template <class T>
  void run_op(const Plan& p, const T* a, const T* b, T* out, T* workspace);

 private:
  const std::string& context_;
  int* flag_;
};

}  // namespace convcheck::gpu
