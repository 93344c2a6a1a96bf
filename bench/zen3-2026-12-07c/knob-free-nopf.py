# Knob (upper bounds, wrong results): 1 = knob-free.py (packing free); 2 = the same without the
# next block's out_backprop and input prefetch (nothing reads those lines in this variant).
KNOB=[
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = (g_pair_val == 0 || block == 0) && ob == ob0,
                     dy_first = (g_pair_val == 0 || block == 0) && qb == q0;"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = ranges || g_pair_val != 0 ? pb + (ob - ob0) * kc * NR : pb;"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * P.oblocks));"""),
("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);""","""      if (dlo >= 0 && g_pair_val != 2) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);"""),
]
