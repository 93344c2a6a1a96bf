// The oneDNN comparator ("onednn"), design §4 and issue 4 item 3.
//
// Each op maps onto one oneDNN convolution primitive (algorithm::convolution_direct only:
// Winograd's transforms are outside the inner-product error model the oracle holds backends to):
//   conv2d, depthwise_conv2d                      convolution_forward (forward_inference)
//   conv2d_backprop_input, conv2d_transpose,
//   depthwise_conv2d_backprop_input               convolution_backward_data
//   conv2d_backprop_filter,
//   depthwise_conv2d_backprop_filter              convolution_backward_weights
// Depthwise ops are grouped convolutions with G = C groups of M output channels and 1 input
// channel.
//
// Layouts. The user (TF) memory is described exactly as it lies:
//   activations  dims {N, C, H, W} with format_tag::nhwc or ::nchw (the problem's format);
//   filters      G == 1:  dims {O, Cf, KH, KW} with format_tag::hwio (TF's HWIO);
//                G > 1 or depthwise: dims {G, O/G, Cf, KH, KW} with format_tag::hwigo: TF's
//                [KH, KW, Cf, O] with O = g*(O/G) + o is exactly h,w,i,g,o (RSCM [KH,KW,C,M] is
//                the case Cf = 1, G = C, O/G = M).
// Every plan has a primitive created with format_tag::any for all three tensors, so oneDNN picks
// its preferred (usually blocked) formats; where they differ from the user's, reorder primitives
// convert the operands in and the result out. For a problem of at least 2^24 multiply-adds whose
// preferred formats need reorders, a second primitive on the user's formats (no reorders) is made
// too when oneDNN has a non-reference kernel for it, and the first run times both (a warm-up each,
// then the best of five interleaved rounds: choose_fastest) and keeps the faster: measured here,
// reorders cost more than they win on some layers (e.g. 1x1 backprop input, 8x56x56x256
// out_backprop: 6.3 ms with the nChw16c reorder, 2.6 ms on NHWC directly) and win big on others
// (depthwise: 2 ms blocked vs 30-60 ms plain). Smaller problems (the oracle's) always use the
// preferred formats, so their results do not depend on timing. Every reorder runs inside run(), so
// the benchmark times them. oneDNN's dilation is zero-based (TF's 1 = oneDNN's 0); padding is
// passed as padding_l = {top, left} and padding_r = {bottom, right}, the resolved (possibly
// asymmetric) TF pads.
//
// Caching. Primitives, reorders, internal buffers and a user-mode scratchpad are built once per
// (canonical descriptor, OpenMP thread count) and kept in a small map, so repeated runs (the
// benchmark) pay only execution. One CPU engine and one in-order stream serve every plan.
//
// Data types. f32 everywhere; bf16 and f16 storage (f32 accumulation inside oneDNN) where this
// oneDNN build implements the op on this CPU, which is asked by creating the primitive descriptor;
// a refusal becomes the unsupported reason. f64 and int32 are unsupported: oneDNN 2.6 has no f64 or
// s32-operand convolution on CPU.
//
// Empty tensors. oneDNN cannot describe some empty convolutions (zero output channels; TF's
// output size 0 where oneDNN's truncating size rule gives 1, e.g. H + pads = eff - 1 with stride
// 2), so whenever an operand is empty the adapter writes TF's result itself, the sum of no terms:
// zeros (an empty result needs nothing).
//
// Threads. Debian's libdnnl uses the OpenMP runtime: oneDNN follows omp_get_max_threads() of the
// calling thread, so the thread count is part of the cache key.
//
// Semantics oneDNN does not share with TF are left visible to the oracle, not hidden. Seen here
// (oneDNN 2.6.3, AVX-512 with BF16): kernels that multiply padding zeros by the weights give NaN
// where a non-finite weight (or out_backprop element) meets padding, a position TF's sum has no
// term for; bf16 kernels that pair input channels (VNNI) read, for an odd channel count, the next
// element in memory as the pair's padding channel and multiply it by a zero weight, so a NaN there
// reaches outputs no term connects it to; and bf16 treats subnormal operands as zero, so
// subnormal * Inf gives NaN.
#include <memory>
#include <stdexcept>
#include <string>

