# Knob: g_pair_val != 0: during the first range's tiles of out_backprop panel ob, the next panel's
# lines (read in place by its first tile) are prefetched, in shares over the range's tile calls
# (1: into L1, prefetcht0; 2: prefetcht1).
KNOB=[
("""    const Segment both_packed{0, 0, kb};""",
"""    const Segment both_packed{0, 0, kb};
    thread_local std::vector<const T*> rows_dy;
    rows_dy.clear();
    if (g_pair_val)
      for (const Segment& sg : in_place)
        for (int64_t i = 0; i < sg.count; ++i) rows_dy.push_back(P.dy + sg.dy + i * g.O);"""),
("""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          P.kernel(ft);""",
"""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          if (g_pair_val && rg == 0 && ob + 1 < ob1) {
            const int64_t nq = q_hi - q_lo;
            const int64_t k0 = (qb - q_lo) * kb / nq, k1 = (qb - q_lo + panels) * kb / nq;
            const int64_t off = (ob + 1) * NR;
            if (g_pair_val == 1)
              for (int64_t k = k0; k < k1; ++k) __builtin_prefetch(rows_dy[k] + off, 0, 3);
            else
              for (int64_t k = k0; k < k1; ++k) __builtin_prefetch(rows_dy[k] + off, 0, 2);
          }
          P.kernel(ft);"""),
]
