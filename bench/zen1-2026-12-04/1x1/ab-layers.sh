#!/bin/bash
# usage: ab2.sh SUITE THREADS ROUNDS REPS "ENV1" "ENV2" ...  -> per config, per layer: median ms, paired ratio
suite=$1; th=$2; rounds=$3; reps=$4; shift 4
for r in $(seq 1 $rounds); do
  for cfg in "$@"; do
    env $cfg /tmp/cc-b/build/convcheck bench --suite $suite --backends optimized,onednn --threads $th --reps $reps 2>&1 | awk -v cfg="$cfg" -v r=$r '/^conv/ {match($0, /--tag|\[[^]]*\]/); tag=substr($0, RSTART, RLENGTH)} /^  optimized/ {match($0, /median +[0-9.]+/); m=substr($0, RSTART+7, RLENGTH-7); match($0, /paired [0-9.]+/); p=substr($0, RSTART+7, RLENGTH-7); printf "r%s [%s] %s %s %s\n", r, cfg, tag, m, p}'
  done
done
