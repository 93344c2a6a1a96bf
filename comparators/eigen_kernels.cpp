// The eigen comparator's maths: comparators/eigen_kernels.h, and the formulations in the header
// comment of comparators/eigen.cpp. Activations are canonical NHWC (RowMajor N,H,W,C), filters
// HWIO (RSCM for depthwise). In a RowMajor NHWC tensor, Eigen's image-patch "rows" are W and its
// "cols" H, so every extract_image_patches call passes the W quantities first (as TF's
// SpatialConvolution does); its patches come out as [N, OH*OW, KH, KW, C], the output pixel index
// oh*OW + ow, which is a row of TF's NHWC output.
//
// One contraction type serves every formulation of a path (patches: an image-patch expression
// reshaped to a matrix times a matrix map; taps: a matrix map times a matrix map), so each dtype
// instantiates Eigen's contraction twice; grouped convolutions copy each group's channels into
// contiguous buffers and run the dense code rather than instantiating it on slices.
#define EIGEN_USE_THREADS
#include "comparators/eigen_kernels.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>

#include "core/half.h"

namespace convcheck::eigen_kernels {

namespace {

using Index = Eigen::Index;
using Device = Eigen::ThreadPoolDevice;
template <class T, int R>
using Map = Eigen::TensorMap<Eigen::Tensor<T, R, Eigen::RowMajor, Index>>;
template <class T, int R>
using CMap = Eigen::TensorMap<Eigen::Tensor<const T, R, Eigen::RowMajor, Index>>;
template <class T, int R>
using Buf = Eigen::Tensor<T, R, Eigen::RowMajor, Index>;
template <int R>
using Dims = Eigen::array<Index, R>;
using Pairs = Eigen::array<Eigen::IndexPair<Index>, 1>;

Pairs over(Index a, Index b) {
  return {Eigen::IndexPair<Index>(a, b)};
}
Index ceil_div(Index a, Index b) {
  return (a + b - 1) / b;
}

// One convolution: the problem's sizes, or one group's (C and O then the group's channels).
struct Conv {
  Index N, H, W, C, O, KH, KW, OH, OW, sh, sw, dh, dw, pt, pb, pl, pr, eff_h, eff_w;
  Index M;  // depthwise multiplier (O = C * M)
  Index taps() const { return KH * KW; }
  Index P() const { return N * OH * OW; }     // output pixels
  Index Pin() const { return N * H * W; }     // input pixels
  Dims<4> x() const { return {N, H, W, C}; }  // the three roles' shapes
  Dims<4> w() const { return {KH, KW, C, O}; }
  Dims<4> y() const { return {N, OH, OW, O}; }
};

Conv conv_of(const Geometry& g) {
  return {g.N,          g.H,        g.W,         g.C,     g.O,     g.KH, g.KW,
          g.OH,         g.OW,       g.sh,        g.sw,    g.dh,    g.dw, g.pad_top,
          g.pad_bottom, g.pad_left, g.pad_right, g.eff_h, g.eff_w, g.M};
}

template <class T>
void zero(T* p, Index n, const Device& d) {
  Map<T, 1> m(p, n);
  m.device(d) = m.constant(T(0));
}

// ---- patches: TF's formulation -------------------------------------------------------------

// The forward op's patches of x (also backprop filter's): [N, OH*OW, KH, KW, C], padding zeros.
template <class X>
auto input_patches(const X& x, const Conv& c) {
  return x.extract_image_patches(c.KW, c.KH, c.sw, c.sh, c.dw, c.dh, 1, 1, c.pl, c.pr, c.pt, c.pb,
                                 typename X::Scalar(0));
}

// Backprop input along one dimension: dx[h] = sum over kh' of D[h + kh' d - before] w[K-1-kh'],
// D being dy inflated by the stride (zeros between its rows) and `before` = eff - 1 - pad. Where
// that padding (or the one after, making the patch count the input size) would be negative, dy's
// rows [lo, hi) are kept and the paddings recomputed, both then >= 0.
struct Span {
  Index lo, hi, before, after;
};
Span gradient_span(Index in, Index out, Index eff, Index s, Index pad) {
  const Index total = in + eff - 1;  // the padded, inflated length the patches walk
  Span sp{0, 0, eff - 1 - pad, 0};
  if (sp.before < 0) {
    sp.lo = ceil_div(-sp.before, s);
    sp.before += sp.lo * s;
  }
  sp.hi = sp.before >= total ? sp.lo : std::min(out, sp.lo + (total - sp.before - 1) / s + 1);
  if (sp.hi > sp.lo) sp.after = total - sp.before - ((sp.hi - sp.lo - 1) * s + 1);
  return sp;
}

// dy's patches for backprop input, cropped as the spans say: [N, H*W, KH, KW, O]; `keep` holds
// the cropped copy of dy when one is needed. Precondition: both spans non-empty.
template <class T>
struct GradientPatches {
  Buf<T, 4> keep;  // empty unless dy is cropped
  CMap<T, 4> dy;
  GradientPatches(const Conv& c, const T* dy_in, const Span& r, const Span& q, const Device& d)
      : keep(cropped(c, dy_in, r, q, d)),
        dy(keep.size() ? keep.data() : dy_in, keep.size() ? Dims<4>(keep.dimensions()) : c.y()) {}
  static Buf<T, 4> cropped(const Conv& c, const T* dy, const Span& r, const Span& q,
                           const Device& d) {
    Buf<T, 4> keep;
    if (r.lo > 0 || r.hi < c.OH || q.lo > 0 || q.hi < c.OW) {
      keep.resize(c.N, r.hi - r.lo, q.hi - q.lo, c.O);
      keep.device(d) = CMap<T, 4>(dy, c.y()).slice(Dims<4>{0, r.lo, q.lo, 0}, keep.dimensions());
    }
    return keep;
  }
  auto patches(const Conv& c, const Span& r, const Span& q) const {
    return dy.extract_image_patches(c.KW, c.KH, 1, 1, c.dw, c.dh, c.sw, c.sh, q.before, q.after,
                                    r.before, r.after, T(0));
  }
};

// The filter of shape s = [KH, KW, in, out] reversed spatially: w_r[kh][kw] = w[KH-1-kh][KW-1-kw].
template <class T>
Buf<T, 4> reversed(const Dims<4>& s, const T* w, const Device& d) {
  Buf<T, 4> r(s);
  r.device(d) = CMap<T, 4>(w, s).reverse(Eigen::array<bool, 4>{true, true, false, false});
  return r;
}

template <class T>
void forward_patches(const Conv& c, const T* x, const T* w, T* y, const Device& d) {
  const CMap<T, 4> xm(x, c.x());
  const CMap<T, 2> wm(w, c.taps() * c.C, c.O);
  Map<T, 2> ym(y, c.P(), c.O);
  ym.device(d) =
      input_patches(xm, c).reshape(Dims<2>{c.P(), c.taps() * c.C}).contract(wm, over(1, 0));
}

template <class T>
void backward_filter_patches(const Conv& c, const T* x, const T* dy, T* dw, const Device& d) {
  const CMap<T, 4> xm(x, c.x());
  const CMap<T, 2> dym(dy, c.P(), c.O);
  Map<T, 2> dwm(dw, c.taps() * c.C, c.O);
  dwm.device(d) =
      input_patches(xm, c).reshape(Dims<2>{c.P(), c.taps() * c.C}).contract(dym, over(0, 0));
}

template <class T>
void backward_data_patches(const Conv& c, const T* w, const T* dy, T* dx, const Device& d) {
  const Span r = gradient_span(c.H, c.OH, c.eff_h, c.sh, c.pt),
             q = gradient_span(c.W, c.OW, c.eff_w, c.sw, c.pl);
  if (r.hi <= r.lo || q.hi <= q.lo) return zero(dx, c.Pin() * c.C, d);  // no term anywhere
  // The filter reversed, its in and out channels swapped: [KH, KW, O, C].
  Buf<T, 4> wr(c.KH, c.KW, c.O, c.C);
  wr.device(d) = reversed(c.w(), w, d).shuffle(Dims<4>{0, 1, 3, 2});
  const CMap<T, 2> wrm(wr.data(), c.taps() * c.O, c.C);
  const GradientPatches<T> g(c, dy, r, q, d);
  Map<T, 2> dxm(dx, c.Pin(), c.C);
  dxm.device(d) =
      g.patches(c, r, q).reshape(Dims<2>{c.Pin(), c.taps() * c.O}).contract(wrm, over(1, 0));
}

// Depthwise: the same patches, each channel's products broadcast over the multiplier M and summed
// (TF's CPU depthwise kernels are its own loops; this is the Tensor-module way to say the same).
template <class T>
void depthwise_forward_patches(const Conv& c, const T* x, const T* w, T* y, const Device& d) {
  const CMap<T, 4> xm(x, c.x());
  const CMap<T, 4> wm(w, 1, c.taps(), c.C, c.M);
  Map<T, 3> ym(y, c.P(), c.C, c.M);
  ym.device(d) = (input_patches(xm, c)
                      .reshape(Dims<4>{c.P(), c.taps(), c.C, 1})
                      .broadcast(Dims<4>{1, 1, 1, c.M}) *
                  wm.broadcast(Dims<4>{c.P(), 1, 1, 1}))
                     .sum(Dims<1>{1});
}

template <class T>
void depthwise_backward_filter_patches(const Conv& c, const T* x, const T* dy, T* dw,
                                       const Device& d) {
  const CMap<T, 4> xm(x, c.x());
  const CMap<T, 4> dym(dy, c.P(), 1, c.C, c.M);
  Map<T, 3> dwm(dw, c.taps(), c.C, c.M);
  dwm.device(d) = (input_patches(xm, c)
                       .reshape(Dims<4>{c.P(), c.taps(), c.C, 1})
                       .broadcast(Dims<4>{1, 1, 1, c.M}) *
                   dym.broadcast(Dims<4>{1, c.taps(), 1, 1}))
                      .sum(Dims<1>{0});
}

template <class T>
void depthwise_backward_data_patches(const Conv& c, const T* w, const T* dy, T* dx,
                                     const Device& d) {
  const Span r = gradient_span(c.H, c.OH, c.eff_h, c.sh, c.pt),
             q = gradient_span(c.W, c.OW, c.eff_w, c.sw, c.pl);
  if (r.hi <= r.lo || q.hi <= q.lo) return zero(dx, c.Pin() * c.C, d);
  const Buf<T, 4> wr = reversed(Dims<4>{c.KH, c.KW, c.C, c.M}, w, d);
  const GradientPatches<T> g(c, dy, r, q, d);
  Map<T, 2> dxm(dx, c.Pin(), c.C);
  dxm.device(d) = (g.patches(c, r, q).reshape(Dims<4>{c.Pin(), c.taps(), c.C, c.M}) *
                   wr.reshape(Dims<4>{1, c.taps(), c.C, c.M}).broadcast(Dims<4>{c.Pin(), 1, 1, 1}))
                      .sum(Dims<2>{1, 3});
}

// ---- taps: only the index law's terms ------------------------------------------------------

// Along one dimension, the outputs o in [out0, out0 + count) whose input index o*s + offset
// (offset = k*d - pad) lies in [0, in); in0 is the first one's input index.
struct TapRange {
  Index out0, count, in0;
};
TapRange tap_range(Index in, Index out, Index s, Index offset) {
  const Index lo = offset >= 0 ? 0 : ceil_div(-offset, s);
  const Index hi = in - 1 - offset < 0 ? 0 : std::min(out, (in - 1 - offset) / s + 1);
  return {lo, std::max<Index>(0, hi - lo), lo * s + offset};
}

// One filter tap's rectangle: the output pixels it reaches and the input pixels they read.
struct Tap {
  TapRange r, q;
  Index rows() const { return r.count * q.count; }  // per image
  bool empty() const { return r.count == 0 || q.count == 0; }
};
Tap tap_of(const Conv& c, Index kh, Index kw) {
  return {tap_range(c.H, c.OH, c.sh, kh * c.dh - c.pt),
          tap_range(c.W, c.OW, c.sw, kw * c.dw - c.pl)};
}

// The tap's input pixels (a strided slice of an [N, H, W, ch] tensor) and its output pixels (a
// slice of an [N, OH, OW, ch] tensor), as expressions on `t`.
template <class X>
auto input_pixels(X&& t, const Conv& c, const Tap& k, Index ch) {
  return t
      .slice(Dims<4>{0, k.r.in0, k.q.in0, 0},
             Dims<4>{c.N, (k.r.count - 1) * c.sh + 1, (k.q.count - 1) * c.sw + 1, ch})
      .stride(Dims<4>{1, c.sh, c.sw, 1});
}
template <class X>
auto output_pixels(X&& t, const Conv& c, const Tap& k, Index ch) {
  return t.slice(Dims<4>{0, k.r.out0, k.q.out0, 0}, Dims<4>{c.N, k.r.count, k.q.count, ch});
}
template <class T, class E>
Buf<T, 4> materialize(const E& e, const Conv& c, const Tap& k, Index ch, const Device& d) {
  Buf<T, 4> b(c.N, k.r.count, k.q.count, ch);
  b.device(d) = e;
  return b;
}
template <class T>
CMap<T, 2> matrix(const Buf<T, 4>& b) {
  return CMap<T, 2>(b.data(), b.dimension(0) * b.dimension(1) * b.dimension(2), b.dimension(3));
}

// The taps path, one function for the three kinds and depthwise: for each tap, the pixels it
// connects are gathered and their products contracted (dense) or multiplied channel by channel
// (depthwise), then added to the result (forward, backprop input) or written as the tap's slice
// of the filter gradient.
template <class T>
void taps(OpKind kind, const Conv& c, bool depthwise, const T* a, const T* b, T* out,
          const Device& d) {
  const Index Cin = c.C, Cout = c.O;
  const Index filter_tap = Cin * (depthwise ? c.M : Cout);
  if (kind != OpKind::backward_filter)
    zero(out, kind == OpKind::forward ? c.P() * Cout : c.Pin() * Cin, d);
  for (Index kh = 0; kh < c.KH; ++kh) {
    for (Index kw = 0; kw < c.KW; ++kw) {
      const Tap k = tap_of(c, kh, kw);
      const Index R = c.N * k.rows(), at = (kh * c.KW + kw) * filter_tap;
      if (kind == OpKind::backward_filter) {
        Map<T, 1> dwt(out + at, filter_tap);
        if (k.empty()) {
          dwt.device(d) = dwt.constant(T(0));
          continue;
        }
        const Buf<T, 4> xs =
            materialize<T>(input_pixels(CMap<T, 4>(a, c.x()), c, k, Cin), c, k, Cin, d);
        const Buf<T, 4> dys =
            materialize<T>(output_pixels(CMap<T, 4>(b, c.y()), c, k, Cout), c, k, Cout, d);
        if (depthwise)
          dwt.device(d) = (xs.reshape(Dims<3>{R, Cin, 1}).broadcast(Dims<3>{1, 1, c.M}) *
                           dys.reshape(Dims<3>{R, Cin, c.M}))
                              .sum(Dims<1>{0})
                              .reshape(Dims<1>{filter_tap});
        else
          dwt.device(d) = matrix(xs).contract(matrix(dys), over(0, 0)).reshape(Dims<1>{filter_tap});
        continue;
      }
      if (k.empty()) continue;
      if (kind == OpKind::forward) {
        const Buf<T, 4> xs =
            materialize<T>(input_pixels(CMap<T, 4>(a, c.x()), c, k, Cin), c, k, Cin, d);
        Buf<T, 2> t(R, Cout);
        if (depthwise)
          t.device(d) = (xs.reshape(Dims<3>{R, Cin, 1}).broadcast(Dims<3>{1, 1, c.M}) *
                         CMap<T, 3>(b + at, 1, Cin, c.M).broadcast(Dims<3>{R, 1, 1}))
                            .reshape(Dims<2>{R, Cout});
        else
          t.device(d) = matrix(xs).contract(CMap<T, 2>(b + at, Cin, Cout), over(1, 0));
        Map<T, 4> y(out, c.y());
        auto ys = output_pixels(y, c, k, Cout);
        ys.device(d) = ys + t.reshape(Dims<4>{c.N, k.r.count, k.q.count, Cout});
      } else {
        const Buf<T, 4> dys =
            materialize<T>(output_pixels(CMap<T, 4>(b, c.y()), c, k, Cout), c, k, Cout, d);
        Buf<T, 2> t(R, Cin);
        if (depthwise)
          t.device(d) = (dys.reshape(Dims<3>{R, Cin, c.M}) *
                         CMap<T, 3>(a + at, 1, Cin, c.M).broadcast(Dims<3>{R, 1, 1}))
                            .sum(Dims<1>{2});
        else
          t.device(d) = matrix(dys).contract(CMap<T, 2>(a + at, Cin, Cout), over(1, 1));
        Map<T, 4> x(out, c.x());
        auto xs = input_pixels(x, c, k, Cin);
        xs.device(d) = xs + t.reshape(Dims<4>{c.N, k.r.count, k.q.count, Cin});
      }
    }
  }
}

// ---- dispatch ------------------------------------------------------------------------------

template <class T>
constexpr bool kFloating = !std::is_same_v<T, uint32_t>;

template <class T>
void dense(OpKind kind, const Conv& c, Path path, const T* a, const T* b, T* out, const Device& d) {
  if constexpr (kFloating<T>) {
    if (path == Path::taps) return taps(kind, c, false, a, b, out, d);
  }
  switch (kind) {
    case OpKind::forward:
      return forward_patches(c, a, b, out, d);
    case OpKind::backward_data:
      return backward_data_patches(c, a, b, out, d);
    case OpKind::backward_filter:
      if constexpr (kFloating<T>) return backward_filter_patches(c, a, b, out, d);
      break;
  }
  throw std::logic_error("eigen: int32 backprop filter is not instantiated");
}

// A role's shape in a convolution and its last dimension's share per group.
struct RoleShape {
  Dims<4> full;
  Index group;
};
RoleShape role_shape(const Conv& c, const Conv& per_group, Role r) {
  switch (r) {
    case Role::input:
      return {c.x(), per_group.C};
    case Role::filter:
      return {Dims<4>{c.KH, c.KW, per_group.C, c.O}, per_group.O};
    case Role::out_backprop:
      break;
  }
  return {c.y(), per_group.O};
}

// Group g's channels of a role's tensor (the last dimension's [g*group, (g+1)*group)).
template <class X>
auto group_slice(X& t, const RoleShape& s, Index g) {
  return t.slice(Dims<4>{0, 0, 0, g * s.group}, Dims<4>{s.full[0], s.full[1], s.full[2], s.group});
}

// Grouped convolution (G > 1): each group's channels of both operands copied into contiguous
// buffers, the dense op, its result copied into the group's channels.
template <class T>
void grouped(OpKind kind, const Geometry& g, Path path, const T* a, const T* b, T* out,
             const Device& d) {
  const Conv c = conv_of(g);
  if (g.G == 1) return dense(kind, c, path, a, b, out, d);
  Conv cg = c;
  cg.C = g.Cf;
  cg.O = g.O / g.G;
  const Role ra = kind == OpKind::backward_data ? Role::filter : Role::input;
  const Role rb = kind == OpKind::forward ? Role::filter : Role::out_backprop;
  const Role rr = kind == OpKind::forward         ? Role::out_backprop
                  : kind == OpKind::backward_data ? Role::input
                                                  : Role::filter;
  const RoleShape sa = role_shape(c, cg, ra), sb = role_shape(c, cg, rb),
                  sr = role_shape(c, cg, rr);
  auto buffer = [](const RoleShape& s) {
    return Buf<T, 4>(s.full[0], s.full[1], s.full[2], s.group);
  };
  Buf<T, 4> ta = buffer(sa), tb = buffer(sb), tr = buffer(sr);
  const CMap<T, 4> ma(a, sa.full), mb(b, sb.full);
  Map<T, 4> mr(out, sr.full);
  for (Index i = 0; i < g.G; ++i) {
    ta.device(d) = group_slice(ma, sa, i);
    tb.device(d) = group_slice(mb, sb, i);
    dense(kind, cg, path, ta.data(), tb.data(), tr.data(), d);
    group_slice(mr, sr, i).device(d) = tr;
  }
}

template <class T>
void depthwise(OpKind kind, const Conv& c, Path path, const T* a, const T* b, T* out,
               const Device& d) {
  if (path == Path::taps) return taps(kind, c, true, a, b, out, d);
  switch (kind) {
    case OpKind::forward:
      return depthwise_forward_patches(c, a, b, out, d);
    case OpKind::backward_data:
      return depthwise_backward_data_patches(c, a, b, out, d);
    case OpKind::backward_filter:
      return depthwise_backward_filter_patches(c, a, b, out, d);
  }
}

}  // namespace

template <class T>
void run(OpKind kind, const Geometry& g, Path path, const T* a, const T* b, T* result,
         const Eigen::ThreadPoolDevice& device) {
  if (!g.depthwise) return grouped(kind, g, path, a, b, result, device);
  if constexpr (kFloating<T>) return depthwise(kind, conv_of(g), path, a, b, result, device);
  throw std::logic_error("eigen: int32 depthwise ops are not instantiated");
}

template <class T>
void nchw_to_nhwc(const T* in, T* out, const std::array<int64_t, 4>& s,
                  const Eigen::ThreadPoolDevice& device) {
  Map<T, 4>(out, s[0], s[1], s[2], s[3]).device(device) =
      CMap<T, 4>(in, s[0], s[3], s[1], s[2]).shuffle(Dims<4>{0, 2, 3, 1});
}

template <class T>
void nhwc_to_nchw(const T* in, T* out, const std::array<int64_t, 4>& s,
                  const Eigen::ThreadPoolDevice& device) {
  Map<T, 4>(out, s[0], s[3], s[1], s[2]).device(device) =
      CMap<T, 4>(in, s[0], s[1], s[2], s[3]).shuffle(Dims<4>{0, 3, 1, 2});
}

template <class T>
bool all_finite(const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!(Eigen::numext::isfinite)(p[i])) return false;
  return true;
}

