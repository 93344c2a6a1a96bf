#include "core/problem.h"

#include <cctype>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace convcheck {

namespace {

constexpr const char* kKeys[] = {"input",   "filter", "stride", "dilation",
                                 "padding", "format", "dtype"};

std::string join_ops() {
  std::string s;
  for (const OpTraits& o : kOpTraits) s += (s.empty() ? "" : ", ") + std::string(o.name);
  return s;
}

// Text from the user, made safe for a terminal and short enough for a message: control bytes
// become \xNN (UTF-8 and other bytes >= 0x80 are kept), and the text is cut after `max_len`.
std::string shown(std::string_view s, std::size_t max_len = 200) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < max_len; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max_len) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t pos = s.find(sep, start);
    out.push_back(
        s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return out;
    start = pos + 1;
  }
}

// A decimal integer with an optional leading '-', no spaces; overflow is an error.
int64_t parse_int(std::string_view s, const std::string& what) {
  std::string_view digits = s;
  bool negative = false;
  if (!digits.empty() && digits[0] == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  if (digits.empty()) throw InvalidArgument(what + ": expected an integer, got '" + shown(s) + "'");
  int64_t v = 0;
  for (char ch : digits) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) {
      throw InvalidArgument(what + ": expected an integer, got '" + shown(s) + "'");
    }
    if (v > (INT64_MAX - (ch - '0')) / 10) {
      throw InvalidArgument(what + ": integer '" + shown(s) + "' overflows 64 bits");
    }
    v = v * 10 + (ch - '0');
  }
  return negative ? -v : v;
}

template <std::size_t K>
std::array<int64_t, K> parse_dims(std::string_view value, const char* key, const char* form) {
  std::vector<std::string_view> parts = split(value, 'x');
  if (parts.size() != K) {
    throw InvalidArgument(std::string(key) + "=" + shown(value) + ": expected " + form + " (" +
                          std::to_string(K) + " integers separated by 'x'), got " +
                          std::to_string(parts.size()));
  }
  std::array<int64_t, K> out{};
  for (std::size_t i = 0; i < K; ++i)
    out[i] = parse_int(parts[i], std::string(key) + "=" + shown(value));
  return out;
}

bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
bool checked_add(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

std::string dims_string(const std::array<int64_t, 4>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]) + "x" +
         std::to_string(d[3]);
}

std::string padding_string(const Padding& p) {
  switch (p.kind) {
    case PaddingKind::VALID:
      return "VALID";
    case PaddingKind::SAME:
      return "SAME";
    case PaddingKind::EXPLICIT:
      break;
  }
  return std::to_string(p.top) + ":" + std::to_string(p.bottom) + ":" + std::to_string(p.left) +
         ":" + std::to_string(p.right);
}

struct Window {
  int64_t out, pad_before, pad_after, eff;
  int64_t padded;  // the extent the window slides over: input plus both pads
};

std::string bound_text() {
  return "2^60 = " + std::to_string(kMaxExtent);
}

