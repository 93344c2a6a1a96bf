# Knob: g_pair_val != 0 issues no prefetch of the next block (packed_runs' L2Prefetch nb).
KNOB=[("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);""",
"""      if (dlo >= 0 && !g_pair_val) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);""")]
