# Knob: g_pair_val != 0 prefetches the next block's input before its out_backprop (the rule:
# out_backprop first).
KNOB=[("""      if (dlo >= 0) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);
      }""",
"""      if (dlo >= 0 && !g_pair_val) {
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
        nb.add(P.x + xlo, (xhi - xlo) * elem);
      } else if (dlo >= 0) {
        nb.add(P.x + xlo, (xhi - xlo) * elem);
        nb.add(P.dy + dlo, (dhi - dlo) * elem);
      }""")]
