// Element types. f16 and bf16 are stored as raw 16-bit patterns; core/half.h converts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace convcheck {

enum class DType { f16, bf16, f32, f64, i32 };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32};

/// Canonical short name: "f16", "bf16", "f32", "f64", "i32".
const char* dtype_name(DType t);
/// TF's name: "half", "bfloat16", "float32", "float64", "int32".
const char* dtype_tf_name(DType t);
/// Accepts the canonical and the TF names; nullopt otherwise.
std::optional<DType> parse_dtype(std::string_view s);
std::size_t dtype_size(DType t);
inline bool is_floating(DType t) {
  return t != DType::i32;
}

/// Binary format of a floating dtype: significand precision p (with the hidden bit) and the
/// exponent of the smallest normal number. Used by rounding code that targets any format.
struct FloatFormat {
  int precision;     // f16 11, bf16 8, f32 24, f64 53
  int min_exponent;  // smallest normal is 2^min_exponent: f16 -14, bf16/f32 -126, f64 -1022
  int max_exponent;  // largest finite is (2 - 2^(1-p)) * 2^max_exponent: f16 15, bf16/f32 127, f64
                     // 1023
};
/// Precondition: is_floating(t).
FloatFormat float_format(DType t);

}  // namespace convcheck
