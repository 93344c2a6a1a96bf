// Fails where assert() is compiled out (NDEBUG). The sanitizer build (scripts/test.sh) is the CI
// stage that runs the optimized backend's assertions (its address invariants, which the Release
// build never checks); a -DNDEBUG in that build's flags, as before 2026-12-06, would drop them
// without a word. Built with the flags every target of that build gets.
#include <cstdio>

int main() {
#ifdef NDEBUG
  std::fprintf(stderr,
               "sanitizer_asserts_on: NDEBUG is defined, so this build's assert() checks are "
               "compiled out; build the sanitizer configuration without -DNDEBUG "
               "(scripts/test.sh)\n");
  return 1;
#else
  return 0;
#endif
}
