// The cuDNN comparator ("cudnn"), design §4 and issue 5 item 5.
//
// Each op is one call of cuDNN 9's legacy convolution API (cudnn_cnn.h), in cross-correlation
// mode (TF's conv), with the problem's strides and dilations (TF's 1 = cuDNN's 1):
//   conv2d, depthwise_conv2d                      cudnnConvolutionForward         (x, w -> y)
//   conv2d_backprop_input, conv2d_transpose,
//   depthwise_conv2d_backprop_input               cudnnConvolutionBackwardData    (w, dy -> dx)
//   conv2d_backprop_filter,
//   depthwise_conv2d_backprop_filter              cudnnConvolutionBackwardFilter  (x, dy -> dw)
// Groups: cudnnSetConvolutionGroupCount(G), G = C / Cf. A depthwise op is the grouped
// convolution with G = C, one input channel per group and K = C*M output channels: output channel
// k*M + m reads input channel k, which is cuDNN's group k, member m. TF's depthwise filter RSCM
// [R,S,C,M] is, element for element, the HWIO filter [R,S,1,C*M], so every op's filter is HWIO
// [R,S,Cf,K] here.
//
// Layouts. cuDNN sees one layout per variant, "NHWC" (activations NHWC, filter KRSC, i.e.
// CUDNN_TENSOR_NHWC) or "NCHW" (activations NCHW, filter KCRS). TF's HWIO filter is neither, so
// it is always transposed on the device (and a filter gradient transposed back into HWIO).
// Activations in another layout than the variant's are transposed in (operands) and out (the
// result). All of these are cudnnTransformTensor calls between strided 4-d views (dims N,C,H,W or
// K,C,R,S; HWIO is the view with strides {1, K, S*Cf*K, Cf*K}): pure data movement with alpha 1
// and beta 0. The variant in the problem's own format is tried first; the other is the fallback
// when it has no algorithm. Problems of at least 2^24 multiply-adds build both, and the first
// run times both (a warm-up and the best of three each, device events) and keeps the faster:
// cuDNN's FP32 kernels are NCHW-first, and TF's own GPU path computes NHWC float convolutions in
// NCHW when it does not use tensor cores. Smaller problems (the oracle's) never depend on timing.
// The layout arithmetic is comparators/cudnn_layout.h, which tests/test_cudnn_layout.cpp checks on
// every machine through a host model of cuDNN's convolutions.
//
// Padding. cuDNN pads symmetrically only: pad_h = min(top, bottom), pad_w = min(left, right).
// What remains of an asymmetric pad (TF's SAME with an odd total, or explicit T:B:L:R) is made
// explicit, as TF's GPU path does: the input is copied into the interior of a zero-filled, larger
// buffer (zeroed once per plan; only the interior is ever written) for the forward and the
// filter-gradient ops, and the backprop-input ops compute the gradient of that larger input and
// crop its interior. Both are the same cudnnTransformTensor into / out of a strided interior
// view, combined with the layout change when there is one.
//
// Algorithms. cudnnGet*Algorithm_v7 ranks cuDNN's algorithms for the problem (heuristics, no
// timing). Admitted are those whose error the oracle's inner-product model bounds: GEMM-type and
// direct algorithms (forward IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM, GEMM, DIRECT; backward data
// and filter ALGO_0, ALGO_1, ALGO_3). FFT and Winograd transform the operands, and their error is
// not bounded by the sum of |products|, so they are left out; so are entries that need tensor-op
// math (below). In cuDNN's rank order, then the admitted algorithms it did not rank, deterministic
// algorithms first, each candidate's workspace is asked for (at most 4 GiB, TF's default limit)
// and the plan is run once on zeros; the first that runs is the plan's. If only non-deterministic
// algorithms run (ALGO_0 and ALGO_3 use atomics), the contract says deterministic = false. The
// chosen algorithm is named in the record: Backend::last_note() gives e.g. "bwd_data=ALGO_1,
// NHWC/KRSC, pad copy" for the last run.
//
// Numerics. The convolution descriptor has compute type FLOAT (DOUBLE for f64) and math type
// CUDNN_FMA_MATH: FMA kernels only (FP32; FP64 for f64), no TF32, no tensor-op math. f16 and bf16
// tensors are cuDNN's PSEUDO_HALF / PSEUDO_BFLOAT16 configurations: 16-bit storage, f32
// arithmetic, one rounding into the result. cuDNN documents no summation order, so the contract
// declares Chain::linear (k = n), which bounds every order and every summation tree:
//   f32  "f32-fma"               u_acc 2^-24, u_out 0
//   f64  "f64-fma"               u_acc 2^-53, u_out 0
//   f16  "f16-storage-f32-acc"   u_acc 2^-24, u_out 2^-11
//   bf16 "bf16-storage-f32-acc"  u_acc 2^-24, u_out 2^-8
// Operands are used as stored (u_in 0), subnormals are not declared flushed. int32 is
// unsupported: cuDNN has no int32 convolution. Whatever cuDNN refuses (a descriptor, every
// admitted algorithm for a dtype, layout or geometry) becomes can_implement's reason.
//
// Semantics cuDNN does not share with TF are left visible to the oracle, not hidden: implicit-GEMM
// kernels multiply padding zeros by the weights, so a non-finite weight (or out_backprop
// element) meeting padding gives NaN where TF's sum has no term (TF's GPU kernels, which are
// cuDNN, do the same).
//
// Empty tensors. cuDNN cannot describe zero-sized dimensions; whenever an operand or the output
// is empty, the adapter writes TF's result itself, the sum of no terms: zeros.
//
// Device memory. Operands and the result are mirrored onto the device with their guard bands
// (gpu::DeviceTensor); after the run the result's whole span is copied back and each operand's
// device span is compared with the host one (GuardViolation when a kernel wrote into it).
//
// Timing: CUDA events around the transforms and the cuDNN call (allocation, H2D and D2H copies
// excluded), reported by last_device_ms(); device_peaks() is gpu::measure_device_peaks().
//
// Caching. One cuDNN handle per process (never destroyed, like TF's: tearing it down at exit can
// race the CUDA runtime's own teardown), on the default stream; a process-wide mutex serialises
// its use. Each backend instance keeps its plans (descriptors, algorithm, staging buffers) per
// canonical descriptor, and one workspace that grows to the largest plan's need.
//
// Without cuDNN at configure time (CONVCHECK_HAVE_CUDNN undefined) the backend is registered as
// unavailable: "built without cuDNN".
#include <memory>
#include <stdexcept>
#include <string>

