// Versions and the commit this binary was built from, for the report's environment and
// `convcheck --version`.
// Library versions are found at configure time (CMake); the commit is taken at build time
// (`git rev-parse HEAD`, "-dirty" when tracked files differ), "unknown" outside a git checkout.
#pragma once

#include <string>

namespace convcheck::reports::build_info {

extern const char* const kVersion;  // the project's (CMake's project(VERSION))
extern const char* const kEigen;
extern const char* const kRapidCheck;
extern const char* const kOneDnn;
extern const char* const kCuda;
extern const char* const kCudnn;
const char* commit();
/// "g++ 12.2.0", "clang 16.0.6": the compiler that built this binary.
std::string compiler();

}  // namespace convcheck::reports::build_info
