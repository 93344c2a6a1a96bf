// DepthwiseConv2dNativeBackpropFilter on the device (spec B §3.5, real dilation A.7),
// deterministic: the fixed chunking of backprop filter, then the fixed-order reduce.
//
// Paths: direct chunked reduction (gpu/kernels/depthwise_backprop_filter.cuh) for every problem.
#include <cstdint>

#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"

namespace convcheck::gpu {

template <class T>
void depthwise_backprop_filter(DeviceExec& ex, const Plan& p, const T* input, const T* out_backprop,
                               T* filter_backprop, T* partials) {
  k::depthwise_backprop_filter_steps(ex, p, input, out_backprop, filter_backprop, partials);
}

template void depthwise_backprop_filter<float>(DeviceExec&, const Plan&, const float*, const float*,
                                               float*, float*);
template void depthwise_backprop_filter<double>(DeviceExec&, const Plan&, const double*,
                                                const double*, double*, double*);

}  // namespace convcheck::gpu
