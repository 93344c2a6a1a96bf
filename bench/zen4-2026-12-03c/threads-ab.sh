# thr.sh SUITE ROUNDS LABEL:ENV... : 1 and 2 threads interleaved in each bench call
suite=$1; rounds=$2; shift 2
for r in $(seq 1 $rounds); do for lv in "$@"; do lab=${lv%%:*}; envs=${lv#*:}
env $envs build/convcheck bench --suite $suite --backends optimized --threads 1,2 --json 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  d=json.loads(l); print(sys.argv[1], d['tag']+'/'+d['problem'].split(':')[0], d['threads'], d['median_ms'], d['min_ms'])" $lab
done; done
