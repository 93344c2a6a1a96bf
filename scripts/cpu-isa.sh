# Sourced by scripts/test.sh and scripts/tsan.sh: what this CPU runs, from the kernel's view of it
# (/proc/cpuinfo's flags omit what the OS does not enable), for the builds that need only that.
#   opt_isa        CONVCHECK_OPTIMIZED_ISA for a build run only here: dispatch, avx2 or generic
#   eigen_modules  CONVCHECK_EIGEN_MODULES: the eigen ISA modules this CPU loads
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then opt_isa=dispatch eigen_modules="avx2;avx512"
elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then opt_isa=avx2 eigen_modules=avx2
else opt_isa=generic eigen_modules=OFF; fi
