// The "optimized" backend's driver: validation, layout and dtype conversion, workspace, dispatch
// to the op files, numeric contract, registration.
//
// Compute types: f32 and f64 natively; f16 and bf16 are widened to f32 (exact), accumulated in
// f32 and rounded once into 16 bits at the end; int32 runs in uint32_t, whose wrapping arithmetic
// is int32's modulo 2^32 (the result bits are the same). Layouts: the ops work on NHWC
// activations and HWIO / RSCM filters; NCHW operands are transposed in and the result out, and
// that time is part of the backend's. An f32/f64/int32 NHWC operand is read in place and an
// NHWC result of those types is written in place.
//
// ISA: the kernels are compiled for AVX-512, AVX2+FMA and portable C++ (see CMakeLists.txt) and
// chosen at run time (dispatch.h: entered only after the CPU + OS check says yes). Threads: OpenMP,
// omp_get_max_threads() of them; results are identical for every thread count (each result
// element's summation order is fixed by the problem, the ISA and the cache sizes the OS reports,
// never by the thread count).
//
// f64 underflow: when some product of the operands would be subnormal (special values), the
// operands are first scaled by powers of two (exact) so that none is, and the result scaled back
// once (a single rounding); so products never lose bits to gradual underflow.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/error.h"
#include "core/half.h"
#include "core/layout.h"
#include "optimized/dispatch.h"
#include "optimized/internal.h"
#include "optimized/ops.h"
#include "optimized/optimized.h"

namespace convcheck {

namespace opt {

namespace {

constexpr std::size_t kScratchKeep = std::size_t{256} << 20;

struct ScratchBuffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  ~ScratchBuffer() { release(); }
  void release() {
    if (data != nullptr) ::operator delete (data, std::align_val_t{64});
    data = nullptr;
    bytes = 0;
  }
};

}  // namespace

void* scratch(ScratchSlot slot, std::size_t bytes) {
  thread_local ScratchBuffer buffers[static_cast<int>(ScratchSlot::count)];
  ScratchBuffer& b = buffers[static_cast<int>(slot)];
  if (b.bytes < bytes || b.bytes > kScratchKeep) {
    b.release();
    b.data = ::operator new (bytes, std::align_val_t{64});
    b.bytes = bytes;
  }
  return b.data;
}

void skip_part_for_tests(int part) {
  StealingRanges::skipped_part_.store(part, std::memory_order_relaxed);
}

int64_t pieces_stolen_for_tests() {
  return StealingRanges::stolen_.exchange(0, std::memory_order_relaxed);
}

int thread_count() {
#ifdef _OPENMP
  if (omp_in_parallel()) return 1;
  return std::max(1, omp_get_max_threads());
#else
  return 1;
#endif
}

namespace {

// The compute type's storage dtype, when the problem's dtype is stored as T itself.
template <class T>
bool stored_as(DType t) {
  if constexpr (std::is_same_v<T, float>) return t == DType::f32;
  if constexpr (std::is_same_v<T, double>) return t == DType::f64;
  if constexpr (std::is_same_v<T, uint32_t>) return t == DType::i32;
  return false;
}

template <class T>
T widen(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::f16:
      return static_cast<T>(f16_to_float(static_cast<const uint16_t*>(data)[i]));
    case DType::bf16:
      return static_cast<T>(bf16_to_float(static_cast<const uint16_t*>(data)[i]));
    case DType::f32:
      return static_cast<T>(static_cast<const float*>(data)[i]);
    case DType::f64:
      return static_cast<T>(static_cast<const double*>(data)[i]);
    case DType::i32:
      return static_cast<T>(static_cast<const uint32_t*>(data)[i]);
  }
  return T(0);
}

// Rounds once into the storage dtype (f16/bf16 from f32: round to nearest even).
template <class T>
void narrow(void* data, DType t, int64_t i, T v) {
  switch (t) {
    case DType::f16:
      static_cast<uint16_t*>(data)[i] = f16_from_float(static_cast<float>(v));
      break;
    case DType::bf16:
      static_cast<uint16_t*>(data)[i] = bf16_from_float(static_cast<float>(v));
      break;
    case DType::f32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      break;
    case DType::f64:
      static_cast<double*>(data)[i] = static_cast<double>(v);
      break;
    case DType::i32:
      static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(v);
      break;
  }
}

// Contiguous conversions of n elements, in parallel; 16-bit types through the vector kernels.
template <class T>
void widen_span(const void* src, DType t, T* dst, int64_t n) {
  const int threads = thread_count();
  const int64_t chunk = 1 << 16, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i0 = c * chunk, len = std::min(chunk, n - i0);
    if constexpr (std::is_same_v<T, float>) {
      const uint16_t* h = static_cast<const uint16_t*>(src) + i0;
      if (t == DType::f16) {
        kernels<float>().widen_f16(h, dst + i0, len);
        continue;
      }
      if (t == DType::bf16) {
        kernels<float>().widen_bf16(h, dst + i0, len);
        continue;
      }
    }
    for (int64_t i = i0; i < i0 + len; ++i) dst[i] = widen<T>(src, t, i);
  }
}

