#include "core/layout.h"

#include "core/error.h"
#include "core/tensor.h"

namespace convcheck {

std::vector<double> load_canonical(const Problem& p, const Geometry& g, Role r,
                                   const ConstTensorView* v, const std::string& label, bool nchw) {
  if (v == nullptr || (v->data == nullptr && !v->shape.empty() && element_count(v->shape) > 0))
    throw InvalidArgument(label + " reads '" + role_name(r) + "', which was not given");
  if (v->dtype != p.dtype)
    throw InvalidArgument(label + ": " + role_name(r) + " has dtype " + dtype_name(v->dtype) +
                          ", expected " + dtype_name(p.dtype));
  check_operand_shape(p, g, r, v->shape, role_name(r));
  const std::array<int64_t, 4> s = logical_shape(g, r);
  const int64_t n = s[0] * s[1] * s[2] * s[3];
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int64_t e = 0; e < n; ++e)
    out[e] = load_element(v->data, v->dtype, storage_offset(e, s, nchw));
  return out;
}

void store_canonical(const std::vector<double>& values, const std::array<int64_t, 4>& s, bool nchw,
                     TensorView out) {
  const int64_t n = static_cast<int64_t>(values.size());
  for (int64_t e = 0; e < n; ++e)
    store_element(out.data, out.dtype, storage_offset(e, s, nchw), values[e]);
}

}  // namespace convcheck
