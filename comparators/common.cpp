#include <cstring>

#include "comparators/comparators.h"
#include "core/error.h"

namespace convcheck::comparators {

bool any_empty(const Geometry& g) {
  return role_elements(g, Role::input) == 0 || role_elements(g, Role::filter) == 0 ||
         role_elements(g, Role::out_backprop) == 0;
}

bool zeros_if_empty(const CheckedProblem& p, TensorView result) {
  const int64_t n = element_count(result.shape);
  if (n > 0 && !any_empty(p.geometry())) return false;
  std::memset(result.data, 0, static_cast<std::size_t>(n) * dtype_size(p.problem().dtype));
  return true;
}

}  // namespace convcheck::comparators
