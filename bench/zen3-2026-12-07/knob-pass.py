# Knob: g_pair_val != 0 packs each block's operands in a pass of their own (out_backprop's panels
# at the block's start, a range's input panels at the range's start) instead of on first use by
# the tiles (FilterTile::pack_x / pack_dy); every tile then reads both packed.
KNOB=[
("""    const Segment both_packed{0, 0, kb};""",
"""    const Segment both_packed{0, 0, kb};
    const bool pass = g_pair_val != 0;
    if (pass) {
      int64_t k = 0;
      for (const Segment& sg : in_place) {
        for (int64_t i = 0; i < sg.count; ++i, ++k) {
          const T* src = P.dy + sg.dy + i * g.O;
          for (int64_t ob = ob0; ob < ob1; ++ob) {
            const int64_t n = std::min(NR, P.cols - ob * NR);
            T* dst = pb + (ob - ob0) * kc * NR + k * NR;
            const T* s = src + ob * NR;
            if (n == NR) {
              for (int64_t j = 0; j < NR; ++j) dst[j] = s[j];
            } else {
              copy_short(s, n, dst);
            }
          }
        }
      }
    }"""),
("""      const int64_t q_lo = q0 + range.begin(rg), q_hi = q_lo + range.size(rg);""",
"""      const int64_t q_lo = q0 + range.begin(rg), q_hi = q_lo + range.size(rg);
      if (pass) {
        int64_t k = 0;
        for (const Segment& sg : in_place) {
          for (int64_t i = 0; i < sg.count; ++i, ++k) {
            const T* src = P.x + sg.x + i * P.x_step;
            for (int64_t qb = q_lo; qb < q_hi; ++qb)
              copy_short(src + P.q_first(qb), P.q_rows(qb), pa + (qb - q_lo) * lda + k * MR);
          }
        }
      }"""),
("""        T* const pbo = ranges ? pb + (ob - ob0) * kc * NR : pb;""",
"""        T* const pbo = ranges || pass ? pb + (ob - ob0) * kc * NR : pb;"""),
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = !pass && ob == ob0, dy_first = !pass && qb == q0;"""),
("""          static_cast<std::size_t>(P.kc * P.NR * (P.q_panels < P.qblocks ? P.oblocks : 1)));""",
"""          static_cast<std::size_t>(P.kc * P.NR * P.oblocks));"""),
]
