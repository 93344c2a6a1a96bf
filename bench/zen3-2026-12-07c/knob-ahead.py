# Knob: g_pair_val != 0 packs ahead (packed_runs: each block's tiles copy the next block's panels),
# 0 packs on first use in every block (the code before).
KNOB=[
("""    P.ahead = g_pack_ahead < 0 ? kt.pack_ahead : g_pack_ahead != 0;""",
"""    P.ahead = g_pair_val != 0;"""),
]
