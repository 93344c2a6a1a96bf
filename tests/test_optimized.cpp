#define BOOST_TEST_MODULE optimized
// The optimized backend through the oracle, case tables grouped by the code path they drive (1x1,
// implicit GEMM with panel and tile tails, reduction chunks, stride phases, dilation, groups,
// depthwise vector and multiplier paths, NCHW, empty tensors, the direct path for non-finite
// filters), under every ISA this machine runs, and per dtype; then determinism: bitwise equal
// results across runs and across thread counts, and the declared contracts.
#include <omp.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/cpu.h"
#include "core/half.h"
#include "optimized/dispatch.h"
#include "optimized/optimized.h"
#include "oracle/oracle.h"

using namespace convcheck;

namespace {

Backend& optimized() {
  static std::unique_ptr<Backend> b = [] {
    register_optimized_backend(Registry::instance());
    return Registry::instance().make("optimized");
  }();
  return *b;
}

// Runs a case through the oracle and requires a pass (or, for an empty or all-zero exact result,
// the oracle's "degenerate" mistrust: nothing to judge, but guards and poison were still checked).
void expect_pass(const std::string& problem, FillKind fill, uint64_t seed = 11) {
  Case c;
  c.problem = parse_problem(problem);
  c.seed = seed;
  c.fill = fill;
  const CaseReport r = run_case(c, {&optimized()});
  BOOST_REQUIRE_EQUAL(r.records.size(), 1u);
  const BackendRecord& rec = r.records[0];
  const bool ok = rec.verdict == Verdict::pass ||
                  (rec.verdict == Verdict::mistrusted && rec.check == "degenerate");
  BOOST_TEST(ok, problem << " fill " << fill_name(fill) << " isa "
                         << opt::isa_name(opt::active_isa()) << ": " << verdict_name(rec.verdict)
                         << " [" << rec.check << "] " << rec.reason << "\n  " << rec.repro);
}

struct PathCase {
  const char* path;
  const char* problem;
};

const PathCase kPaths[] = {
    // 1x1 stride 1: the implicit GEMM reads rows in place, one tap.
    {"1x1", "conv2d:input=2x5x5x8,filter=1x1x8x16"},
    {"1x1", "conv2d_backprop_input:input=2x5x5x8,filter=1x1x8x70"},
    {"1x1", "conv2d_backprop_filter:input=2x5x5x8,filter=1x1x8x70"},
    // Implicit GEMM with padding taps, a second channel panel and pixel/row tails.
    {"implicit gemm", "conv2d:input=2x9x8x7,filter=3x3x7x70,padding=SAME"},
    {"implicit gemm", "conv2d_backprop_input:input=2x9x8x70,filter=3x3x70x7,padding=SAME"},
    {"implicit gemm", "conv2d_backprop_input:input=1x5x7x67,filter=3x3x67x5,padding=SAME"},
    {"filter tiles", "conv2d_backprop_filter:input=2x9x8x13,filter=3x3x13x70,padding=SAME"},
    {"filter tiles", "conv2d_backprop_filter:input=3x4x5x1,filter=2x2x1x1"},
    // Reductions split into chunks (whole taps, or slices of one tap's channels), accumulated
    // through the result.
    {"chunks", "conv2d_backprop_input:input=1x4x4x2,filter=3x3x2x2100,padding=SAME"},
    {"chunks", "conv2d:input=1x4x4x2100,filter=3x3x2100x3,padding=SAME"},
    {"chunks", "conv2d:input=1x5x5x700,filter=3x3x700x70,padding=SAME"},
    {"chunks", "conv2d_backprop_filter:input=8x40x40x8,filter=1x1x8x16"},
    // Stride phases of backprop input, including phases without taps (stride > filter).
    {"stride phases",
     "conv2d_backprop_input:input=2x9x10x6,filter=3x3x6x5,stride=2x2,padding=SAME"},
    {"stride phases", "conv2d_transpose:input=2x8x8x6,filter=5x5x6x9,stride=2x2,padding=SAME"},
    {"stride phases", "conv2d_backprop_input:input=1x7x7x3,filter=2x2x3x4,stride=3x3"},
    {"stride phases", "conv2d_backprop_input:input=1x4x4x1,filter=1x1x1x1,stride=2x2,padding=SAME"},
    {"stride phases",
     "conv2d_backprop_input:input=1x5x3x2,filter=3x2x2x3,stride=3x1,padding=1:8:4:2"},
    {"stride phases",
     "conv2d_backprop_input:input=2x11x9x4,filter=3x2x4x5,stride=2x3,dilation=2x2,padding=1:2:0:3"},
    // Dilation.
    {"dilation", "conv2d:input=2x10x10x4,filter=3x3x4x6,dilation=2x3,padding=SAME"},
    {"dilation", "conv2d_backprop_filter:input=2x10x10x4,filter=3x3x4x6,stride=2x1,dilation=2x2"},
    {"dilation",
     "conv2d_backprop_input:input=1x3x6x1,filter=3x2x1x1,stride=1x2,dilation=2x3,"
     "padding=2:2:2:2"},
    // Groups.
    {"groups", "conv2d:input=2x6x6x8,filter=3x3x2x12,padding=SAME"},
    {"groups", "conv2d_backprop_input:input=2x6x6x8,filter=3x3x4x6,stride=2x2,padding=SAME"},
    {"groups", "conv2d_backprop_filter:input=2x6x6x9,filter=2x2x3x6"},
    // Depthwise, multiplier 1: vector kernels with channel tails.
    {"depthwise", "depthwise_conv2d:input=2x9x9x37,filter=3x3x37x1,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_input:input=2x9x9x80,filter=3x3x80x1,stride=2x2,padding=SAME"},
    {"depthwise",
     "depthwise_conv2d_backprop_filter:input=2x9x9x37,filter=3x3x37x1,stride=2x2,padding=SAME"},
    {"depthwise", "depthwise_conv2d_backprop_filter:input=4x40x40x5,filter=3x3x5x1,padding=SAME"},
    // Depthwise, multiplier > 1.
    {"depthwise M>1",
     "depthwise_conv2d:input=2x7x6x3,filter=3x2x3x4,stride=2x1,dilation=1x2,padding=SAME"},
    {"depthwise M>1",
     "depthwise_conv2d_backprop_input:input=1x7x5x3,filter=3x2x3x2,stride=2x1,"
     "dilation=1x2,padding=SAME"},
    {"depthwise M>1",
     "depthwise_conv2d_backprop_filter:input=2x5x6x2,filter=2x2x2x3,padding=2:0:1:1"},
    // NCHW in and out.
    {"NCHW", "conv2d:input=2x5x6x4,filter=3x3x4x5,padding=SAME,format=NCHW"},
    {"NCHW",
     "conv2d_backprop_input:input=2x6x7x3,filter=2x3x3x4,stride=2x1,padding=SAME,"
     "format=NCHW"},
    {"NCHW",
     "conv2d_backprop_filter:input=2x6x7x3,filter=2x3x3x4,dilation=2x1,padding=1:2:0:3,"
     "format=NCHW"},
    {"NCHW", "depthwise_conv2d_backprop_input:input=2x6x7x3,filter=2x3x3x1,format=NCHW"},
    // Empty tensors: every result element written (zeros where no term).
    {"empty", "conv2d_backprop_input:input=0x2x3x1,filter=2x2x1x1"},
    {"empty", "conv2d_backprop_input:input=3x1x1x2,filter=1x3x2x3,stride=1x2"},
    {"empty", "conv2d_backprop_filter:input=0x2x3x1,filter=2x2x1x1"},
    {"empty", "conv2d_backprop_filter:input=1x2x3x1,filter=2x2x1x0"},
    {"empty", "conv2d:input=1x0x2x1,filter=1x1x1x1,padding=1:1:1:1"},
    {"empty", "depthwise_conv2d_backprop_filter:input=0x4x4x2,filter=3x3x2x1"},
    {"empty", "depthwise_conv2d_backprop_input:input=2x3x3x0,filter=2x2x0x1"},
};

}  // namespace

