// RapidCheck generators (design §7).
//
// Valid problems are built by dependent generation: every pick draws from a range computed from the
// picks before it, so every generated value — and every shrink of it — is a valid problem. No
// suchThat, no discards. The structure, outermost first (gen::mapcat shrinks the outer value first
// and re-runs the inner generator, gen::apply shrinks each component in turn):
//
//   op (not shrunk) -> { dtype, format, channels, KH, KW, dilations, strides, padding, N }
//                   -> H, W from the minimum that gives output size >= 0, plus an offset.
//
// Per spatial dimension (input size I, effective filter extent e = (K-1)d+1, stride s, explicit
// pads P = before + after, TF's truncating out = (I + P - e + s) / s):
//   VALID/EXPLICIT: out >= 1 iff I >= e - P; out = 0 for e - P - 2s + 1 <= I < e - P.
//   SAME:           out = ceil(I / s) >= 1 iff I >= 1.
// So I = max(1, e - P) + offset (output >= 1), or, rarely (3%), I in [max(0, e - P - 2s + 1),
// max(1, e - P) - 1]: output size 0, or an empty input (I = 0) whose padding still gives an output.
//
// Choices with a "plain" value shrink towards it (weighted picks whose shrinks are the options
// listed before them): f32, NHWC, stride 1, dilation 1, VALID, groups 1, multiplier 1, N = 1, the
// smallest size. gen::inRange picks shrink towards their minimum. Only the op does not shrink.
//
// Distribution (per pick; see the `generated_problems_are_valid` property's tags for the realised
// mix): NCHW 35%; dilations > 1 30%; strides > 1 45%, unequal-stride mode 30%; VALID/SAME/EXPLICIT
// 35/35/30 with pads 0..6 each; groups > 1 25% of conv cases; multiplier > 1 50% of depthwise;
// i32 20% on conv2d / backprop input / transpose; N = 0 3%; zero output channels 2% (not for
// conv2d, which TF refuses); a degenerate spatial size 3% per dimension. Sizes: N <= 3,
// H, W <= 14 (more only when the filter extent needs it), C, O <= 8 (depthwise O <= 18), taps
// 1..5 — one oracle case runs in milliseconds.
//
// Tiers (the outermost pick; a tier shrinks to the ones before it, so a failure that the small tier
// also shows ends there):
//   small  (80%) the problems above: the bulk, fast, shrinking well.
//   medium (17%) problems that span the blocks real kernels use: C, O (per group) and depthwise C
//                are 16 * blocks + tail, blocks 0..4 and tail 1..16, so every residue mod 8 and 16
//                from 1 to 80 (C·M up to 240); N up to 12, taps up to 7x7 with the same stride,
//                dilation and padding mix. Blocks shrink first and keep the tail, then the tail
//                shrinks: a tail bug ends at its smallest failing tail (C = 17, say), not at C = 1.
//                Costs are budgeted: the forward op's terms <= kMediumTerms (120,000; taps, then
//                output sizes, are capped by what the channels and N leave, so many channels come
//                with few taps and small sizes) and the input <= 2^16 elements. A third of them
//                are "spatial": fewer channels, sizes up to 64 outputs a side (inputs to ~250 with
//                strides), beyond typical tiles of 32. 15% of the conv ones are "wide": one
//                group, 129..160 input channels, 17..48 output ones (a third: 65..96), N 1..2, so
//                that the budget leaves a few pixels a side and the filter outweighs the
//                activations (the layers of DCGAN g2's kind, whose optimized backprop filter packs
//                and gathers its input).
//   big     (3%) cheap big-index problems: C and O 1 (75%) or 2, depthwise M = 1, 1x1 filters
//                (80%; else 2 or 3 taps a side), N = 1, and an input tensor of more than 2^16
//                elements (H 128..256, W what crosses it plus 0..31): the oracle's cost is per
//                element here, a hundred-odd ms a case.
//                2^24 and 2^31-byte problems are in the large suite: too slow for the
//                exact reference in every fuzz campaign, and above fuzz's 512 MiB memory floor.
#include "properties/generators.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/hash.h"

