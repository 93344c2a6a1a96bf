#define BOOST_TEST_MODULE gpu_kernels
// The "gpu" backend's kernels, emulated on the host: no device needed, so this runs everywhere.
//
// The device driver and this test make the same plan (gpu/plan.h) and execute it with the same
// code (gpu/kernels/execute.cuh); only the executor differs. Here it walks each launch's grid in
// the device's grid-stride order (blocks in reverse, to show no element depends on another's
// order) and calls the very element functions the __global__ wrappers call. An "emulated gpu"
// backend built this way goes through the oracle: exact fills must match the exact reference
// bit for bit (and every adjoint and metamorphic relation hold bit for bit), real fills stay
// within the contract the device backend declares, with the testbed's check on its tables
// (tests/backend_testbed.h, tests/backend_cases.h: grouped by the code path they drive), under
// both the direct and the tiled path. Also: the bit-exact conversions against core/half.h, the
// closed-form stride-phase taps against brute force, the plan's chunking, the contracts, and
// planted bugs that must fail.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/half.h"
#include "gpu/emulator.h"
#include "gpu/kernels/execute.cuh"
#include "gpu/plan.h"
#include "oracle/oracle.h"
#include "reference/reference.h"
#include "tests/backend_cases.h"
#include "tests/backend_testbed.h"

using namespace convcheck;
using gpu::EmulatedGpu;
using gpu::Mode;
using gpu::PathChoice;
using gpu::Plan;

