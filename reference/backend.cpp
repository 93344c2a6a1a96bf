// The "reference" backend: the exact reference behind the Backend interface.
#include <cmath>
#include <cstring>

#include "reference/reference.h"

namespace convcheck {

namespace {

class ReferenceBackend : public Backend {
 public:
  std::string name() const override { return "reference"; }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }
  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c;
    c.name = "exact";
    c.chain = NumericContract::Chain::exact;
    // Rounded once from the exact value: half an ulp of the result dtype (0 for int32's exact
    // wrap).
    c.u_out = p.dtype == DType::i32 ? 0.0 : std::ldexp(1.0, -float_format(p.dtype).precision);
    c.deterministic = true;
    return c;
  }
  void compute(const CheckedProblem& p, const Operands& in, TensorView result) override {
    ReferenceResult r = reference_compute(p.problem(), p.geometry(), in);
    if (r.result.bytes() > 0) std::memcpy(result.data, r.result.data(), r.result.bytes());
  }
};

}  // namespace

void register_reference_backend(Registry& registry) {
  registry.add("reference",
               "exact reference: the exact value rounded once into the dtype (design §5)",
               [](const std::string&) { return std::make_unique<ReferenceBackend>(); });
}

}  // namespace convcheck