BOOST_AUTO_TEST_CASE(every_code_path_passes_under_every_isa) {
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    BOOST_TEST_MESSAGE("isa " << opt::isa_name(isa));
    for (const PathCase& c : kPaths) {
      BOOST_TEST_CONTEXT(c.path) {
        for (FillKind fill : {FillKind::exact, FillKind::real}) expect_pass(c.problem, fill);
      }
    }
  }
  opt::clear_isa_limit();
}

BOOST_AUTO_TEST_CASE(every_dtype) {
  const char* const problems[] = {
      "conv2d:input=2x7x6x5,filter=3x3x5x18,stride=2x1,padding=SAME",
      "conv2d_backprop_input:input=2x7x6x5,filter=3x3x5x18,stride=2x2,padding=SAME",
      "conv2d_transpose:input=1x9x9x2,filter=3x3x2x3,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=2x7x6x5,filter=3x2x5x18,dilation=2x1,padding=1:0:2:1",
      "conv2d_backprop_filter:input=8x20x20x8,filter=1x1x8x16",  // partial sums per row chunk
      "depthwise_conv2d:input=2x7x6x19,filter=3x3x19x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_input:input=2x7x6x19,filter=3x3x19x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=2x7x6x3,filter=3x3x3x2,padding=SAME",
  };
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    for (const char* dtype : {"f16", "bf16", "f32", "f64", "i32"}) {
      for (const char* base : problems) {
        Problem p = parse_problem(std::string(base) + ",dtype=" + dtype);
        if (!op_takes_dtype(p.op, p.dtype)) continue;
        for (FillKind fill : {FillKind::exact, FillKind::real}) expect_pass(to_string(p), fill);
      }
    }
  }
  opt::clear_isa_limit();
}

