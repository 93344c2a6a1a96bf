// The entry point of an eigen ISA module (comparators/CMakeLists.txt: convcheck-eigen-avx2.so,
// convcheck-eigen-avx512.so): eigen_kernels.cpp compiled again with that ISA's flags, so that
// Eigen's packets are AVX2 (8 floats, FMA) or AVX-512 (16 floats) as in a TensorFlow build for
// such a CPU, loaded by comparators/eigen.cpp only on a CPU that runs them.
//
// Why a module of its own and not a second object file in the binary: Eigen's templates and the
// standard library's that it instantiates (std::vector, std::function, the thread pool) are weak
// symbols, and a linker may keep the ISA copy of one for the baseline code's callers too (the
// hazard tests/isa/check_isa_symbols.py guards against). Here they are local to the module
// (-fvisibility=hidden, a version script exporting the three functions below, -Bsymbolic, loaded
// with RTLD_LOCAL), and only plain data (eigen_kernels::ModuleCall) crosses the boundary. Besides
// the entry point it exports its ABI and its Eigen's SIMD list, which the loader checks first.
#include <unistd.h>

#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "comparators/eigen_kernels.h"

namespace {

using convcheck::DType;
using convcheck::eigen_kernels::ModuleCall;

struct Pool {
  explicit Pool(int n) : pool(n), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

template <class T>
void run_as(const ModuleCall& c, const Eigen::ThreadPoolDevice& d) {
  convcheck::eigen_kernels::run<T>(c.kind, *c.g, c.path, static_cast<const T*>(c.a),
                                   static_cast<const T*>(c.b), static_cast<T*>(c.result), d);
}

void copy_error(ModuleCall* c, const char* what) {
  std::size_t i = 0;
  for (; what[i] && i + 1 < sizeof c->error; ++i) c->error[i] = what[i];
  c->error[i] = 0;
}

// The thread pools, one per thread count, owned by the process that made them: a child forked
// after a run inherits pools whose threads it does not have, so it starts a map of its own (the
// parent's is left alone, never destroyed: so is the whole map at exit, while another thread may
// still be inside a run).
std::map<int, std::unique_ptr<Pool>>& pools() {
  static std::map<int, std::unique_ptr<Pool>>* map = nullptr;
  static pid_t owner = 0;
  if (map == nullptr || owner != getpid()) {
    map = new std::map<int, std::unique_ptr<Pool>>;
    owner = getpid();
  }
  return *map;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) uint64_t convcheck_eigen_abi_v1() {
  return convcheck::eigen_kernels::module_abi();
}

extern "C" __attribute__((visibility("default"))) const char* convcheck_eigen_simd_v1() {
  static const std::string s = Eigen::SimdInstructionSetsInUse();
  return s.c_str();
}

extern "C" __attribute__((visibility("default"))) int convcheck_eigen_run_v1(ModuleCall* c) {
  try {
    // Calls are serialised by the caller's backend mutex; this lock is for any other caller.
    static std::mutex* mutex = new std::mutex;
    std::lock_guard<std::mutex> lock(*mutex);
    const int n = c->threads > 0 ? c->threads : 1;
    std::unique_ptr<Pool>& pool = pools()[n];
    if (!pool) pool = std::make_unique<Pool>(n);
    switch (c->dtype) {
      case DType::f32:
        run_as<float>(*c, pool->device);
        break;
      case DType::f64:
        run_as<double>(*c, pool->device);
        break;
      case DType::f16:
        run_as<Eigen::half>(*c, pool->device);
        break;
      case DType::bf16:
        run_as<Eigen::bfloat16>(*c, pool->device);
        break;
      case DType::i32:
        run_as<uint32_t>(*c, pool->device);
        break;
    }
    return 0;
  } catch (const std::bad_alloc& e) {
    c->out_of_memory = true;
    copy_error(c, e.what());
  } catch (const std::exception& e) {
    copy_error(c, e.what());
  } catch (...) {
    copy_error(c, "unknown exception");
  }
  return 1;
}
