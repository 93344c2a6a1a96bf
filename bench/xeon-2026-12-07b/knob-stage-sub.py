KNOB=[("1, (line_panel ? cache.l1d * 3 / 2 : wide_bytes) / per_pixel / g.OW",
       "1, (line_panel ? cache.l1d * 3 / 2 : P.stage ? wide_bytes * g_pair_val / 4 : wide_bytes) / per_pixel / g.OW")]
