#!/bin/bash
# usage: ab.sh SUITE THREADS ROUNDS "ENV1" "ENV2" ...
suite=$1; th=$2; rounds=$3; shift 3
for r in $(seq 1 $rounds); do
  for cfg in "$@"; do
    res=$(env $cfg /work/main/build/convcheck bench --suite $suite --backends optimized,onednn --threads $th --reps 7 2>&1 | grep -E "^  optimized" | sed -E 's/.*median +([0-9.]+) ms.*paired ([0-9.]+).*/\1 \2/')
    echo "r$r [$cfg] $res"
  done
done
