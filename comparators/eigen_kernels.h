// The eigen comparator's maths (comparators/eigen_kernels.cpp): the three convolutions on
// canonical NHWC activations and HWIO / RSCM filters, written as TensorFlow's CPU kernels write
// them with Eigen's Tensor module, run on an Eigen::ThreadPoolDevice. Internal to comparators/;
// comparators/eigen.cpp is the backend (layouts, threads, contract).
#pragma once

#include <cstdint>

#include "core/problem.h"

namespace Eigen {
struct ThreadPoolDevice;
}

namespace convcheck::eigen_kernels {

/// Which formulation computes an op (header comment of comparators/eigen.cpp):
///   patches  TF's: extract_image_patches (padding and, for backprop input, stride inflation
///            as zeros in the patches) contracted with the filter;
///   taps     one strided slice per filter tap, contracted and summed: only the index law's
///            terms are formed (used when an operand holds a NaN or an infinity).
enum class Path { patches, taps };

/// result = op(a, b) for the op of kind `kind` (a, b in op_io order), on canonical NHWC
/// activations; `g` is the problem's geometry. T: float, double, Eigen::half, Eigen::bfloat16, or
/// uint32_t for int32 (forward and backward data only; the taps path is never asked of it).
/// Preconditions: no role is empty; the result is fully written.
template <class T>
void run(OpKind kind, const Geometry& g, Path path, const T* a, const T* b, T* result,
         const Eigen::ThreadPoolDevice& device);

/// NHWC <-> NCHW transposes of activations of logical shape [N, H, W, C] (bitwise copies: T is
/// one of the storage types by size).
template <class T>
void nchw_to_nhwc(const T* in, T* out, const std::array<int64_t, 4>& nhwc,
                  const Eigen::ThreadPoolDevice& device);
template <class T>
void nhwc_to_nchw(const T* in, T* out, const std::array<int64_t, 4>& nhwc,
                  const Eigen::ThreadPoolDevice& device);

/// Whether every element of p[0, n) is finite (T a floating type).
template <class T>
bool all_finite(const T* p, int64_t n);

/// One run() call across the boundary of an ISA module (comparators/eigen_module.cpp: this file's
/// maths compiled again with AVX2 or AVX-512 packets into a shared module of its own). Only plain
/// data crosses it: no Eigen object (their alignment follows the ISA flags) and no exception.
struct ModuleCall {
  OpKind kind = OpKind::forward;
  DType dtype = DType::f32;
  Path path = Path::patches;
  int threads = 1;  // the module keeps its own ThreadPool per count
  const Geometry* g = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  void* result = nullptr;
  char error[256] = {};  // set when the entry point returns nonzero
};
/// The modules' one exported symbol, extern "C": int convcheck_eigen_run_v1(ModuleCall*), 0 on
/// success.
constexpr const char kModuleEntry[] = "convcheck_eigen_run_v1";
using ModuleEntry = int (*)(ModuleCall*);

}  // namespace convcheck::eigen_kernels
