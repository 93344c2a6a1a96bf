# Knob (upper bounds, wrong results): 1 = knob-free.py (packing free, the next block prefetched);
# 2 = the same without the prefetch; 3 = the same number of lines prefetched, but from the
# unit's packed panels (hot in L2) instead of the next block: whether the unread prefetch's cost is
# in issuing and filling lines or in bringing new lines from memory.
KNOB=[
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = (g_pair_val == 0 || block == 0) && ob == ob0,
                     dy_first = (g_pair_val == 0 || block == 0) && qb == q0;"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = ranges || g_pair_val != 0 ? pb + (ob - ob0) * kc * NR : pb;"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * P.oblocks));"""),
("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);""","""      if (dlo >= 0 && g_pair_val == 3) {
        nb.add(pb, std::min<int64_t>((dhi - dlo) * elem, static_cast<int64_t>(pk->pb.size()) * elem));
        nb.add(pa, std::min<int64_t>((xhi - xlo) * elem, static_cast<int64_t>(pk->pa.size()) * elem));
      } else if (dlo >= 0 && g_pair_val != 2) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);"""),
]
