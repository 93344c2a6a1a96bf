// The mutant backends' driver: names and registration, contracts, operand validation, layouts
// (storage <-> canonical) and the result buffer. The bugs that belong to those jobs live here
// (nchw_as_nhwc, nan_to_zero, oob_write, unwritten_tail, padding_taps_unwritten,
// over_read_by_one); the rest are in kernels.cpp.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "mutants/internal.h"
#include "mutants/kernels.h"
#include "mutants/mutants.h"

namespace convcheck {

namespace mutants {

const char* bug_name(Bug bug) {
  switch (bug) {
    case Bug::none:
      return "none";
    case Bug::same_pad_before:
      return "same_pad_before";
    case Bug::no_dilation:
      return "no_dilation";
    case Bug::swap_strides:
      return "swap_strides";
    case Bug::flip_filter:
      return "flip_filter";
    case Bug::drop_last_row:
      return "drop_last_row";
    case Bug::depthwise_order:
      return "depthwise_order";
    case Bug::filter_io_swapped:
      return "filter_io_swapped";
    case Bug::ignore_groups:
      return "ignore_groups";
    case Bug::nchw_as_nhwc:
      return "nchw_as_nhwc";
    case Bug::oob_write:
      return "oob_write";
    case Bug::unwritten_tail:
      return "unwritten_tail";
    case Bug::nan_to_zero:
      return "nan_to_zero";
    case Bug::low_precision_accumulate:
      return "low_precision_accumulate";
    case Bug::int_saturate:
      return "int_saturate";
    case Bug::nondeterministic:
      return "nondeterministic";
    case Bug::vector_tail:
      return "vector_tail";
    case Bug::batch_unroll_tail:
      return "batch_unroll_tail";
    case Bug::index16:
      return "index16";
    case Bug::cancellation:
      return "cancellation";
    case Bug::flush_to_zero:
      return "flush_to_zero";
    case Bug::spatial_unroll_tail:
      return "spatial_unroll_tail";
    case Bug::zero_padding_terms:
      return "zero_padding_terms";
    case Bug::half_accumulate:
      return "half_accumulate";
    case Bug::f64_in_f32:
      return "f64_in_f32";
    case Bug::truncate_16bit:
      return "truncate_16bit";
    case Bug::silent_tf32:
      return "silent_tf32";
    case Bug::i32_via_f32:
      return "i32_via_f32";
    case Bug::lost_update:
      return "lost_update";
    case Bug::over_read_by_one:
      return "over_read_by_one";
    case Bug::stale_cache:
      return "stale_cache";
    case Bug::padding_taps_unwritten:
      return "padding_taps_unwritten";
  }
  return "?";
}

std::optional<Bug> parse_bug(std::string_view name) {
  for (Bug b : kAllBugs) {
    if (name == bug_name(b)) return b;
  }
  return std::nullopt;
}

namespace {

// Runs differ in their summation order only for Bug::nondeterministic; a process-wide counter
// (not per instance) so that even a fresh backend for the rerun sees a new order.
std::atomic<uint64_t> g_run_counter{0};
// Where over_read_by_one's read goes, so that no compiler drops it.
std::atomic<unsigned> g_sink{0};

class MutantBackend : public Backend {
 public:
  explicit MutantBackend(Bug bug) : bug_(bug) {}

  std::string name() const override { return std::string("mutant:") + bug_name(bug_); }
  Status can_implement(const CheckedProblem&) const override { return Status::Ok(); }

  NumericContract contract(const CheckedProblem& checked) const override {
    const Problem& p = checked.problem();
    NumericContract c;
    c.deterministic = true;  // a lie for Bug::nondeterministic: the bitwise rerun must catch it
    // nondeterministic and cancellation declare what a plain accumulation honestly promises;
    // their bugs must be caught inside that bound.
    if ((bug_ == Bug::nondeterministic || bug_ == Bug::cancellation) && is_floating(p.dtype)) {
      // What a plain linear accumulation honestly promises (numerics note §2.3): f64 in double,
      // the rest in float; f16/bf16 round the float sum into the dtype once at the end.
      c.chain = NumericContract::Chain::linear;
      switch (p.dtype) {
        case DType::f64:
          c.name = "f64-linear";
          c.u_acc = std::ldexp(1.0, -53);
          break;
        case DType::f32:
          c.name = "f32-linear";
          c.u_acc = std::ldexp(1.0, -24);
          break;
        default:
          c.name = std::string(dtype_name(p.dtype)) + "-storage-f32-acc";
          c.u_acc = std::ldexp(1.0, -24);
          c.u_out = std::ldexp(1.0, -float_format(p.dtype).precision);
          break;
      }
      return c;
    }
    // Every other mutant claims to be the reference: exact sums, one rounding into the dtype.
    // (int32 sums are associative, so nondeterministic is exact there too.)
    c.name = "exact";
    c.chain = NumericContract::Chain::exact;
    c.u_out = p.dtype == DType::i32 ? 0.0 : std::ldexp(1.0, -float_format(p.dtype).precision);
    return c;
  }

