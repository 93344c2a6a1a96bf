// The one median (bench's times and ratios, the report diff's ratios and noise, the reference-cost
// tool): the middle value, or the mean of the two middle values of an even count.
#pragma once

#include <vector>

namespace convcheck {

/// The median of `values` (taken by value: sorted here); 0 when there are none (callers that
/// must tell "none" apart check emptiness first). NaN values are not expected (callers drop them).
double median(std::vector<double> values);

}  // namespace convcheck
