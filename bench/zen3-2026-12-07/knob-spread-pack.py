# Knob: g_pair_val != 0 packs out_backprop panel ob + 1 in shares between the calls of panel ob's
# tiles (one range of input panels, not split_q; two alternating slots), so that no later panel's
# first tile reads it in place: each becomes a packed tile, merged into the panel call.
KNOB=[
("""    const int64_t nranges = ceil_div(q1 - q0, P.q_panels);
    const bool ranges = nranges > 1;""",
"""    const int64_t nranges = ceil_div(q1 - q0, P.q_panels);
    const bool ranges = nranges > 1;
    const bool spread = g_pair_val != 0 && !P.split_q && !ranges && ob1 - ob0 > 1;
    auto slot_of = [&](int64_t ob) {
      return ranges ? pb + (ob - ob0) * kc * NR : spread ? pb + ((ob - ob0) & 1) * kc * NR : pb;
    };
    // Copies the pixels [k0, k1) of out_backprop panel ob into its slot.
    auto pack_dy_share = [&](int64_t ob, int64_t k0, int64_t k1) {
      const int64_t o = ob * NR, n = std::min(NR, P.cols - o);
      T* const dst = slot_of(ob);
      int64_t ks = 0;
      for (const Segment& sg : in_place) {
        const int64_t lo = std::max(k0, ks), hi = std::min(k1, ks + sg.count);
        if (lo < hi)
          P.copy_rows(P.dy + sg.dy + (lo - ks) * g.O + o, g.O, n, hi - lo, dst + lo * NR, NR);
        ks += sg.count;
        if (ks >= k1) break;
      }
    };"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = slot_of(ob);"""),
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = ob == ob0, dy_first = qb == q0 && !(spread && ob > ob0);"""),
("""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          P.kernel(ft);""",
"""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          if (spread && ob + 1 < ob1) {
            const int64_t nq = q_hi - q_lo;
            pack_dy_share(ob + 1, (qb - q_lo) * kb / nq, (qb - q_lo + panels) * kb / nq);
          }
          P.kernel(ft);"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 2)));"""),
]
