// How a plan (gpu/plan.h) runs, written once for the device and for its host emulation.
//
// An executor `Exec` provides
//   template <class F> void for_each(const F& f, int64_t n);  // f(i) for every i < n (any order)
//   template <class F> void for_each_cta(const F& f);  // f's CTAs, phases and barriers (tiled.cuh)
//   bool all_finite(const float* p, int64_t n);         // no NaN / Inf among p[0, n)
//   template <class T> void run_op(const Plan&, const T* a, const T* b, T* out, T* workspace);
// The device executor (gpu/internal.h, gpu/launch.cuh) launches kernels and routes run_op to the
// op files (gpu/*.cu), which call the *_steps functions below; the host executor
// (gpu/emulator.h) runs the same element and phase functions on the host and routes run_op to
// op_steps. Either way the same arithmetic runs in the same per-element order, so the host
// tests' results are the device's bits.
#pragma once

#include <cstdint>
#include <type_traits>

#include "gpu/kernels/backprop_filter.cuh"
#include "gpu/kernels/backprop_input.cuh"
#include "gpu/kernels/common.cuh"
#include "gpu/kernels/conv2d.cuh"
#include "gpu/kernels/depthwise_backprop_filter.cuh"
#include "gpu/kernels/depthwise_backprop_input.cuh"
#include "gpu/kernels/depthwise_conv2d.cuh"
#include "gpu/kernels/layout.cuh"
#include "gpu/kernels/tiled.cuh"
#include "gpu/plan.h"

