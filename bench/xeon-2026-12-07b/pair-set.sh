#!/bin/bash
# usage: pair-set.sh A B OUT   (OUT: an absolute path; the layers from /tmp/pair, README.md)
cd "$(dirname "$0")/../.."  # the repository root
for l in 6 8 10 12 14 16 20 25 28; do
  r=$(PA=$1 PB=$2 build/convcheck bench --suite /tmp/pair/L$l.txt --backends optimized,optimized --threads 2 --reps 200 2>&1 >/dev/null | grep PAIRS)
  echo "L$l $r"
done > $3