// NaN, Inf, subnormals and -0 in the operands: padding taps stay non-terms (a non-finite filter
// takes the direct path), NaN stays NaN, f64 products that would underflow are lifted.
BOOST_AUTO_TEST_CASE(special_values) {
  const char* const problems[] = {
      "conv2d:input=2x6x6x4,filter=3x3x4x5,padding=SAME",
      "conv2d_backprop_input:input=2x6x6x4,filter=3x3x4x5,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=2x6x6x4,filter=3x3x4x5,padding=SAME",
      "conv2d:input=2x6x6x4,filter=3x3x4x5,padding=SAME,dtype=f64",
      "conv2d_backprop_input:input=2x6x6x4,filter=3x3x2x6,padding=SAME,dtype=f16",
      "depthwise_conv2d:input=2x6x6x4,filter=3x3x4x2,padding=SAME,dtype=f64",
      "depthwise_conv2d_backprop_input:input=2x6x6x20,filter=3x3x20x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=2x6x6x20,filter=3x3x20x1,padding=SAME,dtype=bf16",
  };
  for (const char* p : problems)
    for (uint64_t seed : {1, 2, 3}) expect_pass(p, FillKind::special, seed);
}

namespace {

// Runs the backend on fixed pseudo-random operands and returns the result's bytes.
std::vector<unsigned char> result_bytes(const Problem& p) {
  const Geometry g = geometry(p);
  const OpIO io = op_io(p.op);
  Tensor a(p.dtype, storage_shape(p, g, io.a)), b(p.dtype, storage_shape(p, g, io.b));
  uint64_t state = 12345;
  for (Tensor* t : {&a, &b}) {
    for (int64_t i = 0; i < t->size(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double u = static_cast<double>(state >> 11) * 0x1p-53;
      t->set(i, p.dtype == DType::i32 ? std::floor(u * 2000) - 1000 : 2 * u - 1);
    }
  }
  const ConstTensorView va = view(static_cast<const Tensor&>(a)),
                        vb = view(static_cast<const Tensor&>(b));
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vb);
  Tensor r(p.dtype, storage_shape(p, g, io.result_like));
  optimized().run(p, g, ops, view(r));
  const auto* bytes = static_cast<const unsigned char*>(r.data());
  return std::vector<unsigned char>(bytes, bytes + r.bytes());
}

}  // namespace

