# Produces the pair-A/B variant of optimized/backprop_filter.cpp: PA/PB select the knob per call.
import sys,re
p='optimized/backprop_filter.cpp'
s=open(p).read()
s=s.replace("#include <cstdint>\n","#include <cstdint>\n#include <cstdio>\n#include <cstdlib>\n",1)
a="template <class T>\nvoid backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw, bool may_stream) {"
assert a in s
s=s.replace("namespace convcheck::opt {\n","namespace convcheck::opt {\nstatic int64_t g_pair_val = 0;\n",1)
s=s.replace(a,"template <class T>\nvoid backprop_filter_impl(const Geometry& g, const T* x, const T* dy, T* dw, bool may_stream) {",1)
# knob edits
for old,new in KNOB:
    assert old in s, old
    s=s.replace(old,new,1)
tail='''
struct PairStats {
  std::vector<double> a, b;
  ~PairStats() {
    const size_t n = std::min(a.size(), b.size());
    if (n < 4) return;
    std::vector<double> r(n);
    for (size_t i = 0; i < n; ++i) r[i] = b[i] / a[i];
    std::sort(r.begin(), r.end());
    std::vector<double> sa(a.begin(), a.begin() + n), sb(b.begin(), b.begin() + n);
    std::sort(sa.begin(), sa.end());
    std::sort(sb.begin(), sb.end());
    fprintf(stderr,
            "PAIRS %zu B/A median %.4f q25 %.4f q75 %.4f | A med %.4f min %.4f | B med %.4f min "
            "%.4f\\n",
            n, r[n / 2], r[n / 4], r[3 * n / 4], 1e3 * sa[n / 2], 1e3 * sa[0], 1e3 * sb[n / 2],
            1e3 * sb[0]);
  }
};
static PairStats g_pairs;
static long g_call = 0;
template <class T>
void backprop_filter(const Geometry& g, const T* x, const T* dy, T* dw, bool may_stream) {
  const long k = g_call++;
  static const int A = atoi(getenv("PA")), B = atoi(getenv("PB"));
  const bool use_a = (k % 2 == 0) == ((k / 2) % 2 == 0);
  g_pair_val = use_a ? A : B;
  const double t0 = omp_get_wtime();
  backprop_filter_impl(g, x, dy, dw, may_stream);
  (use_a ? g_pairs.a : g_pairs.b).push_back(omp_get_wtime() - t0);
}

template void backprop_filter<float>('''
s=s.replace("\ntemplate void backprop_filter<float>(",tail,1)
open(p,'w').write(s)
