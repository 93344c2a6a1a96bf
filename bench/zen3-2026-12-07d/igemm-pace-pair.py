# The implicit GEMM's prefetch paced (PB/PA = 1) against a line a reduction step in panel-major
# order and a burst per tile for the one-tap blocks' next rows (0, the code before 2026-12-07), in
# alternate calls of one process: rewrites optimized/implicit_gemm.cpp (a switch, g_igemm_pace,
# in front of the two paces) and optimized/backprop_input.cpp (the pair wrapper) by text. From the
# repository root:
#   python3 bench/zen3-2026-12-07d/igemm-pace-pair.py && cmake --build build --target convcheck
#   PA=0 PB=1 build/convcheck bench --suite L.txt --backends optimized,optimized --threads T \
#     --reps 100 2>&1 >/dev/null | grep PAIRS
#   git checkout optimized/backprop_input.cpp optimized/implicit_gemm.cpp
# (Stop 75 ran the same pairs on a working copy that had the switch in the code.)
q = 'optimized/implicit_gemm.cpp'
t = open(q).read()
for a, b in [
    ("namespace convcheck::opt {\n", "namespace convcheck::opt {\n\nint g_igemm_pace = 1;\n"),
    ("tile.pf_pace = next.pace(tile.kc * tile.taps);",
     "tile.pf_pace = g_igemm_pace ? next.pace(tile.kc * tile.taps) : 1;"),
    ("              paced = true;\n", "              paced = g_igemm_pace != 0;\n"),
]:
    assert a in t, a
    t = t.replace(a, b, 1)
open(q, 'w').write(t)
p = 'optimized/backprop_input.cpp'
s = open(p).read()
s = s.replace("#include <algorithm>\n", "#include <algorithm>\n#include <cstdio>\n#include <cstdlib>\n"
              "#include <omp.h>\n", 1)
a = ("template <class T>\nvoid backprop_input(const Geometry& g, const T* w, const T* dy, T* dx, "
     "bool may_stream) {")
assert a in s
s = s.replace(a, "extern int g_igemm_pace;\n" + a.replace("backprop_input(", "backprop_input_impl("), 1)
pv = open('bench/xeon-2026-12-07b/pair-variant.py').read()
stats = pv[pv.index("struct PairStats {"):pv.index("static PairStats g_pairs;")]
stats = stats.replace('\\\\n', '\\n').replace('PairStats', 'IgemmPairStats')
tail = '''
''' + stats + '''static IgemmPairStats g_igemm_pairs;
static long g_igemm_call = 0;
template <class T>
void backprop_input(const Geometry& g, const T* w, const T* dy, T* dx, bool may_stream) {
  const long k = g_igemm_call++;
  static const int A = atoi(getenv("PA")), B = atoi(getenv("PB"));
  const bool use_a = (k % 2 == 0) == ((k / 2) % 2 == 0);
  g_igemm_pace = use_a ? A : B;
  const double t0 = omp_get_wtime();
  backprop_input_impl(g, w, dy, dx, may_stream);
  (use_a ? g_igemm_pairs.a : g_igemm_pairs.b).push_back(omp_get_wtime() - t0);
}

template void backprop_input<float>('''
a = "\ntemplate void backprop_input<float>("
assert a in s
s = s.replace(a, tail, 1)
open(p, 'w').write(s)