namespace convcheck::gen {

namespace {

using rc::Gen;
using I = int64_t;

// Zero output channels (O = 0, or depthwise M = 0) are valid for every op but conv2d; the
// oracle's relations that would need such a conv2d report themselves not applicable.
constexpr int kZeroOutputChannelsPercent = 2;
// A spatial dimension with output size 0 (or an empty input that padding still covers).
constexpr int kDegenerateSizePercent = 3;
// The tiers' shares of all draws (the small tier has the rest).
constexpr int kMediumTierPercent = 17;
constexpr int kBigTierPercent = 3;
// Medium tier: the forward op's terms (N * OH * OW * O * KH * KW * Cf) and the input's elements.
// One medium case costs the oracle ~0.2 us a term and ~1 us an element (the exact reference, the
// relations' re-runs, fills and bounds), a few dozen ms at these budgets; shrinking a medium
// failure runs a few dozen of them.
constexpr I kMediumTerms = 120000;
constexpr I kMediumInputElements = I{1} << 16;
// Big tier: the input tensor crosses this many elements.
constexpr I kBigElements = I{1} << 16;

// ---------------------------------------------------------------------------------------------
// Building blocks.

/// A weighted pick among options, listed plainest first; a value shrinks to the options before it.
/// Ignores the size.
template <class T>
Gen<T> pick(std::vector<std::pair<int, T>> options) {
  return Gen<T>([options](const rc::Random& random, int) {
    uint64_t total = 0;
    for (const auto& o : options) total += static_cast<uint64_t>(o.first);
    uint64_t x = rc::Random(random).next() % total;
    std::size_t i = 0;
    while (x >= static_cast<uint64_t>(options[i].first)) {
      x -= static_cast<uint64_t>(options[i].first);
      ++i;
    }
    return rc::shrinkable::map(
        rc::shrinkable::shrinkRecur(
            i, [](std::size_t j) { return rc::seq::range<std::size_t>(0, j); }),
        [options](std::size_t j) { return options[j].second; });
  });
}

/// true with `percent` probability; shrinks to false.
Gen<bool> chance(int percent) {
  return pick<bool>({{100 - percent, false}, {percent, true}});
}

/// [lo, hi) growing with the size, shrinking towards lo.
Gen<I> sized(I lo, I hi) {
  return rc::gen::inRange<I>(lo, hi);
}
/// [lo, hi) uniformly whatever the size, shrinking towards lo.
Gen<I> full(I lo, I hi) {
  return rc::gen::resize(100, rc::gen::inRange<I>(lo, hi));
}

/// `gen` with `percent` probability, else `otherwise` (the shrink the flag tries first).
Gen<I> sometimes(int percent, Gen<I> gen, I otherwise) {
  return rc::gen::mapcat(chance(percent),
                         [gen, otherwise](bool on) { return on ? gen : rc::gen::just(otherwise); });
}

// ---------------------------------------------------------------------------------------------
// The parameters that the spatial sizes depend on.

struct Channels {
  I C = 1;      // input channels
  I f_in = 1;   // filter[2]: Cf (conv) or C (depthwise)
  I f_out = 1;  // filter[3]: O (conv) or M (depthwise)
};

struct Params {
  Op op = Op::conv2d;
  DType dtype = DType::f32;
  Format format = Format::NHWC;
  Channels ch;
  I KH = 1, KW = 1;
  std::pair<I, I> dilation{1, 1};
  std::pair<I, I> stride{1, 1};
  Padding padding;
  I N = 1;
};

Gen<DType> dtype_for(Op op) {
  if (op_takes_dtype(op, DType::i32)) {
    return pick<DType>({{32, DType::f32},
                        {16, DType::f64},
                        {16, DType::f16},
                        {16, DType::bf16},
                        {20, DType::i32}});
  }
  return pick<DType>({{40, DType::f32}, {20, DType::f64}, {20, DType::f16}, {20, DType::bf16}});
}

Gen<Channels> conv_channels(Op op) {
  // Groups G, per-group input channels Cf and per-group outputs k: C = G*Cf, O = G*k, so
  // C % Cf == 0 and O % G == 0 by construction. conv2d refuses O = 0; the other ops take it.
  const int zero_out = op == Op::conv2d ? 0 : kZeroOutputChannelsPercent;
  return rc::gen::mapcat(pick<I>({{75, 1}, {10, 2}, {8, 3}, {7, 4}}), [zero_out](I G) {
    const I cap = G == 1 ? 6 : std::max<I>(1, 8 / G);
    return rc::gen::apply(
        [G](I Cf, I k, bool zero) {
          return Channels{G * Cf, Cf, zero ? 0 : G * k};
        },
        sized(1, cap + 1), sized(1, cap + 1), chance(zero_out));
  });
}

Gen<Channels> depthwise_channels() {
  return rc::gen::apply(
      [](I C, I M, bool zero) {
        return Channels{C, C, zero ? 0 : M};
      },
      sized(1, 7), sometimes(50, full(2, 4), 1), chance(kZeroOutputChannelsPercent));
}

Gen<std::pair<I, I>> dilations() {
  // 30% dilated: in H only, W only, or both.
  return rc::gen::mapcat(chance(30), [](bool dilated) -> Gen<std::pair<I, I>> {
    if (!dilated) return rc::gen::just(std::pair<I, I>{1, 1});
    return rc::gen::mapcat(pick<int>({{1, 0}, {1, 1}, {1, 2}}), [](int which) {
      const Gen<I> d = full(2, 4);
      const Gen<I> one = rc::gen::just<I>(1);
      return rc::gen::apply(
          [](I dh, I dw) {
            return std::pair<I, I>{dh, dw};
          },
          which == 1 ? one : d, which == 0 ? one : d);
    });
  });
}

Gen<std::pair<I, I>> strides() {
  // 1 (55%) or 2..4; 30% of problems have different H and W strides.
  const Gen<I> s = sometimes(45, full(2, 5), 1);
  return rc::gen::mapcat(chance(30), [s](bool unequal) -> Gen<std::pair<I, I>> {
    if (!unequal) return rc::gen::map(s, [](I v) { return std::pair<I, I>{v, v}; });
    // sw from the three values other than sh.
    return rc::gen::apply(
        [](I sh, I other) {
          return std::pair<I, I>{sh, other >= sh ? other + 1 : other};
        },
        s, full(1, 4));
  });
}

Gen<Padding> paddings() {
  return rc::gen::mapcat(
      pick<PaddingKind>(
          {{35, PaddingKind::VALID}, {35, PaddingKind::SAME}, {30, PaddingKind::EXPLICIT}}),
      [](PaddingKind kind) -> Gen<Padding> {
        if (kind != PaddingKind::EXPLICIT) {
          Padding p;
          p.kind = kind;
          return rc::gen::just(p);
        }
        return rc::gen::apply(
            [](I t, I b, I l, I r) {
              Padding p;
              p.kind = PaddingKind::EXPLICIT;
              p.top = t;
              p.bottom = b;
              p.left = l;
              p.right = r;
              return p;
            },
            sized(0, 7), sized(0, 7), sized(0, 7), sized(0, 7));
      });
}

Gen<Params> params(Op op) {
  return rc::gen::apply(
      [op](DType dtype, Format format, Channels ch, I KH, I KW, std::pair<I, I> dilation,
           std::pair<I, I> stride, Padding padding,
           I N) { return Params{op, dtype, format, ch, KH, KW, dilation, stride, padding, N}; },
      dtype_for(op), pick<Format>({{65, Format::NHWC}, {35, Format::NCHW}}),
      is_depthwise(op) ? depthwise_channels() : conv_channels(op), sized(1, 6), sized(1, 6),
      dilations(), strides(), paddings(), rc::gen::mapcat(chance(3), [](bool empty) {
        return empty ? rc::gen::just<I>(0) : sized(1, 4);
      }));
}

/// The input size along one dimension, valid by construction (see the file comment).
Gen<I> spatial(I K, I d, I s, PaddingKind kind, I before, I after) {
  const I eff = (K - 1) * d + 1;
  I base = 1, lo = 0;
  if (kind != PaddingKind::SAME) {
    const I P = before + after;
    base = std::max<I>(1, eff - P);
    lo = std::max<I>(0, eff - P - 2 * s + 1);
  }
  const I span = std::max<I>(1, 15 - base);
  return rc::gen::mapcat(chance(kDegenerateSizePercent), [base, lo, span](bool degenerate) {
    if (degenerate) return full(lo, base);  // lo <= base - 1 always
    return rc::gen::map(sized(0, span), [base](I offset) { return base + offset; });
  });
}

Problem assemble(const Params& q, I H, I W);

/// The smallest input size with output >= 1 (see the file comment).
I base_size(I K, I d, PaddingKind kind, I before, I after) {
  if (kind == PaddingKind::SAME) return 1;
  return std::max<I>(1, (K - 1) * d + 1 - before - after);
}

/// An input size of at least `base` and at most max(base, hi), shrinking towards base.
Gen<I> size_up_to(I base, I hi) {
  return rc::gen::map(full(0, std::max<I>(1, hi - base + 1)), [base](I off) { return base + off; });
}

// --- the medium tier -------------------------------------------------------------------------

/// 16 * blocks + tail, tail in 1..16: every residue mod 8 and 16 from 1 to 16 * max_blocks + 16.
/// Blocks shrink first, keeping the tail; then the tail shrinks.
Gen<I> blocked(I max_blocks) {
  return rc::gen::apply([](I blocks, I tail) { return 16 * blocks + tail; },
                        full(0, max_blocks + 1), full(1, 17));
}

// What a medium problem leans towards: the spread below (plain), few channels and large sizes
// (spatial), or many input channels and few output ones (wide; conv ops only).
enum class Focus { plain, spatial, wide };

Gen<Channels> medium_channels(Op op, Focus focus) {
  const bool spatial_focus = focus == Focus::spatial;
  const I blocks = spatial_focus ? 1 : 4;
  if (focus == Focus::wide) {
    assert(!is_depthwise(op));  // (medium_params draws it for conv ops only)
    // One group, 16 * (8 or 9) + tail input channels (129..160: past the 128 slots a pixel needs
    // for the optimized backprop filter's gathered path, backprop_filter.cpp, kGatherSlots, with
    // AVX2's 6-channel blocks) and 17..48 output ones (wider than AVX2's 16-channel panel: packed
    // slices), a third of them 65..96 (wider than AVX-512's 64-float panel, which holds 17..48
    // whole: so that f32 reaches AVX-512's packed slices and gathered path too, not f64 alone):
    // within the terms budget the sizes are then a few pixels a side, the filter mostly larger
    // than the activations (its packed-input and gathered paths, otherwise out of reach of a
    // small problem). The blocks shrink through 0..7, never drawn, so a failure that needs only a
    // block and a tail still ends at C = 17 (test_properties,
    // generators_reach_block_tails_and_big_indices_and_shrink_to_the_tail); the output channels
    // shrink from 65..96 to 17..48.
    const Gen<I> wide_blocks =
        pick<I>({{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {0, 7}, {1, 8}, {1, 9}});
    return rc::gen::apply(
        [](I blocks16, I tail, I base, I k) {
          const I Cf = 16 * blocks16 + tail;
          return Channels{Cf, Cf, base + k};
        },
        wide_blocks, full(1, 17), pick<I>({{67, 16}, {33, 64}}), blocked(1));
  }
  if (is_depthwise(op)) {
    return rc::gen::apply(
        [](I C, I M) {
          return Channels{C, C, M};
        },
        blocked(blocks), sometimes(50, full(2, 5), 1));
  }
  return rc::gen::mapcat(pick<I>({{85, 1}, {15, 2}}), [blocks, spatial_focus](I G) {
    const I per_group = G == 1 ? blocks : std::min<I>(blocks, 2);
    return rc::gen::apply(
        [G](I Cf, I k) {
          return Channels{G * Cf, Cf, G * k};
        },
        blocked(per_group), spatial_focus ? full(1, 5) : blocked(per_group));
  });
}

/// The forward op's terms per output pixel, without the taps: N * O * Cf (depthwise Cf = 1).
I terms_per_tap(Op op, const Channels& ch, I N) {
  const I O = is_depthwise(op) ? ch.C * ch.f_out : ch.f_out;
  const I Cf = is_depthwise(op) ? 1 : ch.f_in;
  return std::max<I>(1, N * O * Cf);
}

/// Medium problems: channels, N, then taps within the terms budget, then the rest; the sizes
/// (in medium_problem) take what the budget leaves.
Gen<Params> medium_params(Op op) {
  const Gen<Focus> focus =
      is_depthwise(op) ? pick<Focus>({{65, Focus::plain}, {35, Focus::spatial}})
                       : pick<Focus>({{50, Focus::plain}, {35, Focus::spatial}, {15, Focus::wide}});
  return rc::gen::mapcat(focus, [op](Focus f) {
    const bool spatial_focus = f == Focus::spatial;
    return rc::gen::mapcat(
        rc::gen::apply([](Channels ch, I N) { return std::make_pair(ch, N); },
                       medium_channels(op, f),
                       spatial_focus      ? full(1, 4)
                       : f == Focus::wide ? full(1, 3)
                                          : sometimes(60, full(2, 13), 1)),
        [op](std::pair<Channels, I> chn) {
          const Channels ch = chn.first;
          const I N = chn.second;
          const I per_tap = terms_per_tap(op, ch, N);
          const I kh_cap = std::clamp<I>(kMediumTerms / per_tap, 1, 7);
          return rc::gen::mapcat(full(1, kh_cap + 1), [op, ch, N, per_tap](I KH) {
            const I kw_cap = std::clamp<I>(kMediumTerms / (per_tap * KH), 1, 7);
            return rc::gen::apply(
                [op, ch, N, KH](DType dtype, Format format, I KW, std::pair<I, I> dilation,
                                std::pair<I, I> stride, Padding padding) {
                  return Params{op, dtype, format, ch, KH, KW, dilation, stride, padding, N};
                },
                dtype_for(op), pick<Format>({{65, Format::NHWC}, {35, Format::NCHW}}),
                full(1, kw_cap + 1), dilations(), strides(), paddings());
          });
        });
  });
}

/// The problem, with SAME padding where explicit pads larger than the estimate allowed for
/// would take the forward op past twice kMediumTerms (SAME is valid for every input size).
Problem within_budget(const Params& q, I H, I W) {
  Problem p = assemble(q, H, W);
  const Geometry g = geometry(p);
  if (g.N * g.OH * g.OW * g.O * g.KH * g.KW * g.Cf > 2 * kMediumTerms)
    p.padding = Padding{PaddingKind::SAME, 0, 0, 0, 0};
  return p;
}

/// Output sizes within the terms budget (at most 64 a side) and an input within
/// kMediumInputElements; H first, W from what H leaves. Output size ~ offset / stride + 1.
Gen<Problem> medium_problem(Op op) {
  return rc::gen::mapcat(medium_params(op), [](const Params& q) {
    const I per_pixel = terms_per_tap(q.op, q.ch, q.N) * q.KH * q.KW;
    const I pixels = std::max<I>(1, kMediumTerms / per_pixel);
    const I pixels_in = std::max<I>(1, kMediumInputElements / std::max<I>(1, q.N * q.ch.C));
    const I bh = base_size(q.KH, q.dilation.first, q.padding.kind, q.padding.top, q.padding.bottom);
    const I bw =
        base_size(q.KW, q.dilation.second, q.padding.kind, q.padding.left, q.padding.right);
    const I sh = q.stride.first, sw = q.stride.second;
    const I h_hi = std::min(bh + sh * (std::min<I>(64, pixels) - 1), pixels_in / bw);
    return rc::gen::mapcat(size_up_to(bh, h_hi), [q, pixels, pixels_in, bw, bh, sh, sw](I H) {
      const I oh = (H - bh) / sh + 1;
      const I w_cap = std::clamp<I>(pixels / oh, 1, 64);
      const I w_hi = std::min(bw + sw * (w_cap - 1), pixels_in / H);
      return rc::gen::map(size_up_to(bw, w_hi), [q, H](I W) { return within_budget(q, H, W); });
    });
  });
}

// --- the big tier ----------------------------------------------------------------------------

Gen<Params> big_params(Op op) {
  const Gen<Channels> channels =
      is_depthwise(op) ? rc::gen::apply(
                             [](I C, I M) {
                               return Channels{C, C, M};
                             },
                             pick<I>({{75, 1}, {25, 2}}), rc::gen::just<I>(1))
                       : rc::gen::apply(
                             [](I Cf, I k) {
                               return Channels{Cf, Cf, k};
                             },
                             pick<I>({{75, 1}, {25, 2}}), pick<I>({{75, 1}, {25, 2}}));
  const Gen<I> taps = pick<I>({{80, 1}, {10, 2}, {10, 3}});
  return rc::gen::apply(
      [op](DType dtype, Format format, Channels ch, I KH, I KW, std::pair<I, I> dilation,
           std::pair<I, I> stride, Padding padding,
           I N) { return Params{op, dtype, format, ch, KH, KW, dilation, stride, padding, N}; },
      dtype_for(op), pick<Format>({{65, Format::NHWC}, {35, Format::NCHW}}), channels, taps, taps,
      dilations(), strides(), paddings(), rc::gen::just<I>(1));
}

/// H in 128..256, W the smallest that takes the input past kBigElements, plus 0..31.
Gen<Problem> big_problem(Op op) {
  return rc::gen::mapcat(big_params(op), [](const Params& q) {
    const I bh = base_size(q.KH, q.dilation.first, q.padding.kind, q.padding.top, q.padding.bottom);
    const I bw =
        base_size(q.KW, q.dilation.second, q.padding.kind, q.padding.left, q.padding.right);
    const I h0 = std::max<I>(128, bh);
    return rc::gen::mapcat(size_up_to(h0, h0 + 128), [q, bw](I H) {
      const I w0 = std::max<I>(bw, kBigElements / (q.N * H * q.ch.C) + 1);
      return rc::gen::map(size_up_to(w0, w0 + 31), [q, H](I W) { return assemble(q, H, W); });
    });
  });
}

enum class Tier { small, medium, big };

Problem assemble(const Params& q, I H, I W) {
  Problem p;
  p.op = q.op;
  p.input = {q.N, H, W, q.ch.C};
  p.filter = {q.KH, q.KW, q.ch.f_in, q.ch.f_out};
  p.stride_h = q.stride.first;
  p.stride_w = q.stride.second;
  p.dilation_h = q.dilation.first;
  p.dilation_w = q.dilation.second;
  p.padding = q.padding;
  p.format = q.format;
  p.dtype = q.dtype;
  return p;
}

Gen<uint64_t> seeds() {
  // Full-range (32-bit, readable in repro lines) whatever the size, and never shrunk.
  return rc::gen::noShrink(Gen<uint64_t>([](const rc::Random& random, int) {
    return rc::shrinkable::just<uint64_t>(rc::Random(random).next() & 0xffffffffu);
  }));
}

// ---------------------------------------------------------------------------------------------
// Invalid problems: a table of rules (kRules below), each breaking one rule of a valid problem.

/// splitmix64: the variant choices of an invalid problem (not shrunk).
struct Mix {
  uint64_t state;
  uint64_t next() { return splitmix64_next(state); }
  I below(I n) { return static_cast<I>(next() % static_cast<uint64_t>(n)); }
  template <class T>
  const T& of(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(below(static_cast<I>(v.size())))];
  }
};

using Item = std::pair<std::string, std::string>;

std::string dims_text(const std::vector<I>& d) {
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
  return s;
}

/// The canonical items of a problem's descriptor, in grammar order.
std::vector<Item> items_of(const Problem& p) {
  const std::string text = to_string(p);
  std::vector<Item> items;
  std::size_t start = text.find(':') + 1;
  while (start <= text.size()) {
    // Values never contain ',' or '='; padding's ':' is inside a value.
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const std::size_t eq = item.find('=');
    items.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    start = comma + 1;
  }
  return items;
}

std::string join(const std::string& op, const std::vector<Item>& items) {
  std::string s = op + ":";
  for (std::size_t i = 0; i < items.size(); ++i)
    s += (i ? "," : "") + items[i].first + "=" + items[i].second;
  return s;
}

std::size_t index_of(const std::vector<Item>& items, const std::string& key) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].first == key) return i;
  return 0;
}

