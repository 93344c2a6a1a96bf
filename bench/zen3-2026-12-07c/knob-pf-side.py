# Knob: the next block's prefetch (packed_runs) without out_backprop's lines (1) or without the
# input's (2); 0: both (the code at 11b0d78).
KNOB=[
("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);""","""      if (dlo >= 0) {
        if (g_pair_val != 1) nb.add(P.dy + dlo, (dhi - dlo) * elem);
        if (g_pair_val != 2) nb.add(P.x + xlo, (xhi - xlo) * elem);"""),
]
