# Knob: g_pair_val 0: the rule; 1: one range of input panels (L2 / 4); 2: one range and kc 160;
# 3: one range and kc 96. Written against 1962493 (ranges of L2 / 2); the pairs ran before it.
KNOB=[("std::clamp<int64_t>(cache.l2 / 2 / (P.kc * P.MR * elem), 1, P.qblocks);",
       "std::clamp<int64_t>(cache.l2 / (g_pair_val ? 4 : 2) / (P.kc * P.MR * elem), 1, P.qblocks);"),
      ("P.kc = std::min(packed_kc, chunk_rows * g.OW);",
       "P.kc = std::min<int64_t>(g_pair_val == 2 ? 160 : g_pair_val == 3 ? 96 : packed_kc, chunk_rows * g.OW);")]