/// Replaces one of the 'x'-separated numbers of a dims value.
std::string replace_component(const std::string& value, Mix& mix, const std::string& with) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    std::size_t x = value.find('x', start);
    parts.push_back(value.substr(start, x == std::string::npos ? x : x - start));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  parts[static_cast<std::size_t>(mix.below(static_cast<I>(parts.size())))] = with;
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "x" : "") + parts[i];
  return s;
}

/// What a rule breaks: the valid problem (semantic rules change it) and its descriptor's items
/// (grammar rules change them), with the variant choices.
struct Breaking {
  Problem p;
  Mix mix;
  std::string op;           // op_name(p.op)
  std::vector<Item> items;  // items_of(p)
  I pick(std::size_t n) { return mix.below(static_cast<I>(n)); }
  std::string text() const { return join(op, items); }
};

/// A broken problem: its descriptor, and the text that fills the rule's "{}" (if it has one).
struct Broken {
  std::string descriptor;
  std::string slot;
};

/// A semantic rule's result: the grammar is right, one rule of geometry() is broken.
Broken semantic(const Breaking& b, std::string slot = "") {
  return {to_string(b.p), std::move(slot)};
}

// --- grammar ---------------------------------------------------------------------------------

Broken unknown_op(Breaking& b) {
  const std::string bad = b.mix.of<std::string>({"conv3d", "Conv2D", "conv2d_backprop", "depthwise",
                                                 "conv2d_backprop_inputs", "conv2d_Transpose", "",
                                                 " conv2d", "DepthwiseConv2dNative"});
  return {join(bad, b.items), bad};
}