#include "comparators/comparators.h"

#ifdef CONVCHECK_HAVE_ONEDNN
#include <omp.h>
#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>
#endif

namespace convcheck {

namespace {

#ifdef CONVCHECK_HAVE_ONEDNN

using comparators::any_empty;

using dnnl::memory;
using Tag = memory::format_tag;
using DT = memory::data_type;

std::string version_string() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor);
}

// One operand or result of a primitive: the user's (TF) memory, and where the primitive wants
// another format, an internal buffer and the reorder between them.
struct Arg {
  int dnnl_arg = 0;
  memory::desc user_md, prim_md;
  memory user;      // handle set to the caller's buffer on every run
  memory internal;  // allocated once when prim_md != user_md
  dnnl::reorder reorder;
  bool needs_reorder() const { return prim_md != user_md; }
};

// One way to run the op: a primitive made for oneDNN's preferred formats or for the user's.
struct Variant {
  dnnl::primitive prim;
  memory::desc scratch_md;
  memory scratch;
  Arg a, b, result;  // the two operands the op reads (op_io order) and the result
  std::string impl;  // oneDNN's implementation name
  bool materialized = false;
};

struct Plan {
  std::vector<Variant> variants;  // the first is used; more than one: not yet timed
};

class OneDnnBackend : public Backend {
 public:
  OneDnnBackend() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

  std::string name() const override { return "onednn"; }

  // oneDNN's own dispatch: the widest ISA it uses here, after ONEDNN_MAX_CPU_ISA's cap.
  std::string isa() const override {
    switch (dnnl::get_effective_cpu_isa()) {
      case dnnl::cpu_isa::sse41:
        return "sse41";
      case dnnl::cpu_isa::avx:
        return "avx";
      case dnnl::cpu_isa::avx2:
        return "avx2";
      case dnnl::cpu_isa::avx2_vnni:
        return "avx2_vnni";
      case dnnl::cpu_isa::avx512_core:
        return "avx512_core";
      case dnnl::cpu_isa::avx512_core_vnni:
        return "avx512_core_vnni";
      case dnnl::cpu_isa::avx512_core_bf16:
        return "avx512_core_bf16";
      case dnnl::cpu_isa::avx512_core_amx:
        return "avx512_core_amx";
      case dnnl::cpu_isa::all:
        return "all";
      default:
        return "cpu_isa " + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
    }
  }

