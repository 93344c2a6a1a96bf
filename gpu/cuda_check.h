// Checked CUDA calls for .cu and CUDA-including .cpp files: every call's failure names the call,
// the CUDA error and the problem (issue 5: "every CUDA call checked; the error names the call and
// the problem").
#pragma once

#include <cuda_runtime.h>

#include "gpu/device.h"

/// CONVCHECK_CUDA_CHECK(cudaMemcpy(...), context) throws std::runtime_error on failure.
#define CONVCHECK_CUDA_CHECK(call, context) \
  ::convcheck::gpu::check_cuda(static_cast<int>(call), #call, (context))
/// After a kernel launch: the launch error (bad configuration) is checked at once.
#define CONVCHECK_CUDA_CHECK_LAUNCH(context) CONVCHECK_CUDA_CHECK(cudaPeekAtLastError(), (context))
