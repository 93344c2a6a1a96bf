# Knob: g_pair_val = v != 0 spreads the next block's prefetch over the first v / 4 of the block's
# tile calls (0: over all of them, the rule).
KNOB=[("""      nb.spread(t1 - t0);""",
"""      nb.spread(g_pair_val ? std::max<int64_t>(1, (t1 - t0) * g_pair_val / 4) : t1 - t0);""")]
