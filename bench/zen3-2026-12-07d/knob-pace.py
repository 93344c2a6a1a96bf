# Knob: the backprop filter kernels' line prefetch paced, a line every `pace` pixels instead of
# every pixel (l2probe.cpp: on this guest, prefetches issued a few cycles apart are mostly lost;
# 25 TSC cycles or more apart, they arrive). g_pair_val = pace (1: the code's schedule). The pixel
# loop becomes runs of `pace` pixels, each after one line (both sides run that loop). A call whose
# lines outnumber its runs issues the rest at its end, as before (PieceLines::rest). Rewrites
# optimized/kernels.h and kernels_impl.h; restore with `git checkout optimized/kernels.h
# optimized/kernels_impl.h optimized/backprop_filter.cpp`.
k='optimized/kernels.h'
t=open(k).read()
a="inline void prefetch_lines(const char* base, int64_t off, int64_t last, int64_t lines) {"
assert a in t
t=t.replace(a,"extern int g_pf_pace;\n"+a,1)
open(k,'w').write(t)
k='optimized/kernels_impl.h'
t=open(k).read()
a="""  T* pack_x = p.pack_x;
  T* pack_dy = p.pack_dy;
  for (int64_t s = 0; s < nseg; ++s) {
    const T* x = x0 + seg[s].x;
    const T* dy = dy0 + seg[s].dy;
    for (int64_t t = seg[s].count; t > 0; --t) {
      // A line per pixel, not a burst (kernels.h, L2Prefetch).
      if constexpr (TILE) next_c.step();
      if constexpr (PF) pf.step();
"""
assert a in t
t=t.replace(a,"""  T* pack_x = p.pack_x;
  T* pack_dy = p.pack_dy;
  const int64_t pace = g_pf_pace;
  for (int64_t s = 0; s < nseg; ++s) {
    const T* x = x0 + seg[s].x;
    const T* dy = dy0 + seg[s].dy;
    for (int64_t t = seg[s].count; t > 0;) {
      if constexpr (PF) pf.step();
      const int64_t run = t < pace ? t : pace;
      t -= run;
      for (int64_t u = 0; u < run; ++u) {
      if constexpr (TILE) next_c.step();
""",1)
a="""      x += x_step;
      dy += dy_step;
    }
  }
  // Lines beyond the tile's pixels"""
assert a in t
t=t.replace(a,"""      x += x_step;
      dy += dy_step;
      }
    }
  }
  // Lines beyond the tile's pixels""",1)
open(k,'w').write(t)
KNOB=[
("""  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;""",
"""  g_pf_pace = static_cast<int>(g_pair_val);
  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;"""),
("""bool g_allow_mirrored = true;""","""}  // namespace
int g_pf_pace = 1;
namespace {
bool g_allow_mirrored = true;"""),
]
