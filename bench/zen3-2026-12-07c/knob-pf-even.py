# Knob (on pf-even.patch applied to 11b0d78): g_pair_val != 0 spreads each packed_runs call's
# prefetch lines evenly over its pixels (FilterTile::pf_inc: pixel k prefetches line
# k * lines / pixels, a line possibly more than once, no branch per pixel); 0 issues them one per
# pixel from the call's first pixel on (the code at 11b0d78). The first version (a line every
# pixels / lines pixels, a counter and a branch per pixel: PieceLines::every) replaced the
# condition `ft.pf_lines > 0 && ft.pf_lines < panels * kb` by `ft.pf_lines > 0`.
KNOB=[
("""          if (ft.pf_lines > 0 && ft.pf_lines < panels * kb)""",
"""          if (ft.pf_lines > 0 && ft.pf_lines < panels * kb && g_pair_val != 0)"""),
]
