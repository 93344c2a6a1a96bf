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
#include "properties/generators.h"

#include <algorithm>
#include <array>
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
// Invalid problems.

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

enum class Rule {
  // grammar
  unknown_op,
  no_colon,
  no_keys,
  empty_item,
  not_key_value,
  unknown_key,
  repeated_key,
  empty_value,
  missing_input,
  missing_filter,
  wrong_dims,
  non_integer,
  integer_overflow,
  bad_padding,
  bad_format,
  bad_dtype,
  // semantics
  stride,
  dilation,
  negative_padding,
  negative_dim,
  zero_filter,
  zero_filter_depth,
  zero_input_depth,
  channel_mismatch,
  depthwise_mismatch,
  groups,
  negative_output,
  i32,
  size_overflow,
};

constexpr Rule kRules[] = {
    Rule::unknown_op,
    Rule::no_colon,
    Rule::no_keys,
    Rule::empty_item,
    Rule::not_key_value,
    Rule::unknown_key,
    Rule::repeated_key,
    Rule::empty_value,
    Rule::missing_input,
    Rule::missing_filter,
    Rule::wrong_dims,
    Rule::non_integer,
    Rule::integer_overflow,
    Rule::bad_padding,
    Rule::bad_format,
    Rule::bad_dtype,
    Rule::stride,
    Rule::dilation,
    Rule::negative_padding,
    Rule::negative_dim,
    Rule::zero_filter,
    Rule::zero_filter_depth,
    Rule::zero_input_depth,
    Rule::channel_mismatch,
    Rule::depthwise_mismatch,
    Rule::groups,
    Rule::negative_output,
    Rule::i32,
    Rule::size_overflow,
};

/// The ops a rule's construction starts from.
std::vector<Op> ops_for(Rule r) {
  switch (r) {
    case Rule::zero_filter_depth:
    case Rule::zero_input_depth:
    case Rule::channel_mismatch:
    case Rule::groups:
      return {Op::conv2d, Op::conv2d_backprop_input, Op::conv2d_backprop_filter,
              Op::conv2d_transpose};
    case Rule::depthwise_mismatch:
      return {Op::depthwise_conv2d, Op::depthwise_conv2d_backprop_input,
              Op::depthwise_conv2d_backprop_filter};
    case Rule::i32:
      return {Op::conv2d_backprop_filter, Op::depthwise_conv2d, Op::depthwise_conv2d_backprop_input,
              Op::depthwise_conv2d_backprop_filter};
    default:
      return std::vector<Op>(std::begin(kAllOps), std::end(kAllOps));
  }
}

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

