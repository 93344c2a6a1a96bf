# Knob: g_pair_val != 0 reads out_backprop in place in every tile of the packed path (only the
# input packed, on first use); 0 packs both (the code at 11b0d78).
KNOB=[
("""          const bool x_first = ob == ob0, dy_first = qb == q0;""",
"""          const bool x_first = ob == ob0, dy_first = qb == q0 || g_pair_val != 0;"""),
("""          if (dy_first) ft.pack_dy = pbo;""",
"""          if (dy_first && qb == q0 && g_pair_val == 0) ft.pack_dy = pbo;"""),
]
