# AVX2's depthwise backprop filter 3-tap rows with the input window (the AVX-512 walk's sliding
# input columns) against the rule (two lines, one row entry, no window), in alternate calls of one
# process. Runs bench/zen3-2026-12-07/dw-pair.py's rewrite, then adds PA / PB variants 4 (a line,
# NB 2 vectors, one entry, the window: 6 accumulators, 12 registers) and 5 (a vector, two entries,
# the window: 6 accumulators). The variants take the window whatever the layer: run them on
# stride-1, undilated layers only (MobileNet dw1 / dw3: L32.txt / L34.txt). Then build convcheck,
# `PA=0 PB=4 build/convcheck bench --suite L32.txt --backends optimized,optimized --threads T
# --reps 200`, and `git checkout optimized/` after.
exec(open('bench/zen3-2026-12-07/dw-pair.py').read())
p='optimized/kernels_impl.h'
s=open(p).read()
a="""      if (g_dw_variant == 1)
        depthwise_filter_rows3<S, 1, 3, false>(p);"""
assert a in s
s=s.replace(a,"""      if (g_dw_variant == 4)
        depthwise_filter_rows3<S, kNB, 1, true>(p);
      else if (g_dw_variant == 5)
        depthwise_filter_rows3<S, 1, 2, true>(p);
      else """+a.lstrip(),1)
open(p,'w').write(s)
