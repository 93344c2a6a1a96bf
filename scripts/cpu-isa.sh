# Sourced by scripts/test.sh and scripts/tsan.sh: what this CPU runs, from the kernel's view of it
# (/proc/cpuinfo's flags omit what the OS does not enable), for the builds that need only that.
#   opt_isa        CONVCHECK_OPTIMIZED_ISA for a build run only here: dispatch, avx2 or generic
#   asan_opt_isa   the same for the sanitizer build (scripts/test.sh): where the CPU has AVX2 but
#                  not AVX-512, avx512-emulated (the AVX-512 kernels through SIMDe; tests only),
#                  so that the AVX-512 kernels and the driver's AVX-512 paths are run under
#                  ASan + UBSan and with assertions on every CI machine, not only on those that
#                  have AVX-512 (the TSan build, scripts/tsan.sh, keeps opt_isa: 5 minutes there)
#   eigen_modules  CONVCHECK_EIGEN_MODULES: the eigen ISA modules this CPU loads
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
  opt_isa=dispatch asan_opt_isa=dispatch eigen_modules="avx2;avx512"
elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
  opt_isa=avx2 asan_opt_isa=avx512-emulated eigen_modules=avx2
else opt_isa=generic asan_opt_isa=generic eigen_modules=OFF; fi
