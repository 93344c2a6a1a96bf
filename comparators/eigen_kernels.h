// The eigen comparator's maths (comparators/eigen_kernels.cpp): the three convolutions on
// canonical NHWC activations and HWIO / RSCM filters, written as TensorFlow's CPU kernels write
// them with Eigen's Tensor module, run on an Eigen::ThreadPoolDevice. Internal to comparators/;
// comparators/eigen.cpp is the backend (layouts, threads, contract).
#pragma once

#include <cstddef>
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
  // Set when the entry point returns nonzero: what failed, and whether it was an allocation.
  bool out_of_memory = false;
  char error[256] = {};
};

/// The layout both sides of the boundary must agree on: a module built from other headers (a
/// stale file in an old install or build tree) is refused at load time, not run.
constexpr uint64_t module_abi() {
  return 2 * 1000003ull * 1000003ull + sizeof(ModuleCall) * 1000003ull +
         sizeof(Geometry) * 1009ull + offsetof(ModuleCall, error) + sizeof(OpKind) + sizeof(DType) +
         sizeof(Path);
}

/// A module's exported symbols, extern "C": the ABI it was built with (module_abi()) and the SIMD
/// its Eigen was compiled for (Eigen::SimdInstructionSetsInUse()), both checked before use; the
/// entry point, 0 on success.
constexpr const char kModuleAbi[] = "convcheck_eigen_abi_v1";
constexpr const char kModuleSimd[] = "convcheck_eigen_simd_v1";
constexpr const char kModuleEntry[] = "convcheck_eigen_run_v1";
using ModuleAbiFn = uint64_t (*)();
using ModuleSimdFn = const char* (*)();
using ModuleEntry = int (*)(ModuleCall*);

}  // namespace convcheck::eigen_kernels
