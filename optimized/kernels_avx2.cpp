// AVX2 + FMA (+ F16C) kernels (compiled with -mavx2 -mfma -mf16c; chosen at run time on CPUs that
// have them).
#include <immintrin.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "optimized/kernels.h"

namespace convcheck::opt {

namespace isa_avx2 {
#include "optimized/simd.h"
// clang-format off
#include "optimized/kernels_impl.h"
// clang-format on
}  // namespace isa_avx2

void avx2_tables(KernelTable<float>* f32, KernelTable<double>* f64) {
  using namespace isa_avx2;
  // 6 x 16 floats: 12 accumulators + 2 loads + 1 broadcast of the 16 ymm registers.
  fill_table<Avx2F32, 6, 1, 2>(f32, Isa::avx2, true);
  fill_table<Avx2F64, 6, 1, 2>(f64, Isa::avx2, true);
}

}  // namespace convcheck::opt
