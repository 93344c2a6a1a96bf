# Sourced by the scripts that configure builds (test.sh, tsan.sh, fuzz-ci.sh, main-job.sh): every
# compile goes through ccache (Debian's package, scripts/install-deps.sh), through CMake's
# CMAKE_<LANG>_COMPILER_LAUNCHER environment variables, which a build directory's first configure
# reads (pip's build of the Python package included: it inherits the environment). A build
# directory configured before keeps what it was configured with.
#
# Why: CI builds a clean clone four times over (-Werror, ASan + UBSan, TSan, the Python package;
# the fuzz targets too), and on a 2-vCPU Zen 1 guest those compiles were about 40 of the 68 minutes
# a clean-clone CI took (2026-12-04, stop 57: 4057 s). With the cache, an unchanged source file is
# compiled once per configuration and machine, not once per clone. A cold cache (a fresh machine,
# or a change to a header every file includes) takes the full time: the README says both figures.
# The cache gives back the object file (and the compiler's output: warnings that -Werror turned
# into errors are never cached, as a failed compile is not) that the same preprocessed source,
# compiler and flags made. What changes: with CCACHE_BASEDIR the compiler is given relative paths,
# so __FILE__ (an assertion's or Boost.Test's "../tests/test_gpu.cpp(70)") and the debug info's
# file names are relative to the build directory.
#
# CCACHE_BASEDIR: paths under the source tree are rewritten relative to it, so that clones in other
# directories hit the same entries; CCACHE_NOHASHDIR: the build directory's absolute path (in the
# -g1 / -gline-tables-only debug info of the sanitizer builds) is left out of the hash, so a cached
# object's debug info may name the clone that first compiled it (a sanitizer report then names the
# right file and line under that directory). CONVCHECK_CCACHE=0 compiles without the cache.
# A launcher the caller set already (sccache, say) is kept, and this turns nothing on;
# CONVCHECK_CCACHE_ON=1 says that ccache is the one in use (test.sh prints its counters then).
if [ "${CONVCHECK_CCACHE:-1}" != 0 ] && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] &&
  command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CMAKE_CUDA_COMPILER_LAUNCHER=ccache
  # (pwd -P: the resolved path, as CMake records it, so a checkout reached through a symlink hits.)
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd -P)} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  export CONVCHECK_CCACHE_ON=1
fi
