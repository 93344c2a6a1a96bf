// SplitMix64 (Steele, Lea and Flood, 2014): the project's one seeded hash and random stream. Tiny,
// seedable and the same on every platform, so a seed reproduces the same data anywhere. The
// oracle's fills, the CLI's `operands` fill, bench's data, the property generators and the mutants
// draw from it; their outputs are part of repro lines and recorded seeds, so these constants and
// this sequence never change.
#pragma once

#include <cstdint>

namespace convcheck {

/// 2^64 / golden ratio: SplitMix64's increment (also a good multiplier to spread a seed).
inline constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;

/// SplitMix64's finaliser: a bijective mix of the 64 bits.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The next number of the stream whose state is `state`; advances the state.
inline uint64_t splitmix64_next(uint64_t& state) {
  return splitmix64_mix(state += kSplitMixGamma);
}

}  // namespace convcheck
