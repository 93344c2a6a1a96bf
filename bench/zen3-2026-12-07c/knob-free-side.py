# Knob (upper bounds, wrong results): g_pair_val 2 packs the input only in the unit's first block
# (later blocks read those panels: the input's packing free), 3 out_backprop likewise (every
# panel in a slot of its own); the next block's lines still prefetched. 0: the code at 11b0d78.
KNOB=[
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = (g_pair_val != 2 || block == 0) && ob == ob0,
                     dy_first = (g_pair_val != 3 || block == 0) && qb == q0;"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = ranges || g_pair_val == 3 ? pb + (ob - ob0) * kc * NR : pb;"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * P.oblocks));"""),
]
