// The implicit GEMM shared by conv2d and backprop input (the mapping to GEMM letters is in
// kernels.h): a result tensor, split into phases, each a grid of result pixels whose source pixel
// under every tap of the phase is an affine function of the grid position.
//
//   result[n, row0 + u*row_step, col0 + v*col_step, g*cols + j]
//     = sum_{ta, tb} sum_{k < kc} src[n, u*src_row_step + row_off[ta], v*src_col_step +
//       col_off[tb], g*kc + k] * filter(g, tap_rows[ta], tap_cols[tb], k, j)
//
// where a source pixel outside the source tensor is no term (it reads a row of zeros: the filter
// must be finite for that to equal skipping it, and run_implicit_gemm checks that it is). conv2d
// has one phase; backprop input has one per stride phase (spec B §3.2), so no product with an
// inserted zero is ever formed. A phase without taps writes zeros.
#pragma once

#include <cstdint>
#include <vector>

namespace convcheck::opt {

struct Phase {
  int64_t rows = 0, cols = 0;  // grid size (u < rows, v < cols)
  int64_t row0 = 0, row_step = 1, col0 = 0, col_step = 1;
  int64_t src_row_step = 1, src_col_step = 1;
  std::vector<int64_t> tap_rows, row_off;  // filter row a of each tap row, its source offset
  std::vector<int64_t> tap_cols, col_off;  // filter column b of each tap column, its offset
};

template <class T>
struct ImplicitGemm {
  int64_t N = 0;
  const T* src = nullptr;  // [N, src_h, src_w, src_c]
  int64_t src_h = 0, src_w = 0, src_c = 0;
  T* result = nullptr;  // [N, res_h, res_w, res_c]
  int64_t res_h = 0, res_w = 0, res_c = 0;
  int64_t groups = 1;
  int64_t kc = 0;    // reduction channels per tap and group
  int64_t cols = 0;  // result channels per group
  // The filter, HWIO [KH, KW, Cf, O] with O/G = Og output channels per group:
  //   forward (conv2d):               filter(g, a, b, k, j) = w[a, b, k, g*Og + j]
  //   transposed (backprop input):    filter(g, a, b, k, j) = w[a, b, j, g*Og + k]
  const T* w = nullptr;
  int64_t KW = 0, Cf = 0, O = 0, Og = 0;
  bool transposed = false;
  std::vector<Phase> phases;
  bool may_stream = false;  // the result is not read back right away (internal.h, stream_result)
};

/// Computes every result element of every phase (phases must cover the result), and returns true;
/// or, when a filter element it would use is Inf or NaN, returns false with the result unspecified
/// (packed ahead, nothing is written; panel-major, some elements may be): the caller's direct path
/// then writes every element.
template <class T>
bool run_implicit_gemm(const ImplicitGemm<T>& p);

}  // namespace convcheck::opt
