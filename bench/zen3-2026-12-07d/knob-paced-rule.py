# Knob: packed_runs' pace by its rule (g_pair_val != 0: a line every (tiles x pixels) / lines
# pixels of the block, FilterTile::pf_pace) or a line every pixel (0: the code before the rule).
# Restore with `git checkout optimized/backprop_filter.cpp`.
KNOB=[
("""          ft.pf_pace = pace;""",
"""          ft.pf_pace = g_pair_val != 0 ? pace : 1;"""),
]
