KNOB=[("P.stage = P.stream && !line_panel;","P.stage = P.stream && !line_panel && g_pair_val;")]
