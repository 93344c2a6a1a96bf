# Knob: the locality hint of every prefetch_lines line (kernels.h), per call of backprop filter:
# g_pair_val 0 prefetcht1 (the code), 1 prefetcht2, 2 prefetcht0, 3 prefetchnta. Rewrites
# optimized/kernels.h as well (a global read per line: both sides pay the branch).
k='optimized/kernels.h'
t=open(k).read()
a="""inline void prefetch_lines(const char* base, int64_t off, int64_t last, int64_t lines) {
  for (; lines > 0; --lines, off += kLine) __builtin_prefetch(base + std::min(off, last), 0, 2);
}"""
assert a in t
t=t.replace(a,"""extern int g_pf_hint;
inline void prefetch_lines(const char* base, int64_t off, int64_t last, int64_t lines) {
  for (; lines > 0; --lines, off += kLine) {
    const char* p = base + std::min(off, last);
    if (g_pf_hint == 0) __builtin_prefetch(p, 0, 2);
    else if (g_pf_hint == 1) __builtin_prefetch(p, 0, 1);
    else if (g_pf_hint == 2) __builtin_prefetch(p, 0, 3);
    else __builtin_prefetch(p, 0, 0);
  }
}""")
open(k,'w').write(t)
KNOB=[
("""  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;""",
"""  g_pf_hint = static_cast<int>(g_pair_val);
  const int64_t MR = P.MR, NR = P.NR, kc = P.kc;"""),
("""bool g_allow_mirrored = true;""","""}  // namespace
int g_pf_hint = 0;
namespace {
bool g_allow_mirrored = true;"""),
]
