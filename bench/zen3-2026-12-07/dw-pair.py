# The depthwise backprop filter's AVX2 3-tap-row shapes in alternate calls of one process: rewrites
# optimized/kernels.h, kernels_impl.h and depthwise_backprop_filter.cpp by text (run from the
# repository root, then build convcheck and `PA=a PB=b build/convcheck bench --suite L.txt
# --backends optimized,optimized --threads T --reps 200`; `git checkout optimized/` after). PA / PB
# select per call: 0 the rule since this stop (NB 4 vectors, two lines, one row entry at a time),
# 1 NB 1 vector with up to 3 entries, 3 the rule before (NB 2 vectors, a line, up to 2 entries).
# Prints "PAIRS n B/A median ..." at exit. pairs/dw-shapes.txt ran before the change, where 0 was
# the old rule and 2 the new one: its PB=2 is PA=3 PB=0 here.
p='optimized/kernels.h'
s=open(p).read()
a="template <class T>\nstruct DepthwiseFilterRows {"
assert a in s
s=s.replace(a,"extern int64_t g_dw_variant;\n"+a,1)
open(p,'w').write(s)
p='optimized/kernels_impl.h'
s=open(p).read()
a="""    if constexpr (S::kRegs < 32) {
      depthwise_filter_rows3<S, 2 * kNB, 1, false>(p);"""
assert a in s
s=s.replace(a,"""    if constexpr (S::kRegs < 32) {
      if (g_dw_variant == 1)
        depthwise_filter_rows3<S, 1, 3, false>(p);
      else if (g_dw_variant == 3)
        depthwise_filter_rows3<S, kNB, 2, false>(p);
      else
        depthwise_filter_rows3<S, 2 * kNB, 1, false>(p);""",1)
open(p,'w').write(s)
p='optimized/depthwise_backprop_filter.cpp'
s=open(p).read()
s=s.replace("#include <algorithm>\n","#include <algorithm>\n#include <cstdio>\n#include <cstdlib>\n#include <omp.h>\n",1)
a="template <class T>\nvoid depthwise_backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw) {"
assert a in s
s=s.replace(a,"template <class T>\nvoid depthwise_backprop_filter_impl(const Geometry& g, const T* x, const T* dy, T* dw) {",1)
s=s.replace("namespace convcheck::opt {\n","namespace convcheck::opt {\nint64_t g_dw_variant = 0;\n",1)
# The pair statistics struct, as bench/xeon-2026-12-07b/pair-variant.py writes it (taken from its
# text, so that one copy serves both).
pv=open('bench/xeon-2026-12-07b/pair-variant.py').read()
stats=pv[pv.index("struct PairStats {"):pv.index("static PairStats g_pairs;")]
stats=stats.replace('\\\\n','\\n').replace('PairStats','DwPairStats')
tail='''
'''+stats+'''static DwPairStats g_dw_pairs;
static long g_dw_call = 0;
template <class T>
void depthwise_backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw) {
  const long k = g_dw_call++;
  static const int A = atoi(getenv("PA")), B = atoi(getenv("PB"));
  const bool use_a = (k % 2 == 0) == ((k / 2) % 2 == 0);
  g_dw_variant = use_a ? A : B;
  const double t0 = omp_get_wtime();
  depthwise_backprop_filter_impl(g, x, dy, dw);
  (use_a ? g_dw_pairs.a : g_dw_pairs.b).push_back(omp_get_wtime() - t0);
}

template void depthwise_backprop_filter<float>('''
a="\ntemplate void depthwise_backprop_filter<float>("
assert a in s
s=s.replace(a,tail,1)
open(p,'w').write(s)