// TF's GetWindowedOutputSizeVerbose (spec B §2.1): truncating division, SAME's odd element after,
// negative output size an error, zero allowed. Computed so that no intermediate overflows: TF's
// (in + pads - eff + s) / s and (in + s - 1) / s are rewritten in forms that stay in range for any
// stride, so a stride larger than the input gives output 1 (or 0), as it does in TF.
Window windowed_output(const std::string& label, int64_t in, int64_t k, int64_t d, int64_t s,
                       const Padding& pad, int64_t explicit_before, int64_t explicit_after) {
  Window w{};
  int64_t span;
  if (!checked_mul(k - 1, d, &span) || !checked_add(span, 1, &w.eff)) {
    throw InvalidArgument(label + ": effective filter size (" + std::to_string(k) + " - 1) * " +
                          std::to_string(d) + " + 1 overflows 64 bits");
  }
  int64_t& padded = w.padded;
  padded = in;
  switch (pad.kind) {
    case PaddingKind::VALID:
    case PaddingKind::EXPLICIT: {
      w.pad_before = pad.kind == PaddingKind::EXPLICIT ? explicit_before : 0;
      w.pad_after = pad.kind == PaddingKind::EXPLICIT ? explicit_after : 0;
      if (!checked_add(in, w.pad_before, &padded) || !checked_add(padded, w.pad_after, &padded)) {
        throw InvalidArgument(label + ": input size " + std::to_string(in) + " plus padding " +
                              std::to_string(w.pad_before) + ":" + std::to_string(w.pad_after) +
                              " overflows 64 bits");
      }
      // (padded - eff + s) / s, truncating toward zero as TF does; padded >= 0 and eff >= 1, so
      // the difference cannot overflow, and adding s to a negative difference cannot either.
      const int64_t diff = padded - w.eff;
      w.out = diff >= 0 ? diff / s + 1 : (diff + s) / s;
      break;
    }
    case PaddingKind::SAME: {
      w.out = in == 0 ? 0 : (in - 1) / s + 1;  // (in + s - 1) / s
      // (out - 1) * s <= in - 1, so needed <= eff - 1 and nothing overflows.
      const int64_t needed = w.eff - in + (w.out > 0 ? (w.out - 1) * s : -s);
      const int64_t total = needed > 0 ? needed : 0;
      w.pad_before = total / 2;
      w.pad_after = total - w.pad_before;
      if (!checked_add(in, total, &padded)) {
        throw InvalidArgument(label + ": input size " + std::to_string(in) + " plus SAME padding " +
                              std::to_string(total) + " overflows 64 bits");
      }
      break;
    }
  }
  if (w.out < 0) {
    throw InvalidArgument(label + ": Computed output size would be negative: " +
                          std::to_string(w.out) + " [input_size: " + std::to_string(in) +
                          ", effective_filter_size: " + std::to_string(w.eff) +
                          ", stride: " + std::to_string(s) + "]");
  }
  return w;
}

}  // namespace

const char* format_name(Format f) {
  return f == Format::NHWC ? "NHWC" : "NCHW";
}

bool Padding::operator==(const Padding& o) const {
  if (kind != o.kind) return false;
  if (kind != PaddingKind::EXPLICIT) return true;
  return top == o.top && bottom == o.bottom && left == o.left && right == o.right;
}

bool Problem::operator==(const Problem& o) const {
  return op == o.op && input == o.input && filter == o.filter && stride_h == o.stride_h &&
         stride_w == o.stride_w && dilation_h == o.dilation_h && dilation_w == o.dilation_w &&
         padding == o.padding && format == o.format && dtype == o.dtype;
}

