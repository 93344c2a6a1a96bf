KNOB=[("""                merge_segments(pk->seg.data() + tap * nsub, nsub, P.b_step, NR);""",
"""                g_pair_val ? merge_segments(pk->seg.data() + tap * nsub, nsub, P.b_step, NR) : nsub;""")]
