#!/usr/bin/env bash
# Installs convcheck's build and test dependencies on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are skipped, so the README commands stay cheap to rerun.
set -euo pipefail
pkgs=(build-essential cmake ninja-build git python3
      libboost-test-dev libboost-program-options-dev libeigen3-dev librapidcheck-dev
      libdnnl-dev   # oneDNN: the CPU comparator (optional to the build, installed so it is there)
      chromium      # headless browser: the test that opens report.html (skipped without it)
      # clang with libFuzzer and the sanitizer runtimes (fuzz/, scripts/fuzz-ci.sh), and LLVM's
      # OpenMP runtime with its Archer tool for the ThreadSanitizer run (scripts/tsan.sh)
      clang libclang-rt-14-dev libomp-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
