# Scratch instrumentation: per call, the spread of the threads' finish times of the units loop
# (imbalance) and the region's wall time; printed at exit when EXP_WAIT is set.
import sys
p=sys.argv[1]; s=open(p).read()
s=s.replace('#include <vector>\n', '''#include <vector>
#include <chrono>
#include <cstdio>
#include <cstdlib>
namespace {
int64_t exp_now() { return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
struct ExpWait { std::atomic<int64_t> imb{0}, wall{0}, calls{0}, sum_end{0};
  ~ExpWait() { if (getenv("EXP_WAIT") && calls) fprintf(stderr, "EXP_WAIT calls %lld wall %.3f ms imbalance %.3f ms (%.2f %%) after-units %.3f ms (%.2f %%)\\n", (long long)calls.load(), wall/1e6/calls, imb/1e6/calls, 100.0*imb/wall, sum_end/1e6/calls, 100.0*sum_end/wall); } };
ExpWait g_exp;
}
''',1)
s=s.replace('  std::unique_ptr<StealingRanges> units;\n','  std::unique_ptr<StealingRanges> units;\n  int64_t exp_done[8] = {0}; const int64_t exp_t0 = exp_now(); int exp_nt = 1;\n',1)
s=s.replace('''    if (pk.packed_passes > 0)
      g_packed_passes''','''    exp_done[tid & 7] = exp_now(); if (tid == 0) exp_nt = nt;
    if (pk.packed_passes > 0)
      g_packed_passes''',1)
s=s.replace('''  if (pack_input) g_packed_input_calls.fetch_add(1''','''  { const int64_t t1 = exp_now(); int64_t lo = exp_done[0], hi = exp_done[0];
    for (int i = 1; i < exp_nt; ++i) { lo = std::min(lo, exp_done[i]); hi = std::max(hi, exp_done[i]); }
    g_exp.imb += hi - lo; g_exp.wall += t1 - exp_t0; g_exp.sum_end += t1 - hi; ++g_exp.calls; }
  if (pack_input) g_packed_input_calls.fetch_add(1''',1)
open(p,'w').write(s)
