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
// ONEDNN_MAX_CPU_ISA oneDNN; an unknown value, or an ISA this CPU cannot run, is an error). A
// module is looked for in CONVCHECK_EIGEN_MODULE_DIR when that is set, else beside the program or
// library holding this code (the python package's extension), in <libdir>/convcheck relative to
// it (an installed tree: <prefix>/bin/convcheck, <prefix>/lib/convcheck/), and, for a program in
// the build tree, there. Before use a module must report this build's ABI (eigen_kernels.h:
// module_abi(): the sizes of the structures that cross, so a stale file whose layout differs is
// refused) and an Eigen vectorised for its ISA and no wider one. One not built,
// not found or refused is skipped for the next narrower; last_note() says which ran (its file)
// and why a wider one the CPU runs did not (the cap, the build, the file). isa() names the ISA
// that runs. The layout shuffles and the finiteness scan stay in this file (memory-bound).
// The choice is made when the backend is made (a dlopen of a module already loaded is cheap).
#include <dlfcn.h>
#include <errno.h>  // program_invocation_name (GNU)
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
#include <cstring>
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

// The ISA modules, widest first: what the CPU must run for each, and the SIMD its Eigen must
// report (Eigen::SimdInstructionSetsInUse()) for the module to be taken as what it says (Eigen
// 3.4 names an AVX2 + FMA build "AVX SSE, SSE2, ...", an AVX-512 one "AVX512, FMA, AVX2, ...").
struct ModuleIsa {
  const char* name;
  bool (*usable)();
  const char* simd;      // must be in the module's list
  const char* not_simd;  // must not be (a wider build under a narrower name), or null
};
const ModuleIsa kModuleIsas[] = {
    {"avx512", [] { return cpu_features().avx512_usable(); }, "AVX512", nullptr},
    {"avx2", [] { return cpu_features().avx2_usable(); }, "AVX", "AVX512"},
};

// Whether this build made the module of `isa` (comparators/CMakeLists.txt), e.g. "avx2,avx512".
bool module_built(const std::string& isa) {
  return ("," + std::string(CONVCHECK_EIGEN_MODULES_BUILT) + ",").find("," + isa + ",") !=
         std::string::npos;
}

// p with symbolic links and relative parts resolved (p itself where that fails).
std::string resolved(const std::string& p) {
  char* r = realpath(p.c_str(), nullptr);
  const std::string out = r ? r : p;
  free(r);
  return out;
}

// The directories a module is looked for in (header comment), in order.
std::vector<std::string> module_dirs() {
  if (const char* e = std::getenv("CONVCHECK_EIGEN_MODULE_DIR"); e && *e) return {e};
  // The file holding this code: the program (dladdr then names it as started, argv[0], which may
  // be relative or bare: /proc/self/exe has its real path), or the Python package's extension.
  std::string self;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&module_dirs), &info) && info.dli_fname) {
    if (std::strcmp(info.dli_fname, program_invocation_name) != 0) {
      self = resolved(info.dli_fname);  // a library loaded by a relative path
    } else {
      char buf[4096];
      const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
      if (n > 0) self.assign(buf, static_cast<std::size_t>(n));
    }
  }
  std::vector<std::string> dirs;
  const std::size_t slash = self.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : self.substr(0, slash);
  if (!dir.empty()) {
    dirs.push_back(dir);
    dirs.push_back(dir + "/" CONVCHECK_EIGEN_MODULE_INSTALL_REL);
  }
  // The build tree only for a program inside it (an installed one never reads it); compared
  // resolved, as `self` already is, so a build reached through a symbolic link still counts.
  const std::string build = CONVCHECK_EIGEN_MODULE_BUILD_DIR, rbuild = resolved(build);
  if (dir.empty() || dir == rbuild || dir.rfind(rbuild + "/", 0) == 0) dirs.push_back(build);
  return dirs;
}

// The module that runs (entry null: this file's baseline build) and why no wider one does.
struct ModuleChoice {
  eigen_kernels::ModuleEntry entry = nullptr;
  std::string isa;   // what runs
  std::string path;  // the module's file ("" for the baseline build)
  std::string note;  // why a wider ISA does not run ("" when the widest usable one runs)
};

