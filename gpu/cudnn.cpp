// Placeholder: the cuDNN comparator (issue 5). Registered as unavailable until written.
#include <memory>
#include <stdexcept>

#include "gpu/gpu.h"

namespace convcheck {
namespace {
class CudnnPending final : public Backend {
 public:
  std::string name() const override { return "cudnn"; }
  Status available() const override { return Status::Error("cudnn comparator not built yet"); }
  Status can_implement(const Problem&) const override { return available(); }
  NumericContract contract(const Problem&) const override { return {}; }
  void run(const Problem&, const Geometry&, const Operands&, TensorView) override {
    throw std::logic_error("cudnn pending");
  }
};
}  // namespace
void register_cudnn_backend(Registry& r) {
  r.add("cudnn", "cuDNN 9 comparator",
        [](const std::string&) { return std::make_unique<CudnnPending>(); });
}
}  // namespace convcheck
