# Knob: g_pair_val != 0 stages streamed layers' sums with line panels (AVX2) too, their sub-blocks
# then sized by the line panels' rule (1.5 L1), where the rule (0) keeps them one sub-block.
KNOB=[("P.stage = P.stream && !line_panel;", "P.stage = P.stream && (!line_panel || g_pair_val);")]
