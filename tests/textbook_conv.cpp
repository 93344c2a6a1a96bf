#include "textbook_conv.h"

#include <algorithm>

namespace textbook {

namespace {

struct Resolved {
  int64_t OH, OW, top, left, PH, PW;  // output size, leading pads, padded input size
};

Resolved resolve(const Conv& c) {
  const int64_t extent_h = c.dh * (c.KH - 1) + 1, extent_w = c.dw * (c.KW - 1) + 1;
  Resolved r{};
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  if (c.pad == Conv::Pad::explicit_) {
    top = c.top, bottom = c.bottom, left = c.left, right = c.right;
  } else if (c.pad == Conv::Pad::same) {
    const int64_t oh = (c.H + c.sh - 1) / c.sh, ow = (c.W + c.sw - 1) / c.sw;
    const int64_t ph = std::max<int64_t>(0, (oh - 1) * c.sh + extent_h - c.H);
    const int64_t pw = std::max<int64_t>(0, (ow - 1) * c.sw + extent_w - c.W);
    top = ph / 2, bottom = ph - ph / 2, left = pw / 2, right = pw - pw / 2;
  }
  r.top = top;
  r.left = left;
  r.PH = c.H + top + bottom;
  r.PW = c.W + left + right;
  r.OH = r.PH >= extent_h ? (r.PH - extent_h) / c.sh + 1 : 0;
  r.OW = r.PW >= extent_w ? (r.PW - extent_w) / c.sw + 1 : 0;
  return r;
}

}  // namespace

std::vector<int64_t> output_shape(const Conv& c) {
  const Resolved r = resolve(c);
  return {c.N, r.OH, r.OW, c.O};
}

void for_each_term(const Conv& c, const std::vector<double>& x, const std::vector<double>& w,
                   const std::function<void(int64_t, double, double)>& term) {
  const Resolved r = resolve(c);
  // The zero-padded input, materialised.
  std::vector<double> padded(c.N * r.PH * r.PW * c.C, 0.0);
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t h = 0; h < c.H; ++h)
      for (int64_t v = 0; v < c.W; ++v)
        for (int64_t ch = 0; ch < c.C; ++ch)
          padded[((n * r.PH + h + r.top) * r.PW + v + r.left) * c.C + ch] =
              x[((n * c.H + h) * c.W + v) * c.C + ch];
  const int64_t groups = c.C / c.Cf, per_group = c.O / groups;
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t oh = 0; oh < r.OH; ++oh)
      for (int64_t ow = 0; ow < r.OW; ++ow)
        for (int64_t g = 0; g < groups; ++g)
          for (int64_t k = 0; k < per_group; ++k) {
            const int64_t o = g * per_group + k;
            const int64_t out = ((n * r.OH + oh) * r.OW + ow) * c.O + o;
            for (int64_t kh = 0; kh < c.KH; ++kh)
              for (int64_t kw = 0; kw < c.KW; ++kw)
                for (int64_t ci = 0; ci < c.Cf; ++ci) {
                  const double xv =
                      padded[((n * r.PH + oh * c.sh + kh * c.dh) * r.PW + ow * c.sw + kw * c.dw) *
                                 c.C +
                             g * c.Cf + ci];
                  term(out, xv, w[((kh * c.KW + kw) * c.Cf + ci) * c.O + o]);
                }
          }
}

std::vector<double> conv2d(const Conv& c, const std::vector<double>& x,
                           const std::vector<double>& w) {
  const std::vector<int64_t> s = output_shape(c);
  std::vector<double> y(s[0] * s[1] * s[2] * s[3], 0.0);
  for_each_term(c, x, w, [&](int64_t out, double xv, double wv) { y[out] += xv * wv; });
  return y;
}

}  // namespace textbook
