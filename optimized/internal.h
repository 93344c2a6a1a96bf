// What the optimized backend's files share: the op entry points (one file each), workspace
// buffers, thread partitioning. Internal to optimized/.
//
// The op entry points take canonical operands in the compute type T (float for f32, f16 and bf16;
// double for f64; uint32_t for int32, whose wrapping arithmetic is exactly int32's modulo 2^32):
// activations NHWC, filters HWIO (RSCM for depthwise). Each writes every element of its result.
// backend.cpp converts to and from the problem's dtype and format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "core/problem.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

/// An uninitialised, 64-byte aligned array (workspace; never value-initialises large buffers).
template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t n) { resize(n); }
  void resize(int64_t n) {
    const std::size_t count = n > 0 ? static_cast<std::size_t>(n) : 1;
    data_.reset(static_cast<T*>(::operator new (count * sizeof(T), std::align_val_t{64})));
    size_ = n > 0 ? n : 0;
  }
  void zero() {
    if (size_ > 0) std::memset(static_cast<void*>(data_.get()), 0, size_ * sizeof(T));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  T& operator[](int64_t i) { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { ::operator delete (p, std::align_val_t{64}); }
  };
  std::unique_ptr<T, Free> data_;
  int64_t size_ = 0;
};

/// Scratch memory kept between calls (per calling thread, per slot), so that a run does not
/// fault in fresh pages for its large workspaces every time: get() returns at least `bytes` bytes,
/// 64-byte aligned, valid until the next get() of the same slot on the same thread. Buffers above
/// kScratchKeep bytes are released at the next get() instead of kept.
enum class ScratchSlot { packed_filter, operand_a, operand_b, result, partial_sums, count };
void* scratch(ScratchSlot slot, std::size_t bytes);
template <class T>
T* scratch_array(ScratchSlot slot, int64_t n) {
  return static_cast<T*>(scratch(slot, static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T)));
}

/// Per-core data cache sizes in bytes (L1 data, L2), read once at run time from the OS
/// (sysconf, else /sys/devices/system/cpu/cpu0/cache; else 32 KiB and 256 KiB). The blocking of
/// the GEMM-shaped ops is chosen from them; nothing assumes one machine's numbers.
struct CacheSizes {
  int64_t l1d = 0, l2 = 0;
};
const CacheSizes& cache_sizes();
/// Makes cache_sizes() report these sizes (clamped as the OS's are) until clear_cache_override():
/// for tests, which reach every blocking path on any machine through small caches. Not while an
/// op runs.
void override_cache_sizes(int64_t l1d, int64_t l2);
void clear_cache_override();
/// Whether backprop filter may run a 1x1 layer mirrored (backprop_filter.cpp; default yes): for
/// the test that the mirrored result is bitwise the plain one. Not while an op runs.
void allow_mirrored_filter(bool allow);

/// Threads for the backend's parallel regions: OpenMP's current maximum, or 1 when called from
/// inside a parallel region.
int thread_count();

/// Part `part` of `parts` contiguous, near-equal ranges of [0, n).
inline void split_range(int64_t n, int parts, int part, int64_t* begin, int64_t* end) {
  *begin = n * part / parts;
  *end = n * (part + 1) / parts;
}

/// n items cut into `parts` (>= 1) contiguous parts whose lengths differ by at most one; part k
/// is [begin(k), begin(k) + size(k)). No product that could overflow.
struct EvenSplit {
  int64_t q = 0, rem = 0;
  EvenSplit(int64_t n, int64_t parts) : q(n / parts), rem(n % parts) {}
  int64_t begin(int64_t k) const { return k * q + (k < rem ? k : rem); }
  int64_t size(int64_t k) const { return q + (k < rem ? 1 : 0); }
};

/// Floor division for a positive divisor.
inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
/// Ceiling division for a positive divisor.
inline int64_t ceil_div(int64_t a, int64_t b) {
  return -floor_div(-a, b);
}

/// Depthwise column runs (kernels.h): result columns v0 + t*v_step for t < count, whose candidate
/// taps (b, off) read source column t*src_step + off, a term where that is inside [0, src_w).
/// Consecutive columns with the same valid taps form one run; each tap is recorded as the pair
/// (b, source column of the run's first column).
inline void append_column_runs(int64_t v0, int64_t v_step, int64_t count, int64_t src_step,
                               int64_t src_w, const std::vector<int64_t>& cand_b,
                               const std::vector<int64_t>& cand_off, std::vector<ColumnRun>* runs,
                               std::vector<int64_t>* col_taps) {
  const std::size_t nc = cand_b.size();
  std::vector<char> prev(nc), cur(nc);
  for (int64_t t = 0; t < count; ++t) {
    for (std::size_t k = 0; k < nc; ++k) {
      const int64_t c = t * src_step + cand_off[k];
      cur[k] = c >= 0 && c < src_w;
    }
    if (t > 0 && cur == prev) {
      ++runs->back().count;
      continue;
    }
    ColumnRun run;
    run.v0 = v0 + t * v_step;
    run.count = 1;
    run.tap_begin = static_cast<int64_t>(col_taps->size() / 2);
    for (std::size_t k = 0; k < nc; ++k) {
      if (!cur[k]) continue;
      col_taps->push_back(cand_b[k]);
      col_taps->push_back(t * src_step + cand_off[k]);
    }
    run.tap_end = static_cast<int64_t>(col_taps->size() / 2);
    runs->push_back(run);
    prev = cur;
  }
}

}  // namespace convcheck::opt