template <class T>
void narrow_span(const T* src, void* dst, DType t, int64_t n) {
  const int threads = thread_count();
  const int64_t chunk = 1 << 16, chunks = (n + chunk - 1) / chunk;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t i0 = c * chunk, len = std::min(chunk, n - i0);
    if constexpr (std::is_same_v<T, float>) {
      uint16_t* h = static_cast<uint16_t*>(dst) + i0;
      if (t == DType::f16) {
        kernels<float>().narrow_f16(src + i0, h, len);
        continue;
      }
      if (t == DType::bf16) {
        kernels<float>().narrow_bf16(src + i0, h, len);
        continue;
      }
    }
    for (int64_t i = i0; i < i0 + len; ++i) narrow<T>(dst, t, i, src[i]);
  }
}

/// An operand in the compute type and canonical layout: in place, or converted into `owned` (the
/// scratch slot `slot`).
template <class T>
struct Canonical {
  const T* data = nullptr;
  T* owned = nullptr;
  ScratchSlot slot = ScratchSlot::operand_a;
};

template <class T>
void to_canonical(const Problem& p, const Geometry& g, Role r, const ConstTensorView& v,
                  Canonical<T>* out) {
  const bool nchw = stored_nchw(p, r);
  if (!nchw && stored_as<T>(v.dtype)) {
    out->data = static_cast<const T*>(v.data);
    return;
  }
  const std::array<int64_t, 4> s = logical_shape(g, r);
  const int64_t total = s[0] * s[1] * s[2] * s[3];
  out->owned = scratch_array<T>(out->slot, total);
  T* dst = out->owned;
  const int threads = thread_count();
  if (!nchw) {
    widen_span<T>(v.data, v.dtype, dst, total);
  } else {
    const int64_t HW = s[1] * s[2], C = s[3], rows = s[0] * HW;
    // NCHW -> NHWC in blocks of 16 channels x 16 positions.
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && total > 65536)
    for (int64_t row0 = 0; row0 < rows; row0 += 16) {
      const int64_t row1 = std::min(rows, row0 + 16);
      for (int64_t c0 = 0; c0 < C; c0 += 16) {
        const int64_t c1 = std::min(C, c0 + 16);
        for (int64_t row = row0; row < row1; ++row) {
          const int64_t n = row / HW, hw = row % HW;
          for (int64_t c = c0; c < c1; ++c)
            dst[row * C + c] = widen<T>(v.data, v.dtype, nchw_offset(n, hw, c, HW, C));
        }
      }
    }
  }
  out->data = dst;
}

template <class T>
void from_canonical(const Problem& p, const Geometry& g, Role r, const T* src, TensorView out) {
  const bool nchw = stored_nchw(p, r);
  const std::array<int64_t, 4> s = logical_shape(g, r);
  const int64_t total = s[0] * s[1] * s[2] * s[3];
  const int threads = thread_count();
  if (!nchw) {
    narrow_span<T>(src, out.data, out.dtype, total);
    return;
  }
  const int64_t HW = s[1] * s[2], C = s[3], rows = s[0] * HW;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && total > 65536)
  for (int64_t row0 = 0; row0 < rows; row0 += 16) {
    const int64_t row1 = std::min(rows, row0 + 16);
    for (int64_t c0 = 0; c0 < C; c0 += 16) {
      const int64_t c1 = std::min(C, c0 + 16);
      for (int64_t c = c0; c < c1; ++c) {
        for (int64_t row = row0; row < row1; ++row) {
          const int64_t n = row / HW, hw = row % HW;
          narrow<T>(out.data, out.dtype, nchw_offset(n, hw, c, HW, C), src[row * C + c]);
        }
      }
    }
  }
}

// f64 only: powers of two (ea, eb) for the two operands that lift their products away from the
// subnormal range (all of them when that cannot overflow, else as far as a sum of up to `terms`
// products stays finite), so that products lose no bits to gradual underflow (or, when both
// factors are subnormal, at most 2^-1075 * 2^-(ea+eb) each, far below the result's last place).
// (0, 0) when no product can underflow.
struct Lift {
  int a = 0, b = 0;
};
Lift underflow_lift(const double* a, int64_t na, const double* b, int64_t nb, int64_t terms) {
  // Smallest and largest nonzero finite magnitude, compared as bit patterns (for non-negative
  // doubles the order of the patterns is the order of the values): branch-free and parallel.
  auto range = [](const double* p, int64_t n, int* lo, int* hi) {
    constexpr uint64_t kAbs = 0x7FFFFFFFFFFFFFFFull, kInf = 0x7FF0000000000000ull;
    uint64_t mn = ~uint64_t{0}, mx = 0;
    const int threads = thread_count();
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min   \
                                                                         : mn) \
    reduction(max                                                              \
              : mx) if (threads > 1 && n > 65536)
    for (int64_t i = 0; i < n; ++i) {
      uint64_t u;
      std::memcpy(&u, p + i, sizeof u);
      u &= kAbs;
      const bool counts = u != 0 && u < kInf;
      mn = std::min(mn, counts ? u : ~uint64_t{0});
      mx = std::max(mx, counts ? u : uint64_t{0});
    }
    if (mx == 0) return false;
    double dmn, dmx;
    std::memcpy(&dmn, &mn, sizeof dmn);
    std::memcpy(&dmx, &mx, sizeof dmx);
    *lo = std::ilogb(dmn);
    *hi = std::ilogb(dmx);
    return true;
  };
  int alo, ahi, blo, bhi;
  if (!range(a, na, &alo, &ahi) || !range(b, nb, &blo, &bhi)) return {};
  const int min_normal = -1022, max_exp = 1023;
  if (alo + blo >= min_normal) return {};  // every product is normal (or zero)
  int log_terms = 0;
  while ((int64_t{1} << log_terms) < terms && log_terms < 62) ++log_terms;
  // Largest sum after lifting by s: below 2^(ahi + bhi + 2 + log_terms + s) <= 2^(max_exp - 1).
  const int s = std::min(min_normal - (alo + blo), max_exp - 1 - (ahi + bhi + 2 + log_terms));
  if (s <= 0) return {};
  Lift l;
  l.a = std::min(s, max_exp - 1 - ahi);
  l.b = s - l.a;
  return l;
}

