// AVX-512F kernels (compiled with -mavx512f; chosen at run time on CPUs that have it), or in a
// build configured with CONVCHECK_OPTIMIZED_ISA=avx512-emulated the same kernels compiled for AVX2
// through SIMDe (avx512_emulation.h), for tests on CPUs without AVX-512.
#if defined(CONVCHECK_OPT_AVX512_EMULATED)
#include "optimized/avx512_emulation.h"
#else
#include <immintrin.h>
#endif

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "optimized/kernels.h"

namespace convcheck::opt {

namespace isa_avx512 {
#include "optimized/simd.h"
// clang-format off
#include "optimized/kernels_impl.h"
// clang-format on
}  // namespace isa_avx512

void avx512_tables(KernelTable<float>* f32, KernelTable<double>* f64) {
  using namespace isa_avx512;
  // 6 x 64 floats: 24 accumulators + 4 loads + 1 broadcast of the 32 zmm registers.
  fill_table<Avx512F32, 6, 1, 2, 4>(f32, Isa::avx512, true);
  fill_table<Avx512F64, 6, 1, 2, 4>(f64, Isa::avx512, true);
}

}  // namespace convcheck::opt
