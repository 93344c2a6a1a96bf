// The "gpu" backend's plan: every decision about how a problem runs (compute type, which operands
// are converted into a canonical copy, the kernel path, the fixed chunking of backprop filter's
// reduction) and the numeric contract that follows from them, taken from the problem alone.
//
// Plain C++ (no CUDA): the device driver (gpu/backend.cu) and the host emulation of the kernels
// (tests/test_gpu_kernels.cpp) make the same plan and execute it the same way
// (gpu/kernels/execute.cuh), one launching kernels and the other looping over their elements, so
// what the host test verifies is what the device runs. Because the plan depends on the problem
// only (never on the device, the thread count or timing), results are bitwise reproducible.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/backend.h"
#include "core/problem.h"
#include "gpu/kernels/common.cuh"

namespace convcheck::gpu {

/// f32 arithmetic: plain FP32 FMA ("gpu"), or operands rounded to TF32 first ("gpu-tf32").
enum class Mode { fma, tf32 };

/// Which kernels serve a problem (see the op files' header comments).
enum class Path {
  direct,  // one thread per result element (gathers); backprop filter per chunk, then a reduce
  tiled,   // f32-compute implicit GEMM in shared-memory tiles (gpu/kernels/tiled.cuh)
};
/// How make_plan picks the path: by problem size (the backend), or forced wherever the tiled
/// kernels apply / never (the host tests drive every problem through both).
enum class PathChoice { automatic, direct, tiled };

struct Plan {
  Op op = Op::conv2d;
  DType dtype = DType::f32;
  Format format = Format::NHWC;
  Mode mode = Mode::fma;
  Path path = Path::direct;
  k::ConvShape shape{};
  k::Storage storage = k::Storage::f32;
  Role a = Role::input, b = Role::filter, result = Role::input;  // op_io(op)
  int64_t a_elems = 0, b_elems = 0, result_elems = 0;
  // A canonical copy (compute type; NHWC activations) is made of an operand whose storage is
  // not already that, or when TF32 rounding applies; the result is written through one likewise.
  bool convert_a = false, convert_b = false, convert_result = false;
  // Backprop filter (both kinds): the sum over t = (n*OH + i)*OW + j < N*OH*OW is cut into
  // `chunks` consecutive chunks of `chunk_len` (the last may be shorter). Each chunk's partial
  // is one sequential FMA chain; the partials are then added in chunk order. chunks == 1: the
  // chain writes the result directly.
  int64_t reduce_len = 0, chunk_len = 0, chunks = 1;
  int64_t partial_elems() const { return chunks > 1 ? chunks * result_elems : 0; }
  /// The op's workspace (compute type): backprop filter's partials, or the tiled backprop
  /// input's filter with swapped channel axes.
  int64_t workspace_elems() const {
    const bool swap =
        path == Path::tiled && (op == Op::conv2d_backprop_input || op == Op::conv2d_transpose);
    return std::max(partial_elems(), swap ? a_elems : int64_t{0});
  }
  /// Device memory a run needs: the operands and the result as stored, plus the workspaces (a
  /// double; guard bands are not counted).
  double device_bytes() const {
    const double stored = static_cast<double>(dtype_size(dtype));
    const double compute = dtype == DType::f64 ? 8.0 : 4.0;
    double b = stored * (static_cast<double>(a_elems) + b_elems + result_elems);
    if (convert_a) b += compute * static_cast<double>(a_elems);
    if (convert_b) b += compute * static_cast<double>(b_elems);
    if (convert_result) b += compute * static_cast<double>(result_elems);
    return b + compute * static_cast<double>(workspace_elems());
  }
};

namespace plan_detail {

inline bool activation_needs_copy(const Plan& p, Role r) {
  return r != Role::filter && p.format == Format::NCHW;
}

inline k::Storage storage_of(DType t) {
  switch (t) {
    case DType::f16:
      return k::Storage::f16;
    case DType::bf16:
      return k::Storage::bf16;
    case DType::f32:
      return k::Storage::f32;
    case DType::f64:
      return k::Storage::f64;
    case DType::i32:
      return k::Storage::i32;
  }
  return k::Storage::f32;
}

inline int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Whether every term of backprop filter's sum reads inside the input (no padding tap), so that
// every filter element sums exactly N*OH*OW terms.
inline bool reduction_without_padding(const Geometry& g) {
  return g.pad_top == 0 && g.pad_left == 0 && (g.OH - 1) * g.sh + (g.KH - 1) * g.dh < g.H &&
         (g.OW - 1) * g.sw + (g.KW - 1) * g.dw < g.W;
}

}  // namespace plan_detail

/// Direct backprop filter: the chunking aims for kTargetThreads threads (about two waves of a
/// 132-SM H100); a chunk never holds fewer than kMinChunk terms unless the whole sum is shorter.
inline constexpr int64_t kTargetThreads = int64_t{1} << 18;
inline constexpr int64_t kMinChunk = 32;
/// Tiled backprop filter: split-K slices so that about kTargetCtas CTAs run, each summing at
/// least kMinSlice terms (a multiple of the tile's K-step).
inline constexpr int64_t kTargetCtas = 512;
inline constexpr int64_t kMinSlice = 256;
/// Tiled path by size (PathChoice::automatic): the GEMM's columns and reduction at least
/// kMinTiledSide, and at least kMinTiledFmas multiply-adds. To be tuned on the device.
inline constexpr int64_t kMinTiledSide = 16;
inline constexpr int64_t kMinTiledFmas = int64_t{1} << 22;
/// Tiled backprop input launches a grid per stride phase (sh * sw of them): at most this many.
inline constexpr int64_t kMaxTiledPhases = 64;

namespace plan_detail {

// Whether the tiled kernels apply (f32 compute; the dense ops), and whether they pay off: the
// GEMM shapes of gpu/kernels/tiled.cuh (columns, reduction length) and the total work.
inline bool tiled_applies(const Problem& pr) {
  const bool f32_compute =
      pr.dtype == DType::f32 || pr.dtype == DType::f16 || pr.dtype == DType::bf16;
  return f32_compute && !is_depthwise(pr.op);
}
inline bool tiled_pays(const Problem& pr, const Geometry& g) {
  const int64_t Og = g.O / g.G, taps = g.KH * g.KW;
  int64_t cols = 0, red = 0;
  if (is_depthwise(pr.op)) return false;
  switch (op_kind(pr.op)) {
    case OpKind::forward:
      cols = Og;
      red = taps * g.Cf;
      break;
    case OpKind::backward_data:
      if (g.sh * g.sw > kMaxTiledPhases) return false;  // mostly empty phases: the gather wins
      cols = g.Cf;
      red = std::max<int64_t>(1, taps / (g.sh * g.sw)) * Og;
      break;
    case OpKind::backward_filter:
      cols = Og;
      red = g.N * g.OH * g.OW;
      break;
  }
  const double fmas = static_cast<double>(g.N) * g.OH * g.OW * taps * g.Cf * g.O;
  return cols >= kMinTiledSide && red >= kMinTiledSide &&
         fmas >= static_cast<double>(kMinTiledFmas);
}

}  // namespace plan_detail

inline Plan make_plan(const Problem& pr, const Geometry& g, Mode mode,
                      PathChoice choice = PathChoice::automatic) {
  using namespace plan_detail;
  Plan p;
  p.op = pr.op;
  p.dtype = pr.dtype;
  p.format = pr.format;
  p.mode = pr.dtype == DType::f32 ? mode : Mode::fma;  // TF32 concerns f32 operands only
  p.storage = storage_of(pr.dtype);
  p.shape = k::ConvShape{g.N, g.H,  g.W,  g.C,  g.KH, g.KW, g.Cf, g.O,       g.G,
                         g.M, g.OH, g.OW, g.sh, g.sw, g.dh, g.dw, g.pad_top, g.pad_left};
  const OpIO io = op_io(pr.op);
  p.a = io.a;
  p.b = io.b;
  p.result = io.result_like;
  p.a_elems = role_elements(g, p.a);
  p.b_elems = role_elements(g, p.b);
  p.result_elems = role_elements(g, p.result);
  // f32, f64 and int32 are their own compute types; f16 / bf16 are widened to f32.
  const bool native = pr.dtype == DType::f32 || pr.dtype == DType::f64 || pr.dtype == DType::i32;
  const bool round_in = p.mode == Mode::tf32;
  p.convert_a = !native || round_in || activation_needs_copy(p, p.a);
  p.convert_b = !native || round_in || activation_needs_copy(p, p.b);
  p.convert_result = !native || activation_needs_copy(p, p.result);
  if (tiled_applies(pr) && p.result_elems > 0 &&
      (choice == PathChoice::tiled || (choice == PathChoice::automatic && tiled_pays(pr, g))))
    p.path = Path::tiled;
  if (pr.op == Op::conv2d_backprop_filter || pr.op == Op::depthwise_conv2d_backprop_filter) {
    p.reduce_len = g.N * g.OH * g.OW;
    if (p.path == Path::tiled && p.reduce_len > 0) {
      // One CTA per (group, 128 x 64 tile, slice); slices a multiple of the K-step (8).
      const int64_t tiles = g.G * ceil_div(g.KH * g.KW * g.Cf, 128) * ceil_div(g.O / g.G, 64);
      int64_t slices = std::max<int64_t>(1, ceil_div(kTargetCtas, tiles));
      slices = std::min(slices, ceil_div(p.reduce_len, kMinSlice));
      p.chunk_len = ceil_div(ceil_div(p.reduce_len, slices), 8) * 8;
      p.chunks = ceil_div(p.reduce_len, p.chunk_len);
    } else if (p.reduce_len > 0 && p.result_elems > 0) {
      int64_t chunks = ceil_div(kTargetThreads, p.result_elems);
      chunks = std::min(chunks, ceil_div(p.reduce_len, kMinChunk));
      chunks = std::max<int64_t>(chunks, 1);
      p.chunk_len = ceil_div(p.reduce_len, chunks);
      p.chunks = ceil_div(p.reduce_len, p.chunk_len);  // no empty chunk
    }
  }
  return p;
}

/// The numeric contract of a plan (design §4): what the kernels' arithmetic promises.
///   f32 "f32-fma": operands as stored, every term one FP32 FMA (u_acc = 2^-24);
///   "tf32": operands rounded to TF32 (u_in = 2^-11), then FP32 FMA;
///   f64 "f64-fma"; f16 / bf16 "<t>-storage-f32-acc": widened exactly, f32 FMA, one rounding
///   into 16 bits (u_out); int32 "i32-wrap": exact modulo 2^32.
/// The rounding chain: each result element is one sequential chain of FMAs (linear: k = n), except
/// a backprop filter cut into chunks: a chunk's chain of at most chunk_len roundings, then the
/// chunk partials added in order. (The tiled path's extra terms, zeros for padding and tails,
/// are exact: fma(0, finite, acc) = acc, so they add no rounding.) When every element sums all
/// N*OH*OW terms (no padding tap) that is a blocked chain of block chunk_len; with padding taps a
/// short sum may spread over many chunks, so the honest claim is the linear one (a chain never
/// exceeds n roundings). Deterministic: the plan fixes every element's order of operations; no
/// atomics.
inline NumericContract plan_contract(const Plan& p, const Geometry& g) {
  NumericContract c = native_contract(p.dtype);  // built without --use_fast_math / -ftz
  if (p.dtype == DType::f32 && p.mode == Mode::tf32) {
    c.name = "tf32";
    c.u_in = std::ldexp(1.0, -11);  // operands rounded to TF32 (10-bit fraction) first
  }
  if (p.dtype != DType::i32 && p.chunks > 1 && plan_detail::reduction_without_padding(g)) {
    c.chain = NumericContract::Chain::blocked;
    c.block = p.chunk_len;
  }
  return c;
}

}  // namespace convcheck::gpu
