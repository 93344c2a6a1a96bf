// Conversions between convcheck's C++ vocabulary (core/) and the plugin C ABI
// (plugins/convcheck_plugin.h), used by the runner and by adapters that put a Backend behind the
// ABI.
#pragma once

#include <string>

#include "core/backend.h"
#include "core/problem.h"
#include "plugins/convcheck_plugin.h"

namespace convcheck::plugin_abi {

/// The ABI's problem for a validated problem; `descriptor` must outlive the struct's use.
convcheck_problem to_abi(const Problem& p, const Geometry& g, const std::string& descriptor);
/// The problem an ABI problem describes (shapes, strides, dilations, padding kind and pads, format,
/// dtype), validated. Throws InvalidArgument when a value is out of range or the problem is not
/// valid.
CheckedProblem from_abi(const convcheck_problem& p);

convcheck_contract to_abi(const NumericContract& k);
/// Throws InvalidArgument when a field is out of range (a negative or NaN unit roundoff, an
/// unknown chain).
NumericContract from_abi(const convcheck_contract& k);

/// A plugin's text made safe for reports: at most `max` bytes up to the first NUL, control and
/// non-ASCII bytes replaced by '?'.
std::string sanitize(const char* text, std::size_t max);

}  // namespace convcheck::plugin_abi
