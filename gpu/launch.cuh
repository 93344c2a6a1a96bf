// The device side of DeviceExec (gpu/internal.h): one thread per element (grid-stride), or one
// CTA per tile running a tiled functor's phases between barriers; launched in the default stream
// and checked at once. Included by the .cu files that launch kernels.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/internal.h"
#include "gpu/kernels/tiled.cuh"

namespace convcheck::gpu {

/// f(i) for i < n: the thin wrapper every element function of gpu/kernels/ runs in.
template <class F>
__global__ void for_each_kernel(F f, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    f(i);
}

/// A tiled functor's CTA: the phase sequence of gpu/kernels/tiled.cuh, the barriers between.
/// r.steps is the same in every thread of the CTA, so every thread meets every barrier.
template <class F>
__global__ void __launch_bounds__(k::tiled::kThreads) cta_kernel(F f) {
  __shared__ k::tiled::Smem sm;
  typename F::Regs r;
  const int64_t cta = blockIdx.x;
  const int tid = static_cast<int>(threadIdx.x);
  f.begin(cta, tid, sm, r);
  __syncthreads();
  for (int kt = 0; kt < r.steps; ++kt) {
    f.step(cta, tid, kt, sm, r);
    f.stage(cta, tid, kt, sm, r);
    __syncthreads();
  }
  f.end(cta, tid, sm, r);
}

template <class F>
void DeviceExec::for_each_cta(const F& f) {
  const int64_t ctas = f.ctas();
  if (ctas <= 0) return;
  if (ctas > INT_MAX)
    throw std::runtime_error("gpu: " + std::to_string(ctas) + " CTAs exceed the grid (" + context_ +
                             ")");
  cta_kernel<F><<<static_cast<unsigned>(ctas), k::tiled::kThreads>>>(f);
  CONVCHECK_CUDA_CHECK_LAUNCH(context_);
}

template <class F>
void DeviceExec::for_each(const F& f, int64_t n) {
  if (n <= 0) return;
  constexpr int64_t kThreads = 256, kMaxBlocks = int64_t{1} << 20;
  const int64_t blocks = std::min((n + kThreads - 1) / kThreads, kMaxBlocks);
  for_each_kernel<F><<<static_cast<unsigned>(blocks), static_cast<unsigned>(kThreads)>>>(f, n);
  CONVCHECK_CUDA_CHECK_LAUNCH(context_);
}

}  // namespace convcheck::gpu
