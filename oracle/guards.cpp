// Guarded runs (design §6.2): every buffer a backend sees sits between guard bands of a known
// pattern, operands are checked for modification, and the result starts poisoned, so an
// out-of-bounds write, a write to an operand, or an element never written is a verdict rather than
// silent corruption.
#include <chrono>
#include <cstring>
#include <exception>

#include "oracle/internal.h"

namespace convcheck::oracle_detail {

namespace {

constexpr std::size_t kGuard = 256;  // bytes on each side; a multiple of 64 keeps data aligned
constexpr unsigned char kGuardByte = 0xA5;

// Poison for unwritten elements: a signalling NaN in the float types (no arithmetic produces it),
// an unlikely integer for int32.
void poison(void* data, DType t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::f16:
        static_cast<uint16_t*>(data)[i] = 0x7D5A;
        break;
      case DType::bf16:
        static_cast<uint16_t*>(data)[i] = 0x7FA5;
        break;
      case DType::f32:
        static_cast<uint32_t*>(data)[i] = 0x7FA5A5A5u;
        break;
      case DType::f64:
        static_cast<uint64_t*>(data)[i] = 0x7FF4A5A5A5A5A5A5ull;
        break;
      case DType::i32:
        static_cast<uint32_t*>(data)[i] = 0x5A5AA5A5u;
        break;
    }
  }
}

class Guarded {
 public:
  explicit Guarded(std::size_t bytes)
      : bytes_(bytes), storage_((2 * kGuard + bytes + 63) / 8 + 8, 0) {
    unsigned char* b = base();
    std::memset(b, kGuardByte, kGuard);
    std::memset(b + kGuard + bytes_, kGuardByte, kGuard);
  }
  void* data() { return base() + kGuard; }
  // The first damaged guard byte as an offset from the data (negative: before it), or 0 if intact.
  long damage() {
    const unsigned char* b = base();
    for (std::size_t i = 0; i < kGuard; ++i)
      if (b[i] != kGuardByte) return static_cast<long>(i) - static_cast<long>(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i)
      if (b[kGuard + bytes_ + i] != kGuardByte) return static_cast<long>(bytes_ + i) + 1;
    return 0;
  }

 private:
  unsigned char* base() {
    auto a = reinterpret_cast<uintptr_t>(storage_.data());
    return reinterpret_cast<unsigned char*>((a + 63) & ~uintptr_t{63});
  }
  std::size_t bytes_;
  std::vector<uint64_t> storage_;
};

bool same_bits(const void* a, const void* b, std::size_t n) {
  return n == 0 || !std::memcmp(a, b, n);
}

}  // namespace

Run run_guarded(Backend& b, const CheckedProblem& checked, const Roles& operands,
                const Tensor* reference) {
  const Problem& p = checked.problem();
  const Geometry& g = checked.geometry();
  const OpIO io = op_io(p.op);
  Run run;
  run.result =
      Tensor(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  const Tensor& a = operands.get(io.a);
  const Tensor& c = operands.get(io.b);
  Guarded ga(a.bytes()), gc(c.bytes()), gr(run.result.bytes());
  if (a.bytes()) std::memcpy(ga.data(), a.data(), a.bytes());
  if (c.bytes()) std::memcpy(gc.data(), c.data(), c.bytes());
  poison(gr.data(), p.dtype, run.result.size());
  const ConstTensorView va{ga.data(), a.dtype(), a.shape(), a.layout(), kGuard};
  const ConstTensorView vc{gc.data(), c.dtype(), c.shape(), c.layout(), kGuard};
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vc);
  const TensorView vr{gr.data(), p.dtype, run.result.shape(), run.result.layout(), kGuard};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    b.run(checked, ops, vr);
  } catch (const GuardViolation& e) {
    // A device backend saw its kernel write into a guard band or an operand (checked on its
    // copies).
    run.check = e.check();
    run.error = e.what();
    return run;
  } catch (const Timeout& e) {  // an out-of-process backend (plugins/) hung and was killed
    run.check = "timeout";
    run.error = e.what();
    return run;
  } catch (const Crash& e) {  // an out-of-process backend died; the text names the signal
    run.check = "crashed";
    run.error = e.what();
    return run;
  } catch (const std::exception& e) {
    run.check = "crashed";
    run.error = std::string("the backend threw: ") + e.what();
    return run;
  } catch (...) {
    run.check = "crashed";
    run.error = "the backend threw a non-standard exception";
    return run;
  }
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.ran = true;
  if (run.result.bytes()) std::memcpy(run.result.data(), gr.data(), run.result.bytes());
  if (long d = gr.damage()) {
    run.check = "out_of_bounds";
    run.error = "wrote outside the " + std::string(result_name(p.op)) +
                " buffer (guard byte at offset " + std::to_string(d) + " from its data changed)";
  } else if (long e = ga.damage() ? ga.damage() : gc.damage()) {
    run.check = "out_of_bounds";
    run.error = "wrote outside an operand buffer (guard byte at offset " + std::to_string(e) + ")";
  } else if (!same_bits(ga.data(), a.data(), a.bytes()) ||
             !same_bits(gc.data(), c.data(), c.bytes())) {
    run.check = "operand_modified";
    run.error = "modified an operand it only reads";
  } else {
    Tensor poisoned(p.dtype, run.result.shape());
    poison(poisoned.data(), p.dtype, poisoned.size());
    const std::size_t w = dtype_size(p.dtype);
    for (int64_t i = 0; i < run.result.size(); ++i) {
      const auto* got = static_cast<const unsigned char*>(run.result.data()) + i * w;
      const auto* bad = static_cast<const unsigned char*>(poisoned.data()) + i * w;
      const bool truly =
          reference &&
          same_bits(static_cast<const unsigned char*>(reference->data()) + i * w, bad, w);
      if (same_bits(got, bad, w) && !truly) {
        run.check = "unwritten";
        run.error = "left " + std::string(result_name(p.op)) + " element " + std::to_string(i) +
                    " unwritten (it still holds the poison)";
        break;
      }
    }
  }
  return run;
}

}  // namespace convcheck::oracle_detail
