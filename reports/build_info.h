// Versions and the commit this binary was built from, for the report's environment.
// Library versions are found at configure time (CMake); the commit is taken at build time
// (`git rev-parse HEAD`, "-dirty" when tracked files differ), "unknown" outside a git checkout.
#pragma once

namespace convcheck::reports::build_info {

extern const char* const kEigen;
extern const char* const kRapidCheck;
extern const char* const kOneDnn;
extern const char* const kCuda;
extern const char* const kCudnn;
const char* commit();

}  // namespace convcheck::reports::build_info
