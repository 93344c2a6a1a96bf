# Knob (an upper bound, wrong results): g_pair_val != 0 packs only the unit's first block (first
# use, every out_backprop panel in a slot of its own); later blocks' tiles read those packed
# panels as if packing were free, while the next block's lines are still prefetched into L2.
KNOB=[
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = (g_pair_val == 0 || block == 0) && ob == ob0,
                     dy_first = (g_pair_val == 0 || block == 0) && qb == q0;"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = ranges || g_pair_val != 0 ? pb + (ob - ob0) * kc * NR : pb;"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * P.oblocks));"""),
]