Problem parse_problem(std::string_view text) {
  const std::string whole = shown(text, 300);
  std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    throw InvalidArgument("descriptor '" + whole +
                          "': expected <op>:<key>=<value>[,<key>=<value>]..., no ':' found");
  }
  Problem p;
  std::string_view op_text = text.substr(0, colon);
  std::optional<Op> op = parse_op(op_text);
  if (!op) {
    throw InvalidArgument("descriptor '" + whole + "': unknown op '" + shown(op_text) +
                          "'; expected one of " + join_ops());
  }
  p.op = *op;
  bool seen[std::size(kKeys)] = {};
  std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) throw InvalidArgument("descriptor '" + whole + "': no keys after ':'");
  for (std::string_view item : split(rest, ',')) {
    std::size_t eq = item.find('=');
    if (item.empty())
      throw InvalidArgument("descriptor '" + whole + "': empty item between commas");
    if (eq == std::string_view::npos) {
      throw InvalidArgument("descriptor '" + whole + "': item '" + shown(item) +
                            "' is not key=value");
    }
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    std::size_t k = 0;
    while (k < std::size(kKeys) && key != kKeys[k]) ++k;
    if (k == std::size(kKeys)) {
      throw InvalidArgument("descriptor '" + whole + "': unknown key '" + shown(key) +
                            "'; expected input, filter, stride, dilation, padding, format, dtype");
    }
    if (seen[k])
      throw InvalidArgument("descriptor '" + whole + "': key '" + shown(key) + "' given twice");
    seen[k] = true;
    if (value.empty()) {
      throw InvalidArgument("descriptor '" + whole + "': key '" + shown(key) +
                            "' has an empty value");
    }
    const std::string where = "descriptor '" + whole + "': ";
    try {
      if (key == "input") {
        p.input = parse_dims<4>(value, "input", "NxHxWxC");
      } else if (key == "filter") {
        p.filter = parse_dims<4>(value, "filter", is_depthwise(p.op) ? "RxSxCxM" : "RxSxCfxK");
      } else if (key == "stride") {
        auto s = parse_dims<2>(value, "stride", "SHxSW");
        p.stride_h = s[0];
        p.stride_w = s[1];
      } else if (key == "dilation") {
        auto d = parse_dims<2>(value, "dilation", "DHxDW");
        p.dilation_h = d[0];
        p.dilation_w = d[1];
      } else if (key == "padding") {
        if (value == "VALID") {
          p.padding.kind = PaddingKind::VALID;
        } else if (value == "SAME") {
          p.padding.kind = PaddingKind::SAME;
        } else {
          std::vector<std::string_view> parts = split(value, ':');
          if (parts.size() != 4) {
            throw InvalidArgument(
                "padding=" + shown(value) +
                ": expected VALID, SAME or T:B:L:R (4 integers separated by ':')");
          }
          p.padding.kind = PaddingKind::EXPLICIT;
          const std::string what = "padding=" + shown(value);
          p.padding.top = parse_int(parts[0], what);
          p.padding.bottom = parse_int(parts[1], what);
          p.padding.left = parse_int(parts[2], what);
          p.padding.right = parse_int(parts[3], what);
        }
      } else if (key == "format") {
        if (value == "NHWC") {
          p.format = Format::NHWC;
        } else if (value == "NCHW") {
          p.format = Format::NCHW;
        } else {
          throw InvalidArgument("format=" + shown(value) + ": expected NHWC or NCHW");
        }
      } else {  // dtype
        std::optional<DType> t = parse_dtype(value);
        if (!t) {
          throw InvalidArgument("dtype=" + shown(value) +
                                ": expected f16, bf16, f32, f64 or i32 (or half, bfloat16, "
                                "float32, float64, int32)");
        }
        p.dtype = *t;
      }
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).rfind("descriptor '", 0) == 0) throw;
      throw InvalidArgument(where + e.what());
    }
  }
  if (!seen[0])
    throw InvalidArgument("descriptor '" + whole + "': missing required key 'input' (NxHxWxC)");
  if (!seen[1]) {
    throw InvalidArgument("descriptor '" + whole + "': missing required key 'filter' (" +
                          std::string(is_depthwise(p.op) ? "RxSxCxM" : "RxSxCfxK") + ")");
  }
  return p;
}

std::string to_string(const Problem& p) {
  std::ostringstream os;
  os << op_name(p.op) << ":input=" << dims_string(p.input) << ",filter=" << dims_string(p.filter)
     << ",stride=" << p.stride_h << "x" << p.stride_w << ",dilation=" << p.dilation_h << "x"
     << p.dilation_w << ",padding=" << padding_string(p.padding)
     << ",format=" << format_name(p.format) << ",dtype=" << dtype_name(p.dtype);
  return os.str();
}

