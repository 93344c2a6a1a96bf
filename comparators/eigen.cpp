// The Eigen comparator ("eigen"), issue 16 item 5: the seven ops computed the way TensorFlow's CPU
// kernels compute them, with Eigen's Tensor module (unsupported/Eigen/CXX11/Tensor) on an
// Eigen::ThreadPoolDevice, so that convcheck's tables also say how a kernel compares with
// TensorFlow on a CPU. The maths is in comparators/eigen_kernels.cpp.
//
// Formulations (TF's eigen_spatial_convolutions.h and eigen_backward_spatial_convolutions.h):
//   conv2d                  extract_image_patches of the input (strides, dilations as the
//                           patches' in-row/col strides, the resolved pads) reshaped to
//                           [N*OH*OW, KH*KW*C], contracted with the filter as [KH*KW*C, K];
//   conv2d_backprop_input,  the filter reversed spatially with its in and out channels swapped
//   conv2d_transpose        ([KH*KW*K, C]), contracted with the patches of out_backprop inflated
//                           by the strides (extract_image_patches' inflate strides; the dilation
//                           is the in-row/col stride) and padded with eff - 1 - pad before and what
//                           makes the patch count the input size after; where either padding
//                           would be negative (an explicit pad beyond the filter's extent, a
//                           stride beyond the filter) out_backprop's unused rows are cropped first;
//   conv2d_backprop_filter  the input's patches contracted with out_backprop over N*OH*OW;
//   groups (C / Cf > 1)     each group's channels copied out, the dense op, copied back;
//   depthwise ops           the same patches, multiplied channel by channel with the filter
//                           broadcast over the multiplier and summed (reductions instead of a
//                           contraction: a contraction has no batch dimension for the channel).
// NCHW activations are shuffled to NHWC on the way in and back on the way out (as TF's CPU
// kernels, NHWC-only, are fed by a transpose), inside run() and so inside bench's time.
//
// Padding and inflation zeros are multiplied: 0 * Inf = NaN where TF's index law has no term (a
// non-finite filter element meeting padding, or a non-finite out_backprop element meeting the
// input's padding in backprop filter). That is what TF's CPU kernels do too, but convcheck judges
// against the index law, so when an operand holds a NaN or an infinity (one pass over each) the
// backend takes a second formulation with the same Eigen operations, "taps": per filter tap, the
// strided slice of the pixels it connects, contracted (or, depthwise, multiplied) and added, so
// only the index law's terms are formed. `last_note()` says which path ran.
//
// Data types: f32 (float), f64 (double), f16 (Eigen::half), bf16 (Eigen::bfloat16), int32
// (computed as uint32_t, whose wrapping is TF's int32 modulo 2^32 without signed overflow).
// Eigen 3.4's contraction and reductions accumulate in the scalar type: for Eigen::half and
// Eigen::bfloat16 every product and every partial sum is rounded to 16 bits (the operators
// compute in float and round once; float has more than 2p + 2 bits, so the double rounding is
// innocuous); measured by tests/test_eigen.cpp. The contract says so (u_acc of the 16-bit type,
// no final rounding), and the oracle calls a case whose sums are too long for that bound
// meaningful (n u >= 1/2: 1024 terms in f16, 128 in bf16) mistrusted.
//
// Threads: a pool of omp_get_max_threads() threads, the setting every CPU backend follows (the
// oracle's reruns change it), one pool kept per count. Eigen's contraction picks its blocking
// and, for a long reduction, shards it by the thread count, so results may differ in the last
// bits between thread counts: the contract does not claim determinism (int32 is exact).
//
// Empty operands: the sum of no terms, zeros, written here (comparators::zeros_if_empty).
#include <memory>
#include <string>

#include "comparators/comparators.h"

#define EIGEN_USE_THREADS
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <mutex>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "comparators/eigen_kernels.h"
#include "core/half.h"
#include "core/layout.h"

namespace convcheck {

namespace {

using eigen_kernels::Path;

std::string version_string() {
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
         std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION);
}

// A thread pool and the device that runs expressions on it.
struct Pool {
  explicit Pool(int n) : pool(n), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

// The storage type of a dtype's elements, for the bitwise NCHW copies.
template <std::size_t Bytes>
using Bits =
    std::conditional_t<Bytes == 2, uint16_t, std::conditional_t<Bytes == 4, uint32_t, uint64_t>>;

class EigenBackend : public Backend {
 public:
  std::string name() const override { return "eigen"; }

  // The SIMD Eigen's packets were compiled for: the build's baseline (no -march), e.g. "sse2".
  std::string isa() const override {
    std::string s = Eigen::SimdInstructionSetsInUse();
    const std::size_t comma = s.rfind(", ");
    if (comma != std::string::npos) s = s.substr(comma + 2);
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    return s;
  }

