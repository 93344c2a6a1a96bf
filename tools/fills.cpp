#include "tools/fills.h"

#include "core/error.h"
#include "core/hash.h"

namespace convcheck::cli {

void fill_tensor(Tensor& t, const std::string& fill, uint64_t seed) {
  if (fill == "ones") {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, 1.0);
  } else if (fill == "ramp") {
    for (int64_t i = 0; i < t.size(); ++i) t.set(i, static_cast<double>(i + 1));
  } else if (fill == "random") {
    uint64_t state = seed;
    for (int64_t i = 0; i < t.size(); ++i) {
      t.set(i, static_cast<double>(static_cast<int64_t>(splitmix64_next(state) % 17) - 8));
    }
  } else {
    throw InvalidArgument("unknown fill '" + fill + "'; expected ones, ramp or random");
  }
}

}  // namespace convcheck::cli
