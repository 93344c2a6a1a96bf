# Knob (upper bounds, wrong results): 1 = knob-free.py (packing free); 2 = the same without the
# next block's out_backprop and input prefetch (nothing reads those lines in this variant).
# knob-free.py's entries (run from the repository root), then this knob's prefetch entry.
exec(open('bench/zen3-2026-12-07c/knob-free.py').read())
KNOB += [
("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);""","""      if (dlo >= 0 && g_pair_val != 2) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);"""),
]
