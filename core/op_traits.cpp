#include "core/op_traits.h"

namespace convcheck {

namespace {
struct RoleNames {
  const char* name;
  const char* option;
};
constexpr RoleNames kRoles[] = {{"input", "input"},  // in Role's order
                                {"filter", "filter"},
                                {"out_backprop", "out-backprop"}};
}  // namespace

const char* role_name(Role r) {
  return kRoles[static_cast<int>(r)].name;
}

const char* role_option(Role r) {
  return kRoles[static_cast<int>(r)].option;
}

std::optional<Op> parse_op(std::string_view s) {
  for (const OpTraits& t : kOpTraits) {
    if (s == t.name) return t.op;
  }
  return std::nullopt;
}

Op triple_member(Op op, OpKind kind) {
  const Op forward = op_traits(op).forward;
  for (const OpTraits& t : kOpTraits) {
    if (t.forward == forward && t.kind == kind) return t.op;
  }
  return forward;  // unreachable: every family has all three kinds (tested in test_problem)
}

}  // namespace convcheck
