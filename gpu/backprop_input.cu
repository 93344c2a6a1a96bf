// Conv2DBackpropInput and conv2d_transpose on the device (spec B §3.2, A.8): the same kernels;
// conv2d_transpose's operands are TF's filter and value, its result TF's output_shape.
//
// Paths (gpu/plan.h decides; gpu/kernels/execute.cuh runs):
//   tiled  (gpu/kernels/tiled.cuh DgradTile): one implicit GEMM per stride phase, only the taps of
//          the phase (FilterSwapIO first gives the filter's channel axes the GEMM's order); f32,
//          f16, bf16 and tf32 problems with at least 16 channels per group and 2^22
//          multiply-adds, when the filter is all finite;
//   direct (gpu/kernels/backprop_input.cuh): the stride-phase gather, for everything else.
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void backprop_input(DeviceExec& ex, const Plan& p, const T* filter, const T* out_backprop,
                    T* input_backprop, T* workspace) {
  k::backprop_input_steps(ex, p, filter, out_backprop, input_backprop, workspace);
}

template void backprop_input<float>(DeviceExec&, const Plan&, const float*, const float*, float*,
                                    float*);
template void backprop_input<double>(DeviceExec&, const Plan&, const double*, const double*,
                                     double*, double*);
template void backprop_input<uint32_t>(DeviceExec&, const Plan&, const uint32_t*, const uint32_t*,
                                       uint32_t*, uint32_t*);

}  // namespace convcheck::gpu
