# Knob (upper bounds, wrong results): 1 = knob-free.py (packing free, the next block prefetched);
# 2 = the same without the prefetch; 3 = the same number of lines prefetched, but from the
# unit's packed panels (hot in L2) instead of the next block: whether the unread prefetch's cost is
# in issuing and filling lines or in bringing new lines from memory.
# knob-free.py's entries (run from the repository root), then this knob's prefetch entry.
exec(open('bench/zen3-2026-12-07c/knob-free.py').read())
KNOB += [
("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);""","""      if (dlo >= 0 && g_pair_val == 3) {
        nb.add(pb, std::min<int64_t>((dhi - dlo) * elem, static_cast<int64_t>(pk->pb.size()) * elem));
        nb.add(pa, std::min<int64_t>((xhi - xlo) * elem, static_cast<int64_t>(pk->pa.size()) * elem));
      } else if (dlo >= 0 && g_pair_val != 2) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);"""),
]