template <class T>
void run_typed(const Problem& p, const Geometry& g, const Operands& in, TensorView result) {
  const OpIO io = op_io(p.op);
  Canonical<T> a, b;
  b.slot = ScratchSlot::operand_b;
  to_canonical<T>(p, g, io.a, *in.get(io.a), &a);
  to_canonical<T>(p, g, io.b, *in.get(io.b), &b);
  Lift lift;
  if constexpr (std::is_same_v<T, double>) {
    const int64_t na = role_elements(g, io.a), nb = role_elements(g, io.b);
    lift = underflow_lift(a.data, na, b.data, nb, std::min(na, nb));
    for (auto [c, n, e] : {std::tuple{&a, na, lift.a}, std::tuple{&b, nb, lift.b}}) {
      if (e == 0) continue;
      if (c->owned == nullptr) {
        c->owned = scratch_array<T>(c->slot, n);
        std::memcpy(c->owned, c->data, static_cast<std::size_t>(n) * sizeof(double));
        c->data = c->owned;
      }
      for (int64_t i = 0; i < n; ++i) c->owned[i] = std::ldexp(c->owned[i], e);  // exact
    }
  }
  const bool in_place = stored_as<T>(result.dtype) && !stored_nchw(p, io.result_like);
  T* out = static_cast<T*>(result.data);
  if (!in_place) out = scratch_array<T>(ScratchSlot::result, role_elements(g, io.result_like));
  // A result read back below (narrowed, transposed, rescaled) is better left in the caches.
  opt::run_op<T>(p.op, g, a.data, b.data, out, in_place && lift.a + lift.b == 0);
  if constexpr (std::is_same_v<T, double>) {
    if (lift.a + lift.b != 0) {  // one rounding, into the subnormal range at worst
      const int64_t n = role_elements(g, io.result_like);
      for (int64_t i = 0; i < n; ++i) out[i] = std::ldexp(out[i], -(lift.a + lift.b));
    }
  }
  if (!in_place) from_canonical<T>(p, g, io.result_like, out, result);
}

class OptimizedBackend : public Backend {
 public:
  std::string name() const override { return "optimized"; }
  std::string isa() const override { return isa_label(active_isa()); }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }

  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c = native_contract(p.dtype);  // any summation order: k = n (numerics §2.1)
    // Without FMA kernels each product is rounded too; k = n still covers it (one product rounding
    // plus at most n - 1 sums), but the name must not claim FMA.
    if (p.dtype == DType::f32 && !kernels<float>().fused) c.name = "f32";
    if (p.dtype == DType::f64 && !kernels<double>().fused) c.name = "f64";
    return c;
  }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    if (element_count(result.shape) == 0) return;  // an empty result: nothing to write
    switch (p.dtype) {
      case DType::f16:
      case DType::bf16:
      case DType::f32:
        run_typed<float>(p, g, in, result);
        break;
      case DType::f64:
        run_typed<double>(p, g, in, result);
        break;
      case DType::i32:
        run_typed<uint32_t>(p, g, in, result);
        break;
    }
  }
};

}  // namespace

}  // namespace opt

void register_optimized_backend(Registry& registry) {
  // A CONVCHECK_OPTIMIZED_ISA this machine cannot honour is bad input: the backend is not made
  // (InvalidArgument, exit 2), rather than silently running other kernels than asked for.
  registry.add("optimized",
               "OpenMP-blocked CPU backend: implicit GEMM (stride phases for backprop input), "
               "in-place backprop filter tiles, vectorised depthwise; kernels for the widest ISA "
               "the CPU runs (list: `kernels`); f16/bf16 accumulate in f32; deterministic",
               [](const std::string&) {
                 const Status s = opt::isa_request();
                 if (!s.ok()) throw InvalidArgument("optimized: " + s.reason());
                 return std::make_unique<opt::OptimizedBackend>();
               });
}

}  // namespace convcheck
