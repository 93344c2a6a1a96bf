// The Backend interface and the registry (design §4).
//
// A backend is one implementation of the seven ops. It says whether it is available on this machine
// and whether it can implement a problem (a reason when not: unsupported is never a silent pass),
// declares the numeric contract the oracle will hold it to, and runs a validated problem on
// operands that live in caller-owned memory (so the oracle can surround every buffer with guard
// bands). Every problem it is asked about is a CheckedProblem (core/problem.h): validated once by
// the caller, its geometry carried, so no backend derives or validates the geometry again.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/problem.h"
#include "core/tensor.h"

namespace convcheck {

/// A non-owning view of a tensor in caller memory.
///
/// `guard_bytes`: the caller owns `guard_bytes` bytes of guard band on each side of the data (the
/// oracle's guarded runs, design §6.2). Host backends ignore it. A device backend mirrors the whole
/// span [data - guard_bytes, data + bytes + guard_bytes) onto the device, copies a result's whole
/// span back (so the caller's host-side guard and poison checks see what the kernel did), and
/// compares each operand's device span with the host one after the run, throwing GuardViolation
/// when a kernel wrote into it.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Layout layout = Layout::Plain;
  std::size_t guard_bytes = 0;
};
struct ConstTensorView {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Layout layout = Layout::Plain;
  std::size_t guard_bytes = 0;
};
inline TensorView view(Tensor& t) {
  return {t.data(), t.dtype(), t.shape(), t.layout()};
}
inline ConstTensorView view(const Tensor& t) {
  return {t.data(), t.dtype(), t.shape(), t.layout()};
}

/// The two operands an op reads, by role; the role it does not read is null (design §3).
struct Operands {
  const ConstTensorView* input = nullptr;
  const ConstTensorView* filter = nullptr;
  const ConstTensorView* out_backprop = nullptr;
  const ConstTensorView* get(Role r) const;
  void set(Role r, const ConstTensorView* v);
};

/// What a backend promises about its arithmetic (numerics note §2.3). The oracle's bound is
///   tau_i = (1+u_out)[(2u_in+u_in^2) + gamma_k(u_acc)(1+u_in)^2] M_i + u_out|s_i| + nu_i
/// with k = chain_length(n_i).
struct NumericContract {
  std::string name;  // "exact", "f32-fma", "tf32", "f16-storage-f32-acc", ...
  double u_in = 0;   // rounding of operands on the way in (0: used as stored)
  double u_acc = 0;  // unit roundoff of the accumulation (0: exact)
  double u_out = 0;  // rounding into the result dtype
  enum class Chain { exact, linear, blocked } chain = Chain::linear;
  int64_t block = 0;  // Chain::blocked: partial sums of `block` terms, then summed linearly
  bool flush_subnormals = false;
  bool deterministic = true;
  /// Longest chain of roundings a product sees in a sum of n terms.
  int64_t chain_length(int64_t n) const;
};

