#include "core/dtype.h"

#include <cassert>

namespace convcheck {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
  }
  return "?";
}

const char* dtype_tf_name(DType t) {
  switch (t) {
    case DType::f16:
      return "half";
    case DType::bf16:
      return "bfloat16";
    case DType::f32:
      return "float32";
    case DType::f64:
      return "float64";
    case DType::i32:
      return "int32";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  for (DType t : kAllDTypes) {
    if (s == dtype_name(t) || s == dtype_tf_name(t)) return t;
  }
  if (s == "float") return DType::f32;
  if (s == "double") return DType::f64;
  return std::nullopt;
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
    case DType::f64:
      return 8;
  }
  return 0;
}

FloatFormat float_format(DType t) {
  switch (t) {
    case DType::f16:
      return {11, -14, 15};
    case DType::bf16:
      return {8, -126, 127};
    case DType::f32:
      return {24, -126, 127};
    case DType::f64:
      return {53, -1022, 1023};
    case DType::i32:
      break;
  }
  assert(false && "float_format of a non-floating dtype");
  return {0, 0, 0};
}

}  // namespace convcheck
