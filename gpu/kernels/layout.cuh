// Layout and dtype conversion kernels: an operand into its canonical copy (compute type; NHWC for
// activations; TF32-rounded in the tf32 mode) and the canonical result back into the problem's
// dtype and format. One thread per element; the index law is the NCHW <-> NHWC transpose:
//   NHWC index ((n*H + h)*W + w)*C + c  <->  NCHW index ((n*C + c)*H + h)*W + w.
#pragma once

#include <type_traits>

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k {

/// Element i of storage `s` in compute type T (widening is exact; int32 bits as uint32_t).
template <class T>
CONVCHECK_HD T load(const void* data, Storage s, int64_t i) {
  if constexpr (std::is_same_v<T, float>) {
    if (s == Storage::f16) return f16_to_f32(static_cast<const uint16_t*>(data)[i]);
    if (s == Storage::bf16) return bf16_to_f32(static_cast<const uint16_t*>(data)[i]);
    return static_cast<const float*>(data)[i];
  } else {
    (void)s;
    return static_cast<const T*>(data)[i];
  }
}

/// Stores v into element i of storage `s`, rounding once (to nearest even) into f16 / bf16.
template <class T>
CONVCHECK_HD void store(void* data, Storage s, int64_t i, T v) {
  if constexpr (std::is_same_v<T, float>) {
    if (s == Storage::f16) {
      static_cast<uint16_t*>(data)[i] = f32_to_f16(v);
      return;
    }
    if (s == Storage::bf16) {
      static_cast<uint16_t*>(data)[i] = f32_to_bf16(v);
      return;
    }
  } else {
    (void)s;
  }
  static_cast<T*>(data)[i] = v;
}

/// The NCHW storage index of canonical (NHWC) element i of an [N, HW, C] activation.
CONVCHECK_HD int64_t nchw_of_nhwc(int64_t i, int64_t HW, int64_t C) {
  const int64_t c = i % C, r = i / C;
  const int64_t hw = r % HW, n = r / HW;
  return (n * C + c) * HW + hw;
}

/// dst[i] (canonical order) = operand element, transposed from NCHW when `nchw`, widened into T,
/// and rounded to TF32 when `tf32`.
template <class T>
struct ToCanonical {
  const void* src;
  Storage storage;
  bool nchw, tf32;
  int64_t HW, C;
  T* dst;
  CONVCHECK_HD void operator()(int64_t i) const {
    T v = load<T>(src, storage, nchw ? nchw_of_nhwc(i, HW, C) : i);
    if constexpr (std::is_same_v<T, float>) {
      if (tf32) v = round_tf32(v);
    }
    dst[i] = v;
  }
};

/// The result in storage: element i of `dst` (storage order, so writes are contiguous) from the
/// canonical src, transposed to NCHW when `nchw`, rounded into the storage dtype.
template <class T>
struct FromCanonical {
  const T* src;
  Storage storage;
  bool nchw;
  int64_t HW, C;
  void* dst;
  CONVCHECK_HD void operator()(int64_t i) const {
    int64_t from = i;
    if (nchw) {  // i = (n*C + c)*HW + hw
      const int64_t hw = i % HW, r = i / HW;
      const int64_t c = r % C, n = r / C;
      from = (n * HW + hw) * C + c;
    }
    store<T>(dst, storage, i, src[from]);
  }
};

}  // namespace convcheck::gpu::k