/// The contract of accumulating in the dtype's own precision with fused multiply-adds, in any
/// summation order (Chain::linear, k = n), deterministic, no flushing: "f32-fma" / "f64-fma";
/// f16 and bf16 stored 16-bit, accumulated in f32 and rounded once ("f16-storage-f32-acc", ...);
/// int32 wrapping modulo 2^32 ("i32-wrap", exact chain). Backends start from it and adjust.
NumericContract native_contract(DType t);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// E.g. "no CUDA device". Default: available.
  virtual Status available() const { return Status::Ok(); }
  virtual Status can_implement(const CheckedProblem& p) const = 0;
  virtual NumericContract contract(const CheckedProblem& p) const = 0;
  /// Runs the op: checks once what every backend relies on (the two operands the op reads are given
  /// with the problem's dtype and storage shapes, and data where they have elements; the result
  /// buffer likewise), throwing InvalidArgument with the numbers ("optimized: conv2d: the output
  /// buffer is f32 [1,2,2,3], expected f32 [1,2,2,4]"), then calls compute(). Precondition:
  /// can_implement(p) is ok (not re-asked: for a library comparator it builds a plan). Writes every
  /// result element.
  void run(const CheckedProblem& p, const Operands& in, TensorView result);

  /// Before each of the oracle's reruns of a case (which compare bits with the first run): a
  /// backend that runs its kernel in another process starts a fresh one, so the reruns also cross
  /// processes (plugins). Default: nothing.
  virtual void start_afresh() {}

  /// Device backends: the time of the last run()'s kernels measured on the device (events around
  /// them; transfers and allocation excluded), in milliseconds. Negative for host backends, which
  /// `bench` times by the wall clock around run().
  virtual double last_device_ms() const { return -1; }
  /// The instruction set this backend's kernels execute on this machine now, as chosen at run
  /// time (e.g. "avx2", "avx512_core"), for `list`, bench records and run reports. Empty: the
  /// backend does not choose one (it runs the build's baseline code, or a device's).
  virtual std::string isa() const { return ""; }
  /// What the backend says about its last run(), e.g. cuDNN's algorithm and layout
  /// ("bwd_data=ALGO_1, NHWC/KRSC, pad copy") or oneDNN's implementation ("brg:avx512_core");
  /// empty when it has nothing to say or has not run. `bench` records it as the record's note.
  virtual std::string last_note() const { return ""; }
  /// What an out-of-process backend printed (stdout and stderr) since the last call, capped (its
  /// tail kept); the oracle puts it in the case's record. Default: nothing.
  virtual std::string take_output() { return ""; }
  /// Device backends: the device's f32 FMA rate and memory bandwidth, measured in this process
  /// (once), which `bench` reports a device backend's % of peak against. `device` empty: a host
  /// backend (bench uses the CPU's peaks).
  struct DevicePeaks {
    std::string device;  // e.g. "NVIDIA H100 80GB HBM3 (sm_90, driver 13.0)"
    double fma_gflops = 0;
    double bandwidth_gbs = 0;
  };
  virtual DevicePeaks device_peaks() { return {}; }
  /// Whether run() reads and writes the caller's buffers itself, in this process, on the host, so
  /// that the oracle's page-guarded passes (oracle/guards.cpp: each buffer's end, then its start,
  /// against a PROT_NONE page) see its reads past either end. false for device backends (their
  /// kernels read device mirrors) and plugins (a child process reads copies, which the plugin
  /// runner places against guard pages itself). Default true.
  virtual bool reads_caller_memory() const { return true; }

 private:
  /// The backend's kernel (TF's OpKernel::Compute): run() has checked the operands and the result
  /// against the problem, so a backend never validates them again.
  virtual void compute(const CheckedProblem& p, const Operands& in, TensorView result) = 0;
};

/// run()'s checks, for callers that hold operands for a problem outside a backend; `label`
/// prefixes every message.
void check_run_arguments(const std::string& label, const CheckedProblem& p, const Operands& in,
                         const TensorView& result);

/// A backend this build or machine cannot run (no CUDA toolkit, no cuDNN, no oneDNN at build time,
/// no device): available() and can_implement() give the reason, run() throws. The one stub class
/// for every such case. The reason may be computed when asked (a device probe).
class UnavailableBackend final : public Backend {
 public:
  UnavailableBackend(std::string name, std::function<Status()> reason)
      : name_(std::move(name)), reason_(std::move(reason)) {}
  UnavailableBackend(std::string name, const std::string& reason)
      : UnavailableBackend(std::move(name), [reason] { return Status::Error(reason); }) {}
  std::string name() const override { return name_; }
  Status available() const override { return reason_(); }
  Status can_implement(const CheckedProblem&) const override { return reason_(); }
  NumericContract contract(const CheckedProblem&) const override;

 private:
  void compute(const CheckedProblem&, const Operands&, TensorView) override;
  std::string name_;
  std::function<Status()> reason_;
};

/// Name -> factory. A name ending in ':' is a prefix family ("mutant:", "plugin:"): its factory
/// gets the text after the prefix.
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Backend>(const std::string& arg)>;
  static Registry& instance();

  void add(const std::string& name, const std::string& description, Factory factory);
  /// Throws InvalidArgument for an unknown name (listing the known ones).
  std::unique_ptr<Backend> make(const std::string& name) const;
  struct Entry {
    std::string name, description;
    Factory factory;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace convcheck