InvalidProblem make_invalid(Rule rule, Problem p, uint64_t seed) {
  Mix mix{seed};
  const std::string op = op_name(p.op);
  const bool dw = is_depthwise(p.op);
  auto text = [&](const std::vector<Item>& items) { return join(op, items); };
  auto semantic = [&](const std::string& words) { return InvalidProblem{to_string(p), words}; };
  std::vector<Item> items = items_of(p);
  switch (rule) {
    case Rule::unknown_op: {
      const std::string bad = mix.of<std::string>(
          {"conv3d", "Conv2D", "conv2d_backprop", "depthwise", "conv2d_backprop_inputs",
           "conv2d_Transpose", "", " conv2d", "DepthwiseConv2dNative"});
      return {join(bad, items), "unknown op '" + bad + "'"};
    }
    case Rule::no_colon: {
      std::string s = to_string(p);
      s.erase(std::remove(s.begin(), s.end(), ':'), s.end());
      return {s, "no ':' found"};
    }
    case Rule::no_keys:
      return {op + ":", "no keys after ':'"};
    case Rule::empty_item: {
      std::vector<Item> with = items;
      with.insert(with.begin() + mix.below(static_cast<I>(items.size()) + 1), {"", ""});
      std::string s = op + ":";
      for (std::size_t i = 0; i < with.size(); ++i) {
        s += (i ? "," : "") + (with[i].first.empty() ? "" : with[i].first + "=" + with[i].second);
      }
      return {s, "empty item between commas"};
    }
    case Rule::not_key_value: {
      const std::size_t at = static_cast<std::size_t>(mix.below(static_cast<I>(items.size())));
      std::string s = op + ":";
      for (std::size_t i = 0; i < items.size(); ++i) {
        s += (i ? "," : "") + items[i].first + (i == at ? (mix.below(2) ? ":" : "") : "=") +
             items[i].second;
      }
      return {s, "is not key=value"};
    }
    case Rule::unknown_key: {
      const std::string bad =
          mix.of<std::string>({"strides", "pad", "data_format", "Input", "filters", "dilations",
                               "type", "kernel", "groups", " input"});
      if (mix.below(2)) {
        items[static_cast<std::size_t>(mix.below(static_cast<I>(items.size())))].first = bad;
      } else {
        items.insert(items.begin() + mix.below(static_cast<I>(items.size()) + 1), {bad, "1"});
      }
      return {text(items), "unknown key '" + bad + "'"};
    }
    case Rule::repeated_key: {
      Item again = items[static_cast<std::size_t>(mix.below(static_cast<I>(items.size())))];
      items.insert(items.begin() + mix.below(static_cast<I>(items.size()) + 1), again);
      return {text(items), "key '" + again.first + "' given twice"};
    }
    case Rule::empty_value: {
      Item& it = items[static_cast<std::size_t>(mix.below(static_cast<I>(items.size())))];
      it.second.clear();
      return {text(items), "key '" + it.first + "' has an empty value"};
    }
    case Rule::missing_input:
    case Rule::missing_filter: {
      const std::string key = rule == Rule::missing_input ? "input" : "filter";
      items.erase(items.begin() + static_cast<std::ptrdiff_t>(index_of(items, key)));
      if (mix.below(2)) std::reverse(items.begin(), items.end());  // order is free
      return {text(items), "missing required key '" + key + "'"};
    }
    case Rule::wrong_dims: {
      struct Key {
        const char* key;
        std::vector<I> dims;
        const char* form;
      };
      const std::vector<Key> keys = {
          {"input", {p.input.begin(), p.input.end()}, "NxHxWxC"},
          {"filter", {p.filter.begin(), p.filter.end()}, dw ? "RxSxCxM" : "RxSxCfxK"},
          {"stride", {p.stride_h, p.stride_w}, "SHxSW"},
          {"dilation", {p.dilation_h, p.dilation_w}, "DHxDW"}};
      const Key& k = mix.of(keys);
      std::vector<I> d = k.dims;
      if (mix.below(2) && d.size() > 1) {
        d.erase(d.begin() + mix.below(static_cast<I>(d.size())));
        if (mix.below(3) == 0 && d.size() > 1) d.pop_back();
      } else {
        d.insert(d.begin() + mix.below(static_cast<I>(d.size()) + 1), 1 + mix.below(4));
      }
      items[index_of(items, k.key)].second = dims_text(d);
      return {text(items), std::string("expected ") + k.form};
    }
    case Rule::non_integer:
    case Rule::integer_overflow: {
      const std::string bad =
          rule == Rule::non_integer
              ? mix.of<std::string>(
                    {"2.5", "a", "1e3", "+1", "-", "--1", "3 ", " 3", "0.", "1_0", "\xd9\xa1"})
              : mix.of<std::string>({"9223372036854775808", "99999999999999999999",
                                     "-9223372036854775809", "18446744073709551617",
                                     "100000000000000000000000000000"});
      std::vector<std::string> keys = {"input", "filter", "stride", "dilation"};
      if (p.padding.kind == PaddingKind::EXPLICIT) keys.push_back("padding");
      const std::string key = mix.of(keys);
      std::string& value = items[index_of(items, key)].second;
      if (key == "padding") {
        std::vector<std::string> pads = {
            std::to_string(p.padding.top), std::to_string(p.padding.bottom),
            std::to_string(p.padding.left), std::to_string(p.padding.right)};
        pads[static_cast<std::size_t>(mix.below(4))] = bad;
        value = pads[0] + ":" + pads[1] + ":" + pads[2] + ":" + pads[3];
      } else {
        value = replace_component(value, mix, bad);
      }
      return {text(items), rule == Rule::non_integer ? "expected an integer, got '" + bad + "'"
                                                     : "integer '" + bad + "' overflows 64 bits"};
    }
    case Rule::bad_padding:
      items[index_of(items, "padding")].second = mix.of<std::string>(
          {"same", "valid", "Same", "EXPLICIT", "1:2:3", "1:2:3:4:5", "1", "SAME ", "0:0", "FULL"});
      return {text(items), "expected VALID, SAME or T:B:L:R"};
    case Rule::bad_format:
      items[index_of(items, "format")].second =
          mix.of<std::string>({"nhwc", "nchw", "NCWH", "HWCN", "NHCW", "CHWN", "NC", "NHWC "});
      return {text(items), "expected NHWC or NCHW"};
    case Rule::bad_dtype:
      items[index_of(items, "dtype")].second =
          mix.of<std::string>({"float16", "fp32", "int64", "i64", "f8", "bfloat", "Float32", "int",
                               "F32", "i16", "uint8", "float32 "});
      return {text(items), "expected f16, bf16, f32, f64 or i32"};

    // --- semantics: the grammar is right, one rule of geometry() is broken -------------------
    case Rule::stride: {
      const I bad = -mix.below(3);  // 0, -1, -2
      (mix.below(2) ? p.stride_h : p.stride_w) = bad;
      if (mix.below(4) == 0) p.stride_h = p.stride_w = bad;
      return semantic("Row and column strides should be larger than 0");
    }
    case Rule::dilation: {
      const I bad = -mix.below(3);
      (mix.below(2) ? p.dilation_h : p.dilation_w) = bad;
      return semantic("Dilated rates should be larger than 0");
    }
    case Rule::negative_padding: {
      if (p.padding.kind != PaddingKind::EXPLICIT) {
        p.padding = Padding{PaddingKind::EXPLICIT, 0, 0, 0, 0};
      }
      I* pads[] = {&p.padding.top, &p.padding.bottom, &p.padding.left, &p.padding.right};
      *pads[mix.below(4)] = -1 - mix.below(3);
      return semantic("All elements of explicit_paddings must be nonnegative");
    }
    case Rule::negative_dim: {
      const I i = mix.below(4), bad = -1 - mix.below(5);
      if (mix.below(2)) {
        p.input[static_cast<std::size_t>(i)] = bad;
        return semantic("of input must be >= 0");
      }
      p.filter[static_cast<std::size_t>(i)] = bad;
      return semantic("of filter must be >= 0");
    }
    case Rule::zero_filter:
      p.filter[static_cast<std::size_t>(mix.below(2))] = 0;  // KH or KW
      return semantic("filter must not have zero elements");
    case Rule::zero_filter_depth:
      p.filter[2] = 0;
      return semantic("filter depth must be");
    case Rule::zero_input_depth:
      p.input[3] = 0;
      return semantic("input depth 0 gives zero groups");
    case Rule::channel_mismatch: {
      const I Cf = 2 + mix.below(4);
      p.filter[2] = Cf;
      p.input[3] = Cf * mix.below(3) + 1 + mix.below(Cf - 1);  // C % Cf in [1, Cf)
      return semantic("input depth must be evenly divisible by filter depth");
    }
    case Rule::depthwise_mismatch: {
      const I C = p.input[3];
      I other = C + 1 + mix.below(3);
      if (C > 0 && mix.below(2)) other = mix.below(C);  // 0 .. C-1
      p.filter[2] = other;
      return semantic("input and filter must have the same depth");
    }
    case Rule::groups: {
      const I G = 2 + mix.below(3), Cf = p.filter[2];
      p.input[3] = G * Cf;
      p.filter[3] = G * mix.below(3) + 1 + mix.below(G - 1);  // O % G in [1, G)
      return semantic("output depth must be evenly divisible by number of groups");
    }
    case Rule::negative_output: {
      // VALID or EXPLICIT with input + pads <= extent - 2*stride: out = (I + P - e + s) / s < 0.
      if (p.padding.kind == PaddingKind::SAME) p.padding.kind = PaddingKind::VALID;
      const bool rows = mix.below(2);
      const I P = p.padding.kind == PaddingKind::EXPLICIT
                      ? (rows ? p.padding.top + p.padding.bottom : p.padding.left + p.padding.right)
                      : 0;
      const I s = rows ? p.stride_h : p.stride_w;
      const I slack = mix.below(3);
      const I K = P + 2 * s + slack;  // dilation 1: extent K
      (rows ? p.dilation_h : p.dilation_w) = 1;
      p.filter[rows ? 0 : 1] = K;
      p.input[rows ? 1 : 2] = mix.below(slack + 1);  // in [0, K - P - 2s]
      return semantic("Computed output size would be negative");
    }
    case Rule::i32:
      p.dtype = DType::i32;
      return semantic("dtype i32 is not allowed");
    case Rule::size_overflow: {
      switch (mix.below(4)) {
        case 0: {  // an operand's element count (or its bytes) overflows
          p.padding.kind = PaddingKind::VALID;
          p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = 1;
          p.filter[0] = p.filter[1] = 1;
          const I big = I{1} << (52 + mix.below(11));  // big * 4096 >= 2^64
          p.input = mix.below(2) ? std::array<I, 4>{big, 64, 64, p.input[3]}
                                 : std::array<I, 4>{1, big, 4096, p.input[3]};
          break;
        }
        case 1:  // the effective filter size (K - 1) * d + 1
          p.filter[0] = I{1} << 40;
          p.dilation_h = (I{1} << 30) + mix.below(100);
          break;
        case 2: {  // input plus explicit padding (rows keep the pads that made them valid)
          const Geometry g = geometry(p);
          p.padding = Padding{PaddingKind::EXPLICIT, g.pad_top, g.pad_bottom, 0, 0};
          p.padding.left = INT64_MAX / 2 + 1 + mix.below(3);
          p.padding.right = INT64_MAX / 2 + 1;
          break;
        }
        default:  // depthwise C * M, or a conv's filter tensor
          if (dw) {
            p.input[3] = p.filter[2] = I{1} << 40;
            p.filter[3] = I{1} << 30;
          } else {
            p.filter[3] = I{1} << 62;
            p.filter[2] = p.input[3];            // one group
            p.filter[0] = 2 + mix.below(3);      // KH * KW * Cf * O >= 2^63
            p.padding.kind = PaddingKind::SAME;  // valid for any taps
          }
          break;
      }
      return semantic("overflows 64 bits");
    }
  }
  return semantic("?");
}

}  // namespace