Broken no_colon(Breaking& b) {
  std::string s = to_string(b.p);
  s.erase(std::remove(s.begin(), s.end(), ':'), s.end());
  return {s, ""};
}

Broken no_keys(Breaking& b) {
  return {b.op + ":", ""};
}

Broken empty_item(Breaking& b) {
  std::vector<Item> with = b.items;
  with.insert(with.begin() + b.pick(b.items.size() + 1), {"", ""});
  std::string s = b.op + ":";
  for (std::size_t i = 0; i < with.size(); ++i)
    s += (i ? "," : "") + (with[i].first.empty() ? "" : with[i].first + "=" + with[i].second);
  return {s, ""};
}

Broken not_key_value(Breaking& b) {
  const std::size_t at = static_cast<std::size_t>(b.pick(b.items.size()));
  std::string s = b.op + ":";
  for (std::size_t i = 0; i < b.items.size(); ++i) {
    s += (i ? "," : "") + b.items[i].first + (i == at ? (b.mix.below(2) ? ":" : "") : "=") +
         b.items[i].second;
  }
  return {s, ""};
}

Broken unknown_key(Breaking& b) {
  const std::string bad =
      b.mix.of<std::string>({"strides", "pad", "data_format", "Input", "filters", "dilations",
                             "type", "kernel", "groups", " input"});
  if (b.mix.below(2)) {
    b.items[static_cast<std::size_t>(b.pick(b.items.size()))].first = bad;
  } else {
    b.items.insert(b.items.begin() + b.pick(b.items.size() + 1), {bad, "1"});
  }
  return {b.text(), bad};
}

