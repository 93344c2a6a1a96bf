// Placeholder: the "gpu" backend's driver (issue 5).
#include <memory>
#include <stdexcept>

#include "gpu/device.h"
#include "gpu/gpu.h"

namespace convcheck {
namespace {
class GpuPending final : public Backend {
 public:
  std::string name() const override { return "gpu"; }
  Status available() const override { return gpu::device_status(); }
  Status can_implement(const Problem&) const override {
    return Status::Error("gpu kernels not built yet");
  }
  NumericContract contract(const Problem&) const override { return {}; }
  void run(const Problem&, const Geometry&, const Operands&, TensorView) override {
    throw std::logic_error("gpu pending");
  }
};
}  // namespace
void register_gpu_backend(Registry& r) {
  r.add("gpu", "CUDA backend", [](const std::string&) { return std::make_unique<GpuPending>(); });
}
}  // namespace convcheck