// ---------------------------------------------------------------------------------------------

rc::Gen<Problem> valid_problem(Op op) {
  return rc::gen::mapcat(params(op), [](const Params& q) {
    return rc::gen::apply([q](I H, I W) { return assemble(q, H, W); },
                          spatial(q.KH, q.dilation.first, q.stride.first, q.padding.kind,
                                  q.padding.top, q.padding.bottom),
                          spatial(q.KW, q.dilation.second, q.stride.second, q.padding.kind,
                                  q.padding.left, q.padding.right));
  });
}

rc::Gen<Problem> valid_problem() {
  return rc::gen::mapcat(
      rc::gen::elementOf(std::vector<Op>(std::begin(kAllOps), std::end(kAllOps))),
      [](Op op) { return valid_problem(op); });
}

rc::Gen<Case> any_case() {
  return rc::gen::apply(
      [](Problem p, uint64_t seed, FillKind fill) {
        return Case{std::move(p), seed, fill};
      },
      valid_problem(), seeds(),
      // exact shrinks first; order = plainest first.
      pick<FillKind>({{40, FillKind::exact},
                      {15, FillKind::ramp},
                      {25, FillKind::real},
                      {10, FillKind::cancel},
                      {10, FillKind::special}}));
}

rc::Gen<InvalidProblem> invalid_problem() {
  return rc::gen::mapcat(
      rc::gen::elementOf(std::vector<Rule>(std::begin(kRules), std::end(kRules))), [](Rule rule) {
        return rc::gen::mapcat(rc::gen::elementOf(ops_for(rule)), [rule](Op op) {
          return rc::gen::apply(
              [rule](const Problem& p, uint64_t seed) { return make_invalid(rule, p, seed); },
              valid_problem(op), seeds());
        });
      });
}

}  // namespace convcheck::gen