namespace {

constexpr PathChoice kChoices[] = {PathChoice::direct, PathChoice::tiled};
const char* choice_name(PathChoice c) {
  return c == PathChoice::direct ? "direct" : c == PathChoice::tiled ? "tiled" : "automatic";
}

/// The emulated backend in a mode, with the direct path or the tiled path forced wherever it
/// applies (f32-compute dense ops), or chosen by size as the device backend does.
EmulatedGpu& emulated(Mode mode = Mode::fma, PathChoice choice = PathChoice::automatic) {
  static EmulatedGpu backends[2][3] = {
      {EmulatedGpu(Mode::fma, PathChoice::automatic), EmulatedGpu(Mode::fma, PathChoice::direct),
       EmulatedGpu(Mode::fma, PathChoice::tiled)},
      {EmulatedGpu(Mode::tf32, PathChoice::automatic), EmulatedGpu(Mode::tf32, PathChoice::direct),
       EmulatedGpu(Mode::tf32, PathChoice::tiled)}};
  return backends[mode == Mode::tf32][static_cast<int>(choice)];
}

using testbed::bytes;
using testbed::check;
using testbed::Operands2;

// The testbed's check on the emulated kernels in a mode, the direct or the tiled path forced.
// Exact fills: bitwise equal to the exact reference, relations bit for bit. Other fills: within
// the declared contract. An empty or all-zero exact result is the oracle's "degenerate" mistrust
// (nothing to compare, but guards and poison were still checked).
void expect_pass(const std::string& problem, FillKind fill, PathChoice choice,
                 Mode mode = Mode::fma, uint64_t seed = 11) {
  if (choice == PathChoice::tiled) {  // where the tiled path does not apply it is the direct one
    const Problem p = parse_problem(problem);
    if (gpu::make_plan(p, geometry(p), mode, choice).path != gpu::Path::tiled) return;
  }
  testbed::expect_pass(emulated(mode, choice), problem, fill, seed, {}, choice_name(choice));
}

// Two operands of a problem (op_io order) from the testbed's pseudo-random stream, optionally
// rounded to TF32 (f32 only).
Operands2 random_operands(const Problem& p, uint64_t seed, bool tf32) {
  Operands2 r = testbed::random_operands(p, seed);
  if (tf32 && p.dtype != DType::i32) {
    for (Tensor* t : {&r.a, &r.b})
      for (int64_t i = 0; i < t->size(); ++i)
        t->set(i, gpu::k::round_tf32(static_cast<float>(t->get(i))));
  }
  return r;
}

/// The backend's result on the given operands (unguarded).
Tensor emulate(Backend& b, const Problem& p, const Operands2& in) {
  return testbed::result_of(b, p, in);
}

// The tiled path (gpu/kernels/tiled.cuh) on GEMMs that span several tiles: M, N and K tails,
// K-steps that cross taps (Cf < 8) or phases' tap lists, groups, stride phases with and without
// taps, dilation with stride, split-K slices with padding, NCHW and 16-bit operands.
const char* const kTiled[] = {
    "conv2d:input=2x9x9x40,filter=3x3x40x70,padding=SAME",
    "conv2d:input=2x10x10x3,filter=5x5x3x20,padding=SAME",
    "conv2d:input=2x8x8x48,filter=3x3x24x80,stride=2x2,padding=SAME",
    "conv2d:input=1x12x11x9,filter=3x2x9x66,stride=2x3,dilation=2x2,padding=1:2:0:3,format=NCHW",
    "conv2d_backprop_input:input=2x9x10x70,filter=3x3x70x40,stride=2x2,padding=SAME",
    "conv2d_backprop_input:input=1x10x10x20,filter=2x2x20x24,stride=3x3",
    "conv2d_backprop_input:input=2x11x9x20,filter=3x2x20x30,stride=2x3,dilation=2x2,padding=1:2:0:"
    "3",
    "conv2d_backprop_input:input=2x6x6x40,filter=3x3x20x12,stride=2x2,padding=SAME",
    "conv2d_backprop_input:input=1x7x6x3,filter=3x3x3x5,padding=5:0:2:2",
    "conv2d_transpose:input=2x8x8x20,filter=5x5x20x36,stride=2x2,padding=SAME,format=NCHW",
    "conv2d_transpose:input=1x13x9x66,filter=3x3x66x9,stride=2x2,dtype=bf16",
    "conv2d_backprop_filter:input=4x20x20x20,filter=3x3x20x70,padding=SAME",
    "conv2d_backprop_filter:input=2x12x12x32,filter=3x3x16x40,stride=2x2",
    "conv2d_backprop_filter:input=8x20x20x8,filter=1x1x8x16",
    "conv2d_backprop_filter:input=3x17x15x150,filter=2x2x150x3,dilation=2x3,padding=0:3:1:0,"
    "dtype=f16",
    "conv2d_backprop_filter:input=2x9x9x5,filter=3x3x5x7,padding=SAME,format=NCHW",
};

}  // namespace

BOOST_AUTO_TEST_CASE(tiled_path_matches_the_reference) {
  for (const char* p : kTiled)
    for (FillKind fill : {FillKind::exact, FillKind::real}) expect_pass(p, fill, PathChoice::tiled);
}

// Per element both paths form the same sequential FMA chain in the same order; the tiled one
// adds exact zero terms (padding, tails), which can only change the sign of a zero. So on real
// data (no NaN / Inf) the two results are equal, element for element.
BOOST_AUTO_TEST_CASE(tiled_equals_direct_on_real_data) {
  std::vector<std::string> problems(std::begin(kTiled), std::end(kTiled));
  for (const backend_cases::PathCase& c : backend_cases::kPaths) problems.push_back(c.problem);
  int compared = 0;
  for (const std::string& text : problems) {
    const Problem p = parse_problem(text);
    const Plan plan = gpu::make_plan(p, geometry(p), Mode::fma, PathChoice::tiled);
    if (plan.path != gpu::Path::tiled) continue;
    const Operands2 in = random_operands(p, 17, false);
    // The direct path under the tiled plan (the same backprop-filter chunking).
    EmulatedGpu direct(Mode::fma, PathChoice::tiled, [](Plan& q) { q.path = gpu::Path::direct; });
    const Tensor t = emulate(emulated(Mode::fma, PathChoice::tiled), p, in);
    const Tensor d = emulate(direct, p, in);
    int64_t differ = 0;
    for (int64_t i = 0; i < t.size(); ++i) differ += t.get(i) != d.get(i);
    BOOST_TEST(differ == 0, text << ": " << differ << " of " << t.size() << " elements differ");
    ++compared;
  }
  BOOST_TEST(compared > 20);
}

