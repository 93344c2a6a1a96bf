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
//
// ISA: the build has no -march, so this file's Eigen is vectorised for the baseline (SSE2).
// TensorFlow's x86 builds compile Eigen for AVX or for the build machine, so the maths also comes
// as shared modules compiled for AVX2 + FMA and for AVX-512 (comparators/eigen_module.cpp), and
// the backend runs the widest one the CPU and OS can execute (core/cpu.h), capped by
// CONVCHECK_EIGEN_ISA=baseline|avx2|avx512 (as CONVCHECK_OPTIMIZED_ISA caps optimized and
// ONEDNN_MAX_CPU_ISA oneDNN; any other value is an error). A module is looked for in
// CONVCHECK_EIGEN_MODULE_DIR when that is set, else beside the program or library holding this
// code (the python package's extension), in <libdir>/convcheck relative to it (an installed
// tree: <prefix>/bin/convcheck, <prefix>/lib/convcheck/), and in the build tree; one not found (or
// not loadable) is skipped for the next narrower, and last_note() says which ran and why a wider
// one did not. isa() names the ISA that runs. The layout shuffles and the finiteness scan stay in
// this file (memory-bound).
#include <dlfcn.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "comparators/comparators.h"

#define EIGEN_USE_THREADS
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "comparators/eigen_kernels.h"
#include "core/cpu.h"
#include "core/error.h"
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

// The SIMD this file's Eigen was compiled for: the build's baseline (no -march), e.g. "sse2".
std::string baseline_isa() {
  std::string s = Eigen::SimdInstructionSetsInUse();
  const std::size_t comma = s.rfind(", ");
  if (comma != std::string::npos) s = s.substr(comma + 2);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return s;
}

// The ISA modules, widest first, with what the CPU must run for each.
struct ModuleIsa {
  const char* name;
  bool (*usable)();
};
const ModuleIsa kModuleIsas[] = {
    {"avx512", [] { return cpu_features().avx512_usable(); }},
    {"avx2", [] { return cpu_features().avx2_usable(); }},
};

// The directories a module is looked for in (header comment), in order.
std::vector<std::string> module_dirs() {
  if (const char* e = std::getenv("CONVCHECK_EIGEN_MODULE_DIR"); e && *e) return {e};
  std::vector<std::string> dirs;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_dirs), &info) && info.dli_fname) {
    // dladdr names the program as it was started (argv[0]: relative, or without a directory
    // when found on PATH): resolved, or /proc/self/exe where that fails.
    std::string self;
    if (char* real = realpath(info.dli_fname, nullptr)) {
      self = real;
      free(real);
    } else {
      char buf[4096];
      const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      if (n > 0) self.assign(buf, static_cast<std::size_t>(n));
    }
    const std::size_t slash = self.find_last_of('/');
    if (slash != std::string::npos) {
      const std::string dir = self.substr(0, slash);
      dirs.push_back(dir);
      dirs.push_back(dir + "/" CONVCHECK_EIGEN_MODULE_INSTALL_REL);
    }
  }
  dirs.push_back(CONVCHECK_EIGEN_MODULE_BUILD_DIR);
  return dirs;
}

// The module that runs (entry null: this file's baseline build) and why no wider one does.
struct ModuleChoice {
  eigen_kernels::ModuleEntry entry = nullptr;
  std::string isa;   // what runs
  std::string path;  // the module's file ("" for the baseline build)
  std::string note;  // why a wider ISA does not run ("" when the widest usable one runs)
};

ModuleChoice choose_module() {
  std::string cap = "avx512";
  if (const char* e = std::getenv("CONVCHECK_EIGEN_ISA"); e && *e) {
    cap = e;
    if (cap != "baseline" && cap != "avx2" && cap != "avx512")
      throw InvalidArgument("CONVCHECK_EIGEN_ISA must be baseline, avx2 or avx512, got '" + cap +
                            "'");
  }
  ModuleChoice c;
  c.isa = baseline_isa();
  if (cap == "baseline") {
    c.note = "capped by CONVCHECK_EIGEN_ISA=baseline";
    return c;
  }
  bool allowed = cap == "avx512";  // the cap's own ISA and the narrower ones
  for (const ModuleIsa& m : kModuleIsas) {
    allowed = allowed || cap == m.name;
    // A module the CPU or OS cannot run is not a shortfall to report.
    if (!allowed || !m.usable()) continue;
    const std::string file = std::string("convcheck-eigen-") + m.name + ".so";
    std::string why = file + " not found in";
    for (const std::string& dir : module_dirs()) {
      const std::string path = dir + "/" + file;
      if (access(path.c_str(), R_OK) != 0) {
        why += " " + dir;
        continue;
      }
      // Never closed: the module's thread pools live as long as the process.
      void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      void* sym = h ? dlsym(h, eigen_kernels::kModuleEntry) : nullptr;
      if (!sym) {
        const char* err = dlerror();
        why = path + " did not load: " + (err ? err : "no entry point");
        break;
      }
      c.entry = reinterpret_cast<eigen_kernels::ModuleEntry>(sym);
      c.isa = m.name;
      c.path = path;
      return c;
    }
    c.note += (c.note.empty() ? "" : "; ") + why;
  }
  if (cap != "avx512" && c.note.empty()) c.note = "capped by CONVCHECK_EIGEN_ISA=" + cap;
  return c;
}

class EigenBackend : public Backend {
 public:
  EigenBackend() : module_(choose_module()) {}

  std::string name() const override { return "eigen"; }

  // The SIMD Eigen's packets run with: a module's ISA, or the baseline's (e.g. "sse2").
  std::string isa() const override { return module_.isa; }

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
        path = compute_as<float>(checked, in, result, pool->device, threads);
        break;
      case DType::f64:
        path = compute_as<double>(checked, in, result, pool->device, threads);
        break;
      case DType::f16:
        path = compute_as<Eigen::half>(checked, in, result, pool->device, threads);
        break;
      case DType::bf16:
        path = compute_as<Eigen::bfloat16>(checked, in, result, pool->device, threads);
        break;
      case DType::i32:
        path = compute_as<uint32_t>(checked, in, result, pool->device, threads);
        break;
    }
    last_note_ = version_string() + " (" + module_.isa +
                 (module_.path.empty() ? "" : " " + module_.path) +
                 (module_.note.empty() ? "" : "; " + module_.note) + "), " +
                 std::to_string(threads) + (threads == 1 ? " thread, " : " threads, ") +
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
  Path compute_as(const CheckedProblem& checked, const Operands& in, TensorView result,
                  const Eigen::ThreadPoolDevice& d, int threads) const {
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
    if (module_.entry) {
      eigen_kernels::ModuleCall call;
      call.kind = op_kind(p.op);
      call.dtype = p.dtype;
      call.path = path;
      call.threads = threads;
      call.g = &g;
      call.a = a;
      call.b = b;
      call.result = out;
      if (module_.entry(&call) != 0)
        throw std::runtime_error("eigen (" + module_.isa + " module): " + call.error);
    } else {
      eigen_kernels::run<T>(op_kind(p.op), g, path, a, b, out, d);
    }
    if (nchw_result) {
      using B = Bits<sizeof(T)>;
      eigen_kernels::nhwc_to_nchw(reinterpret_cast<const B*>(out), static_cast<B*>(result.data),
                                  logical_shape(g, io.result_like), d);
    }
    return path;
  }

  const ModuleChoice module_;
  std::string last_note_;  // the version, ISA, threads and path of the last run
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