namespace convcheck::gpu::k {

// ---- the ops' steps (canonical operands in the compute type T) ----------------------------------
// Plan::path == tiled: the tiled kernels, unless the operand they multiply with padding zeros
// holds a NaN or Inf (then the direct path, which never forms those products).

/// Whether some forward window reaches into the padding (so an implicit-GEMM gather loads zeros).
inline bool reads_padding(const ConvShape& s) {
  return s.pad_top > 0 || s.pad_left > 0 ||
         (s.OH - 1) * s.sh + (s.KH - 1) * s.dh >= s.H + s.pad_top ||
         (s.OW - 1) * s.sw + (s.KW - 1) * s.dw >= s.W + s.pad_left;
}

template <class Exec, class T>
void conv2d_steps(Exec& ex, const Plan& p, const T* input, const T* filter, T* output) {
  if constexpr (std::is_same_v<T, float>) {
    const ConvShape& s = p.shape;
    if (p.path == Path::tiled && (!reads_padding(s) || ex.all_finite(filter, p.b_elems))) {
      const int64_t M = s.N * s.OH * s.OW, Og = s.O / s.G;
      ex.for_each_cta(tiled::FpropTile{s, input, filter, output, M, s.KH * s.KW * s.Cf, Og,
                                       tiled::ceil_div(M, tiled::kBM),
                                       tiled::ceil_div(Og, tiled::kBN)});
      return;
    }
  }
  ex.for_each(Conv2dDirect<T>{p.shape, input, filter, output}, p.result_elems);
}

template <class Exec, class T>
void backprop_input_steps(Exec& ex, const Plan& p, const T* filter, const T* out_backprop,
                          T* input_backprop, T* workspace) {
  if constexpr (std::is_same_v<T, float>) {
    const ConvShape& s = p.shape;
    if (p.path == Path::tiled && ex.all_finite(filter, p.a_elems)) {
      ex.for_each(tiled::FilterSwapIO{s, filter, workspace}, p.a_elems);
      const int64_t rows = s.N * tiled::ceil_div(s.H, s.sh) * tiled::ceil_div(s.W, s.sw);
      ex.for_each_cta(tiled::DgradTile{s, out_backprop, workspace, input_backprop, s.O / s.G,
                                       tiled::ceil_div(rows, tiled::kBM),
                                       tiled::ceil_div(s.Cf, tiled::kBN)});
      return;
    }
  }
  (void)workspace;
  ex.for_each(BackpropInputDirect<T>{p.shape, filter, out_backprop, input_backprop},
              p.result_elems);
}

template <class Exec, class T>
void backprop_filter_steps(Exec& ex, const Plan& p, const T* input, const T* out_backprop,
                           T* filter_backprop, T* partials) {
  const int64_t E = p.result_elems;
  T* out = p.chunks > 1 ? partials : filter_backprop;
  bool done = false;
  if constexpr (std::is_same_v<T, float>) {
    const ConvShape& s = p.shape;
    if (p.path == Path::tiled && (!reads_padding(s) || ex.all_finite(out_backprop, p.b_elems))) {
      const int64_t M = s.KH * s.KW * s.Cf, Og = s.O / s.G;
      ex.for_each_cta(
          tiled::WgradTile{s, input, out_backprop, out, Og, M, tiled::ceil_div(M, tiled::kBM),
                           tiled::ceil_div(Og, tiled::kBN), p.chunks, p.chunk_len, p.reduce_len});
      done = true;
    }
  }
  if (!done) {
    ex.for_each(
        BackpropFilterChunks<T>{p.shape, input, out_backprop, out, E, p.chunk_len, p.reduce_len},
        p.chunks * E);
  }
  if (p.chunks > 1) ex.for_each(ReduceChunks<T>{partials, filter_backprop, E, p.chunks}, E);
}

template <class Exec, class T>
void depthwise_conv2d_steps(Exec& ex, const Plan& p, const T* input, const T* filter, T* output) {
  ex.for_each(DepthwiseConv2dDirect<T>{p.shape, input, filter, output}, p.result_elems);
}

template <class Exec, class T>
void depthwise_backprop_input_steps(Exec& ex, const Plan& p, const T* filter, const T* out_backprop,
                                    T* input_backprop) {
  ex.for_each(DepthwiseBackpropInputDirect<T>{p.shape, filter, out_backprop, input_backprop},
              p.result_elems);
}

template <class Exec, class T>
void depthwise_backprop_filter_steps(Exec& ex, const Plan& p, const T* input, const T* out_backprop,
                                     T* filter_backprop, T* partials) {
  const int64_t E = p.result_elems;
  T* out = p.chunks > 1 ? partials : filter_backprop;
  ex.for_each(DepthwiseBackpropFilterChunks<T>{p.shape, input, out_backprop, out, E, p.chunk_len,
                                               p.reduce_len},
              p.chunks * E);
  if (p.chunks > 1) ex.for_each(ReduceChunks<T>{partials, filter_backprop, E, p.chunks}, E);
}

/// The op of a plan on canonical operands (a, b in op_io order).
template <class Exec, class T>
void op_steps(Exec& ex, const Plan& p, const T* a, const T* b, T* out, T* workspace) {
  switch (p.op) {
    case Op::conv2d:
      conv2d_steps(ex, p, a, b, out);
      break;
    case Op::conv2d_backprop_input:
    case Op::conv2d_transpose:
      backprop_input_steps(ex, p, a, b, out, workspace);
      break;
    case Op::conv2d_backprop_filter:
      backprop_filter_steps(ex, p, a, b, out, workspace);
      break;
    case Op::depthwise_conv2d:
      depthwise_conv2d_steps(ex, p, a, b, out);
      break;
    case Op::depthwise_conv2d_backprop_input:
      depthwise_backprop_input_steps(ex, p, a, b, out);
      break;
    case Op::depthwise_conv2d_backprop_filter:
      depthwise_backprop_filter_steps(ex, p, a, b, out, workspace);
      break;
  }
}

// ---- the whole run ------------------------------------------------------------------------------

/// The buffers of one run, in the executor's memory: the operands and the result as stored (the
/// problem's dtype and format), and workspaces of compute type T sized by the plan (a null
/// pointer where the plan needs none): canonical copies and the op's workspace
/// (Plan::workspace_elems).
template <class T>
struct Buffers {
  const void* a = nullptr;
  const void* b = nullptr;
  void* result = nullptr;
  T* a_copy = nullptr;
  T* b_copy = nullptr;
  T* result_copy = nullptr;
  T* workspace = nullptr;
};

/// Spatial size and channels of a role, for the NCHW <-> NHWC transpose.
inline void activation_dims(const Plan& p, Role r, int64_t* HW, int64_t* C) {
  const ConvShape& s = p.shape;
  if (r == Role::input) {
    *HW = s.H * s.W;
    *C = s.C;
  } else {
    *HW = s.OH * s.OW;
    *C = s.O;
  }
}

/// Canonicalise the operands, run the op, write the result back in the problem's dtype and
/// format. Precondition: the result has at least one element.
template <class Exec, class T>
void execute(Exec& ex, const Plan& p, const Buffers<T>& buf) {
  auto canonical = [&](Role r, const void* stored, int64_t n, bool convert, T* copy) {
    if (!convert) return static_cast<const T*>(stored);
    int64_t HW = 1, C = 1;
    const bool nchw = r != Role::filter && p.format == Format::NCHW;
    if (nchw) activation_dims(p, r, &HW, &C);
    ex.for_each(ToCanonical<T>{stored, p.storage, nchw, p.mode == Mode::tf32, HW, C, copy}, n);
    return static_cast<const T*>(copy);
  };
  const T* a = canonical(p.a, buf.a, p.a_elems, p.convert_a, buf.a_copy);
  const T* b = canonical(p.b, buf.b, p.b_elems, p.convert_b, buf.b_copy);
  T* out = p.convert_result ? buf.result_copy : static_cast<T*>(buf.result);
  ex.run_op(p, a, b, out, buf.workspace);
  if (p.convert_result) {
    int64_t HW = 1, C = 1;
    const bool nchw = p.result != Role::filter && p.format == Format::NCHW;
    if (nchw) activation_dims(p, p.result, &HW, &C);
    ex.for_each(FromCanonical<T>{out, p.storage, nchw, HW, C, buf.result}, p.result_elems);
  }
}

}  // namespace convcheck::gpu::k