Broken repeated_key(Breaking& b) {
  Item again = b.items[static_cast<std::size_t>(b.pick(b.items.size()))];
  b.items.insert(b.items.begin() + b.pick(b.items.size() + 1), again);
  return {b.text(), again.first};
}

Broken empty_value(Breaking& b) {
  Item& it = b.items[static_cast<std::size_t>(b.pick(b.items.size()))];
  it.second.clear();
  return {b.text(), it.first};
}

Broken missing_key(Breaking& b, const std::string& key) {
  b.items.erase(b.items.begin() + static_cast<std::ptrdiff_t>(index_of(b.items, key)));
  if (b.mix.below(2)) std::reverse(b.items.begin(), b.items.end());  // order is free
  return {b.text(), ""};
}
Broken missing_input(Breaking& b) {
  return missing_key(b, "input");
}
Broken missing_filter(Breaking& b) {
  return missing_key(b, "filter");
}

Broken wrong_dims(Breaking& b) {
  struct Key {
    const char* key;
    std::vector<I> dims;
    const char* form;
  };
  const Problem& p = b.p;
  const std::vector<Key> keys = {
      {"input", {p.input.begin(), p.input.end()}, "NxHxWxC"},
      {"filter", {p.filter.begin(), p.filter.end()}, is_depthwise(p.op) ? "RxSxCxM" : "RxSxCfxK"},
      {"stride", {p.stride_h, p.stride_w}, "SHxSW"},
      {"dilation", {p.dilation_h, p.dilation_w}, "DHxDW"}};
  const Key& k = b.mix.of(keys);
  std::vector<I> d = k.dims;
  if (b.mix.below(2) && d.size() > 1) {
    d.erase(d.begin() + b.pick(d.size()));
    if (b.mix.below(3) == 0 && d.size() > 1) d.pop_back();
  } else {
    d.insert(d.begin() + b.pick(d.size() + 1), 1 + b.mix.below(4));
  }
  b.items[index_of(b.items, k.key)].second = dims_text(d);
  return {b.text(), k.form};
}

