// Built when the project has no CUDA toolkit (CONVCHECK_CUDA=OFF, or AUTO without nvcc): "gpu" is
// registered as unavailable, with the reason (and "cudnn", in comparators/, gives the same one),
// and no device code exists.
#include <memory>
#include <stdexcept>

#include "gpu/device.h"
#include "gpu/gpu.h"

namespace convcheck {

namespace gpu {

namespace {
const char* const kNoToolkit =
    "built without a CUDA toolkit (configure with -DCONVCHECK_CUDA=AUTO or ON where nvcc is found)";
}  // namespace

Status device_status() {
  return Status::Error(kNoToolkit);
}
std::string device_description() {
  return kNoToolkit;
}
Backend::DevicePeaks measure_device_peaks() {
  return {};
}

}  // namespace gpu

void register_gpu_backend(Registry& registry) {
  registry.add("gpu", "CUDA backend, all seven ops (unavailable: no CUDA toolkit at build time)",
               [](const std::string&) {
                 return std::make_unique<UnavailableBackend>("gpu", gpu::device_status);
               });
  registry.add("gpu-tf32", "CUDA backend in TF32 mode (unavailable: no CUDA toolkit at build time)",
               [](const std::string&) {
                 return std::make_unique<UnavailableBackend>("gpu-tf32", gpu::device_status);
               });
}

}  // namespace convcheck