// PathChoice::automatic (the device backend): tiled for large dense f32-compute layers, direct
// for small ones, depthwise, f64 and int32.
BOOST_AUTO_TEST_CASE(automatic_path_choice) {
  auto path = [](const std::string& text) {
    const Problem p = parse_problem(text);
    return gpu::make_plan(p, geometry(p), Mode::fma).path;
  };
  using gpu::Path;
  for (const char* big :
       {"conv2d:input=32x56x56x64,filter=3x3x64x64,padding=SAME",
        "conv2d_backprop_input:input=32x56x56x64,filter=3x3x64x64,padding=SAME",
        "conv2d_transpose:input=12x14x14x64,filter=3x3x64x128,stride=2x2,padding=SAME",
        "conv2d_backprop_filter:input=32x28x28x128,filter=3x3x128x128,padding=SAME,dtype=bf16"})
    BOOST_TEST((path(big) == Path::tiled), big);
  for (const char* small :
       {"conv2d:input=1x5x5x2,filter=3x3x2x2,padding=SAME",
        "conv2d:input=32x56x56x64,filter=3x3x64x64,padding=SAME,dtype=f64",
        "conv2d_backprop_input:input=32x56x56x64,filter=3x3x64x64,padding=SAME,dtype=i32",
        "depthwise_conv2d_backprop_input:input=32x112x112x32,filter=3x3x32x1,padding=SAME"})
    BOOST_TEST((path(small) == Path::direct), small);
}

