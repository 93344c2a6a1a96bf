#include "comparators/comparators.h"
#include "core/error.h"

namespace convcheck::comparators {

bool any_empty(const Geometry& g) {
  return role_elements(g, Role::input) == 0 || role_elements(g, Role::filter) == 0 ||
         role_elements(g, Role::out_backprop) == 0;
}

}  // namespace convcheck::comparators
