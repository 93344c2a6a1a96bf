# scal.sh ROUNDS ENV: interleaved 1,2-thread benches of sdw3 plain vs nt; prints per-variant medians
R=$1; base=$2
for r in $(seq 1 $R); do for e in 0 1; do
 env $base CONVCHECK_EXP=$e /tmp/exp/cc-dwstream bench --suite ${SUITE:-/tmp/exp/sdw3.txt} --backends optimized --threads 1,2 --json 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  x=json.loads(l); print('e$e', x['tag'], x['threads'], x['median_ms'], x['min_ms'], x.get('speedup') or 0)"
done; done
