// Built when the project has no CUDA toolkit (CONVCHECK_CUDA=OFF, or AUTO without nvcc): "gpu" and
// "cudnn" are registered as unavailable, with the reason, and no device code exists.
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

namespace {

class Unavailable final : public Backend {
 public:
  explicit Unavailable(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Status available() const override { return gpu::device_status(); }
  Status can_implement(const Problem&) const override { return gpu::device_status(); }
  NumericContract contract(const Problem&) const override { return {}; }
  void run(const Problem&, const Geometry&, const Operands&, TensorView) override {
    throw std::logic_error(name_ + " run without a CUDA toolkit");
  }

 private:
  std::string name_;
};

}  // namespace

void register_gpu_backend(Registry& registry) {
  registry.add("gpu", "CUDA backend, all seven ops (unavailable: no CUDA toolkit at build time)",
               [](const std::string&) { return std::make_unique<Unavailable>("gpu"); });
  registry.add("gpu-tf32", "CUDA backend in TF32 mode (unavailable: no CUDA toolkit at build time)",
               [](const std::string&) { return std::make_unique<Unavailable>("gpu-tf32"); });
}

void register_cudnn_backend(Registry& registry) {
  registry.add("cudnn", "cuDNN 9 comparator (unavailable: no CUDA toolkit at build time)",
               [](const std::string&) { return std::make_unique<Unavailable>("cudnn"); });
}

}  // namespace convcheck
