// Portable kernels (no vector ISA assumed): the fallback everywhere, and int32's kernels.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/half.h"
#include "optimized/kernels.h"

namespace convcheck::opt {

namespace isa_generic {
#include "optimized/simd.h"
// clang-format off
#include "optimized/kernels_impl.h"
// clang-format on
}  // namespace isa_generic

void generic_tables(KernelTable<float>* f32, KernelTable<double>* f64, KernelTable<uint32_t>* u32) {
  using namespace isa_generic;
  fill_table<Scalar<float>, 4, 1, 4, 8>(f32, Isa::generic, false);
  fill_table<Scalar<double>, 4, 1, 4, 8>(f64, Isa::generic, false);
  fill_table<Scalar<uint32_t>, 4, 1, 4, 8>(u32, Isa::generic, false);
}

}  // namespace convcheck::opt
