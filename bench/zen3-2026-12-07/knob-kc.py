# Knob: the packed path's block pixels kc = g_pair_val (0: the rule).
KNOB=[("P.kc = std::min(packed_kc, chunk_rows * g.OW);",
       "P.kc = std::min<int64_t>(g_pair_val ? g_pair_val : packed_kc, chunk_rows * g.OW);")]