#include "comparators/comparators.h"
#include "gpu/device.h"

#ifdef CONVCHECK_HAVE_CUDNN
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "comparators/cudnn_layout.h"
#include "gpu/cuda_check.h"
#endif

namespace convcheck {

namespace {

#ifdef CONVCHECK_HAVE_CUDNN

// --- cuDNN errors -------------------------------------------------------------------------------

// cuDNN refused something (a descriptor, an algorithm, a call): the problem is unsupported.
class CudnnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The message cuDNN 9 left for its last error on this thread, on one line ("" when none).
std::string last_cudnn_message() {
  char buf[512] = {};
  cudnnGetLastErrorString(buf, sizeof buf);
  std::string s(buf);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

void check_cudnn(cudnnStatus_t s, const char* call, const std::string& context) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  const std::string detail = last_cudnn_message();
  throw CudnnError("cuDNN call " + std::string(call) + " failed: " + cudnnGetErrorString(s) +
                   (detail.empty() ? "" : " [" + detail + "]") + " (" + context + ")");
}

// CONVCHECK_CUDNN(cudnnFoo, (args...), context): the error names cudnnFoo, cuDNN's status and
// message, and the problem.
#define CONVCHECK_CUDNN(fn, args, context) check_cudnn(fn args, #fn, (context))

std::string version_string() {
  const std::size_t v = cudnnGetVersion();
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

// --- the process-wide handle
// ----------------------------------------------------------------------

struct Context {
  Status status = Status::Ok();
  cudnnHandle_t handle = nullptr;
  std::mutex mutex;  // serialises every use of the handle and the backends' caches
};

// Precondition: gpu::device_status() is ok. Made once, never destroyed (header comment).
Context& context() {
  static Context* const c = [] {
    auto* ctx = new Context;
    const std::size_t runtime = cudnnGetVersion();
    if (runtime / 10000 != CUDNN_MAJOR) {
      ctx->status = Status::Error("libcudnn is " + version_string() +
                                  " but convcheck was built "
                                  "against cuDNN " +
                                  std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR));
      return ctx;
    }
    const cudnnStatus_t s = cudnnCreate(&ctx->handle);
    if (s != CUDNN_STATUS_SUCCESS) {
      const std::string detail = last_cudnn_message();
      ctx->status = Status::Error(
          "cuDNN unusable: cudnnCreate failed: " + std::string(cudnnGetErrorString(s)) +
          (detail.empty() ? "" : " [" + detail + "]") + " (" + version_string() + ")");
      ctx->handle = nullptr;
    }
    return ctx;
  }();
  return *c;
}

// --- descriptors (RAII)
// ---------------------------------------------------------------------------

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() {
    check_cudnn(cudnnCreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor", "cudnn");
  }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc() {
    check_cudnn(cudnnCreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor", "cudnn");
  }
  ~FilterDesc() { cudnnDestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ConvDesc() {
    check_cudnn(cudnnCreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor", "cudnn");
  }
  ~ConvDesc() { cudnnDestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

// Two CUDA events on the default stream.
struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  explicit Events(const std::string& context) {
    CONVCHECK_CUDA_CHECK(cudaEventCreate(&start), context);
    CONVCHECK_CUDA_CHECK(cudaEventCreate(&stop), context);
  }
  ~Events() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  // Milliseconds from start to stop; waits for stop.
  double elapsed(const std::string& context) const {
    CONVCHECK_CUDA_CHECK(cudaEventSynchronize(stop), context);
    float ms = 0;
    CONVCHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop), context);
    return ms;
  }
};

// --- geometry as cuDNN sees it ----------------------------------------------------------------

const char* kind_name(OpKind k) {
  switch (k) {
    case OpKind::forward:
      return "fwd";
    case OpKind::backward_data:
      return "bwd_data";
    case OpKind::backward_filter:
      return "bwd_filter";
  }
  return "?";
}

using comparators::any_empty;

using cudnn_layout::Layout;
using cudnn_layout::Staging;
using cudnn_layout::View;

cudnnTensorFormat_t tensor_format(Format f) {
  return f == Format::NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
}

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::f16:
      return CUDNN_DATA_HALF;
    case DType::bf16:
      return CUDNN_DATA_BFLOAT16;
    case DType::f64:
      return CUDNN_DATA_DOUBLE;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

const char* fwd_algo_name(int a) {
  static const char* const names[] = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  return a >= 0 && a < 8 ? names[a] : "?";
}
const char* bwd_data_algo_name(int a) {
  static const char* const names[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                      "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  return a >= 0 && a < 6 ? names[a] : "?";
}
const char* bwd_filter_algo_name(int a) {
  static const char* const names[] = {
      "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
  return a >= 0 && a < 7 ? names[a] : "?";
}
const char* algo_name(OpKind k, int a) {
  switch (k) {
    case OpKind::forward:
      return fwd_algo_name(a);
    case OpKind::backward_data:
      return bwd_data_algo_name(a);
    case OpKind::backward_filter:
      return bwd_filter_algo_name(a);
  }
  return "?";
}

// The algorithms whose error the inner-product model bounds (header comment).
bool inner_product_algo(OpKind k, int a) {
  switch (k) {
    case OpKind::forward:
      return a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
             a == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
             a == CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
    case OpKind::backward_data:
      return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    case OpKind::backward_filter:
      return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 || a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
             a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
  }
  return false;
}

constexpr std::size_t kMaxWorkspace = std::size_t{4} << 30;  // TF's default cuDNN limit
constexpr double kTuneMacs = 1 << 24;
constexpr int kTuneRuns = 3;
constexpr std::size_t kMaxPlans = 32;
constexpr int64_t kMaxElements = (int64_t{1} << 31) - 1;  // cuDNN's 32-bit dims and strides

// One tensor as cuDNN sees it, and how it relates to the caller's: when `staged`, the caller's
// tensor (user_view) is copied into / out of the interior (conv_view, at offset_bytes) of a
// device buffer laid out the way cuDNN is told. Otherwise cuDNN uses the caller's buffer.
struct Stage {
  bool staged = false;
  TensorDesc user_view, conv_view;
  std::size_t offset_bytes = 0;
  std::unique_ptr<gpu::DeviceTensor> buffer;  // zeroed once: padding stays zero
  unsigned char* interior() const {
    return static_cast<unsigned char*>(buffer->data()) + offset_bytes;
  }
};

// One way to run a problem: a layout (NHWC/KRSC or NCHW/KCRS), descriptors, staging, algorithm.
struct Variant {
  Format format = Format::NHWC;  // the layout cuDNN sees
  bool pad_copy = false;
  TensorDesc x, y;  // cuDNN's x (the forward input, padded) and y (forward output / dy)
  FilterDesc w;
  ConvDesc conv;
  Stage xs, ys, ws;  // staging of x, y and w
  int algo = -1;
  bool deterministic = false;
  std::size_t workspace = 0;
  std::string note;
};

struct Plan {
  std::string error;  // non-empty: cuDNN cannot run the problem, and why
  std::vector<std::unique_ptr<Variant>> variants;  // the first runs; more: timed on first run
};

// Device pointers of one run, by role.
struct Ptrs {
  const void* input = nullptr;
  const void* filter = nullptr;
  const void* out_backprop = nullptr;
  void* result = nullptr;
};

class CudnnBackend final : public Backend {
 public:
  std::string name() const override { return "cudnn"; }

  Status available() const override {
    const Status d = gpu::device_status();
    if (!d.ok()) return d;
    return context().status;
  }

  Status can_implement(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    if (p.dtype == DType::i32)
      return Status::Error(
          "cuDNN has no int32 convolution (int32 is only the output type of its int8 "
          "convolutions)");
    const Status a = available();
    if (!a.ok()) return a;
    const Geometry& g = checked.geometry();
    if (any_empty(g)) return Status::Ok();  // the adapter writes TF's zeros (header comment)
    std::lock_guard<std::mutex> lock(context().mutex);
    try {
      const Plan& plan = plan_for(p, g);
      if (!plan.error.empty()) return Status::Error(plan.error);
    } catch (const std::exception& e) {
      return Status::Error(std::string("cudnn: ") + e.what());
    }
    return Status::Ok();
  }

  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c = native_contract(p.dtype);  // any summation order or tree: k = n
    if (p.dtype == DType::i32) {
      c.name = "cudnn-unsupported";
      c.deterministic = false;
      return c;
    }
    c.deterministic = deterministic(checked);
    return c;
  }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const std::string ctx = "cudnn: " + to_string(p);
    if (element_count(result.shape) == 0) {
      last_ms_ = 0;
      last_note_ = "empty result";
      return;
    }
    const Status a = available();
    if (!a.ok()) throw std::runtime_error("cudnn unavailable: " + a.reason());
    const OpIO io = op_io(p.op);
    const ConstTensorView* va = in.get(io.a);  // both given: Backend::run checked them
    const ConstTensorView* vb = in.get(io.b);
    std::lock_guard<std::mutex> lock(context().mutex);
    gpu::DeviceTensor da(*va, ctx), db(*vb, ctx), dr(result, ctx);
    Ptrs ptrs;
    auto set = [&](Role r, const void* d) {
      if (r == Role::input) ptrs.input = d;
      if (r == Role::filter) ptrs.filter = d;
      if (r == Role::out_backprop) ptrs.out_backprop = d;
    };
    set(io.a, da.data());
    set(io.b, db.data());
    ptrs.result = dr.data();

    if (any_empty(g)) {  // a sum of no terms (header comment)
      CONVCHECK_CUDA_CHECK(cudaMemset(dr.data(), 0, dr.bytes()), ctx);
      last_ms_ = 0;
      last_note_ = "empty operand: zeros";
    } else {
      Plan& plan = plan_for(p, g);
      if (!plan.error.empty()) throw std::runtime_error("cudnn cannot run this: " + plan.error);
      if (plan.variants.size() > 1) choose_fastest(p, plan, ptrs, ctx);
      Variant& v = *plan.variants.front();
      ensure_workspace(v.workspace, ctx);
      Events ev(ctx);
      CONVCHECK_CUDA_CHECK(cudaEventRecord(ev.start), ctx);
      execute(p, v, ptrs, ctx);
      CONVCHECK_CUDA_CHECK(cudaEventRecord(ev.stop), ctx);
      last_ms_ = ev.elapsed(ctx);
      CONVCHECK_CUDA_CHECK(cudaGetLastError(), ctx);
      last_note_ = v.note;
    }
    dr.copy_back(result);
    da.verify_unchanged(*va, role_name(io.a));
    db.verify_unchanged(*vb, role_name(io.b));
  }

  double last_device_ms() const override { return last_ms_; }
  bool reads_caller_memory() const override { return false; }  // device mirrors
  DevicePeaks device_peaks() override { return gpu::measure_device_peaks(); }

  std::string last_note() const override { return last_note_; }

 private:
  // Whether every variant of the problem's plan is deterministic. Takes context().mutex.
  bool deterministic(const CheckedProblem& checked) const {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    if (!available().ok()) return false;
    if (any_empty(g)) return true;
    std::lock_guard<std::mutex> lock(context().mutex);
    try {
      const Plan& plan = plan_for(p, g);
      if (!plan.error.empty() || plan.variants.empty()) return false;
      for (const auto& v : plan.variants)
        if (!v->deterministic) return false;  // before timing picks one, any may run
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  // Precondition: context().mutex held. A cached plan, or a new one; the failures of cuDNN
  // (descriptors, algorithms) are kept as the plan's error, other failures (CUDA) thrown.
  Plan& plan_for(const Problem& p, const Geometry& g) const {
    const std::string key = to_string(p);
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    if (plans_.size() >= kMaxPlans) plans_.clear();  // frees their staging buffers
    auto plan = std::make_unique<Plan>();
    const std::string ctx = "cudnn: " + key;
    const int64_t padded =
        g.N * g.C * (g.H + g.pad_top + g.pad_bottom) * (g.W + g.pad_left + g.pad_right);
    for (int64_t e : {role_elements(g, Role::input), role_elements(g, Role::filter),
                      role_elements(g, Role::out_backprop), padded})
      if (e > kMaxElements) {
        plan->error = "a tensor of " + std::to_string(e) +
                      " elements is beyond cuDNN's 32-bit descriptors (at most 2^31 - 1)";
        return *plans_.emplace(key, std::move(plan)).first->second;
      }

    // Zero operands and result for the trial runs, shared by every variant and candidate.
    const std::size_t es = dtype_size(p.dtype);
    gpu::DeviceTensor tin(static_cast<std::size_t>(role_elements(g, Role::input)) * es, ctx);
    gpu::DeviceTensor tfi(static_cast<std::size_t>(role_elements(g, Role::filter)) * es, ctx);
    gpu::DeviceTensor tdy(static_cast<std::size_t>(role_elements(g, Role::out_backprop)) * es, ctx);
    const Role res = op_io(p.op).result_like;
    gpu::DeviceTensor tres(static_cast<std::size_t>(role_elements(g, res)) * es, ctx);
    Ptrs trial;
    trial.input = tin.data();
    trial.filter = tfi.data();
    trial.out_backprop = tdy.data();
    trial.result = tres.data();

    const Format own = p.format;
    const Format other = own == Format::NHWC ? Format::NCHW : Format::NHWC;
    std::string own_error, other_error;
    try {
      plan->variants.push_back(build_variant(p, g, own, trial, ctx));
    } catch (const CudnnError& e) {
      own_error = e.what();
    }
    const double macs = static_cast<double>(g.N) * g.OH * g.OW * g.O * g.KH * g.KW * g.Cf;
    if (plan->variants.empty() || macs >= kTuneMacs) {
      try {
        plan->variants.push_back(build_variant(p, g, other, trial, ctx));
      } catch (const CudnnError& e) {
        other_error = e.what();
      }
    }
    if (plan->variants.empty())
      plan->error = version_string() + " cannot run " + std::string(op_name(p.op)) + " " +
                    dtype_name(p.dtype) + ": " + own_error + "; " + other_error;
    return *plans_.emplace(key, std::move(plan)).first->second;
  }

  // Descriptors, staging and an algorithm that runs, for cuDNN seeing layout `f`. Throws
  // CudnnError (with the reasons) when cuDNN has none.
  std::unique_ptr<Variant> build_variant(const Problem& p, const Geometry& g, Format f,
                                         const Ptrs& trial, const std::string& ctx) const {
    // cuDNN's refusals name the layout; the caller's record already names the problem.
    const std::string where = std::string(format_name(f)) + " layout";
    auto v = std::make_unique<Variant>();
    v->format = f;
    const cudnnDataType_t dt = data_type(p.dtype);
    const cudnnDataType_t compute = p.dtype == DType::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    const std::size_t es = dtype_size(p.dtype);
    auto I = [](int64_t x) { return static_cast<int>(x); };  // in range: checked by plan_for

    // Symmetric pads for cuDNN, the rest explicit; staging for layouts
    // (comparators/cudnn_layout.h).
    const Layout L = cudnn_layout::layout_for(p, g, f);
    v->pad_copy = L.pad_copy;

    CONVCHECK_CUDNN(cudnnSetTensor4dDescriptor,
                    (v->x.d, tensor_format(f), dt, I(L.x.n), I(L.x.c), I(L.x.h), I(L.x.w)), where);
    CONVCHECK_CUDNN(cudnnSetTensor4dDescriptor,
                    (v->y.d, tensor_format(f), dt, I(L.y.n), I(L.y.c), I(L.y.h), I(L.y.w)), where);
    CONVCHECK_CUDNN(cudnnSetFilter4dDescriptor,
                    (v->w.d, dt, tensor_format(f), I(L.w.n), I(L.w.c), I(L.w.h), I(L.w.w)), where);
    CONVCHECK_CUDNN(cudnnSetConvolution2dDescriptor,
                    (v->conv.d, I(L.pad_h), I(L.pad_w), I(g.sh), I(g.sw), I(g.dh), I(g.dw),
                     CUDNN_CROSS_CORRELATION, compute),
                    where);
    CONVCHECK_CUDNN(cudnnSetConvolutionGroupCount, (v->conv.d, I(L.groups)), where);
    CONVCHECK_CUDNN(cudnnSetConvolutionMathType, (v->conv.d, CUDNN_FMA_MATH), where);
    {  // cuDNN's output size must be TF's
      int n = 0, c = 0, h = 0, w = 0;
      CONVCHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim,
                      (v->conv.d, v->x.d, v->w.d, &n, &c, &h, &w), where);
      if (n != g.N || c != g.O || h != g.OH || w != g.OW)
        throw CudnnError(where + ": cuDNN's forward output would be " + std::to_string(n) + "x" +
                         std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w) +
                         " (NCHW), TF's is " + std::to_string(g.N) + "x" + std::to_string(g.O) +
                         "x" + std::to_string(g.OH) + "x" + std::to_string(g.OW));
    }
    stage(v->xs, L.xs, dt, es, where, ctx);
    stage(v->ys, L.ys, dt, es, where, ctx);
    stage(v->ws, L.ws, dt, es, where, ctx);

    // Algorithms: cuDNN's ranking, admitted ones only, deterministic first; the first that runs.
    const OpKind kind = op_kind(p.op);
    struct Candidate {
      int algo;
      bool deterministic;
      bool ranked = true;  // false: not offered by the heuristics (the fallback list below)
    };
    std::vector<Candidate> ranked;
    std::string skipped;
    auto consider = [&](int algo, cudnnStatus_t status, cudnnDeterminism_t det,
                        cudnnMathType_t math) {
      if (status != CUDNN_STATUS_SUCCESS) return;
      const std::string name = algo_name(kind, algo);
      if (!inner_product_algo(kind, algo)) {
        if (skipped.find(name) == std::string::npos)
          skipped += (skipped.empty() ? "" : ", ") + name + " (transform algorithm)";
        return;
      }
      if (math == CUDNN_TENSOR_OP_MATH || math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return;
      for (const Candidate& c : ranked)
        if (c.algo == algo) return;
      ranked.push_back({algo, det == CUDNN_DETERMINISTIC, true});
    };
    cudnnHandle_t h = context().handle;
    switch (kind) {
      case OpKind::forward: {
        int max = 0, got = 0;
        CONVCHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount, (h, &max), where);
        std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max, 1)));
        CONVCHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7,
                        (h, v->x.d, v->w.d, v->conv.d, v->y.d, max, &got, perf.data()), where);
        for (int i = 0; i < got; ++i)
          consider(perf[i].algo, perf[i].status, perf[i].determinism, perf[i].mathType);
        break;
      }
      case OpKind::backward_data: {
        int max = 0, got = 0;
        CONVCHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithmMaxCount, (h, &max), where);
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(
            static_cast<std::size_t>(std::max(max, 1)));
        CONVCHECK_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7,
                        (h, v->w.d, v->y.d, v->conv.d, v->x.d, max, &got, perf.data()), where);
        for (int i = 0; i < got; ++i)
          consider(perf[i].algo, perf[i].status, perf[i].determinism, perf[i].mathType);
        break;
      }
      case OpKind::backward_filter: {
        int max = 0, got = 0;
        CONVCHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount, (h, &max), where);
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(
            static_cast<std::size_t>(std::max(max, 1)));
        CONVCHECK_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7,
                        (h, v->x.d, v->y.d, v->conv.d, v->w.d, max, &got, perf.data()), where);
        for (int i = 0; i < got; ++i)
          consider(perf[i].algo, perf[i].status, perf[i].determinism, perf[i].mathType);
        break;
      }
    }
    // Then every admitted algorithm the heuristics did not rank, deterministic as documented: the
    // trial run decides, so a heuristics quirk (e.g. entries only for tensor-op math) cannot make
    // a runnable problem unsupported.
    const std::vector<Candidate> fallback =
        kind == OpKind::forward
            ? std::vector<Candidate>{{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, true,
                                      false},
                                     {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, true, false},
                                     {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, true, false}}
        : kind == OpKind::backward_data
            ? std::vector<Candidate>{{CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, true, false},
                                     {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, false, false}}
            : std::vector<Candidate>{{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, true, false},
                                     {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, false, false},
                                     {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, false, false}};
    for (const Candidate& fb : fallback)
      if (std::none_of(ranked.begin(), ranked.end(),
                       [&](const Candidate& c) { return c.algo == fb.algo; }))
        ranked.push_back(fb);
    std::stable_partition(ranked.begin(), ranked.end(),
                          [](const Candidate& c) { return c.deterministic; });

    std::string tried;
    for (const Candidate& c : ranked) {
      const std::string name = algo_name(kind, c.algo);
      try {
        std::size_t bytes = 0;
        switch (kind) {
          case OpKind::forward:
            CONVCHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize,
                            (h, v->x.d, v->w.d, v->conv.d, v->y.d,
                             static_cast<cudnnConvolutionFwdAlgo_t>(c.algo), &bytes),
                            where);
            break;
          case OpKind::backward_data:
            CONVCHECK_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize,
                            (h, v->w.d, v->y.d, v->conv.d, v->x.d,
                             static_cast<cudnnConvolutionBwdDataAlgo_t>(c.algo), &bytes),
                            where);
            break;
          case OpKind::backward_filter:
            CONVCHECK_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize,
                            (h, v->x.d, v->y.d, v->conv.d, v->w.d,
                             static_cast<cudnnConvolutionBwdFilterAlgo_t>(c.algo), &bytes),
                            where);
            break;
        }
        if (bytes > kMaxWorkspace) {
          tried += (tried.empty() ? "" : "; ") + name + ": workspace " +
                   std::to_string(bytes >> 20) + " MiB over the 4 GiB limit";
          continue;
        }
        v->algo = c.algo;
        v->workspace = bytes;
        ensure_workspace(bytes, ctx);
        execute(p, *v, trial, where);  // a trial run on zeros: cuDNN may refuse only here
        CONVCHECK_CUDA_CHECK(cudaDeviceSynchronize(), ctx);
        v->deterministic = c.deterministic;
        v->note = std::string(kind_name(kind)) + "=" + name + ", " + format_name(f) + "/" +
                  (f == Format::NHWC ? "KRSC" : "KCRS") + (f != p.format ? " via transposes" : "") +
                  (v->pad_copy ? ", pad copy" : "") +
                  (c.deterministic ? "" : ", nondeterministic") +
                  (c.ranked ? "" : ", not ranked by the heuristics");
        return v;
      } catch (const CudnnError& e) {
        tried += (tried.empty() ? "" : "; ") + name + ": " + e.what();
      }
    }
    throw CudnnError(where + ": no FP32-FMA inner-product algorithm runs" + " (tried " + tried +
                     ")" + (skipped.empty() ? "" : "; not admitted: " + skipped));
  }

  static void set_view(TensorDesc& t, cudnnDataType_t dt, const View& v, const std::string& ctx) {
    auto I = [](int64_t x) { return static_cast<int>(x); };
    CONVCHECK_CUDNN(cudnnSetTensor4dDescriptorEx,
                    (t.d, dt, I(v.dims.n), I(v.dims.c), I(v.dims.h), I(v.dims.w), I(v.strides.n),
                     I(v.strides.c), I(v.strides.h), I(v.strides.w)),
                    ctx);
  }

  // A staging buffer (zeroed: explicit padding stays zero) and the two views' descriptors.
  static void stage(Stage& s, const Staging& l, cudnnDataType_t dt, std::size_t es,
                    const std::string& where, const std::string& ctx) {
    s.staged = l.staged;
    if (!s.staged) return;
    set_view(s.user_view, dt, l.user, where);
    set_view(s.conv_view, dt, l.conv, where);
    s.offset_bytes = static_cast<std::size_t>(l.conv.offset) * es;
    s.buffer =
        std::make_unique<gpu::DeviceTensor>(static_cast<std::size_t>(l.buffer_elements) * es, ctx);
  }

  // y = x between two strided views (alpha 1, beta 0: y is not read).
  static void transform(DType t, const TensorDesc& src, const void* x, const TensorDesc& dst,
                        void* y, const std::string& ctx) {
    const float onef = 1, zerof = 0;
    const double oned = 1, zerod = 0;
    const bool dbl = t == DType::f64;
    CONVCHECK_CUDNN(cudnnTransformTensor,
                    (context().handle, dbl ? static_cast<const void*>(&oned) : &onef, src.d, x,
                     dbl ? static_cast<const void*>(&zerod) : &zerof, dst.d, y),
                    ctx);
  }

  // The transforms and the cuDNN call of one run (no synchronisation).
  void execute(const Problem& p, const Variant& v, const Ptrs& ptr, const std::string& ctx) const {
    const float onef = 1, zerof = 0;
    const double oned = 1, zerod = 0;
    const bool dbl = p.dtype == DType::f64;
    const void* one = dbl ? static_cast<const void*>(&oned) : &onef;
    const void* zero = dbl ? static_cast<const void*>(&zerod) : &zerof;
    cudnnHandle_t h = context().handle;
    void* ws = workspace_ ? workspace_->data() : nullptr;
    const std::size_t ws_bytes = v.workspace;

    auto stage_in = [&](const Stage& s, const void* user) -> const void* {
      if (!s.staged) return user;
      transform(p.dtype, s.user_view, user, s.conv_view, s.interior(), ctx);
      return s.buffer->data();
    };
    switch (op_kind(p.op)) {
      case OpKind::forward: {
        const void* x = stage_in(v.xs, ptr.input);
        const void* w = stage_in(v.ws, ptr.filter);
        void* y = v.ys.staged ? v.ys.buffer->data() : ptr.result;
        CONVCHECK_CUDNN(
            cudnnConvolutionForward,
            (h, one, v.x.d, x, v.w.d, w, v.conv.d, static_cast<cudnnConvolutionFwdAlgo_t>(v.algo),
             ws, ws_bytes, zero, v.y.d, y),
            ctx);
        if (v.ys.staged) transform(p.dtype, v.ys.conv_view, y, v.ys.user_view, ptr.result, ctx);
        break;
      }
      case OpKind::backward_data: {
        const void* w = stage_in(v.ws, ptr.filter);
        const void* dy = stage_in(v.ys, ptr.out_backprop);
        void* dx = v.xs.staged ? v.xs.buffer->data() : ptr.result;
        CONVCHECK_CUDNN(
            cudnnConvolutionBackwardData,
            (h, one, v.w.d, w, v.y.d, dy, v.conv.d,
             static_cast<cudnnConvolutionBwdDataAlgo_t>(v.algo), ws, ws_bytes, zero, v.x.d, dx),
            ctx);
        if (v.xs.staged)
          transform(p.dtype, v.xs.conv_view, v.xs.interior(), v.xs.user_view, ptr.result, ctx);
        break;
      }
      case OpKind::backward_filter: {
        const void* x = stage_in(v.xs, ptr.input);
        const void* dy = stage_in(v.ys, ptr.out_backprop);
        void* dw = v.ws.staged ? v.ws.buffer->data() : ptr.result;
        CONVCHECK_CUDNN(
            cudnnConvolutionBackwardFilter,
            (h, one, v.x.d, x, v.y.d, dy, v.conv.d,
             static_cast<cudnnConvolutionBwdFilterAlgo_t>(v.algo), ws, ws_bytes, zero, v.w.d, dw),
            ctx);
        if (v.ws.staged) transform(p.dtype, v.ws.conv_view, dw, v.ws.user_view, ptr.result, ctx);
        break;
      }
    }
  }

  // Times every variant on this run's buffers (a warm-up, then the best of kTuneRuns, device
  // events) and keeps the fastest alone. Every run writes the whole result; the caller's run
  // follows anyway.
  void choose_fastest(const Problem& p, Plan& plan, const Ptrs& ptrs, const std::string& ctx) {
    std::size_t best = 0;
    double best_ms = INFINITY;
    Events ev(ctx);
    for (std::size_t i = 0; i < plan.variants.size(); ++i) {
      const Variant& v = *plan.variants[i];
      ensure_workspace(v.workspace, ctx);
      execute(p, v, ptrs, ctx);
      double ms = INFINITY;
      for (int r = 0; r < kTuneRuns; ++r) {
        CONVCHECK_CUDA_CHECK(cudaEventRecord(ev.start), ctx);
        execute(p, v, ptrs, ctx);
        CONVCHECK_CUDA_CHECK(cudaEventRecord(ev.stop), ctx);
        ms = std::min(ms, ev.elapsed(ctx));
      }
      if (ms < best_ms) best = i, best_ms = ms;
    }
    std::unique_ptr<Variant> chosen = std::move(plan.variants[best]);
    plan.variants.clear();  // frees the other variants' staging buffers
    chosen->note += " (faster of NHWC and NCHW)";
    plan.variants.push_back(std::move(chosen));
  }

  void ensure_workspace(std::size_t bytes, const std::string& ctx) const {
    if (bytes == 0 || (workspace_ && workspace_->bytes() >= bytes)) return;
    workspace_.reset();  // free first: the old and the new need not fit together
    workspace_ = std::make_unique<gpu::DeviceTensor>(bytes, ctx);
  }

  mutable std::map<std::string, std::unique_ptr<Plan>> plans_;
  mutable std::unique_ptr<gpu::DeviceTensor> workspace_;
  double last_ms_ = -1;
  std::string last_note_;
};

