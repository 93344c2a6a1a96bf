// TF admission (spec Part A.2): would TF's stock CPU kernel, and its GPU kernel, accept a problem?
// Reported, never enforced: convcheck computes the ops over the whole parameter space. When TF
// refuses, the message is TF's own (spec B §1.2, §2.5, §2.6, §4.3, §4.4), numbers filled in.
// `differs` marks problems TF runs but computes differently (depthwise ignores dilations, B §4.4).
#pragma once

#include <string>

#include "core/problem.h"

namespace convcheck {

struct Admission {
  enum class Kind { accepted, refused, differs } kind = Kind::accepted;
  std::string message;  // TF's refusal, or what differs; empty when accepted
};
const char* admission_kind_name(Admission::Kind k);

struct TfAdmission {
  Admission cpu, gpu;
};

/// Precondition: geometry(p) succeeds (the problem is valid under Part A).
TfAdmission tf_admission(const Problem& p);
/// The same with the geometry the caller holds (g = geometry(p), not derived again).
TfAdmission tf_admission(const Problem& p, const Geometry& g);

}  // namespace convcheck