  Status can_implement(const CheckedProblem&) const override {
    return Status::Ok();  // every op, dtype, format and padding (header comment)
  }

  NumericContract contract(const CheckedProblem& checked) const override {
    const DType t = checked.problem().dtype;
    NumericContract c = native_contract(t);  // linear chain: any order Eigen sums in
    c.name = std::string("eigen-") + dtype_name(t);
    if (t == DType::f16 || t == DType::bf16) {  // accumulated in the 16-bit type (header)
      c.name += "-acc";
      c.u_acc = std::ldexp(1.0, -float_format(t).precision);
      c.u_out = 0;  // the accumulator is the result
    }
    c.deterministic = t == DType::i32;  // blocking and sharding follow the thread count
    return c;
  }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    if (comparators::zeros_if_empty(checked, result)) return;  // a sum of no terms
    const Problem& p = checked.problem();
    std::lock_guard<std::mutex> lock(mutex_);
    const int threads = std::max(1, omp_get_max_threads());
    std::unique_ptr<Pool>& pool = pools_[threads];
    if (!pool) pool = std::make_unique<Pool>(threads);
    Path path = Path::patches;
    switch (p.dtype) {
      case DType::f32:
        path = compute_as<float>(checked, in, result, pool->device);
        break;
      case DType::f64:
        path = compute_as<double>(checked, in, result, pool->device);
        break;
      case DType::f16:
        path = compute_as<Eigen::half>(checked, in, result, pool->device);
        break;
      case DType::bf16:
        path = compute_as<Eigen::bfloat16>(checked, in, result, pool->device);
        break;
      case DType::i32:
        path = compute_as<uint32_t>(checked, in, result, pool->device);
        break;
    }
    last_note_ = version_string() + ", " + std::to_string(threads) +
                 (threads == 1 ? " thread, " : " threads, ") +
                 (path == Path::patches ? "patches" : "taps (non-finite operands)");
  }

  std::string last_note() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_note_;
  }

 private:
  // Role r's operand in canonical (NHWC) order: the caller's buffer, or an NHWC copy in `keep`.
  template <class T>
  static const T* canonical(const Problem& p, const Geometry& g, Role r, const ConstTensorView& v,
                            std::vector<T>& keep, const Eigen::ThreadPoolDevice& d) {
    const T* data = static_cast<const T*>(v.data);
    if (!stored_nchw(p, r)) return data;
    keep.resize(static_cast<std::size_t>(role_elements(g, r)));
    using B = Bits<sizeof(T)>;
    eigen_kernels::nchw_to_nhwc(reinterpret_cast<const B*>(data), reinterpret_cast<B*>(keep.data()),
                                logical_shape(g, r), d);
    return keep.data();
  }

  template <class T>
  static Path compute_as(const CheckedProblem& checked, const Operands& in, TensorView result,
                         const Eigen::ThreadPoolDevice& d) {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const OpIO io = op_io(p.op);
    std::vector<T> ka, kb, kr;
    const T* a = canonical<T>(p, g, io.a, *in.get(io.a), ka, d);
    const T* b = canonical<T>(p, g, io.b, *in.get(io.b), kb, d);
    Path path = Path::patches;
    if constexpr (!std::is_same_v<T, uint32_t>) {
      if (!eigen_kernels::all_finite(a, role_elements(g, io.a)) ||
          !eigen_kernels::all_finite(b, role_elements(g, io.b)))
        path = Path::taps;
    }
    const bool nchw_result = stored_nchw(p, io.result_like);
    if (nchw_result) kr.resize(static_cast<std::size_t>(role_elements(g, io.result_like)));
    T* out = nchw_result ? kr.data() : static_cast<T*>(result.data);
    eigen_kernels::run<T>(op_kind(p.op), g, path, a, b, out, d);
    if (nchw_result) {
      using B = Bits<sizeof(T)>;
      eigen_kernels::nhwc_to_nchw(reinterpret_cast<const B*>(out), static_cast<B*>(result.data),
                                  logical_shape(g, io.result_like), d);
    }
    return path;
  }

  std::string last_note_;  // the version, threads and path of the last run
  mutable std::mutex mutex_;
  std::map<int, std::unique_ptr<Pool>> pools_;  // by thread count
};

}  // namespace

void register_eigen_backend(Registry& registry) {
  registry.add("eigen",
               "Eigen comparator: TensorFlow's CPU formulation (extract_image_patches and "
               "contractions on Eigen's ThreadPoolDevice), TF layouts, NCHW shuffled in its time",
               [](const std::string&) -> std::unique_ptr<Backend> {
                 return std::make_unique<EigenBackend>();
               });
}

}  // namespace convcheck