// One number of a dims or padding value replaced by `bad`.
Broken bad_number(Breaking& b, const std::string& bad) {
  std::vector<std::string> keys = {"input", "filter", "stride", "dilation"};
  if (b.p.padding.kind == PaddingKind::EXPLICIT) keys.push_back("padding");
  const std::string key = b.mix.of(keys);
  std::string& value = b.items[index_of(b.items, key)].second;
  if (key == "padding") {
    const Padding& pad = b.p.padding;
    std::vector<std::string> pads = {std::to_string(pad.top), std::to_string(pad.bottom),
                                     std::to_string(pad.left), std::to_string(pad.right)};
    pads[static_cast<std::size_t>(b.mix.below(4))] = bad;
    value = pads[0] + ":" + pads[1] + ":" + pads[2] + ":" + pads[3];
  } else {
    value = replace_component(value, b.mix, bad);
  }
  return {b.text(), bad};
}
Broken non_integer(Breaking& b) {
  return bad_number(b, b.mix.of<std::string>({"2.5", "a", "1e3", "+1", "-", "--1", "3 ", " 3", "0.",
                                              "1_0", "\xd9\xa1"}));
}
Broken integer_overflow(Breaking& b) {
  return bad_number(b, b.mix.of<std::string>({"9223372036854775808", "99999999999999999999",
                                              "-9223372036854775809", "18446744073709551617",
                                              "100000000000000000000000000000"}));
}

// The value of `key` replaced by one of `bad`.
Broken bad_value(Breaking& b, const char* key, const std::vector<std::string>& bad) {
  b.items[index_of(b.items, key)].second = b.mix.of(bad);
  return {b.text(), ""};
}
Broken bad_padding(Breaking& b) {
  return bad_value(
      b, "padding",
      {"same", "valid", "Same", "EXPLICIT", "1:2:3", "1:2:3:4:5", "1", "SAME ", "0:0", "FULL"});
}
Broken bad_format(Breaking& b) {
  return bad_value(b, "format", {"nhwc", "nchw", "NCWH", "HWCN", "NHCW", "CHWN", "NC", "NHWC "});
}
Broken bad_dtype(Breaking& b) {
  return bad_value(b, "dtype",
                   {"float16", "fp32", "int64", "i64", "f8", "bfloat", "Float32", "int", "F32",
                    "i16", "uint8", "float32 "});
}

// --- semantics: the grammar is right, one rule of geometry() is broken -----------------------

Broken stride(Breaking& b) {
  const I bad = -b.mix.below(3);  // 0, -1, -2
  (b.mix.below(2) ? b.p.stride_h : b.p.stride_w) = bad;
  if (b.mix.below(4) == 0) b.p.stride_h = b.p.stride_w = bad;
  return semantic(b);
}

Broken dilation(Breaking& b) {
  const I bad = -b.mix.below(3);
  (b.mix.below(2) ? b.p.dilation_h : b.p.dilation_w) = bad;
  return semantic(b);
}

Broken negative_padding(Breaking& b) {
  Padding& pad = b.p.padding;
  if (pad.kind != PaddingKind::EXPLICIT) pad = Padding{PaddingKind::EXPLICIT, 0, 0, 0, 0};
  I* pads[] = {&pad.top, &pad.bottom, &pad.left, &pad.right};
  *pads[b.mix.below(4)] = -1 - b.mix.below(3);
  return semantic(b);
}