namespace {

// Part A.3: dtype, signs, strides, dilations, explicit pads and an empty filter (TF's words).
void check_scalars(const Problem& p, const std::string& label) {
  const bool depthwise = is_depthwise(p.op);
  if (!op_takes_dtype(p.op, p.dtype)) {
    throw InvalidArgument(label + ": dtype " + dtype_name(p.dtype) + " is not allowed: TF's " +
                          op_tf_name(p.op) + " takes T in {half, bfloat16, float32, float64}");
  }
  static const char* kInputDims[] = {"N", "H", "W", "C"};
  static const char* kFilterDims[] = {"KH", "KW", "in_depth", "out_depth"};
  static const char* kDepthwiseFilterDims[] = {"KH", "KW", "in_depth", "depth_multiplier"};
  for (int i = 0; i < 4; ++i) {
    if (p.input[i] < 0) {
      throw InvalidArgument(label + ": Dimension " + std::to_string(i) + " (" + kInputDims[i] +
                            ") of input must be >= 0, got " + std::to_string(p.input[i]));
    }
    if (p.filter[i] < 0) {
      throw InvalidArgument(label + ": Dimension " + std::to_string(i) + " (" +
                            (depthwise ? kDepthwiseFilterDims : kFilterDims)[i] +
                            ") of filter must be >= 0, got " + std::to_string(p.filter[i]));
    }
  }
  if (p.stride_h <= 0 || p.stride_w <= 0) {
    throw InvalidArgument(label +
                          ": Row and column strides should be larger than 0, got stride = " +
                          std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w));
  }
  if (p.dilation_h <= 0 || p.dilation_w <= 0) {
    throw InvalidArgument(label + ": Dilated rates should be larger than 0, got dilation = " +
                          std::to_string(p.dilation_h) + "x" + std::to_string(p.dilation_w));
  }
  if (p.padding.kind == PaddingKind::EXPLICIT &&
      (p.padding.top < 0 || p.padding.bottom < 0 || p.padding.left < 0 || p.padding.right < 0)) {
    throw InvalidArgument(
        label + ": All elements of explicit_paddings must be nonnegative, got padding = " +
        padding_string(p.padding));
  }
  if (p.filter[0] == 0 || p.filter[1] == 0 || (p.op == Op::conv2d && p.filter[3] == 0)) {
    throw InvalidArgument(label +
                          ": filter must not have zero elements (i.e. all dimensions must be "
                          "non-zero), got filter = " +
                          dims_string(p.filter));
  }
}

// Channels: the depthwise multiplier, or the groups of a (grouped) conv (spec A.4, B §2).
void derive_channels(const Problem& p, const std::string& label, Geometry& g) {
  if (g.depthwise) {
    if (p.filter[2] != g.C) {
      throw InvalidArgument(label + ": input and filter must have the same depth: " +
                            std::to_string(g.C) + " vs " + std::to_string(p.filter[2]));
    }
    g.Cf = 1;
    g.G = g.C;
    g.M = p.filter[3];
    if (!checked_mul(g.C, g.M, &g.O)) {
      throw InvalidArgument(label + ": output depth " + std::to_string(g.C) + " * " +
                            std::to_string(g.M) + " overflows 64 bits");
    }
  } else {
    g.Cf = p.filter[2];
    g.O = p.filter[3];
    g.M = 1;
    if (g.Cf <= 0) {
      // TF's two wordings (sic): Conv2D's kernel and the backprop ops' shape utility.
      throw InvalidArgument(label +
                            (p.op == Op::conv2d
                                 ? ": filter depth must be stricly positive, got "
                                 : ": filter depth must be strictly greated than zero, got ") +
                            std::to_string(g.Cf));
    }
    if (g.C % g.Cf != 0) {
      throw InvalidArgument(label + ": input depth must be evenly divisible by filter depth: " +
                            std::to_string(g.C) + " vs " + std::to_string(g.Cf));
    }
    if (g.C == 0) {
      // TF's divisibility check passes for C = 0 but leaves zero groups, which no kernel defines.
      throw InvalidArgument(label +
                            ": input depth 0 gives zero groups (C / filter in_depth = 0 / " +
                            std::to_string(g.Cf) + "); the input must have at least " +
                            std::to_string(g.Cf) + " channels");
    }
    g.G = g.C / g.Cf;
    if (g.G > 1 && g.O % g.G != 0) {
      throw InvalidArgument(label +
                            ": output depth must be evenly divisible by number of groups: " +
                            std::to_string(g.O) + " vs " + std::to_string(g.G));
    }
  }
}

