// The "gpu" backend emulated on the host: the same plan (gpu/plan.h), contract and execution
// (gpu/kernels/execute.cuh) as gpu/backend.cu, with an executor that runs every launch's
// elements on the host instead of launching kernels. Plain C++, no CUDA: the tests use it to
// verify the kernels' arithmetic on machines without a GPU (tests/test_gpu_kernels.cpp) and, on a
// GPU, to show that the device produces exactly the emulated bits (tests/test_gpu.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/backend.h"
#include "gpu/kernels/execute.cuh"
#include "gpu/plan.h"

namespace convcheck::gpu {

/// Runs each launch's elements on the host in the device's grid-stride mapping (gpu/launch.cuh:
/// 256 threads a block, at most 2^20 blocks), blocks visited last to first: no element may depend
/// on another's order.
struct HostExec {
  template <class F>
  void for_each(const F& f, int64_t n) {
    if (n <= 0) return;
    constexpr int64_t kThreads = 256, kMaxBlocks = int64_t{1} << 20;
    const int64_t blocks = std::min((n + kThreads - 1) / kThreads, kMaxBlocks);
    const int64_t stride = blocks * kThreads;
    for (int64_t block = blocks - 1; block >= 0; --block)
      for (int64_t thread = 0; thread < kThreads; ++thread)
        for (int64_t i = block * kThreads + thread; i < n; i += stride) f(i);
    ++launches;
  }
  /// The CTAs of a tiled functor (gpu/kernels/tiled.cuh), last to first: each phase runs for all
  /// threads of the CTA before the next one starts (the device's barriers). Shared memory starts
  /// as NaN, so reading a tile element no thread stored shows up in the result.
  template <class F>
  void for_each_cta(const F& f) {
    using Regs = typename F::Regs;
    constexpr int kThreads = k::tiled::kThreads;
    auto sm = std::make_unique<k::tiled::Smem>();
    std::vector<Regs> regs(kThreads);
    for (int64_t cta = f.ctas() - 1; cta >= 0; --cta) {
      std::fill_n(&sm->a[0][0][0], sizeof(sm->a) / sizeof(float), NAN);
      std::fill_n(&sm->b[0][0][0], sizeof(sm->b) / sizeof(float), NAN);
      for (int tid = 0; tid < kThreads; ++tid) f.begin(cta, tid, *sm, regs[tid]);
      const int steps = regs[0].steps;
      for (int tid = 1; tid < kThreads; ++tid) {
        if (regs[tid].steps != steps) throw std::logic_error("a CTA's threads disagree on steps");
      }
      for (int kt = 0; kt < steps; ++kt) {
        for (int tid = 0; tid < kThreads; ++tid) f.step(cta, tid, kt, *sm, regs[tid]);
        for (int tid = 0; tid < kThreads; ++tid) f.stage(cta, tid, kt, *sm, regs[tid]);
      }
      for (int tid = 0; tid < kThreads; ++tid) f.end(cta, tid, *sm, regs[tid]);
    }
    ++launches;
  }
  bool all_finite(const float* p, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(p[i])) return false;
    return true;
  }
  template <class T>
  void run_op(const Plan& p, const T* a, const T* b, T* out, T* workspace) {
    k::op_steps(*this, p, a, b, out, workspace);
  }
  int launches = 0;
};

/// A Backend that runs the gpu backend's plan with HostExec ("gpu-host", "gpu-tf32-host").
/// `plant` may change the plan before it runs: a planted bug, to show the checks can fail.
class EmulatedGpu final : public Backend {
 public:
  explicit EmulatedGpu(Mode mode, PathChoice choice = PathChoice::automatic,
                       std::function<void(Plan&)> plant = {})
      : mode_(mode), choice_(choice), plant_(std::move(plant)) {}
  std::string name() const override { return mode_ == Mode::tf32 ? "gpu-tf32-host" : "gpu-host"; }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }
  NumericContract contract(const CheckedProblem& p) const override {
    return plan_contract(make_plan(p.problem(), p.geometry(), mode_, choice_), p.geometry());
  }
  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    if (element_count(result.shape) == 0) return;
    Plan plan = make_plan(p, g, mode_, choice_);
    if (plant_) plant_(plan);
    switch (p.dtype) {
      case DType::f16:
      case DType::bf16:
      case DType::f32:
        run_typed<float>(plan, in, result);
        break;
      case DType::f64:
        run_typed<double>(plan, in, result);
        break;
      case DType::i32:
        run_typed<uint32_t>(plan, in, result);
        break;
    }
  }

 private:
  template <class T>
  void run_typed(const Plan& plan, const Operands& in, TensorView result) {
    std::vector<T> a_copy, b_copy, result_copy, work;
    auto workspace = [](bool needed, int64_t n, std::vector<T>* v) -> T* {
      if (!needed) return nullptr;
      v->assign(static_cast<std::size_t>(std::max<int64_t>(n, 1)), T(0));
      return v->data();
    };
    k::Buffers<T> buf;
    buf.a = in.get(plan.a)->data;
    buf.b = in.get(plan.b)->data;
    buf.result = result.data;
    buf.a_copy = workspace(plan.convert_a, plan.a_elems, &a_copy);
    buf.b_copy = workspace(plan.convert_b, plan.b_elems, &b_copy);
    buf.result_copy = workspace(plan.convert_result, plan.result_elems, &result_copy);
    buf.workspace = workspace(plan.workspace_elems() > 0, plan.workspace_elems(), &work);
    HostExec ex;
    k::execute(ex, plan, buf);
  }

  Mode mode_;
  PathChoice choice_;
  std::function<void(Plan&)> plant_;
};

}  // namespace convcheck::gpu