const char kDescription[] =
    "cuDNN comparator: legacy convolution API, FP32 FMA math (TF32 off), deterministic "
    "inner-product algorithms by cuDNN's heuristics, depthwise as groups, TF layouts in and out";

#elif defined(CONVCHECK_HAVE_CUDA)  // a toolkit without cuDNN

const char kNotFound[] =
    "built without cuDNN (cudnn.h or libcudnn was not found next to the CUDA toolkit at "
    "configure time)";

const char kDescription[] = "cuDNN comparator (unavailable: built without cuDNN)";

#else  // no CUDA toolkit: gpu::device_status() says so

const char kDescription[] = "cuDNN 9 comparator (unavailable: no CUDA toolkit at build time)";

#endif

}  // namespace

void register_cudnn_backend(Registry& registry) {
#ifdef CONVCHECK_HAVE_CUDNN
  registry.add("cudnn", kDescription,
               [](const std::string&) { return std::make_unique<CudnnBackend>(); });
#elif defined(CONVCHECK_HAVE_CUDA)
  registry.add("cudnn", kDescription, [](const std::string&) {
    return std::make_unique<UnavailableBackend>("cudnn", kNotFound);
  });
#else
  registry.add("cudnn", kDescription, [](const std::string&) {
    return std::make_unique<UnavailableBackend>("cudnn", gpu::device_status);
  });
#endif
}

}  // namespace convcheck