Broken negative_dim(Breaking& b) {
  const I i = b.mix.below(4), bad = -1 - b.mix.below(5);
  const bool input = b.mix.below(2);
  (input ? b.p.input : b.p.filter)[static_cast<std::size_t>(i)] = bad;
  return semantic(b, input ? "input" : "filter");
}

Broken zero_filter(Breaking& b) {
  b.p.filter[static_cast<std::size_t>(b.mix.below(2))] = 0;  // KH or KW
  return semantic(b);
}

Broken zero_filter_depth(Breaking& b) {
  b.p.filter[2] = 0;
  return semantic(b);
}

Broken zero_input_depth(Breaking& b) {
  b.p.input[3] = 0;
  return semantic(b);
}

Broken channel_mismatch(Breaking& b) {
  const I Cf = 2 + b.mix.below(4);
  b.p.filter[2] = Cf;
  b.p.input[3] = Cf * b.mix.below(3) + 1 + b.mix.below(Cf - 1);  // C % Cf in [1, Cf)
  return semantic(b);
}

Broken depthwise_mismatch(Breaking& b) {
  const I C = b.p.input[3];
  I other = C + 1 + b.mix.below(3);
  if (C > 0 && b.mix.below(2)) other = b.mix.below(C);  // 0 .. C-1
  b.p.filter[2] = other;
  return semantic(b);
}

Broken groups(Breaking& b) {
  const I G = 2 + b.mix.below(3), Cf = b.p.filter[2];
  b.p.input[3] = G * Cf;
  b.p.filter[3] = G * b.mix.below(3) + 1 + b.mix.below(G - 1);  // O % G in [1, G)
  return semantic(b);
}

Broken negative_output(Breaking& b) {
  // VALID or EXPLICIT with input + pads <= extent - 2*stride: out = (I + P - e + s) / s < 0.
  Problem& p = b.p;
  if (p.padding.kind == PaddingKind::SAME) p.padding.kind = PaddingKind::VALID;
  const bool rows = b.mix.below(2);
  const I P = p.padding.kind == PaddingKind::EXPLICIT
                  ? (rows ? p.padding.top + p.padding.bottom : p.padding.left + p.padding.right)
                  : 0;
  const I s = rows ? p.stride_h : p.stride_w;
  const I slack = b.mix.below(3);
  const I K = P + 2 * s + slack;  // dilation 1: extent K
  (rows ? p.dilation_h : p.dilation_w) = 1;
  p.filter[rows ? 0 : 1] = K;
  p.input[rows ? 1 : 2] = b.mix.below(slack + 1);  // in [0, K - P - 2s]
  return semantic(b);
}

Broken i32(Breaking& b) {
  b.p.dtype = DType::i32;
  return semantic(b);
}

Broken size_overflow(Breaking& b) {
  Problem& p = b.p;
  switch (b.mix.below(4)) {
    case 0: {  // an operand's element count (or its bytes) overflows
      p.padding.kind = PaddingKind::VALID;
      p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
      p.filter[0] = p.filter[1] = 1;
      const I big = I{1} << (52 + b.mix.below(11));  // big * 4096 >= 2^64
      p.input = b.mix.below(2) ? std::array<I, 4>{big, 64, 64, p.input[3]}
                               : std::array<I, 4>{1, big, 4096, p.input[3]};
      break;
    }
    case 1:  // the effective filter size (K - 1) * d + 1
      p.filter[0] = I{1} << 40;
      p.dilation_h = (I{1} << 30) + b.mix.below(100);
      break;
    case 2: {  // input plus explicit padding (rows keep the pads that made them valid)
      const Geometry g = geometry(p);
      p.padding = Padding{PaddingKind::EXPLICIT, g.pad_top, g.pad_bottom, 0, 0};
      p.padding.left = INT64_MAX / 2 + 1 + b.mix.below(3);
      p.padding.right = INT64_MAX / 2 + 1;
      break;
    }
    default:  // depthwise C * M, or a conv's filter tensor
      if (is_depthwise(p.op)) {
        p.input[3] = p.filter[2] = I{1} << 40;
        p.filter[3] = I{1} << 30;
      } else {
        p.filter[3] = I{1} << 62;
        p.filter[2] = p.input[3];            // one group
        p.filter[0] = 2 + b.mix.below(3);    // KH * KW * Cf * O >= 2^63
        p.padding.kind = PaddingKind::SAME;  // valid for any taps
      }
      break;
  }
  return semantic(b);
}

/// The ops a rule's construction starts from.
enum class From { any_op, grouped_conv, depthwise, no_i32 };

std::vector<Op> ops_from(From f) {
  std::vector<Op> ops;
  for (const OpTraits& t : kOpTraits) {
    const bool takes = f == From::grouped_conv ? !t.depthwise
                       : f == From::depthwise  ? t.depthwise
                       : f == From::no_i32     ? !t.takes_i32
                                               : true;
    if (takes) ops.push_back(t.op);
  }
  return ops;
}

/// One rule: its id, the ops it starts from, how it breaks a valid problem, and the words the
/// refusal must contain ("{}" stands for the text the breaking chose). Adding a rule is one row.
struct Rule {
  const char* id;
  From from;
  Broken (*make)(Breaking&);
  const char* words;
};

