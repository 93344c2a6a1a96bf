import sys,statistics as st,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    f=l.split()
    if len(f)<7: continue
    lab,t=f[0].rsplit('_t',1); d[(f[1],lab,t)].append(list(map(float,f[2:])))
keys=sorted(set((k[0],k[1]) for k in d))
print("%-28s %-4s %8s %8s %8s %8s | %6s %6s | %6s %6s | dnn %6s"%("layer","cfg","med1","med2","min1","min2","r1","r2","sc_min","sc_med","sc_min"))
for lay,lab in keys:
    a=d[(lay,lab,'1')]; b=d[(lay,lab,'2')]
    m1=st.median(x[0] for x in a); m2=st.median(x[0] for x in b)
    n1=min(x[1] for x in a); n2=min(x[1] for x in b)
    r1=st.median(x[4] for x in a); r2=st.median(x[4] for x in b)
    dn1=min(x[3] for x in a); dn2=min(x[3] for x in b)
    print("%-28s %-4s %8.3f %8.3f %8.3f %8.3f | %6.3f %6.3f | %6.3f %6.3f | %6.3f"%(lay,lab,m1,m2,n1,n2,r1,r2,n1/n2,m1/m2,dn1/dn2))
