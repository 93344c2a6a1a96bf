#include "core/backend.h"

#include <cmath>
#include <stdexcept>

#include "core/error.h"
#include "core/half.h"

namespace convcheck {

const ConstTensorView* Operands::get(Role r) const {
  switch (r) {
    case Role::input:
      return input;
    case Role::filter:
      return filter;
    case Role::out_backprop:
      return out_backprop;
  }
  return nullptr;
}

NumericContract native_contract(DType t) {
  NumericContract c;
  c.chain = NumericContract::Chain::linear;
  c.deterministic = true;
  switch (t) {
    case DType::f32:
      c.name = "f32-fma";
      c.u_acc = std::ldexp(1.0, -24);
      break;
    case DType::f64:
      c.name = "f64-fma";
      c.u_acc = std::ldexp(1.0, -53);
      break;
    case DType::f16:
    case DType::bf16:
      c.name = std::string(dtype_name(t)) + "-storage-f32-acc";
      c.u_acc = std::ldexp(1.0, -24);
      c.u_out = std::ldexp(1.0, -float_format(t).precision);
      break;
    case DType::i32:
      c.name = "i32-wrap";
      c.chain = NumericContract::Chain::exact;  // exact modulo 2^32
      break;
  }
  return c;
}

int64_t NumericContract::chain_length(int64_t n) const {
  switch (chain) {
    case Chain::exact:
      return 0;
    case Chain::linear:
      return n;
    case Chain::blocked: {
      if (block <= 0 || n <= block) return n;
      return block + (n + block - 1) / block;
    }
  }
  return n;
}

void Operands::set(Role r, const ConstTensorView* v) {
  switch (r) {
    case Role::input:
      input = v;
      break;
    case Role::filter:
      filter = v;
      break;
    case Role::out_backprop:
      out_backprop = v;
      break;
  }
}

Registry& Registry::instance() {
  static Registry registry;
  return registry;
}

void Registry::add(const std::string& name, const std::string& description, Factory factory) {
  for (Entry& e : entries_) {
    if (e.name == name) {
      e = {name, description, std::move(factory)};
      return;
    }
  }
  entries_.push_back({name, description, std::move(factory)});
}

std::unique_ptr<Backend> Registry::make(const std::string& name) const {
  for (const Entry& e : entries_) {
    if (e.name == name) return e.factory("");
    if (!e.name.empty() && e.name.back() == ':' && name.rfind(e.name, 0) == 0 &&
        name.size() > e.name.size()) {
      return e.factory(name.substr(e.name.size()));
    }
  }
  std::string known;
  for (const Entry& e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  throw InvalidArgument("unknown backend '" + name + "'; known backends: " + known);
}

NumericContract UnavailableBackend::contract(const CheckedProblem&) const {
  NumericContract c;
  c.name = name_ + "-unavailable";
  c.deterministic = false;
  return c;
}

void UnavailableBackend::compute(const CheckedProblem&, const Operands&, TensorView) {
  throw std::logic_error(name_ + " was run although unavailable: " + reason_().reason());
}

void check_run_arguments(const std::string& label, const CheckedProblem& checked,
                         const Operands& in, const TensorView& result) {
  const Problem& p = checked.problem();
  const Geometry& g = checked.geometry();
  const OpIO io = op_io(p.op);
  for (Role r : {io.a, io.b}) {
    const ConstTensorView* v = in.get(r);
    if (v == nullptr)
      throw InvalidArgument(label + " reads '" + role_name(r) + "', which was not given");
    if (v->dtype != p.dtype)
      throw InvalidArgument(label + ": " + role_name(r) + " has dtype " + dtype_name(v->dtype) +
                            ", expected " + dtype_name(p.dtype));
    check_operand_shape(p, g, r, v->shape, role_name(r));
    if (element_count(v->shape) > 0 && v->data == nullptr)
      throw InvalidArgument(label + ": " + role_name(r) + " has no data");
  }
  const Shape want = storage_shape(p, g, io.result_like);
  if (result.dtype != p.dtype || result.shape != want)
    throw InvalidArgument(label + ": the " + result_name(p.op) + " buffer is " +
                          dtype_name(result.dtype) + " " + shape_string(result.shape) +
                          ", expected " + dtype_name(p.dtype) + " " + shape_string(want));
  if (element_count(want) > 0 && result.data == nullptr)
    throw InvalidArgument(label + ": the " + result_name(p.op) + " buffer has no data");
}

void Backend::run(const CheckedProblem& p, const Operands& in, TensorView result) {
  check_run_arguments(name() + ": " + op_name(p.problem().op), p, in, result);
  compute(p, in, result);
}

}  // namespace convcheck