  Status can_implement(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    if (p.dtype == DType::f64)
      return Status::Error(
          version_string() +
          " has no f64 convolution on CPU (its floating types are f32, bf16, f16)");
    if (p.dtype == DType::i32)
      return Status::Error(version_string() +
                           " has no int32 convolution (integer convolutions take s8/u8 operands)");
    const Geometry& g = checked.geometry();
    if (any_empty(g)) return Status::Ok();  // the adapter writes TF's zeros (header comment)
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      plan_for(p, g);
    } catch (const dnnl::error& e) {
      return Status::Error(version_string() + " has no " + dtype_name(p.dtype) + " " +
                           op_name(p.op) + " on this CPU: " + e.what() + " (" +
                           dnnl_status2str(e.status) + ")");
    }
    return Status::Ok();
  }

  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c;
    c.u_in = 0;                                // operands are used as stored (no down-conversion)
    c.u_acc = std::ldexp(1.0, -24);            // f32 accumulation in every case
    c.chain = NumericContract::Chain::linear;  // any summation tree has a chain <= n
    switch (p.dtype) {
      case DType::bf16:
        c.name = "onednn-bf16-f32acc";
        c.u_out = std::ldexp(1.0, -8);
        // AVX512_BF16's VDPBF16PS, which oneDNN's bf16 kernels use where the CPU has it, treats
        // subnormal inputs as zero and flushes subnormal results whatever MXCSR says (seen here:
        // a subnormal exact result came back 0). Without that instruction oneDNN emulates in f32
        // and keeps subnormals; the declaration is then merely conservative.
        c.flush_subnormals = true;
        break;
      case DType::f16:
        c.name = "onednn-f16-f32acc";
        c.u_out = std::ldexp(1.0, -11);
        break;
      default:
        c.name = "onednn-f32";
        c.u_out = 0;  // the f32 accumulator is the result
        break;
    }
    // oneDNN 2.6 documents no run-to-run bitwise guarantee (the deterministic attribute that
    // enforces one came later, because some implementations use non-deterministic constructs);
    // and which variant runs a large problem is chosen by timing (header comment).
    c.deterministic = false;
    return c;
  }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    if (comparators::zeros_if_empty(checked, result)) return;  // a sum of no terms
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const OpIO io = op_io(p.op);
    const ConstTensorView* va = in.get(io.a);  // both given: Backend::run checked them
    const ConstTensorView* vb = in.get(io.b);
    std::lock_guard<std::mutex> lock(mutex_);
    Plan& plan = plan_for(p, g);
    if (plan.variants.size() > 1) choose_fastest(plan, va->data, vb->data, result.data);
    Variant& v = plan.variants.front();
    materialize(v);
    execute(v, va->data, vb->data, result.data);
    last_note_ = v.impl;
  }

  std::string last_note() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_note_;
  }

 private:
  static DT dt_of(DType t) {
    switch (t) {
      case DType::bf16:
        return DT::bf16;
      case DType::f16:
        return DT::f16;
      default:
        return DT::f32;
    }
  }

  // The user's (TF) memory descriptor of a role.
  static memory::desc user_md(const Problem& p, const Geometry& g, Role r) {
    const DT t = dt_of(p.dtype);
    const Tag act = p.format == Format::NHWC ? Tag::nhwc : Tag::nchw;
    switch (r) {
      case Role::input:
        return memory::desc({g.N, g.C, g.H, g.W}, t, act);
      case Role::out_backprop:
        return memory::desc({g.N, g.O, g.OH, g.OW}, t, act);
      case Role::filter:
        break;
    }
    if (g.depthwise || g.G > 1)
      return memory::desc({g.G, g.O / g.G, g.Cf, g.KH, g.KW}, t, Tag::hwigo);
    return memory::desc({g.O, g.Cf, g.KH, g.KW}, t, Tag::hwio);
  }

  static memory::desc any_md(const memory::desc& user) {
    return memory::desc(user.dims(), user.data_type(), Tag::any);
  }

  // Multiply-adds of the problem; above kTuneMacs a plan times its variants (header comment).
  static double macs(const Geometry& g) {
    return static_cast<double>(g.N) * g.OH * g.OW * g.O * g.KH * g.KW * g.Cf;
  }

  // Precondition: mutex_ held.
  Plan& plan_for(const Problem& p, const Geometry& g) const {
    const std::string key = to_string(p) + "#threads=" + std::to_string(omp_get_max_threads());
    auto it = plans_.find(key);
    if (it != plans_.end()) return *it->second;
    auto plan = std::make_unique<Plan>();
    plan->variants.push_back(build(p, g, true));
    const Variant& preferred = plan->variants.front();
    const bool reorders = preferred.a.needs_reorder() || preferred.b.needs_reorder() ||
                          preferred.result.needs_reorder();
    if (reorders && macs(g) >= kTuneMacs) {
      try {
        Variant user = build(p, g, false);
        // oneDNN's reference kernels are never the faster one; don't spend time finding that out.
        if (user.impl.rfind("ref", 0) != 0) plan->variants.push_back(std::move(user));
      } catch (const dnnl::error&) {  // no implementation for TF's formats: "any" it is
      }
    }
    if (plans_.size() >= kMaxPlans) plans_.clear();  // a small cache: the benchmark reuses few
    return *plans_.emplace(key, std::move(plan)).first->second;
  }

  // A variant with oneDNN's preferred formats (`preferred`) or with the user's.
  Variant build(const Problem& p, const Geometry& g, bool preferred) const {
    Variant v;
    const OpKind kind = op_kind(p.op);
    const memory::desc x = user_md(p, g, Role::input), w = user_md(p, g, Role::filter),
                       dy = user_md(p, g, Role::out_backprop);
    const memory::desc px = preferred ? any_md(x) : x, pw = preferred ? any_md(w) : w,
                       pdy = preferred ? any_md(dy) : dy;
    const memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1},
        pad_l{g.pad_top, g.pad_left}, pad_r{g.pad_bottom, g.pad_right};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const auto alg = dnnl::algorithm::convolution_direct;

    // The forward primitive descriptor: the primitive itself for the forward ops, the hint that
    // backward primitives require otherwise.
    const auto fwd_prop = kind == OpKind::forward ? dnnl::prop_kind::forward_inference
                                                  : dnnl::prop_kind::forward_training;
    const dnnl::convolution_forward::desc fwd_desc(fwd_prop, alg, px, pw, pdy, strides, dilates,
                                                   pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc fwd_pd(fwd_desc, attr, engine_);

    auto set = [](Arg& arg, int dnnl_arg, const memory::desc& user, const memory::desc& prim) {
      arg.dnnl_arg = dnnl_arg;
      arg.user_md = user;
      arg.prim_md = prim;
    };
    switch (kind) {
      case OpKind::forward: {
        v.prim = dnnl::convolution_forward(fwd_pd);
        v.scratch_md = fwd_pd.scratchpad_desc();
        v.impl = fwd_pd.impl_info_str();
        set(v.a, DNNL_ARG_SRC, x, fwd_pd.src_desc());
        set(v.b, DNNL_ARG_WEIGHTS, w, fwd_pd.weights_desc());
        set(v.result, DNNL_ARG_DST, dy, fwd_pd.dst_desc());
        break;
      }
      case OpKind::backward_data: {
        const dnnl::convolution_backward_data::desc d(alg, px, pw, pdy, strides, dilates, pad_l,
                                                      pad_r);
        const dnnl::convolution_backward_data::primitive_desc pd(d, attr, engine_, fwd_pd);
        v.prim = dnnl::convolution_backward_data(pd);
        v.scratch_md = pd.scratchpad_desc();
        v.impl = pd.impl_info_str();
        set(v.a, DNNL_ARG_WEIGHTS, w, pd.weights_desc());
        set(v.b, DNNL_ARG_DIFF_DST, dy, pd.diff_dst_desc());
        set(v.result, DNNL_ARG_DIFF_SRC, x, pd.diff_src_desc());
        break;
      }
      case OpKind::backward_filter: {
        const dnnl::convolution_backward_weights::desc d(alg, px, pw, pdy, strides, dilates, pad_l,
                                                         pad_r);
        const dnnl::convolution_backward_weights::primitive_desc pd(d, attr, engine_, fwd_pd);
        v.prim = dnnl::convolution_backward_weights(pd);
        v.scratch_md = pd.scratchpad_desc();
        v.impl = pd.impl_info_str();
        set(v.a, DNNL_ARG_SRC, x, pd.src_desc());
        set(v.b, DNNL_ARG_DIFF_DST, dy, pd.diff_dst_desc());
        set(v.result, DNNL_ARG_DIFF_WEIGHTS, w, pd.diff_weights_desc());
        break;
      }
    }
    return v;
  }

  // Buffers and reorders, made on a variant's first run (can_implement needs descriptors only).
  void materialize(Variant& v) const {
    if (v.materialized) return;
    v.scratch = memory(v.scratch_md, engine_);
    for (Arg* arg : {&v.a, &v.b, &v.result}) {
      arg->user = memory(arg->user_md, engine_, DNNL_MEMORY_NONE);
      if (!arg->needs_reorder()) continue;
      arg->internal = memory(arg->prim_md, engine_);
      arg->reorder = arg == &v.result ? dnnl::reorder(arg->internal, arg->user)
                                      : dnnl::reorder(arg->user, arg->internal);
    }
    v.materialized = true;
  }

  // One run: reorders in, the primitive, the reorder out. Precondition: materialized.
  void execute(Variant& v, const void* a, const void* b, void* result) {
    v.a.user.set_data_handle(const_cast<void*>(a));  // oneDNN only reads its sources
    v.b.user.set_data_handle(const_cast<void*>(b));
    v.result.user.set_data_handle(result);
    for (Arg* arg : {&v.a, &v.b})
      if (arg->needs_reorder()) arg->reorder.execute(stream_, arg->user, arg->internal);
    std::unordered_map<int, memory> args;
    for (Arg* arg : {&v.a, &v.b, &v.result})
      args.emplace(arg->dnnl_arg, arg->needs_reorder() ? arg->internal : arg->user);
    args.emplace(DNNL_ARG_SCRATCHPAD, v.scratch);
    v.prim.execute(stream_, args);
    if (v.result.needs_reorder())
      v.result.reorder.execute(stream_, v.result.internal, v.result.user);
    stream_.wait();
  }

  // Times every variant on the caller's buffers and keeps the fastest alone: a warm-up run of
  // each, then kTuneRounds rounds that run every variant once, each variant's best run deciding.
  // Interleaved, so that a busy spell of a shared machine slows every variant's runs alike (the
  // variants' runs were back to back before: three of one, then three of the other). Close
  // variants may still be chosen either way from one process to the next: on a quiet Zen 4 guest,
  // nine-run sets before and after this change kept the minority choice in 12 and 19 of 540
  // records, medians 3-47 % and 1-13 % apart (bench/zen4-2026-12-05/README.md). Every run writes
  // the whole result; the caller's run follows anyway.
  void choose_fastest(Plan& plan, const void* a, const void* b, void* result) {
    using Clock = std::chrono::steady_clock;
    const std::size_t n = plan.variants.size();
    for (Variant& v : plan.variants) {
      materialize(v);
      execute(v, a, b, result);
    }
    std::vector<double> best_s(n, INFINITY);
    for (int round = 0; round < kTuneRounds; ++round) {
      for (std::size_t i = 0; i < n; ++i) {
        const Clock::time_point t0 = Clock::now();
        execute(plan.variants[i], a, b, result);
        best_s[i] = std::min(best_s[i], std::chrono::duration<double>(Clock::now() - t0).count());
      }
    }
    const std::size_t best =
        static_cast<std::size_t>(std::min_element(best_s.begin(), best_s.end()) - best_s.begin());
    Variant chosen = std::move(plan.variants[best]);
    plan.variants.clear();  // frees the other variants' buffers
    plan.variants.push_back(std::move(chosen));
  }

  static constexpr std::size_t kMaxPlans = 64;
  static constexpr double kTuneMacs = 1 << 24;
  static constexpr int kTuneRounds = 5;

  dnnl::engine engine_;
  dnnl::stream stream_;
  std::string last_note_;  // the implementation of the last run (oneDNN's impl_info_str)
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<Plan>> plans_;
};

#else  // !CONVCHECK_HAVE_ONEDNN

const char kNotFound[] =
    "oneDNN was not found when convcheck was built (install libdnnl-dev and reconfigure)";

#endif

}  // namespace

void register_onednn_backend(Registry& registry) {
  registry.add("onednn",
               "oneDNN comparator: direct convolutions (forward, backward data, backward "
               "weights; depthwise as groups), TF layouts in and out, reorders timed",
               [](const std::string&) -> std::unique_ptr<Backend> {
#ifdef CONVCHECK_HAVE_ONEDNN
                 return std::make_unique<OneDnnBackend>();
#else
                 return std::make_unique<UnavailableBackend>("onednn", kNotFound);
#endif
               });
}

}  // namespace convcheck
