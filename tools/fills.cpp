#include "tools/fills.h"

#include "core/error.h"

namespace convcheck::cli {

namespace {
// SplitMix64: tiny, seedable, and the same on every platform.
uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

void fill_tensor(Tensor& t, const std::string& fill, uint64_t seed) {
  if (fill == "ones") {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, 1.0);
  } else if (fill == "ramp") {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, static_cast<double>(i + 1));
  } else if (fill == "random") {
    uint64_t state = seed;
    for (int64_t i = 0; i < t.size(); ++i) {
      t.set(i, static_cast<double>(static_cast<int64_t>(splitmix(state) % 17) - 8));
    }
  } else {
    throw InvalidArgument("unknown fill '" + fill + "'; expected ones, ramp or random");
  }
}

}  // namespace convcheck::cli