BOOST_AUTO_TEST_CASE(bitwise_identical_across_runs_and_thread_counts) {
  const char* const problems[] = {
      "conv2d:input=4x17x15x24,filter=3x3x24x40,padding=SAME",
      "conv2d_backprop_input:input=4x17x15x24,filter=3x3x24x72,stride=2x2,padding=SAME",
      "conv2d_backprop_filter:input=4x17x15x24,filter=3x3x24x72,padding=SAME",
      "conv2d_backprop_filter:input=3x9x9x16,filter=3x3x8x16,dilation=2x2,padding=SAME,dtype=f64",
      "depthwise_conv2d_backprop_input:input=4x30x30x24,filter=3x3x24x1,stride=2x2,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=4x30x30x24,filter=3x3x24x1,padding=SAME",
      "depthwise_conv2d_backprop_filter:input=4x30x30x4,filter=3x3x4x3,padding=SAME,dtype=f16",
      "conv2d_backprop_input:input=2x9x9x8,filter=3x3x8x8,padding=SAME,format=NCHW,dtype=bf16",
  };
  const int saved = omp_get_max_threads();
  for (const char* text : problems) {
    const Problem p = parse_problem(text);
    omp_set_num_threads(2);
    const std::vector<unsigned char> first = result_bytes(p);
    for (int run = 0; run < 2; ++run)
      BOOST_TEST((result_bytes(p) == first), text << " run " << run);
    for (int threads : {1, 3}) {
      omp_set_num_threads(threads);
      BOOST_TEST((result_bytes(p) == first), text << " with " << threads << " threads");
    }
  }
  omp_set_num_threads(saved);
}

namespace {

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

// The vector 16-bit conversions agree bit for bit with core/half.h (every f16/bf16 pattern
// widened; every 2^9-th f32 pattern plus the neighbours of the rounding boundaries narrowed).
BOOST_AUTO_TEST_CASE(half_conversions_match_core) {
  std::vector<uint16_t> h(65536);
  for (uint32_t i = 0; i < 65536; ++i) h[i] = static_cast<uint16_t>(i);
  std::vector<float> f;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 509)
    f.push_back(from_bits(static_cast<uint32_t>(u)));
  for (uint32_t i = 0; i < 65536; ++i) {
    for (uint32_t d : {0x0FFFu, 0x1000u, 0x1001u, 0x7FFFu, 0x8000u, 0x8001u}) {
      f.push_back(from_bits((i << 16) | d));  // bf16 ties and neighbours
    }
  }
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t m : {0x0FFFu, 0x1000u, 0x1001u, 0x2FFFu, 0x3000u, 0x3001u})
      for (uint32_t s : {0u, 0x80000000u}) f.push_back(from_bits(s | (e << 23) | m));
  for (opt::Isa isa : opt::available_isas()) {
    opt::limit_isa(isa);
    const opt::KernelTable<float>& k = opt::kernels<float>();
    std::vector<float> wide(h.size());
    std::vector<uint16_t> narrow(f.size());
    int64_t bad = 0;
    k.widen_f16(h.data(), wide.data(), static_cast<int64_t>(h.size()));
    for (uint32_t i = 0; i < 65536; ++i) bad += bits_of(wide[i]) != bits_of(f16_to_float(h[i]));
    k.widen_bf16(h.data(), wide.data(), static_cast<int64_t>(h.size()));
    for (uint32_t i = 0; i < 65536; ++i) bad += bits_of(wide[i]) != bits_of(bf16_to_float(h[i]));
    k.narrow_f16(f.data(), narrow.data(), static_cast<int64_t>(f.size()));
    for (std::size_t i = 0; i < f.size(); ++i) bad += narrow[i] != f16_from_float(f[i]);
    k.narrow_bf16(f.data(), narrow.data(), static_cast<int64_t>(f.size()));
    for (std::size_t i = 0; i < f.size(); ++i) bad += narrow[i] != bf16_from_float(f[i]);
    BOOST_TEST(bad == 0, "isa " << opt::isa_name(isa) << ": " << bad << " conversions differ");
  }
  opt::clear_isa_limit();
}

