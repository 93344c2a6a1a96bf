# Knob: the first-use tiles (packed_runs' PACK kernels) also prefetch, into L1, the in-place line
# they will pack D pixels on (dy + D * dy_step where the tile packs out_backprop, x + D * x_step
# where it packs the input); g_pair_val = D + 256 x side (D 0: none, the code; side 0: both, 1:
# out_backprop's lines only, 2: the input's only). Rewrites optimized/kernels.h (a global read per
# packing pixel: both sides pay it) and kernels_impl.h. In-place lines are 1 KiB (out_backprop, 256
# channels) or 256 B (input, 64) apart: 4 or 16 pixels a 4 KiB page, where a hardware stride
# prefetcher stops; whether the next block's L2 prefetch has them in L2 by then is what stop 73
# could not see. Restore with `git checkout optimized/kernels.h optimized/kernels_impl.h
# optimized/backprop_filter.cpp`.
k='optimized/kernels.h'
t=open(k).read()
a="inline void prefetch_lines(const char* base, int64_t off, int64_t last, int64_t lines) {"
assert a in t
t=t.replace(a,"extern int g_pack_pf;\n"+a,1)
open(k,'w').write(t)
k='optimized/kernels_impl.h'
t=open(k).read()
a="""      if constexpr (PACK) {
        if (pack_dy != nullptr) {"""
assert a in t
t=t.replace(a,"""      if constexpr (PACK) {
        if (g_pack_pf > 0) {
          const int pd = g_pack_pf & 255, side = g_pack_pf >> 8;
          if (pack_dy != nullptr && side != 2) __builtin_prefetch(dy + pd * dy_step, 0, 3);
          if (pack_x != nullptr && side != 1) __builtin_prefetch(x + pd * x_step, 0, 3);
        }
        if (pack_dy != nullptr) {""",1)
open(k,'w').write(t)
KNOB=[
("""  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;""",
"""  g_pack_pf = static_cast<int>(g_pair_val);
  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;"""),
("""bool g_allow_mirrored = true;""","""}  // namespace
int g_pack_pf = 0;
namespace {
bool g_allow_mirrored = true;"""),
]
