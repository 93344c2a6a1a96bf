# Depthwise backprop input with and without the 3-tap window (kernels_impl.h,
# depthwise_window_run) in alternate calls of one process: rewrites optimized/kernels.h,
# kernels_impl.h, depthwise_backprop_input.cpp and depthwise_conv2d.cpp by text (run from the repository root, then
# build convcheck and `PA=a PB=b build/convcheck bench --suite L.txt --backends
# optimized,optimized --threads T --reps 200`; `git checkout optimized/` after). PA / PB select
# per call: 0 no window (the tap runs of depthwise_run), 1 the window's rule (4 columns x 2
# vectors, where depthwise_row_window), 2 the same, 3 of 12 x 1, 4 of 6 x 1, 5 the rule's
# tiles wherever the kernels have them (override_depthwise_row_window(1)), 6 no window and the
# tap runs' tile loop as before the window's commit (the refactor's cost); 10 more: the same with
# the next rows prefetched into L2, not L1 (override_depthwise_input_rows_to_l1(0)). Prints
# "PAIRS n B/A median ..." at exit. Until the final code the window tile took a `first` flag and
# ascending taps too; pairs/window-shapes.txt ran then.
p='optimized/kernels.h'
s=open(p).read()
a="template <class T>\nstruct DepthwiseFilterRows {"
assert a in s
s=s.replace(a,"extern int64_t g_dwin_variant;\n"+a,1)
open(p,'w').write(s)
p='optimized/kernels_impl.h'
s=open(p).read()
a="""  constexpr int NB = 2, TB = kDepthwiseWindowColumns;
"""
assert a in s
s=s.replace(a,a+"""  if (g_dwin_variant == 2) {
    depthwise_tile_loop<4>(p, run, next, next_lines,
      [&](int64_t t) { depthwise_window_channels<S, 4, 2>(p, run, taps, t); },
      [&](int64_t t) { depthwise_window_channels<S, 1, 2>(p, run, taps, t); });
    return;
  }
  if (g_dwin_variant == 3) {
    depthwise_tile_loop<12>(p, run, next, next_lines,
      [&](int64_t t) { depthwise_window_channels<S, 12, 1>(p, run, taps, t); },
      [&](int64_t t) { depthwise_window_channels<S, 1, 1>(p, run, taps, t); });
    return;
  }
  if (g_dwin_variant == 4) {
    depthwise_tile_loop<6>(p, run, next, next_lines,
      [&](int64_t t) { depthwise_window_channels<S, 6, 1>(p, run, taps, t); },
      [&](int64_t t) { depthwise_window_channels<S, 1, 1>(p, run, taps, t); });
    return;
  }
""",1)
a="      if (p.window && depthwise_window_taps(p, run)) {"
assert a in s
s=s.replace(a,"      if (g_dwin_variant != 0 && g_dwin_variant != 6 && p.window && depthwise_window_taps(p, run)) {",1)
# Variant 6: the tap runs through depthwise_tiles as it was before the window's commit (e360fba,
# its text from git), under the name depthwise_tiles_old: the refactor's own cost.
import subprocess
old=subprocess.run(["git","show","e360fba:optimized/kernels_impl.h"],capture_output=True,text=True,check=True).stdout
i=old.index("template <class S, int NB>\ninline void depthwise_tiles(")
j=old.index("\n}\n",i)+3
old_fn=old[i:j].replace("inline void depthwise_tiles(","inline void depthwise_tiles_old(",1)
a="// A run in tiles of columns, each tile through all its channels before the next (tile-major):"
assert a in s
s=s.replace(a,old_fn+"\n"+a,1)
import re
n=0
for nb in ("8","4","2","1"):
  a="depthwise_tiles<S, "+nb+">(p, run, taps, first, next, next_lines);"
  if a in s:
    s=s.replace(a,"(g_dwin_variant == 6 ? depthwise_tiles_old<S, "+nb+"> : depthwise_tiles<S, "+nb+">)(p, run, taps, first, next, next_lines);")
    n+=1
assert n==4
open(p,'w').write(s)
# The pair statistics struct, as bench/xeon-2026-12-07b/pair-variant.py writes it (taken from its
# text, so that one copy serves both).
pv=open('bench/xeon-2026-12-07b/pair-variant.py').read()
stats=pv[pv.index("struct PairStats {"):pv.index("static PairStats g_pairs;")]
stats=stats.replace('\\\\n','\\n').replace('PairStats','DwinPairStats')
# (The forward op: only variant 6 changes it now. Until the window took descending taps only, it
# slid the window too, mirrored: pairs/window-shapes.txt.)
for p, fn, a1, a2 in (('optimized/depthwise_backprop_input.cpp', 'depthwise_backprop_input', 'w', 'dy'),
                      ('optimized/depthwise_conv2d.cpp', 'depthwise_conv2d', 'x', 'w')):
  s=open(p).read()
  s=s.replace("#include <algorithm>\n","#include <algorithm>\n#include <cstdio>\n#include <cstdlib>\n#include <omp.h>\n#include \"optimized/internal.h\"\n",1)
  sig=f"void {fn}(const Geometry& g, const T* {a1}, const T* {a2}, T* out, bool may_stream) {{"
  for old in (f"void {fn}(const Geometry& g, const T* {a1}, const T* {a2}, T* dx, bool may_stream) {{",
              f"void {fn}(const Geometry& g, const T* {a1}, const T* {a2}, T* y, bool may_stream) {{"):
    if old in s:
      s=s.replace(old, old.replace(fn+"(", fn+"_impl("),1)
      break
  else:
    raise SystemExit("no "+fn)
  if fn == 'depthwise_backprop_input':
    s=s.replace("namespace convcheck::opt {\n","namespace convcheck::opt {\nint64_t g_dwin_variant = 0;\n",1)
  tail='''
'''+stats+'''static DwinPairStats g_dwin_pairs;
static long g_dwin_call = 0;
template <class T>
'''+sig+'''
  const long k = g_dwin_call++;
  static const int A = atoi(getenv("PA")), B = atoi(getenv("PB"));
  const bool use_a = (k % 2 == 0) == ((k / 2) % 2 == 0);
  const int v = use_a ? A : B;
  g_dwin_variant = v % 10;
  override_depthwise_input_rows_to_l1(v >= 10 ? 0 : -1);
  override_depthwise_row_window(v % 10 == 5 ? 1 : -1);
  const double t0 = omp_get_wtime();
  '''+fn+'''_impl(g, '''+a1+''', '''+a2+''', out, may_stream);
  (use_a ? g_dwin_pairs.a : g_dwin_pairs.b).push_back(omp_get_wtime() - t0);
}

template void '''+fn+'''<float>('''
  a="\ntemplate void "+fn+"<float>("
  assert a in s
  s=s.replace(a,tail,1)
  open(p,'w').write(s)
