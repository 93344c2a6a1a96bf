# Knob (on pf-half.patch): g_pair_val != 0 prefetches every other line of the next block (128 B
# apart, FilterTile::pf_stride); 0 every line (the code at 11b0d78).
KNOB=[
("""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
""","""          nb.take(panels, &ft.pf, &ft.pf_off, &ft.pf_last, &ft.pf_lines);
          if (g_pair_val != 0) ft.pf_stride = 2 * kLine;
"""),
]
