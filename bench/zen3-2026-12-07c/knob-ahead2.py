# Knob: the next block's prefetch (packed_runs) two blocks ahead: g_pair_val 1 prefetches, during
# block b, block b + 2's lines (during the first block, b + 1's too); 2 the same with blocks of 64
# pixels; 3 blocks of 64 pixels, one block ahead; 0 the code at 25df30d (128 pixels, one ahead).
KNOB=[
("""      walk(next, kc, [&](int64_t xo, int64_t dyo, int64_t c) {
        if (xlo < 0) xlo = xo, dlo = dyo;
        xhi = xo + (c - 1) * P.x_step + g.C;
        dhi = dyo + c * g.O;
      });
      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);
      }""","""      auto span = [&](At from) {
        int64_t xlo = -1, xhi = -1, dlo = -1, dhi = -1;
        walk(from, kc, [&](int64_t xo, int64_t dyo, int64_t c) {
          if (xlo < 0) xlo = xo, dlo = dyo;
          xhi = xo + (c - 1) * P.x_step + g.C;
          dhi = dyo + c * g.O;
        });
        if (dlo >= 0) {
          nb.add(P.dy + dlo, (dhi - dlo) * elem);
          nb.add(P.x + xlo, (xhi - xlo) * elem);
        }
      };
      (void)xlo, (void)xhi, (void)dlo, (void)dhi;
      if (g_pair_val == 0 || g_pair_val == 3) {
        span(next);
      } else {
        if (block == 0) span(next);
        span(walk(next, kc, [](int64_t, int64_t, int64_t) {}));
      }"""),
("""    P.kc = std::min(packed_kc, chunk_rows * g.OW);""",
"""    P.kc = std::min(g_pair_val >= 2 ? int64_t{64} : packed_kc, chunk_rows * g.OW);"""),
]
