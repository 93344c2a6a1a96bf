// The case tables every backend runs (tests/test_backends.cpp through tests/backend_testbed.h),
// grouped by the code path they target; per-backend tests draw on them too (the host-emulated gpu
// kernels in tests/test_gpu_kernels.cpp, the cuDNN layouts in tests/test_cudnn_layout.cpp). They
// were the union of the tables test_optimized, test_gpu, test_gpu_kernels, test_cudnn and
// test_onednn each kept.
#pragma once

#include <string>
#include <vector>

namespace convcheck::backend_cases {

struct PathCase {
  const char* path;
  const char* problem;
};

// Every code path (and index-law corner) of the optimized CPU kernels and the gpu kernels: 1x1,
// implicit GEMM with panel and tile tails, reduction chunks, stride phases (strides > filter:
// phases with no taps write zeros; SAME with its odd element after; explicit pads beyond the
// filter; dilation with stride, gcd > 1 and = 1), transpose, backprop-filter tiles and chunks
// (partials + reduce, padding taps, chunk boundaries inside a row), dilation, groups, depthwise
// (vector kernels with channel tails, multiplier > 1, chunks), NCHW in and out, and empty tensors
// (an empty result is not touched; an empty operand gives zeros).
inline const PathCase kPaths[] = {
    {"1x1", "conv2d:input=2x5x5x8,filter=1x1x8x16"},
    {"1x1", "conv2d_backprop_input:input=2x5x5x8,filter=1x1x8x70"},
    {"1x1", "conv2d_backprop_filter:input=2x5x5x8,filter=1x1x8x70"},
    {"implicit gemm", "conv2d:input=2x9x8x7,filter=3x3x7x70,padding=SAME"},
    {"implicit gemm", "conv2d_backprop_input:input=2x9x8x70,filter=3x3x70x7,padding=SAME"},
    {"implicit gemm", "conv2d_backprop_input:input=1x5x7x67,filter=3x3x67x5,padding=SAME"},
    {"filter tiles", "conv2d_backprop_filter:input=2x9x8x13,filter=3x3x13x70,padding=SAME"},
    {"filter tiles", "conv2d_backprop_filter:input=3x4x5x1,filter=2x2x1x1"},
    {"chunks", "conv2d_backprop_input:input=1x4x4x2,filter=3x3x2x2100,padding=SAME"},
    {"chunks", "conv2d:input=1x4x4x2100,filter=3x3x2100x3,padding=SAME"},
    {"chunks", "conv2d:input=1x5x5x700,filter=3x3x700x70,padding=SAME"},
    {"chunks", "conv2d_backprop_filter:input=8x40x40x8,filter=1x1x8x16"},
    {"stride phases",
     "conv2d_backprop_input:input=2x9x10x6,filter=3x3x6x5,stride=2x2,padding=SAME"},
    {"stride phases", "conv2d_transpose:input=2x8x8x6,filter=5x5x6x9,stride=2x2,padding=SAME"},
    {"stride phases", "conv2d_backprop_input:input=1x7x7x3,filter=2x2x3x4,stride=3x3"},
    {"stride phases", "conv2d_backprop_input:input=1x4x4x1,filter=1x1x1x1,stride=2x2,padding=SAME"},
    {"stride phases",
     "conv2d_backprop_input:input=1x5x3x2,filter=3x2x2x3,stride=3x1,padding=1:8:4:2"},
    {"stride phases",
     "conv2d_backprop_input:input=2x11x9x4,filter=3x2x4x5,stride=2x3,dilation=2x2,padding=1:2:0:3"},
    {"stride phases", "conv2d_backprop_input:input=1x10x10x2,filter=2x2x2x3,stride=4x3"},
    {"stride phases",
     "conv2d_backprop_input:input=1x3x3x1,filter=2x1x1x1,stride=1x1,padding=5:0:2:2"},
    {"stride phases",
     "conv2d_backprop_input:input=1x13x12x2,filter=3x3x2x2,stride=4x6,dilation=6x4,padding=SAME"},
    {"dilation", "conv2d:input=2x10x10x4,filter=3x3x4x6,dilation=2x3,padding=SAME"},
    {"dilation", "conv2d_backprop_filter:input=2x10x10x4,filter=3x3x4x6,stride=2x1,dilation=2x2"},
    {"dilation",
     "conv2d_backprop_input:input=1x3x6x1,filter=3x2x1x1,stride=1x2,dilation=2x3,padding=2:2:2:2"},
    {"groups", "conv2d:input=2x6x6x8,filter=3x3x2x12,padding=SAME"},
    {"groups", "conv2d_backprop_input:input=2x6x6x8,filter=3x3x4x6,stride=2x2,padding=SAME"},
    {"groups", "conv2d_backprop_filter:input=2x6x6x9,filter=2x2x3x6"},
    {"groups", "conv2d_backprop_filter:input=4x20x20x6,filter=3x3x2x6,padding=SAME"},
    {"depthwise", "depthwise_conv2d:input=2x9x9x37,filter=3x3x37x1,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_input:input=2x9x9x80,filter=3x3x80x1,stride=2x2,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_filter:input=2x9x9x37,filter=3x3x37x1,stride=2x2,padding=SAME"},
    {"depthwise", "depthwise_conv2d_backprop_filter:input=4x40x40x5,filter=3x3x5x1,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x1,stride=2x2,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_input:input=1x11x10x2,filter=2x3x2x3,stride=3x4,padding=3:0:0:4"},
    {"depthwise",
     "depthwise_conv2d_backprop_filter:input=2x9x9x7,filter=3x3x7x1,stride=2x2,padding=SAME"},
    {"depthwise M>1",
     "depthwise_conv2d:input=2x7x6x3,filter=3x2x3x4,stride=2x1,dilation=1x2,padding=SAME"},
    {"depthwise M>1",
     "depthwise_conv2d_backprop_input:input=1x7x5x3,filter=3x2x3x2,stride=2x1,dilation=1x2,padding="
     "SAME"},
    {"depthwise M>1",
     "depthwise_conv2d_backprop_filter:input=2x5x6x2,filter=2x2x2x3,padding=2:0:1:1"},
    {"NCHW", "conv2d:input=2x5x6x4,filter=3x3x4x5,padding=SAME,format=NCHW"},
    {"NCHW",
     "conv2d_backprop_input:input=2x6x7x3,filter=2x3x3x4,stride=2x1,padding=SAME,format=NCHW"},
    {"NCHW",
     "conv2d_backprop_filter:input=2x6x7x3,filter=2x3x3x4,dilation=2x1,padding=1:2:0:3,format="
     "NCHW"},
    {"NCHW", "depthwise_conv2d_backprop_input:input=2x6x7x3,filter=2x3x3x1,format=NCHW"},
    {"NCHW", "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME,format=NCHW"},
    {"NCHW", "depthwise_conv2d:input=2x6x7x3,filter=2x3x3x2,format=NCHW"},
    {"NCHW",
     "depthwise_conv2d_backprop_filter:input=2x6x7x3,filter=2x3x3x2,stride=2x2,format=NCHW"},
    {"empty", "conv2d_backprop_input:input=0x2x3x1,filter=2x2x1x1"},
    {"empty", "conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2"},
    {"empty", "conv2d_backprop_filter:input=0x2x3x1,filter=2x2x1x1"},
    {"empty", "conv2d_backprop_filter:input=1x2x3x1,filter=2x2x1x0"},
    {"empty", "conv2d:input=1x0x2x1,filter=1x1x1x1,padding=1:1:1:1"},
    {"empty", "depthwise_conv2d_backprop_filter:input=0x4x4x2,filter=3x3x2x1"},
    {"empty", "depthwise_conv2d_backprop_input:input=2x3x3x0,filter=2x2x0x1"},
    {"empty", "conv2d_backprop_input:input=2x5x5x2,filter=3x3x2x0"},
    {"empty", "conv2d:input=1x0x2x1,filter=1x1x1x1,padding=1:1:1:1,format=NCHW"},
    {"conv2d", "conv2d:input=2x7x6x5,filter=3x3x5x6,padding=SAME"},
    {"conv2d", "conv2d:input=2x9x8x4,filter=3x2x4x6,stride=2x3,dilation=2x2,padding=1:2:0:3"},
    {"conv2d", "conv2d:input=1x5x5x700,filter=2x2x700x3,padding=SAME"},
    {"transpose", "conv2d_transpose:input=1x13x9x2,filter=3x3x2x3,stride=2x2"},
    {"transpose", "conv2d_transpose:input=1x14x10x2,filter=3x3x2x3,stride=2x2"},
    {"filter one chunk",
     "conv2d_backprop_filter:input=2x7x6x5,filter=3x2x5x18,dilation=2x1,padding=1:0:2:1"},
    {"filter chunks",
     "conv2d_backprop_filter:input=3x23x17x3,filter=3x3x3x2,stride=2x2,padding=SAME"},
    {"filter chunks",
     "conv2d_backprop_filter:input=4x15x15x2,filter=2x3x2x1,dilation=3x2,padding=4:0:1:2"},
    {"filter chunks", "conv2d_backprop_filter:input=2x30x31x1,filter=5x5x1x1,stride=3x3"},
    {"depthwise chunks",
     "depthwise_conv2d_backprop_filter:input=3x30x20x2,filter=3x2x2x2,stride=2x1,dilation=2x2"},
};

// One problem per op (and the filter chunks), run in every dtype the op takes.
inline const char* const kDtypeProblems[] = {
    "conv2d:input=2x7x6x5,filter=3x3x5x18,stride=2x1,padding=SAME",
    "conv2d_backprop_input:input=2x7x6x5,filter=3x3x5x18,stride=2x2,padding=SAME",
    "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME",
    "conv2d_backprop_filter:input=2x7x6x5,filter=3x2x5x18,dilation=2x1,padding=1:0:2:1",
    "conv2d_backprop_filter:input=8x20x20x8,filter=1x1x8x16",
    "depthwise_conv2d:input=2x7x6x19,filter=3x3x19x1,stride=2x2,padding=SAME",
    "depthwise_conv2d_backprop_input:input=2x7x6x19,filter=3x3x19x1,padding=SAME",
    "depthwise_conv2d_backprop_filter:input=2x7x6x3,filter=3x3x3x2,padding=SAME",
    "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME,format=NCHW",
    "depthwise_conv2d_backprop_input:input=2x7x6x4,filter=3x3x4x2,padding=SAME,format=NCHW",
    "depthwise_conv2d_backprop_filter:input=4x20x20x3,filter=3x3x3x2,padding=SAME",
};

// NaN, +-Inf, subnormals and -0 in the operands (FillKind::special): padding taps stay
// non-terms (never 0 * Inf), NaN propagates along exactly the index law, subnormals are kept.
inline const char* const kSpecialProblems[] = {
    "conv2d:input=2x6x6x4,filter=3x3x4x5,padding=SAME",
    "conv2d_backprop_input:input=2x6x6x4,filter=3x3x4x5,stride=2x2,padding=SAME",
    "conv2d_backprop_filter:input=2x6x6x4,filter=3x3x4x5,padding=SAME",
    "conv2d:input=2x6x6x4,filter=3x3x4x5,padding=SAME,dtype=f64",
    "conv2d_backprop_input:input=2x6x6x4,filter=3x3x2x6,padding=SAME,dtype=f16",
    "depthwise_conv2d:input=2x6x6x4,filter=3x3x4x2,padding=SAME,dtype=f64",
    "depthwise_conv2d_backprop_input:input=2x6x6x20,filter=3x3x20x1,padding=SAME",
    "depthwise_conv2d_backprop_filter:input=2x6x6x20,filter=3x3x20x1,padding=SAME,dtype=bf16",
    "conv2d_backprop_filter:input=8x20x20x2,filter=1x1x2x2",
    "conv2d_backprop_input:input=2x6x6x4,filter=3x3x4x5,stride=2x2",
    "depthwise_conv2d_backprop_input:input=2x6x6x20,filter=3x3x20x1",
};

// The "gpu-tf32" mode's problems (exact, real and special fills).
inline const char* const kTf32Problems[] = {
    "conv2d:input=2x7x6x5,filter=3x3x5x6,padding=SAME",
    "conv2d_backprop_input:input=2x9x10x6,filter=3x3x6x5,stride=2x2,padding=SAME,format=NCHW",
    "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME",
    "conv2d_backprop_filter:input=8x20x20x8,filter=1x1x8x16",
    "depthwise_conv2d_backprop_filter:input=2x9x9x7,filter=3x3x7x2,stride=2x2,padding=SAME",
};

// The comparators' table (cuDNN, oneDNN): every op, both formats, strides, dilations (also with
// stride > 1), SAME with an odd total (the explicit pad copy), VALID, explicit asymmetric pads and
// pads larger than the filter, groups and depthwise multipliers.
// Geometries of the dense ops (conv2d, backprop input, transpose, backprop filter).
inline const char* const kConvGeometries[] = {
    "input=2x7x6x4,filter=3x3x4x5,padding=SAME",  // symmetric SAME
    "input=2x6x6x4,filter=2x2x4x5,padding=SAME",  // SAME, odd total: pad after (pad copy)
    "input=2x7x6x4,filter=3x2x4x6,stride=2x1,format=NCHW",
    "input=1x8x8x3,filter=3x3x3x4,stride=2x2,padding=SAME",  // SAME, stride 2: asymmetric
    "input=1x9x8x3,filter=3x3x3x4,dilation=2x2,padding=SAME,format=NCHW",
    "input=1x11x10x4,filter=3x2x4x4,stride=2x2,dilation=2x3,padding=1:2:0:3",
    "input=1x9x9x2,filter=3x3x2x3,stride=2x2,dilation=2x2,padding=SAME",
    "input=2x6x6x6,filter=3x3x2x9,padding=SAME",                            // 3 groups
    "input=2x6x7x8,filter=2x3x4x6,stride=2x2,padding=0:3:2:1,format=NCHW",  // 2 groups
    "input=1x8x8x3,filter=2x2x3x4,padding=4:0:3:1",  // pads larger than the filter
    "input=2x10x9x3,filter=2x2x3x5,stride=3x3",      // stride larger than the filter
    "input=2x5x5x8,filter=1x1x8x16,format=NCHW",
    "input=1x5x6x3,filter=5x6x3x2",  // filter covers the whole input: 1x1 output
};
inline const char* const kConvOps[] = {"conv2d", "conv2d_backprop_input", "conv2d_transpose",
                                       "conv2d_backprop_filter"};

// Geometries of the depthwise ops (filter RSCM: multiplier last).
inline const char* const kDepthwiseGeometries[] = {
    "input=2x7x6x3,filter=3x3x3x1,padding=SAME",
    "input=1x7x5x3,filter=3x2x3x2,stride=2x1,dilation=1x2,padding=SAME",
    "input=2x6x6x4,filter=2x2x4x3,padding=2:0:1:1,format=NCHW",
    "input=1x9x8x2,filter=3x3x2x4,stride=2x2,format=NCHW",
    "input=2x8x8x5,filter=3x3x5x1,stride=2x2,padding=SAME,format=NCHW",
    "input=1x10x9x3,filter=3x2x3x2,dilation=2x2,padding=0:1:3:0",
};
inline const char* const kDepthwiseOps[] = {"depthwise_conv2d", "depthwise_conv2d_backprop_input",
                                            "depthwise_conv2d_backprop_filter"};

inline std::vector<std::string> comparator_f32_problems() {
  std::vector<std::string> out;
  for (const char* op : kConvOps)
    for (const char* geo : kConvGeometries) out.push_back(std::string(op) + ":" + geo);
  for (const char* op : kDepthwiseOps)
    for (const char* geo : kDepthwiseGeometries) out.push_back(std::string(op) + ":" + geo);
  return out;
}

// One problem of each op in f64, f16 and bf16 (asymmetric padding: the staged path too), the
// depthwise ones in both formats.
inline std::vector<std::string> comparator_other_dtype_problems() {
  std::vector<std::string> out;
  for (const char* dtype : {"f64", "f16", "bf16"}) {
    for (const char* op : kConvOps)
      out.push_back(std::string(op) +
                    ":input=2x7x6x4,filter=3x3x4x5,stride=2x1,padding=SAME,dtype=" + dtype);
    for (const char* op : kDepthwiseOps) {
      for (const char* format : {"NHWC", "NCHW"}) {
        out.push_back(std::string(op) + ":input=1x7x5x3,filter=3x2x3x2,padding=1:0:0:2,format=" +
                      format + ",dtype=" + dtype);
      }
    }
  }
  return out;
}

}  // namespace convcheck::backend_cases