#define CONVCHECK_EIGEN_RUN(T)                                                \
  template void run<T>(OpKind, const Geometry&, Path, const T*, const T*, T*, \
                       const Eigen::ThreadPoolDevice&);
CONVCHECK_EIGEN_RUN(float)
CONVCHECK_EIGEN_RUN(double)
CONVCHECK_EIGEN_RUN(Eigen::half)
CONVCHECK_EIGEN_RUN(Eigen::bfloat16)
CONVCHECK_EIGEN_RUN(uint32_t)
#undef CONVCHECK_EIGEN_RUN

#define CONVCHECK_EIGEN_COPY(T)                                              \
  template void nchw_to_nhwc<T>(const T*, T*, const std::array<int64_t, 4>&, \
                                const Eigen::ThreadPoolDevice&);             \
  template void nhwc_to_nchw<T>(const T*, T*, const std::array<int64_t, 4>&, \
                                const Eigen::ThreadPoolDevice&);
CONVCHECK_EIGEN_COPY(uint16_t)
CONVCHECK_EIGEN_COPY(uint32_t)
CONVCHECK_EIGEN_COPY(uint64_t)
#undef CONVCHECK_EIGEN_COPY

template bool all_finite<float>(const float*, int64_t);
template bool all_finite<double>(const double*, int64_t);
template bool all_finite<Eigen::half>(const Eigen::half*, int64_t);
template bool all_finite<Eigen::bfloat16>(const Eigen::bfloat16*, int64_t);

}  // namespace convcheck::eigen_kernels
