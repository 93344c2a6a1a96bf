// A dense tensor: dtype, shape in storage order, and a layout tag naming what the axes mean.
//
// Activation tensors (input, out_backprop, forward output, input gradient) are stored in the
// problem's format (NHWC or NCHW); filters are always HWIO (RSCM for depthwise), design §3. The
// shape is the storage-order shape, exactly what a .npy file of the tensor holds.
#pragma once

#include <boost/align/aligned_allocator.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace convcheck {

enum class Layout { NHWC, NCHW, HWIO, RSCM, Plain };
const char* layout_name(Layout l);

using Shape = std::vector<int64_t>;
/// "[2, 7, 7, 128]".
std::string shape_string(const Shape& s);
/// Product of the dimensions; throws InvalidArgument when it overflows int64.
int64_t element_count(const Shape& s);

/// Element i of raw storage of dtype t, as a double (exact for every dtype).
double load_element(const void* data, DType t, int64_t i);
/// Stores v into element i, rounding to nearest even for f16/bf16/f32; i32 takes v as an integer
/// (precondition: v is an integer in int32 range).
void store_element(void* data, DType t, int64_t i, double v);

class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, Shape shape, Layout layout = Layout::Plain);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  Layout layout() const { return layout_; }
  int64_t size() const { return size_; }
  std::size_t bytes() const { return static_cast<std::size_t>(size_) * dtype_size(dtype_); }

  void* data() { return storage_.data(); }
  const void* data() const { return storage_.data(); }
  template <class T>
  T* as() {
    return reinterpret_cast<T*>(storage_.data());
  }
  template <class T>
  const T* as() const {
    return reinterpret_cast<const T*>(storage_.data());
  }

  /// Element i (storage order) as a double: exact for every dtype.
  double get(int64_t i) const { return load_element(data(), dtype_, i); }
  /// Stores v into element i (see store_element).
  void set(int64_t i, double v) { store_element(data(), dtype_, i, v); }

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  Layout layout_ = Layout::Plain;
  int64_t size_ = 0;
  // 64-byte aligned (a cache line, a 512-bit vector), as TensorFlow's CPU allocator, PyTorch's and
  // oneDNN's hand out tensors.
  std::vector<uint64_t, boost::alignment::aligned_allocator<uint64_t, 64>> storage_;
};

}  // namespace convcheck