// Loads the module of `m` from the first directory holding one it accepts; on failure says why
// in *why (the directories searched, each file refused and the reason).
eigen_kernels::ModuleEntry load_module(const ModuleIsa& m, std::string* path, std::string* why) {
  const std::string file = std::string("convcheck-eigen-") + m.name + ".so";
  std::string missing, refused;
  for (const std::string& dir : module_dirs()) {
    *path = dir + "/" + file;
    if (access(path->c_str(), R_OK) != 0) {
      missing += " " + dir;
      continue;
    }
    std::string reason;
    void* h = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* err = dlerror();
      reason = std::string("did not load: ") + (err ? err : "?");
    } else {
      auto abi = reinterpret_cast<eigen_kernels::ModuleAbiFn>(dlsym(h, eigen_kernels::kModuleAbi));
      auto simd =
          reinterpret_cast<eigen_kernels::ModuleSimdFn>(dlsym(h, eigen_kernels::kModuleSimd));
      void* entry = dlsym(h, eigen_kernels::kModuleEntry);
      const std::string sets = simd ? simd() : "";
      if (!abi || !simd || !entry)
        reason = "lacks the convcheck_eigen_*_v1 entry points";
      else if (abi() != eigen_kernels::module_abi())
        reason = "was built with other shared structures (ABI " + std::to_string(abi()) +
                 ", this build's " + std::to_string(eigen_kernels::module_abi()) + ")";
      else if (sets.find(m.simd) == std::string::npos ||
               (m.not_simd && sets.find(m.not_simd) != std::string::npos))
        reason = std::string("is not vectorised for ") + m.name + " (its Eigen uses " + sets + ")";
      else  // kept open: the module's thread pools live as long as the process
        return reinterpret_cast<eigen_kernels::ModuleEntry>(entry);
      dlclose(h);
    }
    refused += (refused.empty() ? "" : "; ") + *path + " " + reason;
  }
  *why = refused.empty() ? file + " not found in" + missing : refused;
  return nullptr;
}

ModuleChoice choose_module() {
  std::string cap = "avx512";
  const char* e = std::getenv("CONVCHECK_EIGEN_ISA");
  if (e && *e) {
    cap = e;
    if (cap != "baseline" && cap != "avx2" && cap != "avx512")
      throw InvalidArgument("CONVCHECK_EIGEN_ISA must be baseline, avx2 or avx512, got '" + cap +
                            "'");
    // As CONVCHECK_OPTIMIZED_ISA: naming an ISA this machine cannot run is refused.
    for (const ModuleIsa& m : kModuleIsas)
      if (cap == m.name && !m.usable())
        throw InvalidArgument("CONVCHECK_EIGEN_ISA=" + cap + ": this CPU cannot run the " + cap +
                              " module (CPU: " + cpu_features().describe() +
                              "); unset it or name a narrower one");
  }
  ModuleChoice c;
  c.isa = baseline_isa();
  bool allowed = cap == "avx512";  // the cap's own ISA and the narrower ones
  for (const ModuleIsa& m : kModuleIsas) {
    allowed = allowed || cap == m.name;
    if (!m.usable()) continue;  // not a shortfall to report: the CPU or OS cannot run it
    std::string why;
    if (!allowed) {
      why = std::string("capped by CONVCHECK_EIGEN_ISA=") + cap;
    } else if (!module_built(m.name)) {
      why = std::string("built without the ") + m.name + " module (CONVCHECK_EIGEN_MODULES)";
    } else if (eigen_kernels::ModuleEntry entry = load_module(m, &c.path, &why)) {
      c.entry = entry;
      c.isa = m.name;
      return c;
    }
    if (c.note.find(why) == std::string::npos) c.note += (c.note.empty() ? "" : "; ") + why;
  }
  c.path.clear();
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
      if (module_.entry(&call) != 0) {
        if (call.out_of_memory) throw std::bad_alloc();  // the CLI's out-of-memory report
        throw std::runtime_error("eigen (" + module_.isa + " module): " + call.error);
      }
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
