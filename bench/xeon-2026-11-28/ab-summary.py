# Summarises ab-builds.sh output. With one argument: per (layer/op, build) the medians, fastest
# rounds and paired ratio. With a second, builds in order (build1,build2,...): one row per
# layer/op and a column per build, the paired ratio's median and optimized's median ms, for the
# ISA prefixes 512_ and avx2_ (the records' sets 8, 10 and 11). With `threads`: labels LABEL_t1 and
# LABEL_t2 (rounds at 1 and 2 threads), per (layer/op, label) the medians and fastest rounds at each
# count, the paired ratios, and 1 -> 2 thread scaling by fastest rounds and by medians (oneDNN's by
# fastest rounds) (bench/xeon-2026-11-28c/stream-1-2threads.txt).
import collections,statistics as st,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[1],f[0])].append([float(x) for x in f[2:]])
if len(sys.argv) >= 3 and sys.argv[2] == "threads":
    t=collections.defaultdict(list)
    for (L,lab),v in d.items():
        b,n=lab.rsplit("_t",1); t[(L,b,n)]=v
    print("%-28s %-4s %8s %8s %8s %8s | %6s %6s | %6s %6s | dnn %6s"%("layer","cfg","med1","med2","min1","min2","r1","r2","sc_min","sc_med","sc_min"))
    for L,b in sorted(set((k[0],k[1]) for k in t)):
        a=t[(L,b,"1")]; c=t[(L,b,"2")]
        m1=st.median(x[0] for x in a); m2=st.median(x[0] for x in c)
        n1=min(x[1] for x in a); n2=min(x[1] for x in c)
        print("%-28s %-4s %8.3f %8.3f %8.3f %8.3f | %6.3f %6.3f | %6.3f %6.3f | %6.3f"%(L,b,m1,m2,n1,n2,st.median(x[4] for x in a),st.median(x[4] for x in c),n1/n2,m1/m2,min(x[3] for x in a)/min(x[3] for x in c)))
    sys.exit()
if len(sys.argv) < 3:
    for k in sorted(d):
        v=d[k]
        print("%-32s %s n=%2d opt med %.3f min %.3f | dnn med %.3f min %.3f | paired med %.3f  min-ratio %.3f"%(k[0],k[1],len(v),st.median(x[0] for x in v),min(x[1] for x in v),st.median(x[2] for x in v),min(x[3] for x in v),st.median(x[4] for x in v),min(x[3] for x in v)/min(x[1] for x in v)))
    sys.exit()
builds=sys.argv[2].split(",")
layers=sorted(set(k[0] for k in d))
for isa in ["512","avx2"]:
    print(isa, " | ".join(builds), "(paired median, optimized median ms)")
    for L in layers:
        row=[]
        for b in builds:
            v=d[(L,isa+"_"+b)]
            row.append("%.2f (%.3f ms)"%(st.median(x[4] for x in v), st.median(x[0] for x in v)))
        print("  %-30s %s"%(L.replace("depthwise_conv2d_backprop_input","bpi").replace("depthwise_conv2d","fwd"), " | ".join(row)))