BOOST_AUTO_TEST_CASE(declared_contracts) {
  auto contract = [](const char* dtype) {
    return optimized().contract(
        parse_problem(std::string("conv2d:input=1x3x3x1,filter=1x1x1x1,dtype=") + dtype));
  };
  const NumericContract f32 = contract("f32"), f64 = contract("f64"), f16 = contract("f16"),
                        bf16 = contract("bf16"), i32 = contract("i32");
  BOOST_TEST(f32.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(f32.u_out == 0.0);
  BOOST_TEST(f64.u_acc == std::ldexp(1.0, -53));
  BOOST_TEST(f16.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(f16.u_out == std::ldexp(1.0, -11));
  BOOST_TEST(bf16.u_out == std::ldexp(1.0, -8));
  BOOST_TEST(i32.u_acc == 0.0);
  BOOST_TEST(i32.u_out == 0.0);
  for (const NumericContract& k : {f32, f64, f16, bf16, i32}) {
    BOOST_TEST(k.u_in == 0.0);
    BOOST_TEST(k.deterministic);
    BOOST_TEST(!k.flush_subnormals);
  }
  BOOST_TEST((f32.chain == NumericContract::Chain::linear));
}

// The dispatch never names an ISA the machine cannot run (issue 13), whatever is asked of it; the
// emulated CPU-model matrix (tests/isa/test_isa.sh) runs this on CPUs without AVX-512 and AVX.
BOOST_AUTO_TEST_CASE(dispatch_chooses_only_what_this_machine_runs) {
  const CpuFeatures& cpu = cpu_features();
  BOOST_TEST(cpu.avx2_usable() >= cpu.avx512_usable(),
             "avx512 usable without avx2: " << cpu.describe());
  const std::vector<opt::Isa> compiled = opt::compiled_isas(), runs = opt::available_isas();
  auto has = [](const std::vector<opt::Isa>& v, opt::Isa isa) {
    return std::find(v.begin(), v.end(), isa) != v.end();
  };
  // (Whether `runs` matches the CPU is checked against an independent source, the kernel's
  // /proc/cpuinfo flags and qemu's CPU models, by tests/isa/test_isa.sh.)
  BOOST_TEST(has(runs, opt::Isa::generic));
  for (opt::Isa isa : runs) BOOST_TEST(has(compiled, isa), opt::isa_name(isa) << " not compiled");
  for (opt::Isa cap : {opt::Isa::generic, opt::Isa::avx2, opt::Isa::avx512}) {
    opt::limit_isa(cap);
    const opt::Isa active = opt::active_isa();
    BOOST_TEST(has(runs, active),
               "cap " << opt::isa_name(cap) << " chose " << opt::isa_name(active));
    BOOST_TEST(static_cast<int>(active) <= static_cast<int>(cap));
    // The widest available ISA at or below the cap.
    for (opt::Isa isa : runs)
      if (static_cast<int>(isa) <= static_cast<int>(cap))
        BOOST_TEST(static_cast<int>(isa) <= static_cast<int>(active));
    BOOST_TEST((opt::kernels<float>().isa == active), opt::isa_name(opt::kernels<float>().isa));
    BOOST_TEST((opt::kernels<double>().isa == active), opt::isa_name(opt::kernels<double>().isa));
  }
  opt::clear_isa_limit();
}

BOOST_AUTO_TEST_CASE(an_isa_request_the_machine_cannot_honour_is_refused) {
  struct Restore {
    std::string was;
    bool set;
    Restore() : set(std::getenv("CONVCHECK_OPTIMIZED_ISA") != nullptr) {
      if (set) was = std::getenv("CONVCHECK_OPTIMIZED_ISA");
    }
    ~Restore() {
      if (set)
        setenv("CONVCHECK_OPTIMIZED_ISA", was.c_str(), 1);
      else
        unsetenv("CONVCHECK_OPTIMIZED_ISA");
    }
  } restore;
  optimized();  // registers the backend
  unsetenv("CONVCHECK_OPTIMIZED_ISA");
  BOOST_TEST(opt::isa_request().ok());
  setenv("CONVCHECK_OPTIMIZED_ISA", "avx3", 1);
  BOOST_TEST(!opt::isa_request().ok());
  BOOST_TEST(opt::isa_request().reason().find("'avx3' is not an ISA") != std::string::npos,
             opt::isa_request().reason());
  const std::vector<opt::Isa> runs = opt::available_isas();
  for (opt::Isa isa : {opt::Isa::generic, opt::Isa::avx2, opt::Isa::avx512}) {
    setenv("CONVCHECK_OPTIMIZED_ISA", opt::isa_name(isa), 1);
    const bool can = std::find(runs.begin(), runs.end(), isa) != runs.end();
    BOOST_TEST(opt::isa_request().ok() == can, opt::isa_name(isa)
                                                   << ": " << opt::isa_request().reason());
    if (!can) {
      BOOST_CHECK_THROW(Registry::instance().make("optimized"), InvalidArgument);
    } else {
      BOOST_CHECK_NO_THROW(Registry::instance().make("optimized"));
    }
  }
}
