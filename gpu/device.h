// The device layer shared by the "gpu" backend and the "cudnn" comparator: availability with a
// reason, checked CUDA calls, and device copies of guarded host buffers (design §6.2 on a device).
//
// This header includes no CUDA header, so host-only code (tools, tests) can ask for availability.
// When the project is built without a CUDA toolkit, device.cpp's stub answers "built without a
// CUDA toolkit" and nothing else here is called.
#pragma once

#include <cstddef>
#include <string>

#include "core/backend.h"
#include "core/error.h"

namespace convcheck::gpu {

/// Whether a CUDA device can be used, with the reason when not, e.g.
///   "no CUDA device (cudaGetDeviceCount: cudaErrorNoDevice: no CUDA-capable device is detected)"
///   "no CUDA driver (cudaGetDeviceCount: cudaErrorInsufficientDriver: ...)"
///   "built without a CUDA toolkit (configure with -DCONVCHECK_CUDA=AUTO|ON where nvcc is found)"
/// Computed once per process (the first call initialises the runtime); never throws or aborts.
Status device_status();

/// "NVIDIA H100 80GB HBM3, sm_90, 132 SMs, driver 13.0, runtime 13.0", or the reason it is
/// unavailable. For reports and bench records.
std::string device_description();

/// The device's f32 FMA rate (GFLOP/s) and memory bandwidth (GB/s, read + write bytes of a copy
/// far larger than L2), measured in this process on its first call (about a second) and cached;
/// `device` is device_description(). {} when no device is usable; never throws (gpu/peaks.cu).
Backend::DevicePeaks measure_device_peaks();

/// A device copy of a host tensor view together with its guard bands (TensorView::guard_bytes):
/// the whole span [data - guard, data + bytes + guard) is mirrored, so poison and guard bytes
/// travel with the data. `context` (the problem's descriptor) goes into every error message.
class DeviceTensor {
 public:
  /// An operand: allocates the span and copies it in.
  DeviceTensor(const ConstTensorView& v, const std::string& context);
  /// The result: allocates the span and copies it in (the caller's poison and guard bands).
  DeviceTensor(const TensorView& v, const std::string& context);
  /// A device scratch buffer of `bytes` (no host counterpart, no guards), zeroed.
  DeviceTensor(std::size_t bytes, const std::string& context);
  ~DeviceTensor();
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  void* data() const { return data_; }  // device address of element 0
  std::size_t bytes() const { return bytes_; }

  /// Copies the whole span (guards included) back into the result view it was made from.
  void copy_back(const TensorView& v) const;
  /// Compares the device span with the host operand's span; throws GuardViolation
  /// ("out_of_bounds" when a guard byte changed, "operand_modified" when the data did), naming
  /// `role` and the first changed byte's offset.
  void verify_unchanged(const ConstTensorView& v, const char* role) const;

 private:
  void* base_ = nullptr;  // device allocation
  void* data_ = nullptr;  // base_ + guard_
  std::size_t bytes_ = 0, guard_ = 0;
  std::string context_;
};

/// Throws std::runtime_error "CUDA call <call> failed: <error name>: <error string> (<context>)"
/// when `status` (a cudaError_t, passed as int so this header needs no CUDA header) is not
/// cudaSuccess. Use the CONVCHECK_CUDA_CHECK macro of gpu/cuda_check.h in .cu files.
void check_cuda(int status, const char* call, const std::string& context);

}  // namespace convcheck::gpu