BOOST_AUTO_TEST_CASE(every_code_path_matches_the_reference) {
  for (PathChoice choice : kChoices) {
    for (const backend_cases::PathCase& c : backend_cases::kPaths) {
      BOOST_TEST_CONTEXT(c.path) {
        for (FillKind fill : {FillKind::exact, FillKind::real})
          expect_pass(c.problem, fill, choice);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(every_dtype) {
  const auto& problems = backend_cases::kDtypeProblems;
  for (const char* dtype : {"f16", "bf16", "f32", "f64", "i32"}) {
    for (const char* base : problems) {
      Problem p = parse_problem(std::string(base) + ",dtype=" + dtype);
      if (!op_takes_dtype(p.op, p.dtype)) continue;
      for (PathChoice choice : kChoices)
        for (FillKind fill : {FillKind::exact, FillKind::real})
          expect_pass(to_string(p), fill, choice);
    }
  }
}

// NaN, +-Inf, subnormals and -0: padding taps are no terms (never 0 * Inf), NaN propagates along
// exactly the index law, subnormals are kept (no FTZ).
BOOST_AUTO_TEST_CASE(special_values) {
  const auto& problems = backend_cases::kSpecialProblems;
  for (PathChoice choice : kChoices)
    for (const char* p : problems)
      for (uint64_t seed : {1, 2, 3}) expect_pass(p, FillKind::special, choice, Mode::fma, seed);
}

// "gpu-tf32": exact fills are TF32-exact (bitwise), real fills within the tf32 contract, and the
// operands really are rounded (results differ from the FP32 FMA ones on real data).
BOOST_AUTO_TEST_CASE(tf32_mode) {
  const auto& problems = backend_cases::kTf32Problems;
  for (const char* p : problems) {
    for (PathChoice choice : kChoices)
      for (FillKind fill : {FillKind::exact, FillKind::real, FillKind::special})
        expect_pass(p, fill, choice, Mode::tf32);
    // The tf32 result is bit for bit the FP32 FMA result on operands rounded to TF32 first,
    // and differs from the FP32 FMA result on the operands as given.
    const Problem pr = parse_problem(p);
    const Operands2 raw = random_operands(pr, 5, false), rounded = random_operands(pr, 5, true);
    const Tensor t = emulate(emulated(Mode::tf32), pr, raw);
    BOOST_TEST((bytes(t) == bytes(emulate(emulated(Mode::fma), pr, rounded))), p);
    BOOST_TEST((bytes(t) != bytes(emulate(emulated(Mode::fma), pr, raw))), p);
  }
  // f16 / bf16 / f64 / i32 have no TF32 rounding: the tf32 mode runs them exactly as FMA.
  const NumericContract k =
      emulated(Mode::tf32)
          .contract(CheckedProblem(parse_problem("conv2d:input=1x3x3x1,filter=1x1x1x1,dtype=f16")));
  BOOST_TEST(k.name == "f16-storage-f32-acc");
}

// ---- pieces
// ----------------------------------------------------------------------------------------

namespace {

float f_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t u_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// TF32 by definition: the nearest value with 11 significant bits, ties to even, computed exactly
// in double; zeros, subnormals, Inf and NaN unchanged (gpu/kernels/common.cuh).
float tf32_reference(float v) {
  if (!std::isfinite(v) || std::fabs(v) < std::ldexp(1.0f, -126)) return v;
  const double d = v;
  const int e = std::ilogb(d);
  const double q = std::ldexp(1.0, e - 10);
  const double r = std::nearbyint(d / q) * q;  // default rounding mode: ties to even
  return std::fabs(r) >= std::ldexp(1.0, 128) ? std::copysign(INFINITY, d) : static_cast<float>(r);
}

}  // namespace

// The device conversions agree with core/half.h bit for bit: every f16 / bf16 pattern widened;
// every f32 pattern near a rounding boundary of f16, bf16 and TF32 (each tie and its neighbours)
// and every 509th pattern narrowed.
BOOST_AUTO_TEST_CASE(conversions_are_bit_exact) {
  int64_t bad = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    bad += u_of(gpu::k::f16_to_f32(static_cast<uint16_t>(h))) !=
           u_of(f16_to_float(static_cast<uint16_t>(h)));
    bad += u_of(gpu::k::bf16_to_f32(static_cast<uint16_t>(h))) !=
           u_of(bf16_to_float(static_cast<uint16_t>(h)));
  }
  BOOST_TEST(bad == 0, bad << " widenings differ");
  std::vector<float> f;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 509)
    f.push_back(f_of(static_cast<uint32_t>(u)));
  for (uint32_t h = 0; h < 65536; ++h) {
    // f16: the midpoint between h and its successor, and its f32 neighbours.
    const float lo = f16_to_float(static_cast<uint16_t>(h & 0x7FFF));
    const float hi = f16_to_float(static_cast<uint16_t>((h & 0x7FFF) + 1));
    if (std::isfinite(lo) && !std::isnan(hi)) {
      const uint32_t mid = u_of(static_cast<float>((static_cast<double>(lo) + hi) / 2));
      for (uint32_t d : {mid - 1, mid, mid + 1}) f.push_back(f_of(d | ((h & 0x8000u) << 16)));
    }
    for (uint32_t d : {0x7FFFu, 0x8000u, 0x8001u}) f.push_back(f_of((h << 16) | d));  // bf16 ties
  }
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t m : {0x0FFFu, 0x1000u, 0x1001u, 0x2FFFu, 0x3000u, 0x3001u, 0x7FFFFFu, 0x7FF000u})
      for (uint32_t s : {0u, 0x80000000u}) f.push_back(f_of(s | (e << 23) | m));  // TF32 ties
  int64_t bad16 = 0, badbf = 0, bad32 = 0;
  for (float v : f) {
    bad16 += gpu::k::f32_to_f16(v) != f16_from_float(v);
    badbf += gpu::k::f32_to_bf16(v) != bf16_from_float(v);
    bad32 += u_of(gpu::k::round_tf32(v)) != u_of(tf32_reference(v));
  }
  BOOST_TEST(bad16 == 0, bad16 << " of " << f.size() << " f16 narrowings differ");
  BOOST_TEST(badbf == 0, badbf << " of " << f.size() << " bf16 narrowings differ");
  BOOST_TEST(bad32 == 0, bad32 << " of " << f.size() << " TF32 roundings differ");
}

// The closed-form stride-phase taps are exactly the taps a brute-force scan finds, in order.
BOOST_AUTO_TEST_CASE(tap_ranges_match_brute_force) {
  int64_t checked = 0;
  for (int64_t s = 1; s <= 7; ++s)
    for (int64_t d = 1; d <= 7; ++d)
      for (int64_t K = 1; K <= 6; ++K)
        for (int64_t out = 0; out <= 5; ++out)
          for (int64_t v = -3; v <= (out + 2) * s + K * d; ++v) {
            std::vector<std::pair<int64_t, int64_t>> want, got;
            for (int64_t a = 0; a < K; ++a) {
              const int64_t t = v - a * d;
              if (t >= 0 && t % s == 0 && t / s < out) want.push_back({a, t / s});
            }
            const gpu::k::TapRange r = gpu::k::tap_range(v, d, s, K, out);
            for (int64_t m = 0; m < r.count; ++m)
              got.push_back({r.first + m * r.step, r.i_first - m * r.i_step});
            BOOST_TEST((got == want),
                       "v " << v << " d " << d << " s " << s << " K " << K << " out " << out);
            ++checked;
          }
  BOOST_TEST(checked > 10000);
}

// The backprop-filter chunking covers every term exactly once, with no empty chunk, and is a
// function of the problem alone.
BOOST_AUTO_TEST_CASE(filter_chunking) {
  for (const char* text :
       {"conv2d_backprop_filter:input=8x40x40x8,filter=1x1x8x16",
        "conv2d_backprop_filter:input=32x56x56x64,filter=3x3x64x64,padding=SAME",
        "conv2d_backprop_filter:input=1x3x3x1,filter=3x3x1x1",
        "conv2d_backprop_filter:input=0x3x3x1,filter=3x3x1x1",
        "depthwise_conv2d_backprop_filter:input=32x112x112x32,filter=3x3x32x1,padding=SAME",
        "depthwise_conv2d_backprop_filter:input=1x7x7x2,filter=3x3x2x2"}) {
    BOOST_TEST_CONTEXT(text) {
      const Problem p = parse_problem(text);
      const Geometry g = geometry(p);
      const Plan plan = gpu::make_plan(p, g, Mode::fma);
      BOOST_TEST(plan.reduce_len == g.N * g.OH * g.OW);
      BOOST_TEST(plan.chunks >= 1);
      if (plan.reduce_len > 0) {
        BOOST_TEST(plan.chunk_len * plan.chunks >= plan.reduce_len);
        BOOST_TEST(plan.chunk_len * (plan.chunks - 1) < plan.reduce_len);  // no empty chunk
        BOOST_TEST((plan.chunk_len >= gpu::kMinChunk || plan.chunks == 1));
      }
      BOOST_TEST(plan.partial_elems() == (plan.chunks > 1 ? plan.chunks * plan.result_elems : 0));
    }
  }
}

BOOST_AUTO_TEST_CASE(declared_contracts) {
  auto contract = [](const std::string& text, Mode mode = Mode::fma) {
    return emulated(mode).contract(CheckedProblem(parse_problem(text)));
  };
  const std::string conv = "conv2d:input=1x3x3x1,filter=1x1x1x1,dtype=";
  const NumericContract f32 = contract(conv + "f32"), f64 = contract(conv + "f64"),
                        f16 = contract(conv + "f16"), bf16 = contract(conv + "bf16"),
                        i32 = contract(conv + "i32"), tf32 = contract(conv + "f32", Mode::tf32);
  BOOST_TEST(f32.name == "f32-fma");
  BOOST_TEST(f32.u_acc == std::ldexp(1.0, -24));
  BOOST_TEST(f64.name == "f64-fma");
  BOOST_TEST(f64.u_acc == std::ldexp(1.0, -53));
  BOOST_TEST(f16.name == "f16-storage-f32-acc");
  BOOST_TEST(f16.u_out == std::ldexp(1.0, -11));
  BOOST_TEST(bf16.name == "bf16-storage-f32-acc");
  BOOST_TEST(bf16.u_out == std::ldexp(1.0, -8));
  BOOST_TEST(i32.name == "i32-wrap");
  BOOST_TEST((i32.chain == NumericContract::Chain::exact));
  BOOST_TEST(tf32.name == "tf32");
  BOOST_TEST(tf32.u_in == std::ldexp(1.0, -11));
  BOOST_TEST(tf32.u_acc == std::ldexp(1.0, -24));
  for (const NumericContract& k : {f32, f64, f16, bf16, i32, tf32}) {
    BOOST_TEST(k.deterministic);
    BOOST_TEST(!k.flush_subnormals);
  }
  for (const NumericContract& k : {f32, f64, f16, bf16}) BOOST_TEST(k.u_in == 0.0);
  BOOST_TEST((f32.chain == NumericContract::Chain::linear));
  // Backprop filter in chunks: blocked when every element sums all N*OH*OW terms, else linear.
  const NumericContract valid = contract("conv2d_backprop_filter:input=8x40x40x8,filter=1x1x8x16");
  const Plan plan = gpu::make_plan(parse_problem("conv2d_backprop_filter:input=8x40x40x8,"
                                                 "filter=1x1x8x16"),
                                   geometry(parse_problem("conv2d_backprop_filter:input=8x40x40x8,"
                                                          "filter=1x1x8x16")),
                                   Mode::fma);
  BOOST_TEST(plan.chunks > 1);
  BOOST_TEST((valid.chain == NumericContract::Chain::blocked));
  BOOST_TEST(valid.block == plan.chunk_len);
  const NumericContract padded =
      contract("conv2d_backprop_filter:input=8x40x40x8,filter=3x3x8x16,padding=SAME");
  BOOST_TEST((padded.chain == NumericContract::Chain::linear));
}

// The emulation can fail: planted bugs in the plan (a wrong stride, a chunking that drops the
// last terms, a wrong pad) are caught by the same checks the real kernels pass.
BOOST_AUTO_TEST_CASE(planted_bugs_are_caught) {
  struct Plant {
    const char* what;
    const char* problem;
    std::function<void(Plan&)> bug;
  };
  const Plant plants[] = {
      {"stride off by one", "conv2d_backprop_input:input=1x9x9x2,filter=3x3x2x3,stride=2x2",
       [](Plan& p) { p.shape.sh += 1; }},
      {"last chunk dropped", "conv2d_backprop_filter:input=8x20x20x2,filter=1x1x2x2",
       [](Plan& p) { p.chunks -= 1; }},
      {"pad on the wrong side", "conv2d:input=1x4x4x1,filter=2x2x1x1,padding=SAME",
       [](Plan& p) { p.shape.pad_top = 1; }},
      {"depthwise multiplier", "depthwise_conv2d_backprop_input:input=1x6x6x2,filter=3x3x2x2",
       [](Plan& p) { p.shape.M = 1; }},
  };
  for (PathChoice choice : kChoices) {
    for (const Plant& plant : plants) {
      EmulatedGpu bad(Mode::fma, choice, plant.bug);
      const CaseReport r = check(bad, plant.problem, FillKind::exact, 3);
      BOOST_TEST((r.records.at(0).verdict == Verdict::fail),
                 plant.what << " (" << choice_name(choice) << "): " << to_text(r));
    }
  }
}