// Every size a kernel's index arithmetic forms fits 64 bits (header comment of kMaxExtent).
void check_sizes(const std::string& label, const Geometry& g, int64_t padded_rows,
                 int64_t padded_cols) {
  // Every role's element count must fit in 64 bits, and its bytes too. Zero dimensions do not
  // excuse the others: kernels form partial products such as H * W * C even for an empty batch,
  // so the product of the nonzero dimensions is what must fit. Checked once, here.
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const std::array<int64_t, 4> s = logical_shape(g, r);
    int64_t n = 1;
    bool ok = true;
    for (int64_t d : s) ok = ok && checked_mul(n, d > 0 ? d : 1, &n);
    int64_t bytes;
    if (!ok || !checked_mul(n, 8, &bytes)) {
      throw InvalidArgument(label + ": the " + role_name(r) + " tensor's size overflows 64 bits: " +
                            role_name(r) + " shape " + shape_string(Shape(s.begin(), s.end())) +
                            (r == Role::filter ? "" : " (N, H, W, C)") +
                            " (the product of its nonzero dimensions, times 8 bytes, must fit)");
    }
  }
  // Beyond any tensor that fits in memory, yet small enough that the index arithmetic of every
  // kernel (sums of a few strides, pads and extents) stays within 64 bits.
  struct Bound {
    const char* what;
    const char* dim;
    int64_t value;
  };
  for (const Bound& b : {Bound{"stride", "rows", g.sh}, Bound{"stride", "cols", g.sw},
                         Bound{"dilation", "rows", g.dh}, Bound{"dilation", "cols", g.dw},
                         Bound{"effective filter size", "rows", g.eff_h},
                         Bound{"effective filter size", "cols", g.eff_w},
                         Bound{"padded input size", "rows", padded_rows},
                         Bound{"padded input size", "cols", padded_cols}}) {
    if (b.value > kMaxExtent) {
      throw InvalidArgument(label + ": " + b.what + " " + std::to_string(b.value) + " along " +
                            b.dim + " is too large: strides, dilations, effective filter sizes " +
                            "and padded input sizes are limited to " + bound_text() +
                            ", so that index arithmetic stays within 64 bits");
    }
  }
}

}  // namespace

Geometry geometry(const Problem& p) {
  const std::string label = op_name(p.op);
  check_scalars(p, label);
  Geometry g{};
  g.depthwise = is_depthwise(p.op);
  g.N = p.input[0];
  g.H = p.input[1];
  g.W = p.input[2];
  g.C = p.input[3];
  g.KH = p.filter[0];
  g.KW = p.filter[1];
  derive_channels(p, label, g);
  g.sh = p.stride_h;
  g.sw = p.stride_w;
  g.dh = p.dilation_h;
  g.dw = p.dilation_w;
  Window rows =
      windowed_output(label, g.H, g.KH, g.dh, g.sh, p.padding, p.padding.top, p.padding.bottom);
  Window cols =
      windowed_output(label, g.W, g.KW, g.dw, g.sw, p.padding, p.padding.left, p.padding.right);
  g.OH = rows.out;
  g.OW = cols.out;
  g.eff_h = rows.eff;
  g.eff_w = cols.eff;
  g.pad_top = rows.pad_before;
  g.pad_bottom = rows.pad_after;
  g.pad_left = cols.pad_before;
  g.pad_right = cols.pad_after;
  check_sizes(label, g, rows.padded, cols.padded);
  return g;
}

std::array<int64_t, 4> logical_shape(const Geometry& g, Role r) {
  switch (r) {
    case Role::input:
      return g.input_shape();
    case Role::filter:
      return g.filter_shape();
    case Role::out_backprop:
      return g.output_shape();
  }
  return {};
}

