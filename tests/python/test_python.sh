#!/usr/bin/env bash
# The Python package's test (CTest `python`, label python; README "From Python"): creates a venv
# under the build directory (kept between runs), installs the package into it from this source
# tree with pip (scikit-build-core builds python/'s module with -Werror, in a build directory that
# is also kept, so a rerun rebuilds only what changed), then runs the pytest suite python/tests.
# The one reason to skip (exit 77, reported by CTest as Skipped): PyPI cannot be reached, so the
# venv cannot get numpy, pytest, nanobind and scikit-build-core. torch is not installed (too big);
# the tests that need it skip with that reason.
#   test_python.sh SOURCE_DIR BUILD_DIR CONVCHECK
set -uo pipefail
src=${1:?usage: test_python.sh SOURCE_DIR BUILD_DIR CONVCHECK}
build=${2:?}
cli=${3:?}
venv=$build/python-venv
py=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv" || { echo "FAIL: $py -m venv $venv (Debian: apt-get install python3-venv)"; exit 1; }
fi
pip() { "$venv/bin/python" -m pip --disable-pip-version-check "$@"; }

# What the build and the tests need, from PyPI; nanobind and scikit-build-core are also what
# `pip install .` would fetch into its isolated build environment.
deps=(numpy pytest ml_dtypes "nanobind>=2.0" "scikit-build-core>=0.10")
if ! "$venv/bin/python" -c 'import numpy, pytest, ml_dtypes, nanobind, scikit_build_core' 2>/dev/null; then
  if ! out=$(pip install -q "${deps[@]}" 2>&1); then
    # Unreachable, or a real failure? Ask the index for pip itself (always there).
    probe=$(mktemp -d)
    if ! pip download -q --no-deps --timeout 20 --retries 1 -d "$probe" pip >/dev/null 2>&1; then
      rm -rf "$probe"
      echo "Skipped: PyPI is unreachable, so the test venv cannot get ${deps[*]}:"
      echo "$out" | tail -3
      exit 77
    fi
    rm -rf "$probe"
    echo "FAIL: pip install ${deps[*]} (PyPI is reachable):"; echo "$out" | tail -20; exit 1
  fi
fi

# The package itself: no build isolation (the venv has the build requirements), a kept build dir.
# Without eigen's ISA modules by default: the AVX2 one took this test from ~5 to ~12 minutes of CI
# (its own compile of eigen_kernels.cpp), and CI's whole run near its 90-minute limit. Then the
# package test of the modules skips with that reason; CONVCHECK_PYTHON_EIGEN_MODULES=avx2 runs it
# (measured passing 2026-11-26: the package holds the module and loads it from beside its
# extension).
# optimized/'s kernels for the ISAs this CPU runs (scripts/cpu-isa.sh, as the sanitizer builds do):
# the AVX-512 file is 74 s of one core on a Zen 1 CI guest and could never run there. A user's
# `pip install` builds every ISA (the default, dispatch).
# Sourced before the next line: it sets eigen_modules too, which this test decides itself.
. "$src/scripts/cpu-isa.sh"  # opt_isa
eigen_modules=${CONVCHECK_PYTHON_EIGEN_MODULES:-OFF}
# (Eigen's kernels at -O1 in this test's package, comparators/CMakeLists.txt: its pytest suite
# runs small problems, and the -O3 copy was minutes of CI's 90 on a 2-vCPU Zen 3 guest.)
echo "test_python: pip install $src (build dir $build/python-build)"
# ninja's default is cores + 2 jobs; ctest -j already runs other tests beside this one.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
if ! pip install -q --no-build-isolation \
  -C build-dir="$build/python-build" -C cmake.define.CONVCHECK_WERROR=ON \
  -C cmake.define.CONVCHECK_EIGEN_MODULES="$eigen_modules" \
  -C cmake.define.CONVCHECK_OPTIMIZED_ISA="$opt_isa" \
  -C cmake.define.CONVCHECK_EIGEN_KERNELS_FLAGS=-O1 "$src" >"$build/python-install.log" 2>&1; then
  echo "FAIL: pip install of the package:"; tail -40 "$build/python-install.log"; exit 1
fi

# From outside the source tree, so that `import convcheck` is the installed package.
cd "$build" || exit 1
# The eigen ISA modules the package must hold (those built above, where the compiler targets
# x86-64).
expect_eigen=""; [ "$(uname -m)" = x86_64 ] && expect_eigen=${eigen_modules//OFF/}
CONVCHECK_EXPECT_EIGEN_MODULES=$expect_eigen CONVCHECK_BIN=$cli OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$venv/bin/python" -m pytest "$src/python/tests" \
  -o cache_dir="$build/python-pytest-cache" --junitxml="$build/python-junit.xml" -rs -q
