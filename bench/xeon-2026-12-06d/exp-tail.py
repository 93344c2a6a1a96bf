import sys
p=sys.argv[1]; s=open(p).read()
old='''  std::unique_ptr<StealingRanges> units;
'''
new='''  std::unique_ptr<StealingRanges> units;
  const int64_t exp_S = items * runs_per_item / threads;
  const int64_t exp_F = getenv("EXP_F") ? atoi(getenv("EXP_F")) : 1;
  const int64_t exp_tail = threads > 1 && getenv("EXP_TAIL") && (chunk_one_block || getenv("EXP_ALL")) ? std::min<int64_t>(atoi(getenv("EXP_TAIL")), exp_S) : 0;
  const int64_t exp_share = exp_S - exp_tail + exp_tail * exp_F;
'''
assert old in s; s=s.replace(old,new,1)
old='''    units = std::make_unique<StealingRanges>(items * runs_per_item, nt, 1);'''
new='''    units = std::make_unique<StealingRanges>(threads * exp_share, nt, 1);'''
assert old in s; s=s.replace(old,new,1)
old='''      for (int64_t u = u0; u < u1; ++u) {
        const int64_t item = u / runs_per_item, chunk = item / parts, part = item % parts;
        int64_t r0, r1, p0, p1, t0, t1;
        split_range(rows, static_cast<int>(chunks), static_cast<int>(chunk), &r0, &r1);
        split_range(grains, static_cast<int>(parts), static_cast<int>(part), &p0, &p1);
        split_range(p1 - p0, static_cast<int>(runs_per_item), static_cast<int>(u % runs_per_item),
                    &t0, &t1);
'''
new='''      for (int64_t uu = u0; uu < u1; ++uu) {
        const int64_t ek = uu / exp_share, el = uu % exp_share;
        int64_t u, ej = 0, epieces = 1;
        if (el < exp_S - exp_tail) u = ek * exp_S + el;
        else { u = ek * exp_S + exp_S - exp_tail + (el - (exp_S - exp_tail)) / exp_F; ej = (el - (exp_S - exp_tail)) % exp_F; epieces = exp_F; }
        const int64_t item = u / runs_per_item, chunk = item / parts, part = item % parts;
        int64_t r0, r1, p0, p1, t0, t1;
        split_range(rows, static_cast<int>(chunks), static_cast<int>(chunk), &r0, &r1);
        split_range(grains, static_cast<int>(parts), static_cast<int>(part), &p0, &p1);
        split_range(p1 - p0, static_cast<int>(runs_per_item), static_cast<int>(u % runs_per_item),
                    &t0, &t1);
        { int64_t s0, s1; split_range(t1 - t0, static_cast<int>(epieces), static_cast<int>(ej), &s0, &s1); t1 = t0 + s1; t0 = t0 + s0; }
'''
assert old in s; s=s.replace(old,new,1)
open(p,'w').write(s)
