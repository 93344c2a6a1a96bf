# Summarises ab-builds.sh output as one row per layer/op and a column per build (given in order):
# the paired ratio's median over the rounds, and optimized's median ms. ISA prefixes 512_/avx2_
# as the records' sets 8, 10 and 11 use them. Usage: python3 ab-table.py ROUNDS-FILE build1,build2,...
import collections,statistics as st,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split(); d[(f[1],f[0])].append([float(x) for x in f[2:]])
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