// clang-format off
const Rule kRules[] = {
    // grammar
    {"unknown_op",         From::any_op,       unknown_op,         "unknown op '{}'"},
    {"no_colon",           From::any_op,       no_colon,           "no ':' found"},
    {"no_keys",            From::any_op,       no_keys,            "no keys after ':'"},
    {"empty_item",         From::any_op,       empty_item,         "empty item between commas"},
    {"not_key_value",      From::any_op,       not_key_value,      "is not key=value"},
    {"unknown_key",        From::any_op,       unknown_key,        "unknown key '{}'"},
    {"repeated_key",       From::any_op,       repeated_key,       "key '{}' given twice"},
    {"empty_value",        From::any_op,       empty_value,        "key '{}' has an empty value"},
    {"missing_input",      From::any_op,       missing_input,      "missing required key 'input'"},
    {"missing_filter",     From::any_op,       missing_filter,     "missing required key 'filter'"},
    {"wrong_dims",         From::any_op,       wrong_dims,         "expected {}"},
    {"non_integer",        From::any_op,       non_integer,        "expected an integer, got '{}'"},
    {"integer_overflow",   From::any_op,       integer_overflow,   "integer '{}' overflows 64 bits"},
    {"bad_padding",        From::any_op,       bad_padding,        "expected VALID, SAME or T:B:L:R"},
    {"bad_format",         From::any_op,       bad_format,         "expected NHWC or NCHW"},
    {"bad_dtype",          From::any_op,       bad_dtype,          "expected f16, bf16, f32, f64 or i32"},
    // semantics
    {"stride",             From::any_op,       stride,             "Row and column strides should be larger than 0"},
    {"dilation",           From::any_op,       dilation,           "Dilated rates should be larger than 0"},
    {"negative_padding",   From::any_op,       negative_padding,   "All elements of explicit_paddings must be nonnegative"},
    {"negative_dim",       From::any_op,       negative_dim,       "of {} must be >= 0"},
    {"zero_filter",        From::any_op,       zero_filter,        "filter must not have zero elements"},
    {"zero_filter_depth",  From::grouped_conv, zero_filter_depth,  "filter depth must be"},
    {"zero_input_depth",   From::grouped_conv, zero_input_depth,   "input depth 0 gives zero groups"},
    {"channel_mismatch",   From::grouped_conv, channel_mismatch,   "input depth must be evenly divisible by filter depth"},
    {"depthwise_mismatch", From::depthwise,    depthwise_mismatch, "input and filter must have the same depth"},
    {"groups",             From::grouped_conv, groups,             "output depth must be evenly divisible by number of groups"},
    {"negative_output",    From::any_op,       negative_output,    "Computed output size would be negative"},
    {"i32",                From::no_i32,       i32,                "dtype i32 is not allowed"},
    {"size_overflow",      From::any_op,       size_overflow,      "overflows 64 bits"},
};
// clang-format on

InvalidProblem make_invalid(const Rule& rule, const Problem& p, uint64_t seed) {
  Breaking b{p, Mix{seed}, op_name(p.op), items_of(p)};
  const Broken broken = rule.make(b);
  std::string words = rule.words;
  if (const std::size_t at = words.find("{}"); at != std::string::npos)
    words.replace(at, 2, broken.slot);
  return {broken.descriptor, words};
}

}  // namespace

// ---------------------------------------------------------------------------------------------

namespace {

rc::Gen<Problem> small_problem(Op op) {
  return rc::gen::mapcat(params(op), [](const Params& q) {
    return rc::gen::apply([q](I H, I W) { return assemble(q, H, W); },
                          spatial(q.KH, q.dilation.first, q.stride.first, q.padding.kind,
                                  q.padding.top, q.padding.bottom),
                          spatial(q.KW, q.dilation.second, q.stride.second, q.padding.kind,
                                  q.padding.left, q.padding.right));
  });
}

}  // namespace

rc::Gen<Problem> valid_problem(Op op) {
  return rc::gen::mapcat(pick<Tier>({{100 - kMediumTierPercent - kBigTierPercent, Tier::small},
                                     {kMediumTierPercent, Tier::medium},
                                     {kBigTierPercent, Tier::big}}),
                         [op](Tier tier) {
                           return tier == Tier::small    ? small_problem(op)
                                  : tier == Tier::medium ? medium_problem(op)
                                                         : big_problem(op);
                         });
}

rc::Gen<Problem> valid_problem() {
  return rc::gen::mapcat(
      rc::gen::elementOf(std::vector<Op>(std::begin(kAllOps), std::end(kAllOps))),
      [](Op op) { return valid_problem(op); });
}

// Every fill of the table with a fuzz weight, by it; exact (the first row) shrinks first.
rc::Gen<FillKind> fuzz_fills() {
  std::vector<std::pair<int, FillKind>> weighted;
  for (const FillInfo& f : fills())
    if (f.fuzz_weight > 0) weighted.emplace_back(f.fuzz_weight, f.kind);
  return pick<FillKind>(weighted);
}

rc::Gen<Case> any_case() {
  return rc::gen::apply(
      [](Problem p, uint64_t seed, FillKind fill) {
        return Case{std::move(p), seed, fill};
      },
      valid_problem(), seeds(), fuzz_fills());
}

rc::Gen<InvalidProblem> invalid_problem() {
  std::vector<const Rule*> rules;
  for (const Rule& r : kRules) rules.push_back(&r);
  return rc::gen::mapcat(rc::gen::elementOf(rules), [](const Rule* rule) {
    return rc::gen::mapcat(rc::gen::elementOf(ops_from(rule->from)), [rule](Op op) {
      return rc::gen::apply(
          [rule](const Problem& p, uint64_t seed) { return make_invalid(*rule, p, seed); },
          valid_problem(op), seeds());
    });
  });
}

}  // namespace convcheck::gen
