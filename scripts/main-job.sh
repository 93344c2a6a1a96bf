#!/usr/bin/env bash
# The main job (README). Until the conformance run exists, it computes the seed example with the
# exact reference and prints it: conv2d_transpose from [12,7,7,128] to [12,14,14,64], stride 2,
# SAME, with a 1x1 and a 3x3 filter, on TF's all-ones operands (spec B §5.4), so every printed value
# is 128 x (the number of filter taps that reach that pixel).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja >/dev/null
cmake --build build -j "$(nproc)" --target convcheck
out=${1:-build/seed-example}
for k in 1 3; do
  problem="conv2d_transpose:input=12x14x14x64,filter=${k}x${k}x64x128,stride=2x2,padding=SAME"
  dir="$out/filter${k}x${k}"
  echo "== $problem"
  build/convcheck operands "$problem" --fill ones --dir "$dir"
  build/convcheck compute "$problem" --backend reference --filter "$dir/filter.npy" \
    --out-backprop "$dir/out_backprop.npy" --output "$dir/result.npy"
  build/convcheck inspect "$dir/result.npy"
done
