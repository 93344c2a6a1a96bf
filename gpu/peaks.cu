// The device's peaks, measured in the process that benchmarks (gpu/device.h, issue 5), as
// bench/peak.cpp does for the CPU: a device backend's "% of peak" is against what this device
// reaches here, not against a data-sheet figure.
//
// FMA rate: every thread runs kChains independent FMA chains (a = a * x + y, x and y kernel
// arguments the compiler cannot fold) for kIters iterations, kBlocksPerSM blocks of kThreads
// threads per SM, so every scheduler always has independent FFMAs to issue. FLOPs = 2 per FMA.
// Each chain's final value is stored, so nothing is dead code. Best of kRuns after a warm-up.
//
// Bandwidth: a copy dst[i] = src[i] of 16-byte vectors over two buffers of kCopyBytes each (far
// larger than the 50 MB L2 of an H100), grid-stride, bytes counted as read + write. Best of kRuns
// after a warm-up. When the device has too little free memory, the buffers are halved (down to
// 64 MiB each).
//
// Times are CUDA events around the kernels alone. Any CUDA error ends the measurement: the
// device name is kept and a rate that could not be measured stays 0.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpu/device.h"

namespace convcheck::gpu {

namespace {

constexpr int kChains = 8;
constexpr int kIters = 1 << 15;
constexpr int kThreads = 256;
constexpr int kBlocksPerSM = 8;
constexpr int kRuns = 5;
constexpr std::size_t kCopyBytes = std::size_t{512} << 20;  // per buffer: 1 GiB moved per copy

__global__ void fma_chains(float* out, float x, float y, int iters) {
  float a[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) a[c] = static_cast<float>(threadIdx.x + c);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = fmaf(a[c], x, y);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += a[c];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void copy_vectors(const float4* __restrict__ src, float4* __restrict__ dst,
                             std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    dst[i] = src[i];
}

// Owns the CUDA objects of one measurement; frees them whatever happens.
struct Scratch {
  cudaEvent_t start = nullptr, stop = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  ~Scratch() {
    if (a) cudaFree(a);
    if (b) cudaFree(b);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

// Milliseconds of `launch` between two events; negative on any CUDA error.
template <class Launch>
float timed(Scratch& s, Launch launch) {
  if (cudaEventRecord(s.start) != cudaSuccess) return -1;
  launch();
  if (cudaGetLastError() != cudaSuccess) return -1;
  if (cudaEventRecord(s.stop) != cudaSuccess || cudaEventSynchronize(s.stop) != cudaSuccess)
    return -1;
  float ms = -1;
  if (cudaEventElapsedTime(&ms, s.start, s.stop) != cudaSuccess) return -1;
  return ms;
}

double measure_fma_gflops(int sms) {
  Scratch s;
  if (cudaEventCreate(&s.start) != cudaSuccess || cudaEventCreate(&s.stop) != cudaSuccess) return 0;
  const int blocks = sms * kBlocksPerSM;
  if (cudaMalloc(&s.a, sizeof(float) * blocks * kThreads) != cudaSuccess) return 0;
  float* out = static_cast<float*>(s.a);
  auto launch = [&] { fma_chains<<<blocks, kThreads>>>(out, 0.999999f, 1e-7f, kIters); };
  if (timed(s, launch) < 0) return 0;  // warm-up (and clock ramp)
  float best = -1;
  for (int r = 0; r < kRuns; ++r) {
    const float ms = timed(s, launch);
    if (ms <= 0) return 0;
    best = best < 0 ? ms : std::min(best, ms);
  }
  const double flops = 2.0 * kChains * static_cast<double>(kIters) * blocks * kThreads;
  return flops / (best * 1e-3) / 1e9;
}

double measure_bandwidth_gbs(int sms) {
  Scratch s;
  if (cudaEventCreate(&s.start) != cudaSuccess || cudaEventCreate(&s.stop) != cudaSuccess) return 0;
  std::size_t bytes = kCopyBytes;
  for (;; bytes /= 2) {
    if (bytes < (std::size_t{64} << 20)) {
      cudaGetLastError();  // clear the allocation failure
      return 0;
    }
    if (cudaMalloc(&s.a, bytes) != cudaSuccess) continue;
    if (cudaMalloc(&s.b, bytes) == cudaSuccess) break;
    cudaFree(s.a);
    s.a = nullptr;
  }
  cudaGetLastError();  // an allocation that failed on the way down is not an error now
  if (cudaMemset(s.a, 0, bytes) != cudaSuccess) return 0;
  const std::size_t n = bytes / sizeof(float4);
  const int blocks = sms * 4;
  auto launch = [&] {
    copy_vectors<<<blocks, 512>>>(static_cast<const float4*>(s.a), static_cast<float4*>(s.b), n);
  };
  if (timed(s, launch) < 0) return 0;
  float best = -1;
  for (int r = 0; r < kRuns; ++r) {
    const float ms = timed(s, launch);
    if (ms <= 0) return 0;
    best = best < 0 ? ms : std::min(best, ms);
  }
  return 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
}

}  // namespace

Backend::DevicePeaks measure_device_peaks() {
  static const Backend::DevicePeaks peaks = []() -> Backend::DevicePeaks {
    try {
      if (!device_status().ok()) return {};
      Backend::DevicePeaks p;
      p.device = device_description();
      int dev = 0, sms = 0;
      if (cudaGetDevice(&dev) != cudaSuccess ||
          cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
          sms <= 0) {
        cudaGetLastError();
        return p;
      }
      p.fma_gflops = measure_fma_gflops(sms);
      p.bandwidth_gbs = measure_bandwidth_gbs(sms);
      cudaGetLastError();  // leave no error behind for the next checked call
      return p;
    } catch (...) {  // never throws (a std::string allocation is all that could)
      return {};
    }
  }();
  return peaks;
}

}  // namespace convcheck::gpu
