// DepthwiseConv2dNative on the device (spec B §3.5, real dilation A.7).
//
// Paths: direct memory-bound gather (gpu/kernels/depthwise_conv2d.cuh) for every problem.
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void depthwise_conv2d(DeviceExec& ex, const Plan& p, const T* input, const T* filter, T* output) {
  k::depthwise_conv2d_steps(ex, p, input, filter, output);
}

template void depthwise_conv2d<float>(DeviceExec&, const Plan&, const float*, const float*, float*);
template void depthwise_conv2d<double>(DeviceExec&, const Plan&, const double*, const double*,
                                       double*);

}  // namespace convcheck::gpu
