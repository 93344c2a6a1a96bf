#!/usr/bin/env bash
# Installs convcheck's build and test dependencies on a fresh Debian 12 machine (run as root).
# Idempotent: packages already present are skipped, so the README commands stay cheap to rerun.
set -euo pipefail
pkgs=(build-essential cmake ninja-build git python3
      ccache               # the compiler cache of the scripts' builds (scripts/ccache-env.sh)
      libseccomp-dev       # the plugin host's system-call filter (plugins/sandbox_apply.cpp)
      libboost-test-dev libboost-program-options-dev libeigen3-dev librapidcheck-dev
      nlohmann-json3-dev   # the JSON library of every report file (core/json.h)
      libsimdjson-dev      # the fast reader of results.jsonl (core/json_reader.h)
      libdnnl-dev   # oneDNN: the CPU comparator (optional to the build, installed so it is there)
      chromium      # headless browser: the test that opens report.html (skipped without it)
      # clang with libFuzzer and the sanitizer runtimes (fuzz/, scripts/fuzz-ci.sh), and LLVM's
      # OpenMP runtime with its Archer tool for the ThreadSanitizer run (scripts/tsan.sh)
      clang libclang-rt-14-dev libomp-14-dev
      qemu-user     # the CPU-model matrix: tests under emulated CPUs without AVX-512 / AVX (tests/isa/)
      # SIMDe's headers: the sanitizer build's AVX-512 kernels emulated on a CPU without AVX-512
      # (CONVCHECK_OPTIMIZED_ISA=avx512-emulated, optimized/CMakeLists.txt; scripts/cpu-isa.sh)
      libsimde-dev
      # a one-node Slurm cluster on localhost for the scale-out recipe's test (tests/scale-out/),
      # and PyYAML for the Kubernetes manifests' test
      slurm-wlm munge python3-yaml
      python3-pip   # pip download of cuobjdump below
      # the Python package (README "From Python"): its test makes a venv and builds the module
      # against Python's headers (numpy, pytest, nanobind, scikit-build-core come from PyPI there)
      python3-venv python3-dev)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # Packages only: never start their services (munge, slurmctld, slurmd would otherwise start with
  # the system's configuration; the tests start their own). A machine without a policy-rc.d gets
  # one for the install only.
  policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# cuobjdump reads the CUDA build's fatbinary (tests/isa/test_fatbin.py: every architecture the
# README lists is in it). NVIDIA ships it in the toolkit, but not every toolkit install has it
# (this machine's nvcc 13.0 has none): then NVIDIA's own wheel from PyPI, unpacked into
# /usr/local/lib/convcheck/bin. A newer cuobjdump reads older toolkits' fatbinaries.
cuobjdump_dir=/usr/local/lib/convcheck/bin
if command -v nvcc >/dev/null && ! command -v cuobjdump >/dev/null &&
  [ ! -x "$(dirname "$(readlink -f "$(command -v nvcc)")")/cuobjdump" ] &&
  [ ! -x "$cuobjdump_dir/cuobjdump" ]; then
  echo "install-deps: fetching cuobjdump (PyPI nvidia-cuda-cuobjdump 13.2.86)"
  tmp=$(mktemp -d)
  python3 -m pip download --no-deps --quiet --disable-pip-version-check -d "$tmp" \
    'nvidia-cuda-cuobjdump==13.2.86'
  python3 - "$tmp" "$cuobjdump_dir" <<'PY'
import glob, os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(os.path.join(src, "*.whl"))[0])
os.makedirs(dst, exist_ok=True)
with wheel.open("nvidia/cu13/bin/cuobjdump") as f, open(os.path.join(dst, "cuobjdump"), "wb") as o:
    o.write(f.read())
os.chmod(os.path.join(dst, "cuobjdump"), 0o755)
PY
  rm -rf "$tmp"
fi
