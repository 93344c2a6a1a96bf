#include "core/tensor.h"

#include <sstream>

#include "core/error.h"
#include "core/half.h"
#include "core/limits.h"

namespace convcheck {

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::NHWC:
      return "NHWC";
    case Layout::NCHW:
      return "NCHW";
    case Layout::HWIO:
      return "HWIO";
    case Layout::RSCM:
      return "RSCM";
    case Layout::Plain:
      return "plain";
  }
  return "?";
}

std::string shape_string(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (std::size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

int64_t element_count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw InvalidArgument("negative dimension in shape " + shape_string(s));
    if (d != 0 && n > INT64_MAX / d) {
      throw InvalidArgument("element count of shape " + shape_string(s) + " overflows 64 bits");
    }
    n *= d;
  }
  return n;
}

Tensor::Tensor(DType dtype, Shape shape, Layout layout)
    : dtype_(dtype), shape_(std::move(shape)), layout_(layout), size_(element_count(shape_)) {
  // The byte count in 64 bits, and within the memory limit (core/limits.h): a safety net under the
  // per-problem checks, which refuse anything this large before any tensor is made.
  const int64_t item = static_cast<int64_t>(dtype_size(dtype_));
  if (size_ > INT64_MAX / item) {
    throw InvalidArgument("the byte size of a " + std::string(dtype_name(dtype_)) +
                          " tensor of shape " + shape_string(shape_) + " overflows 64 bits");
  }
  require_allocation(
      static_cast<uint64_t>(size_ * item),
      "a " + std::string(dtype_name(dtype_)) + " tensor of shape " + shape_string(shape_));
  storage_.assign((bytes() + 7) / 8, 0);
}

double load_element(const void* data, DType t, int64_t i) {
  switch (t) {
    case DType::f16:
      return f16_to_double(static_cast<const uint16_t*>(data)[i]);
    case DType::bf16:
      return bf16_to_double(static_cast<const uint16_t*>(data)[i]);
    case DType::f32:
      return static_cast<const float*>(data)[i];
    case DType::f64:
      return static_cast<const double*>(data)[i];
    case DType::i32:
      return static_cast<const int32_t*>(data)[i];
  }
  return 0;
}

void store_element(void* data, DType t, int64_t i, double v) {
  switch (t) {
    case DType::f16:
      static_cast<uint16_t*>(data)[i] = f16_from_double(v);
      break;
    case DType::bf16:
      static_cast<uint16_t*>(data)[i] = bf16_from_double(v);
      break;
    case DType::f32:
      static_cast<float*>(data)[i] = static_cast<float>(v);
      break;
    case DType::f64:
      static_cast<double*>(data)[i] = v;
      break;
    case DType::i32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v);
      break;
  }
}

}  // namespace convcheck
