// An independently written forward convolution, used only by tests to cross-check the reference's
// index law (design §5). Deliberately built differently from reference/: it resolves padding
// itself, materialises the zero-padded input, and runs a VALID strided, dilated correlation per
// group over that buffer, from the textbook definition.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace textbook {

struct Conv {
  int64_t N, H, W, C;     // input, NHWC
  int64_t KH, KW, Cf, O;  // filter, HWIO; groups = C / Cf
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  enum class Pad { valid, same, explicit_ } pad = Pad::valid;
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // explicit_ only
};

/// Output shape [N, OH, OW, O] (sizes by the textbook: floor((padded - extent) / stride) + 1,
/// SAME: ceil(in / stride) with the odd padding element after).
std::vector<int64_t> output_shape(const Conv& c);

/// Calls term(output_index, x, w) for every tap of every output element, padding taps included
/// (with x = 0): output_index is in NHWC order over output_shape().
void for_each_term(const Conv& c, const std::vector<double>& x, const std::vector<double>& w,
                   const std::function<void(int64_t, double, double)>& term);

/// The forward conv accumulated in double.
std::vector<double> conv2d(const Conv& c, const std::vector<double>& x,
                           const std::vector<double>& w);

}  // namespace textbook