  void compute(const CheckedProblem& checked, const Operands& in, TensorView result) override {
    const Problem& p = checked.problem();
    const Geometry& g = checked.geometry();
    const OpIO io = op_io(p.op);
    mutants::CanonicalOperands c;
    for (Role r : {io.a, io.b}) {
      c.get(r) = load(p, g, in, r);
    }
    if (bug_ == Bug::over_read_by_one) read_past_the_end(*in.get(io.b));
    check_result(p, g, io.result_like, result);
    if (bug_ == Bug::stale_cache) {
      const std::string key = cache_key(p, g, io, c);
      if (key != cached_key_) {
        cached_ = mutants::compute(p, g, bug_, c, g_run_counter.fetch_add(1) + 1);
        cached_key_ = key;
      }
      store(p, g, io.result_like, cached_, result);
      return;
    }
    const std::vector<double> values =
        mutants::compute(p, g, bug_, c, g_run_counter.fetch_add(1) + 1);
    store(p, g, io.result_like, values, result);
  }

 private:
  // Whether a role's tensor is laid out NCHW in memory as this mutant reads it.
  bool reads_nchw(const Problem& p, Role r) const {
    return stored_nchw(p, r) && bug_ != Bug::nchw_as_nhwc;
  }

  // Validates an operand and converts it to canonical order as doubles (exact for every dtype).
  std::vector<double> load(const Problem& p, const Geometry& g, const Operands& in, Role r) const {
    std::vector<double> out =
        load_canonical(p, g, r, in.get(r), name() + ": " + op_name(p.op), reads_nchw(p, r));
    if (bug_ == Bug::nan_to_zero)
      for (double& x : out) x = std::isnan(x) ? 0.0 : x;
    if (bug_ == Bug::silent_tf32 && p.dtype == DType::f32)
      for (double& x : out) x = mutants::round_to_bits(x, 11);
    return out;
  }

  // A loop bound off by one: the element just past the end is read, and its value dropped, so the
  // result is the reference's and only a guard page right after the operand can tell. The read is
  // the planted bug, so AddressSanitizer is told to let it through: convcheck's own guard pages are
  // what must catch it (under ASan too), not the sanitizer stopping the test process.
  __attribute__((no_sanitize("address"))) static void read_past_the_end(const ConstTensorView& v) {
    const int64_t n = element_count(v.shape);
    if (n == 0 || v.data == nullptr) return;
    const std::size_t w = dtype_size(v.dtype);
    const volatile unsigned char* past = static_cast<const unsigned char*>(v.data) + n * w;
    unsigned char sink = 0;
    for (std::size_t k = 0; k < w; ++k) sink ^= past[k];
    g_sink.fetch_xor(sink, std::memory_order_relaxed);
  }

  void check_result(const Problem& p, const Geometry& g, Role r, const TensorView& result) const {
    const std::string label = name() + ": " + op_name(p.op);
    const Shape want = storage_shape(p, g, r);
    if (result.dtype != p.dtype || result.shape != want) {
      throw InvalidArgument(label + ": the " + result_name(p.op) + " buffer is " +
                            dtype_name(result.dtype) + " " + shape_string(result.shape) +
                            ", expected " + dtype_name(p.dtype) + " " + shape_string(want));
    }
    if (element_count(want) > 0 && result.data == nullptr) {
      throw InvalidArgument(label + ": the " + result_name(p.op) + " buffer has no data");
    }
  }

  // Whether filter tap (a, b) meets the input for some output pixel (backprop filter's index law:
  // input row i*sh + a*dh - pad_top, column j*sw + b*dw - pad_left, inside the input): the first
  // output row (column) at or past the input's start, if any, must land before its end. Computed,
  // not searched: an empty batch may come with a padding of 2^58.
  static bool tap_has_terms(const Geometry& g, int64_t a, int64_t b) {
    auto meets = [](int64_t outputs, int64_t stride, int64_t offset, int64_t size) {
      // offset = tap * dilation - pad; the first i with i * stride + offset >= 0.
      const int64_t first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
      return first < outputs && first * stride + offset < size;
    };
    return g.N > 0 && meets(g.OH, g.sh, a * g.dh - g.pad_top, g.H) &&
           meets(g.OW, g.sw, b * g.dw - g.pad_left, g.W);
  }

