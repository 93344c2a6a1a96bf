// The oneDNN comparator ("onednn"): forward, backward data and backward weights through oneDNN
// (Debian libdnnl-dev 2.6), taking and returning TF layouts, its reorders counted in its time.
// Built only when CMake finds oneDNN; otherwise the registered backend is unavailable, with why.
#pragma once

#include "core/backend.h"

namespace convcheck {

void register_onednn_backend(Registry& registry);

}  // namespace convcheck
