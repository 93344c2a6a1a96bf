// The "gpu" backend's driver: validation, the plan (gpu/plan.h), device copies of the guarded
// operands and result, workspaces, the launches (gpu/kernels/execute.cuh, the op files), timing,
// the device guard checks, the numeric contract and registration.
//
// Compute types: f32 and f64 natively; f16 and bf16 widened to f32 (exact), accumulated in f32
// and rounded once into 16 bits at the end; int32 in uint32_t, whose wrapping arithmetic is
// int32's modulo 2^32. "gpu-tf32" rounds f32 operands to TF32 before the same FP32 FMAs.
// Layouts: the kernels work on NHWC activations and HWIO / RSCM filters; NCHW operands are
// transposed on the device into a canonical copy and the result out of one, inside the timed
// region. An f32 / f64 / int32 NHWC operand (and a filter) is read in place, and such a result
// written in place.
//
// Guards (design §6.2 on a device): the two operands and the result are mirrored onto the device
// with their guard bands (gpu::DeviceTensor); the result's whole span, poison and guards
// included, is copied back so the oracle's host-side checks see what the kernels did, and each
// operand's device span is compared with the host one (GuardViolation when a kernel wrote into
// it). Workspaces are plain device buffers.
#include <cuda_runtime.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/gpu.h"
#include "gpu/internal.h"
#include "gpu/kernels/execute.cuh"
#include "gpu/launch.cuh"
#include "gpu/ops.h"
#include "gpu/plan.h"

namespace convcheck::gpu {

bool DeviceExec::all_finite(const float* p, int64_t n) {
  CONVCHECK_CUDA_CHECK(cudaMemsetAsync(flag_, 0, sizeof(int), 0), context_);
  for_each(k::tiled::FlagNonFinite{p, flag_}, n);
  int found = 0;
  CONVCHECK_CUDA_CHECK(cudaMemcpy(&found, flag_, sizeof(int), cudaMemcpyDeviceToHost), context_);
  return found == 0;
}

namespace {

/// A CUDA event, destroyed on every path.
class Event {
 public:
  explicit Event(const std::string& context) : context_(context) {
    CONVCHECK_CUDA_CHECK(cudaEventCreate(&event_), context_);
  }
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record() { CONVCHECK_CUDA_CHECK(cudaEventRecord(event_, 0), context_); }
  /// Milliseconds from `start` to this event, once this one has completed.
  float since(const Event& start) const {
    CONVCHECK_CUDA_CHECK(cudaEventSynchronize(event_), context_);
    float ms = 0;
    CONVCHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_), context_);
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
  const std::string& context_;
};

/// Runs the plan in compute type T on device copies; returns the kernels' time in milliseconds.
template <class T>
double run_typed(const Plan& plan, const std::string& context, const DeviceTensor& a,
                 const DeviceTensor& b, DeviceTensor& result) {
  // Every workspace is allocated before the timed region.
  std::vector<std::unique_ptr<DeviceTensor>> scratch;
  auto workspace = [&](bool needed, int64_t elems) -> T* {
    if (!needed) return nullptr;
    scratch.push_back(std::make_unique<DeviceTensor>(
        static_cast<std::size_t>(elems > 0 ? elems : 1) * sizeof(T), context));
    return static_cast<T*>(scratch.back()->data());
  };
  k::Buffers<T> buf;
  buf.a = a.data();
  buf.b = b.data();
  buf.result = result.data();
  buf.a_copy = workspace(plan.convert_a, plan.a_elems);
  buf.b_copy = workspace(plan.convert_b, plan.b_elems);
  buf.result_copy = workspace(plan.convert_result, plan.result_elems);
  buf.workspace = workspace(plan.workspace_elems() > 0, plan.workspace_elems());
  DeviceTensor flag(sizeof(int), context);

  DeviceExec ex(context, static_cast<int*>(flag.data()));
  Event start(context), stop(context);
  start.record();
  k::execute(ex, plan, buf);
  stop.record();
  const double ms = stop.since(start);
  CONVCHECK_CUDA_CHECK(cudaDeviceSynchronize(), context);  // surfaces any asynchronous kernel fault
  return ms;
}

class GpuBackend final : public Backend {
 public:
  GpuBackend(std::string name, Mode mode) : name_(std::move(name)), mode_(mode) {}

  std::string name() const override { return name_; }
  Status available() const override { return device_status(); }
  // Every valid problem of the seven ops, in every dtype its op takes, either format, whose
  // buffers fit in the device's memory.
  Status can_implement(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    const Status device = device_status();
    if (!device.ok()) return device;
    const double need = make_plan(p, checked.geometry(), mode_).device_bytes();
    std::size_t free = 0, total = 0;
    CONVCHECK_CUDA_CHECK(cudaMemGetInfo(&free, &total), name_ + " " + to_string(p));
    if (need > static_cast<double>(total)) {
      return Status::Error(name_ + ": the problem needs " +
                           std::to_string(static_cast<int64_t>(std::ceil(need / (1 << 20)))) +
                           " MiB of device memory; the device has " + std::to_string(total >> 20) +
                           " MiB");
    }
    return Status::Ok();
  }

  NumericContract contract(const CheckedProblem& p) const override {
    return plan_contract(make_plan(p.problem(), p.geometry(), mode_), p.geometry());
  }

  double last_device_ms() const override { return last_ms_; }
  bool reads_caller_memory() const override { return false; }  // device mirrors

  DevicePeaks device_peaks() override { return measure_device_peaks(); }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    last_ms_ = 0;
    if (element_count(result.shape) == 0) return;  // an empty result: nothing to write

    const std::string context = name_ + " " + to_string(p);
    const Plan plan = make_plan(p, g, mode_);
    const ConstTensorView& va = *in.get(plan.a);
    const ConstTensorView& vb = *in.get(plan.b);
    DeviceTensor a(va, context), b(vb, context), out(result, context);
    switch (plan.dtype) {
      case DType::f16:
      case DType::bf16:
      case DType::f32:
        last_ms_ = run_typed<float>(plan, context, a, b, out);
        break;
      case DType::f64:
        last_ms_ = run_typed<double>(plan, context, a, b, out);
        break;
      case DType::i32:
        last_ms_ = run_typed<uint32_t>(plan, context, a, b, out);
        break;
    }
    out.copy_back(result);
    a.verify_unchanged(va, role_name(plan.a));
    b.verify_unchanged(vb, role_name(plan.b));
  }

 private:
  std::string name_;
  Mode mode_;
  double last_ms_ = -1;
};

}  // namespace

}  // namespace convcheck::gpu

namespace convcheck {

void register_gpu_backend(Registry& registry) {
  const std::string kernels =
      "tiled implicit GEMMs for the dense ops in f32 compute (stride-phase backprop input, "
      "deterministic split-K backprop filter), direct gathers otherwise (no products with "
      "inserted zeros), memory-bound depthwise; f16/bf16 accumulate in f32; deterministic";
  registry.add("gpu", "CUDA backend, all seven ops, FP32 FMA: " + kernels, [](const std::string&) {
    return std::make_unique<gpu::GpuBackend>("gpu", gpu::Mode::fma);
  });
  registry.add("gpu-tf32",
               "CUDA backend as gpu, f32 operands rounded to TF32 (nearest even) before the FP32 "
               "FMA (contract tf32)",
               [](const std::string&) {
                 return std::make_unique<gpu::GpuBackend>("gpu-tf32", gpu::Mode::tf32);
               });
}

}  // namespace convcheck
