// The problems the cuDNN comparator's tests run (tests/test_cudnn.cpp on a device,
// tests/test_cudnn_layout.cpp everywhere): every op, both formats, strides, dilations (also with
// stride > 1), SAME with an odd total (the explicit pad copy), VALID, explicit asymmetric pads and
// pads larger than the filter, groups and depthwise multipliers.
#pragma once

#include <string>
#include <vector>

namespace convcheck::cudnn_cases {

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

inline std::vector<std::string> f32_problems() {
  std::vector<std::string> out;
  for (const char* op : kConvOps)
    for (const char* geo : kConvGeometries) out.push_back(std::string(op) + ":" + geo);
  for (const char* op : kDepthwiseOps)
    for (const char* geo : kDepthwiseGeometries) out.push_back(std::string(op) + ":" + geo);
  return out;
}

// One problem of each op in f64, f16 and bf16 (asymmetric padding: the staged path too).
inline std::vector<std::string> other_dtype_problems() {
  std::vector<std::string> out;
  for (const char* dtype : {"f64", "f16", "bf16"}) {
    for (const char* op : kConvOps)
      out.push_back(std::string(op) +
                    ":input=2x7x6x4,filter=3x3x4x5,stride=2x1,padding=SAME,dtype=" + dtype);
    for (const char* op : kDepthwiseOps)
      out.push_back(std::string(op) +
                    ":input=1x7x5x3,filter=3x2x3x2,padding=1:0:0:2,format=NCHW,dtype=" + dtype);
  }
  return out;
}

}  // namespace convcheck::cudnn_cases
