# Knob: the packed path's input-panel range budget, L2 / g_pair_val (0: the rule). Written against
# 1962493 (the rule: L2 / 2); the pairs of this folder ran before it, against L2 / 16 (PA=0 there
# is PA=16 here).
KNOB=[("std::clamp<int64_t>(cache.l2 / 2 / (P.kc * P.MR * elem), 1, P.qblocks);",
       "std::clamp<int64_t>(cache.l2 / (g_pair_val ? g_pair_val : 2) / (P.kc * P.MR * elem), 1, P.qblocks);")]
