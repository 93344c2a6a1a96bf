#include "comparators/comparators.h"
#include "core/error.h"

namespace convcheck::comparators {

bool any_empty(const Geometry& g) {
  return role_elements(g, Role::input) == 0 || role_elements(g, Role::filter) == 0 ||
         role_elements(g, Role::out_backprop) == 0;
}

Status geometry_or_reason(const Problem& p, Geometry& g) {
  try {
    g = geometry(p);
  } catch (const InvalidArgument& e) {
    return Status::Error(std::string("not a valid problem: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace convcheck::comparators