  // Writes canonical values into the result's storage layout.
  void store(const Problem& p, const Geometry& g, Role r, const std::vector<double>& values,
             TensorView result) const {
    const int64_t n = static_cast<int64_t>(values.size());
    const std::size_t w = dtype_size(p.dtype);
    // Byte ranges [offset, offset + size) of the result that are never written: their bytes stay
    // as they were. unwritten_tail: the last element in storage. padding_taps_unwritten: every
    // filter tap that meets only padding (a filter is stored [KH][KW][...] in every format, so a
    // tap's elements are one run).
    std::vector<std::pair<std::size_t, std::size_t>> unwritten;
    if (bug_ == Bug::unwritten_tail && n > 0) unwritten.emplace_back((n - 1) * w, w);
    if (bug_ == Bug::padding_taps_unwritten && r == Role::filter && n > 0) {
      const std::size_t per_tap = static_cast<std::size_t>(n / (g.KH * g.KW)) * w;
      for (int64_t a = 0; a < g.KH; ++a)
        for (int64_t b = 0; b < g.KW; ++b)
          if (!tap_has_terms(g, a, b))
            unwritten.emplace_back(static_cast<std::size_t>(a * g.KW + b) * per_tap, per_tap);
    }
    unsigned char* const bytes = static_cast<unsigned char*>(result.data);
    std::vector<std::vector<unsigned char>> kept;
    for (const auto& [at, size] : unwritten) kept.emplace_back(bytes + at, bytes + at + size);
    store_canonical(values, logical_shape(g, r), reads_nchw(p, r), result);
    for (std::size_t k = 0; k < unwritten.size(); ++k)
      std::copy(kept[k].begin(), kept[k].end(), bytes + unwritten[k].first);
    if (bug_ == Bug::oob_write && result.data != nullptr) {
      // One element past the end, complemented so the write is visible whatever was there.
      unsigned char* past = static_cast<unsigned char*>(result.data) + n * dtype_size(p.dtype);
      for (std::size_t k = 0; k < dtype_size(p.dtype); ++k) past[k] = ~past[k];
    }
  }

  // stale_cache's key: what a kernel caching packed operands (or, here, its result) per shape
  // and range might check: op, dtype, tensor shapes, and per operand read the rounded log2 of its
  // mean |x| and its count of non-finite values (int32: and its share of odd values). Within one
  // case the oracle's derived runs change the op, the format, the shapes, scale an operand by 2
  // (linearity: another binade) or plant a NaN (a non-finite count), so a fresh case passes;
  // another case of the same shapes and similar data gets the last case's result (the state
  // relation, oracle/state.cpp).
  static std::string cache_key(const Problem& p, const Geometry& g, const OpIO& io,
                               const mutants::CanonicalOperands& c) {
    std::string key = std::string(op_name(p.op)) + " " + dtype_name(p.dtype);
    for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
      const std::array<int64_t, 4> s = logical_shape(g, r);
      key += " " + shape_string(Shape(s.begin(), s.end()));
    }
    for (Role r : {io.a, io.b}) {
      const std::vector<double>& v = c.get(r);
      double largest = 0;
      int64_t finite = 0, odd = 0;
      for (double x : v) {
        if (!std::isfinite(x)) continue;
        largest = std::max(largest, std::fabs(x));
        ++finite;
        odd += std::fmod(x, 2.0) != 0;
      }
      // log2 of the mean |x|, rounded (summed scaled by the largest's binade, so that it cannot
      // overflow): 2x moves it by exactly one, another draw from the same fill rarely at all.
      // int32's 2x wraps instead: its key also has the share of odd values, in quarters.
      std::string scale = "0";
      if (largest > 0) {
        const int e = std::ilogb(largest);
        double sum = 0;
        for (double x : v)
          if (std::isfinite(x)) sum += std::ldexp(std::fabs(x), -e);
        scale = std::to_string(std::lround(std::log2(sum / static_cast<double>(finite)) + e));
      }
      key += " " + scale + "/" + std::to_string(static_cast<int64_t>(v.size()) - finite);
      if (p.dtype == DType::i32)
        key += "/" + std::to_string(finite ? std::lround(4.0 * odd / finite) : 0);
    }
    return key;
  }

  Bug bug_;
  std::string cached_key_;  // stale_cache: the last call's key and result
  std::vector<double> cached_;
};

}  // namespace

std::unique_ptr<Backend> make_mutant(Bug bug) {
  return std::make_unique<MutantBackend>(bug);
}

}  // namespace mutants

std::vector<std::string> mutant_names() {
  std::vector<std::string> names;
  for (mutants::Bug b : mutants::kAllBugs) names.emplace_back(mutants::bug_name(b));
  return names;
}

void register_mutant_backends(Registry& registry) {
  std::string list;
  for (const std::string& n : mutant_names()) list += (list.empty() ? "" : ", ") + n;
  registry.add("mutant:",
               "copies of the reference with one planted bug each, to prove the oracle catches "
               "them: mutant:<name>, name one of " +
                   list,
               [list](const std::string& arg) -> std::unique_ptr<Backend> {
                 const std::optional<mutants::Bug> bug = mutants::parse_bug(arg);
                 if (!bug) throw InvalidArgument("unknown mutant '" + arg + "'; known: " + list);
                 return mutants::make_mutant(*bug);
               });
}

}  // namespace convcheck
