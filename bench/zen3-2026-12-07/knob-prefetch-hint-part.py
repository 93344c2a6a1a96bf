# With a temporary kernels.h edit (prefetch_lines: locality by extern int64_t g_pf_hint: 0 prefetcht1, 1 prefetcht0, 2 prefetchnta) and "g_pf_hint = g_pair_val;" after pair-variant.py's "g_pair_val = use_a ? A : B;"
KNOB=[("namespace {\n","int64_t g_pf_hint = 0;\nnamespace {\n")]
