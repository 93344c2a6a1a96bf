// The comparators: the libraries a kernel author would otherwise benchmark against, as backends
// that take and return TF layouts (design §4). Each maps an op onto its library's forward /
// backward-data / backward-weights call by the op's kind (core/op_traits.h), depthwise ops as
// grouped convolutions (G = C), and writes TF's result itself, zeros, when an operand is empty (a
// sum of no terms, which neither library can describe in every case).
//   onednn  oneDNN (Debian libdnnl-dev 2.6) on the CPU, its reorders counted in its time
//           (comparators/onednn.cpp). Built only when CMake finds oneDNN.
//   cudnn   cuDNN 9 on the GPU, FP32 FMA math, TF32 off (comparators/cudnn.cpp). Its library code
//           is compiled only with a CUDA toolkit and cuDNN.
//   eigen   Eigen 3.4's Tensor module on its ThreadPoolDevice, the way TensorFlow's CPU kernels
//           compute (extract_image_patches, reverse, inflate, contract; comparators/eigen.cpp,
//           the maths in eigen_kernels.cpp); NCHW shuffled to NHWC and back in its time. Always
//           built: Eigen is a requirement of the build.
// All are always registered; where the library is missing the backend is unavailable, with why.
#pragma once

#include <string>

#include "core/backend.h"
#include "core/problem.h"

namespace convcheck {

void register_onednn_backend(Registry& registry);
void register_cudnn_backend(Registry& registry);
void register_eigen_backend(Registry& registry);

namespace comparators {

/// Whether any of the three roles has no elements (then the result is zeros, or empty).
bool any_empty(const Geometry& g);

/// A host comparator's run where a role is empty: writes TF's result (the sum of no terms: zeros;
/// nothing for an empty result) and returns true; false when every role has elements.
bool zeros_if_empty(const CheckedProblem& p, TensorView result);

}  // namespace comparators

}  // namespace convcheck
