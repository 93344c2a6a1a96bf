# Summarises ab-builds.sh output: per (layer/op, build) the medians, fastest rounds and paired ratio.
import collections,statistics as st,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[1],f[0])].append([float(x) for x in f[2:]])
for k in sorted(d):
    v=d[k]
    print("%-32s %s n=%2d opt med %.3f min %.3f | dnn med %.3f min %.3f | paired med %.3f  min-ratio %.3f"%(k[0],k[1],len(v),st.median(x[0] for x in v),min(x[1] for x in v),st.median(x[2] for x in v),min(x[3] for x in v),st.median(x[4] for x in v),min(x[3] for x in v)/min(x[1] for x in v)))
