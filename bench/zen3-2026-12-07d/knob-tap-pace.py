# Knob: tap_runs' lines (next block, next sub-block) paced as packed_runs' (g_pair_val != 0: a line
# every (pixels x tiles) / lines pixels, L2Prefetch::pace, the code since 10962d5) or a line a pixel
# (0, the code before). With bench/xeon-2026-12-07b/pair-variant.py (the README's pair method);
# restore with `git checkout optimized/backprop_filter.cpp`. (Stop 75 ran it on a working copy with
# the pace behind a switch; this form applies to the landed code.)
KNOB=[
("""          ft.pf_pace = &pf == &next ? pace_next : pace_sub;""",
"""          ft.pf_pace = g_pair_val == 0 ? 1 : &pf == &next ? pace_next : pace_sub;"""),
]
