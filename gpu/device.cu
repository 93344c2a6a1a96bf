// The device layer (gpu/device.h): availability, checked calls, guarded device copies.
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device.h"

namespace convcheck::gpu {

namespace {

std::string describe_error(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// An empty kernel: cudaFuncGetAttributes on it tells whether the build's fatbinary has an image
// for the device (gpu/CMakeLists.txt passes the architecture list as CONVCHECK_CUDA_ARCHS).
__global__ void image_probe_kernel() {}

struct Probe {
  Status status = Status::Ok();
  std::string description;
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      const char* what =
          e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || e == cudaSuccess
              ? (e == cudaErrorInsufficientDriver ? "no usable CUDA driver" : "no CUDA device")
              : "CUDA unusable";
      r.status =
          Status::Error(std::string(what) + " (cudaGetDeviceCount: " +
                        (e == cudaSuccess ? std::string("0 devices") : describe_error(e)) + ")");
      cudaGetLastError();  // clear the sticky-free error so later queries start clean
      r.description = r.status.reason();
      return r;
    }
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
      r.status = Status::Error("CUDA unusable (cudaGetDeviceProperties failed)");
      r.description = r.status.reason();
      return r;
    }
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    auto ver = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    r.description = std::string(prop.name) + ", sm_" + std::to_string(prop.major) +
                    std::to_string(prop.minor) + ", " + std::to_string(prop.multiProcessorCount) +
                    " SMs, " + std::to_string(prop.totalGlobalMem >> 20) + " MiB, driver " +
                    ver(driver) + ", runtime " + ver(runtime);
    // Whether this build holds code the device can run (SASS of its major at or below its minor,
    // or PTX at or below it): the runtime answers when asked for a kernel's attributes. Every
    // .cu file is built for the same CMAKE_CUDA_ARCHITECTURES, so one kernel stands for all.
    cudaFuncAttributes attr{};
    const cudaError_t img = cudaFuncGetAttributes(&attr, image_probe_kernel);
    if (img != cudaSuccess) {
      cudaGetLastError();
      r.status = Status::Error("device " + std::string(prop.name) + " is sm_" +
                               std::to_string(prop.major) + std::to_string(prop.minor) +
                               "; this build has code for " CONVCHECK_CUDA_ARCHS " only (" +
                               describe_error(img) + "); rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                               std::to_string(prop.major) + std::to_string(prop.minor));
    }
    return r;
  }();
  return p;
}

}  // namespace

Status device_status() {
  return probe().status;
}
std::string device_description() {
  return probe().description;
}

void check_cuda(int status, const char* call, const std::string& context) {
  if (status == static_cast<int>(cudaSuccess)) return;
  const auto e = static_cast<cudaError_t>(status);
  throw std::runtime_error("CUDA call " + std::string(call) + " failed: " + describe_error(e) +
                           " (" + context + ")");
}

DeviceTensor::DeviceTensor(const ConstTensorView& v, const std::string& context)
    : bytes_(static_cast<std::size_t>(element_count(v.shape)) * dtype_size(v.dtype)),
      guard_(v.guard_bytes),
      context_(context) {
  const std::size_t span = bytes_ + 2 * guard_;
  CONVCHECK_CUDA_CHECK(cudaMalloc(&base_, span > 0 ? span : 1), context_);
  data_ = static_cast<unsigned char*>(base_) + guard_;
  if (span > 0)
    CONVCHECK_CUDA_CHECK(cudaMemcpy(base_, static_cast<const unsigned char*>(v.data) - guard_, span,
                                    cudaMemcpyHostToDevice),
                         context_);
}

DeviceTensor::DeviceTensor(const TensorView& v, const std::string& context)
    : DeviceTensor(ConstTensorView{v.data, v.dtype, v.shape, v.layout, v.guard_bytes}, context) {}

DeviceTensor::DeviceTensor(std::size_t bytes, const std::string& context)
    : bytes_(bytes), context_(context) {
  CONVCHECK_CUDA_CHECK(cudaMalloc(&base_, bytes > 0 ? bytes : 1), context_);
  data_ = base_;
  if (bytes > 0) CONVCHECK_CUDA_CHECK(cudaMemset(base_, 0, bytes), context_);
}

DeviceTensor::~DeviceTensor() {
  if (base_ != nullptr) cudaFree(base_);
}

void DeviceTensor::copy_back(const TensorView& v) const {
  const std::size_t span = bytes_ + 2 * guard_;
  if (span == 0) return;
  CONVCHECK_CUDA_CHECK(
      cudaMemcpy(static_cast<unsigned char*>(v.data) - guard_, base_, span, cudaMemcpyDeviceToHost),
      context_);
}

void DeviceTensor::verify_unchanged(const ConstTensorView& v, const char* role) const {
  const std::size_t span = bytes_ + 2 * guard_;
  if (span == 0) return;
  std::vector<unsigned char> now(span);
  CONVCHECK_CUDA_CHECK(cudaMemcpy(now.data(), base_, span, cudaMemcpyDeviceToHost), context_);
  const auto* host = static_cast<const unsigned char*>(v.data) - guard_;
  for (std::size_t i = 0; i < span; ++i) {
    if (now[i] == host[i]) continue;
    const long offset = static_cast<long>(i) - static_cast<long>(guard_);
    if (i < guard_ || i >= guard_ + bytes_)
      throw GuardViolation("out_of_bounds", "a kernel wrote outside the device copy of " +
                                                std::string(role) + " (guard byte at offset " +
                                                std::to_string(offset) + " from its data changed)");
    throw GuardViolation("operand_modified", "a kernel modified the device copy of " +
                                                 std::string(role) + " (byte " +
                                                 std::to_string(offset) + ")");
  }
}

}  // namespace convcheck::gpu
