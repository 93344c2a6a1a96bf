// DepthwiseConv2dNativeBackpropInput on the device (spec B §3.5, real dilation A.7).
//
// Paths: direct memory-bound stride-phase gather (gpu/kernels/depthwise_backprop_input.cuh) for
// every problem.
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void depthwise_backprop_input(DeviceExec& ex, const Plan& p, const T* filter, const T* out_backprop,
                              T* input_backprop) {
  k::depthwise_backprop_input_steps(ex, p, filter, out_backprop, input_backprop);
}

template void depthwise_backprop_input<float>(DeviceExec&, const Plan&, const float*, const float*,
                                              float*);
template void depthwise_backprop_input<double>(DeviceExec&, const Plan&, const double*,
                                               const double*, double*);

}  // namespace convcheck::gpu