int64_t role_elements(const Geometry& g, Role r) {
  std::array<int64_t, 4> s = logical_shape(g, r);
  int64_t n = 1;
  for (int64_t d : s) {
    if (!checked_mul(n, d, &n)) return -1;
  }
  return n;
}

Layout storage_layout(const Problem& p, Role r) {
  if (r == Role::filter) return is_depthwise(p.op) ? Layout::RSCM : Layout::HWIO;
  return p.format == Format::NHWC ? Layout::NHWC : Layout::NCHW;
}

Shape storage_shape(const Problem& p, const Geometry& g, Role r) {
  std::array<int64_t, 4> s = logical_shape(g, r);
  if (r != Role::filter && p.format == Format::NCHW) return {s[0], s[3], s[1], s[2]};
  return {s[0], s[1], s[2], s[3]};
}

void check_operand_shape(const Problem& p, const Geometry& g, Role r, const Shape& got,
                         const std::string& source) {
  const Shape want = storage_shape(p, g, r);
  if (got == want) return;
  const std::string label = op_name(p.op);
  const std::string role = role_name(r);
  if (got.size() != 4) {
    throw InvalidArgument(label + ": " + role + " must be 4-dimensional, got shape " +
                          shape_string(got) + " from " + source);
  }
  if (r == Role::out_backprop) {
    const bool nchw = p.format == Format::NCHW;
    const int c_dim = nchw ? 1 : 3, h_dim = nchw ? 2 : 1, w_dim = nchw ? 3 : 2;
    const std::string tail = " (" + source + ", shape " + shape_string(got) + ")";
    if (got[0] != g.N) {
      throw InvalidArgument(label +
                            ": input and out_backprop must have the same batch size. Input "
                            "batch: " +
                            std::to_string(g.N) + ", outbackprop batch: " + std::to_string(got[0]) +
                            ", batch_dim: 0" + tail);
    }
    if (got[c_dim] != g.O) {
      if (g.depthwise) {
        throw InvalidArgument(
            label + ": depth_multiplier * in_depth not equal to out_depth: " + std::to_string(g.M) +
            " * " + std::to_string(g.C) + " != " + std::to_string(got[c_dim]) + tail);
      }
      throw InvalidArgument(label + ": filter and out_backprop must have the same out_depth: " +
                            std::to_string(g.O) + " vs " + std::to_string(got[c_dim]) + tail);
    }
    struct Dim {
      int index;
      int64_t actual, computed, in, k, s, d;
      const char* word;
    };
    for (const Dim& d : {Dim{h_dim, got[h_dim], g.OH, g.H, g.KH, g.sh, g.dh, "rows"},
                         Dim{w_dim, got[w_dim], g.OW, g.W, g.KW, g.sw, g.dw, "cols"}}) {
      if (d.actual == d.computed) continue;
      if (g.depthwise) {
        throw InvalidArgument(
            label + ": Number of " + d.word + " of out_backprop doesn't match computed: actual = " +
            std::to_string(d.actual) + ", computed = " + std::to_string(d.computed) + tail);
      }
      throw InvalidArgument(
          label + ": Size of out_backprop doesn't match computed: actual = " +
          std::to_string(d.actual) + ", computed = " + std::to_string(d.computed) +
          " spatial_dim: " + std::to_string(d.index) + " input: " + std::to_string(d.in) +
          " filter: " + std::to_string(d.k) + " output: " + std::to_string(d.actual) +
          " stride: " + std::to_string(d.s) + " dilation: " + std::to_string(d.d) + tail);
    }
  }
  throw InvalidArgument(label + ": " + role + " from " + source + " has shape " +
                        shape_string(got) + ", expected " + shape_string(want) + " (" +
                        layout_name(storage_layout(p, r)) + ") for " + to_string(p));
}

}  // namespace convcheck
