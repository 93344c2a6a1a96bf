// Conv2DBackpropFilter on the device (spec B §3.3), deterministic: fixed chunks of the N*OH*OW
// sum, partials in a workspace, then a fixed-order reduce (no atomics).
//
// Paths (gpu/plan.h decides; gpu/kernels/execute.cuh runs):
//   tiled  (gpu/kernels/tiled.cuh WgradTile): split-K implicit GEMM, one CTA per (group, tile,
//          slice), slices reduced in order by ReduceChunks; f32, f16, bf16 and tf32 problems with
//          at least 16 output channels per group and 2^22 multiply-adds, when out_backprop is all
//          finite or no window reaches the padding;
//   direct (gpu/kernels/backprop_filter.cuh): one thread per (chunk, filter element), the same
//          chunking and reduce, for everything else.
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void backprop_filter(DeviceExec& ex, const Plan& p, const T* input, const T* out_backprop,
                     T* filter_backprop, T* partials) {
  k::backprop_filter_steps(ex, p, input, out_backprop, filter_backprop, partials);
}

template void backprop_filter<float>(DeviceExec&, const Plan&, const float*, const float*, float*,
                                     float*);
template void backprop_filter<double>(DeviceExec&, const Plan&, const double*, const double*,
                                      double*, double*);
template void backprop_filter<uint32_t>(DeviceExec&, const Plan&, const uint32_t*, const uint32_t*,
                                        uint32_t*, uint32_t*);

}  // namespace convcheck::gpu
