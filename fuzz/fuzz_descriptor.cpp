// Fuzz target: the descriptor grammar and the geometry (core/problem.h).
//
// For any input: parse_problem either refuses it with InvalidArgument or accepts it; an accepted
// descriptor's canonical print parses back to the same problem and prints the same (parse ->
// print -> parse). geometry() either refuses with InvalidArgument or returns a geometry whose
// output sizes are TF's formulas evaluated in 128-bit arithmetic, whose pads are SAME's split, and
// whose sizes respect the documented bounds; the memory estimates, storage shapes and TF admission
// of a valid problem never fail. Anything else (another exception, a sanitizer report, a broken
// invariant) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/admission.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/problem.h"
#include "fuzz/fuzz_common.h"

using namespace convcheck;
using convcheck::fuzz::finding;

namespace {

using i128 = __int128;

// TF's GetWindowedOutputSizeVerbose in 128 bits (no overflow for any int64 inputs): output size
// and the pad before.
void tf_window(i128 in, i128 k, i128 d, i128 s, PaddingKind kind, i128 before, i128 after,
               i128* out, i128* pad_before) {
  const i128 eff = (k - 1) * d + 1;
  if (kind == PaddingKind::SAME) {
    *out = (in + s - 1) / s;
    i128 needed = (*out - 1) * s + eff - in;
    if (needed < 0) needed = 0;
    *pad_before = needed / 2;
  } else {
    *out = (in + before + after - eff + s) / s;  // truncating toward zero, as C++ and TF do
    *pad_before = kind == PaddingKind::EXPLICIT ? before : 0;
  }
}

void check_geometry(const Problem& p, const Geometry& g, std::string_view input) {
  auto require = [&](bool ok, const char* what) {
    if (!ok) finding(std::string("geometry: ") + what + " for " + to_string(p), input);
  };
  i128 oh, ow, pt, pl;
  tf_window(p.input[1], p.filter[0], p.dilation_h, p.stride_h, p.padding.kind, p.padding.top,
            p.padding.bottom, &oh, &pt);
  tf_window(p.input[2], p.filter[1], p.dilation_w, p.stride_w, p.padding.kind, p.padding.left,
            p.padding.right, &ow, &pl);
  require(g.OH == oh && g.OW == ow, "output size differs from TF's formula");
  require(g.pad_top == pt && g.pad_left == pl, "pad before differs from TF's formula");
  require(g.OH >= 0 && g.OW >= 0, "negative output size accepted");
  require(g.pad_top >= 0 && g.pad_bottom >= 0 && g.pad_left >= 0 && g.pad_right >= 0,
          "negative resolved pad");
  if (p.padding.kind == PaddingKind::SAME) {
    require(g.pad_bottom - g.pad_top == 0 || g.pad_bottom - g.pad_top == 1, "SAME split rows");
    require(g.pad_right - g.pad_left == 0 || g.pad_right - g.pad_left == 1, "SAME split cols");
  }
  require(g.eff_h == (g.KH - 1) * g.dh + 1 && g.eff_w == (g.KW - 1) * g.dw + 1, "eff");
  for (int64_t v : {g.sh, g.sw, g.dh, g.dw, g.eff_h, g.eff_w})
    require(v >= 1 && v <= kMaxExtent, "stride, dilation or extent outside [1, kMaxExtent]");
  require(static_cast<i128>(g.H) + g.pad_top + g.pad_bottom <= kMaxExtent &&
              static_cast<i128>(g.W) + g.pad_left + g.pad_right <= kMaxExtent,
          "padded size above kMaxExtent");
  if (g.depthwise) {
    require(g.G == g.C && g.Cf == 1 && g.O == g.C * g.M, "depthwise channels");
  } else {
    require(g.G >= 1 && g.C == g.G * g.Cf && g.M == 1 && g.O % g.G == 0, "groups and channels");
  }
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const int64_t n = role_elements(g, r);
    require(n >= 0, "role elements overflow in a valid geometry");
    const Shape s = storage_shape(p, g, r);
    int64_t m = -1;
    try {
      m = element_count(s);
    } catch (const InvalidArgument&) {
      require(false, "element_count refused a valid role's storage shape");
    }
    require(m == n, "storage shape and logical shape disagree in size");
    i128 capacity = 8;
    for (int64_t d : s) capacity *= d > 0 ? d : 1;
    require(capacity <= INT64_MAX, "the product of nonzero dimensions x 8 overflows");
    (void)storage_layout(p, r);
  }
  // The memory rule never throws, and is monotone in the factor.
  const uint64_t c = estimate_memory(p, g, MemoryUse::compute).bytes;
  const uint64_t o = estimate_memory(p, g, MemoryUse::oracle).bytes;
  require(c <= o, "compute footprint above the oracle's");
  (void)check_memory(p, g, MemoryUse::oracle, uint64_t{1} << 30);
  const TfAdmission a = tf_admission(p);
  (void)a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Problem p;
  try {
    p = parse_problem(input);
  } catch (const InvalidArgument& e) {
    if (std::string_view(e.what()).empty()) finding("empty refusal message", input);
    return 0;
  }
  const std::string printed = to_string(p);
  Problem q;
  try {
    q = parse_problem(printed);
  } catch (const InvalidArgument& e) {
    finding("the print of an accepted descriptor is refused: " + printed + ": " + e.what(), input);
  }
  if (q != p) finding("parse(print(p)) != p: " + printed, input);
  if (to_string(q) != printed) finding("print is not stable: " + printed, input);

  Geometry g;
  try {
    g = geometry(p);
  } catch (const InvalidArgument& e) {
    if (std::string_view(e.what()).rfind(op_name(p.op), 0) != 0)
      finding(std::string("a geometry refusal that does not start with the op: ") + e.what(),
              input);
    return 0;
  }
  check_geometry(p, g, input);
  return 0;
}
