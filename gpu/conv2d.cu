// Conv2D on the device (spec B §3.1).
//
// Paths (gpu/plan.h decides; gpu/kernels/execute.cuh runs):
//   tiled  (gpu/kernels/tiled.cuh FpropTile): f32, f16, bf16 and tf32 problems with at least
//          16 output channels per group, 16 reduction terms and 2^22 multiply-adds, when the
//          filter is all finite or no window reaches the padding;
//   direct (gpu/kernels/conv2d.cuh): everything else (f64, int32, small problems, a filter with
//          NaN / Inf next to padding).
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void conv2d(DeviceExec& ex, const Plan& p, const T* input, const T* filter, T* output) {
  k::conv2d_steps(ex, p, input, filter, output);
}

template void conv2d<float>(DeviceExec&, const Plan&, const float*, const float*, float*);
template void conv2d<double>(DeviceExec&, const Plan&, const double*, const double*, double*);
template void conv2d<uint32_t>(DeviceExec&, const Plan&, const uint32_t*, const uint32_t*,
                               uint32_t*);

}  // namespace convcheck::gpu
