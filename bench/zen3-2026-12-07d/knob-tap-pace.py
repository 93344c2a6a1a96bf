# Knob: tap_runs' lines (next block, next sub-block) paced as packed_runs' (g_pair_val != 0: a line
# every (pixels x tiles) / lines pixels, L2Prefetch::pace) or a line a pixel (0). Applies to the
# source with the tap_runs pace written behind g_tap_pace (stop 75's working copy; the landed code
# has no switch: the knob's first replacement then fails its assert).
KNOB=[
("""g_tap_pace.load(std::memory_order_relaxed)""", """(g_pair_val != 0)"""),
]
