// How the "cudnn" comparator lays a problem out for cuDNN (comparators/cudnn.cpp's header comment),
// as plain arithmetic with no CUDA or cuDNN in it, so that tests/test_cudnn.cpp can check it on any
// machine: it runs the same layouts through a host model of cuDNN's convolutions and holds the
// result to the exact reference.
//
// A 4-d view has dims (n, c, h, w) and element strides; activations are (N, C, H, W), filters
// (K, Cf, R, S). cuDNN sees one format per layout: NHWC activations with KRSC filters, or NCHW
// activations with KCRS filters, all packed. TF's HWIO filter [R,S,Cf,K] is the view with strides
// {1, K, S*Cf*K, Cf*K}. cuDNN pads symmetrically (min of the two sides); the remainder is explicit:
// the input's interior view sits at (extra_top, extra_left) of a larger, zeroed buffer.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/problem.h"

namespace convcheck::cudnn_layout {

struct Dims {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t elements() const { return n * c * h * w; }
};
struct Strides {
  int64_t n = 0, c = 0, h = 0, w = 0;
};

/// Packed strides of `d` in format `f` (for filters: NHWC = KRSC, NCHW = KCRS).
inline Strides packed(Format f, const Dims& d) {
  if (f == Format::NHWC) return {d.h * d.w * d.c, 1, d.w * d.c, d.c};
  return {d.c * d.h * d.w, d.h * d.w, d.w, 1};
}

/// TF's HWIO filter [R,S,Cf,K] as a view of dims (K, Cf, R, S).
inline Strides hwio_strides(const Dims& d) {
  return {1, d.n, d.w * d.c * d.n, d.c * d.n};
}

/// Whether two views of the same dims address the same elements (dims of size 1 don't count).
inline bool same_layout(const Dims& d, const Strides& a, const Strides& b) {
  return (d.n <= 1 || a.n == b.n) && (d.c <= 1 || a.c == b.c) && (d.h <= 1 || a.h == b.h) &&
         (d.w <= 1 || a.w == b.w);
}

/// A strided view; `offset` in elements from the start of its buffer.
struct View {
  Dims dims;
  Strides strides;
  int64_t offset = 0;
  int64_t at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return offset + n * strides.n + c * strides.c + h * strides.h + w * strides.w;
  }
};

/// One tensor: when `staged`, the caller's tensor (`user`, in its buffer) is copied into or out of
/// `conv` inside a buffer of `buffer_elements` laid out the way cuDNN is told; otherwise cuDNN
/// uses the caller's buffer as it is.
struct Staging {
  bool staged = false;
  View user, conv;
  int64_t buffer_elements = 0;
};

/// The whole layout of a problem for cuDNN seeing format `format`.
struct Layout {
  Format format = Format::NHWC;
  int64_t pad_h = 0, pad_w = 0;  // cuDNN's symmetric pads
  bool pad_copy = false;         // an asymmetric remainder is explicit (x is staged)
  Dims x, y, w;                  // cuDNN's tensors: x (padded input), y (output / dy), w (K,Cf,R,S)
  int64_t groups = 1;
  Staging xs, ys, ws;
};

inline Layout layout_for(const Problem& p, const Geometry& g, Format f) {
  Layout L;
  L.format = f;
  L.groups = g.G;
  L.pad_h = std::min(g.pad_top, g.pad_bottom);
  L.pad_w = std::min(g.pad_left, g.pad_right);
  const int64_t et = g.pad_top - L.pad_h, eb = g.pad_bottom - L.pad_h, el = g.pad_left - L.pad_w,
                er = g.pad_right - L.pad_w;
  L.pad_copy = et + eb + el + er > 0;
  const Dims x_user{g.N, g.C, g.H, g.W};
  L.x = {g.N, g.C, g.H + et + eb, g.W + el + er};
  L.y = {g.N, g.O, g.OH, g.OW};
  L.w = {g.O, g.Cf, g.KH, g.KW};

  const Strides xu = packed(p.format, x_user), xc = packed(f, L.x);
  L.xs.staged = L.pad_copy || !same_layout(x_user, xu, xc);
  L.xs.user = {x_user, xu, 0};
  L.xs.conv = {x_user, xc, et * xc.h + el * xc.w};
  L.xs.buffer_elements = L.x.elements();

  const Strides yu = packed(p.format, L.y), yc = packed(f, L.y);
  L.ys.staged = !same_layout(L.y, yu, yc);
  L.ys.user = {L.y, yu, 0};
  L.ys.conv = {L.y, yc, 0};
  L.ys.buffer_elements = L.y.elements();

  const Strides wu = hwio_strides(L.w), wc = packed(f, L.w);
  L.ws.staged = !same_layout(L.w, wu, wc);
  L.ws.user = {L.w, wu, 0};
  L.ws.conv = {L.w, wc, 0};
  L.ws.buffer_elements = L.w.elements();
  return L;
}

}  // namespace convcheck::cudnn_layout
