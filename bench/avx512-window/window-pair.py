# AVX-512's depthwise backprop-input window (4 columns of 4 vectors, kernels_impl.h,
# depthwise_window_run; off by the rule until measured) against the tap runs, in alternate calls of
# one process: rewrites optimized/depthwise_backprop_input.cpp by text. From the repository root,
# on a CPU with AVX-512:
#   python3 bench/avx512-window/window-pair.py && cmake --build build --target convcheck
#   for L in bench/zen3-2026-12-07b/{L31,L33,B28,B14}.txt; do   # dw1, dw3, 28x28x256, 14x14x512
#     PA=0 PB=1 build/convcheck bench --suite $L --backends optimized,optimized --threads 2 \
#       --reps 200 2>&1 >/dev/null | grep PAIRS; done
#   git checkout optimized/depthwise_backprop_input.cpp && cmake --build build --target convcheck
# PA / PB per call: the override_depthwise_row_window value (0: the tap runs; 1: the window wherever
# the taps suit, L1 or not; -1: the rule). Prints "PAIRS n B/A median ..." (B's time over A's) at
# exit. Where the window wins, the rule's by_rule flag (kernels_impl.h, fill_table) is the line to
# change, with the L1 condition of depthwise_row_window (depthwise_backprop_input.cpp) checked
# against PA=1 PB=-1 on 14x14x512. Written 2026-12-07 on a Zen 3 and run there only under
# emulation (CONVCHECK_OPTIMIZED_ISA=avx512 in an avx512-emulated build), where its timings mean
# nothing.
p = 'optimized/depthwise_backprop_input.cpp'
s = open(p).read()
s = s.replace("#include <algorithm>\n", "#include <algorithm>\n#include <cstdio>\n#include <cstdlib>\n"
              "#include <omp.h>\n", 1)
a = ("template <class T>\nvoid depthwise_backprop_input(const Geometry& g, const T* w, const T* dy, "
     "T* dx, bool may_stream) {")
assert a in s
s = s.replace(a, a.replace("depthwise_backprop_input(", "depthwise_backprop_input_impl("), 1)
# The pair statistics, as bench/xeon-2026-12-07b/pair-variant.py writes them (taken from its text).
pv = open('bench/xeon-2026-12-07b/pair-variant.py').read()
stats = pv[pv.index("struct PairStats {"):pv.index("static PairStats g_pairs;")]
stats = stats.replace('\\\\n', '\\n').replace('PairStats', 'WindowPairStats')
tail = '''
''' + stats + '''static WindowPairStats g_window_pairs;
static long g_window_call = 0;
template <class T>
void depthwise_backprop_input(const Geometry& g, const T* w, const T* dy, T* dx, bool may_stream) {
  const long k = g_window_call++;
  static const int A = atoi(getenv("PA")), B = atoi(getenv("PB"));
  const bool use_a = (k % 2 == 0) == ((k / 2) % 2 == 0);
  override_depthwise_row_window(use_a ? A : B);
  const double t0 = omp_get_wtime();
  depthwise_backprop_input_impl(g, w, dy, dx, may_stream);
  (use_a ? g_window_pairs.a : g_window_pairs.b).push_back(omp_get_wtime() - t0);
}

template void depthwise_backprop_input<float>('''
a = "\ntemplate void depthwise_backprop_input<float>("
assert a in s
s = s.replace(a, tail, 1)
open(p, 'w').write(s)
