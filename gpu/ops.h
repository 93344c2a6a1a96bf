// The gpu backend's ops on the device: each op's entry point (defined in its own file, gpu/*.cu,
// compiled by glob; instantiated for float, double and uint32_t) and the one op -> entry point
// dispatch, DeviceExec::run_op. Adding an op to the backend: its file, its kernels in
// gpu/kernels/ with its steps and case in gpu/kernels/execute.cuh (shared with the host
// emulation), and two lines here. Internal to gpu/.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/op_traits.h"
#include "gpu/internal.h"

namespace convcheck::gpu {

// ---- the ops (one file each; instantiated for float, double and uint32_t) -----------------------

template <class T>
void conv2d(DeviceExec& ex, const Plan& p, const T* input, const T* filter, T* output);
/// Also conv2d_transpose (the same maths, spec A.8).
template <class T>
void backprop_input(DeviceExec& ex, const Plan& p, const T* filter, const T* out_backprop,
                    T* input_backprop, T* workspace);
template <class T>
void backprop_filter(DeviceExec& ex, const Plan& p, const T* input, const T* out_backprop,
                     T* filter_backprop, T* partials);
template <class T>
void depthwise_conv2d(DeviceExec& ex, const Plan& p, const T* input, const T* filter, T* output);
template <class T>
void depthwise_backprop_input(DeviceExec& ex, const Plan& p, const T* filter, const T* out_backprop,
                              T* input_backprop);
template <class T>
void depthwise_backprop_filter(DeviceExec& ex, const Plan& p, const T* input, const T* out_backprop,
                               T* filter_backprop, T* partials);

/// The depthwise ops take no int32, so they are not instantiated for uint32_t: an op missing from
/// both switches (or asked in a type it lacks) ends in the logic_error, naming it.
template <class T>
void DeviceExec::run_op(const Plan& p, const T* a, const T* b, T* out, T* workspace) {
  switch (p.op) {
    case Op::conv2d:
      conv2d<T>(*this, p, a, b, out);
      return;
    case Op::conv2d_backprop_input:
    case Op::conv2d_transpose:
      backprop_input<T>(*this, p, a, b, out, workspace);
      return;
    case Op::conv2d_backprop_filter:
      backprop_filter<T>(*this, p, a, b, out, workspace);
      return;
    default:
      break;
  }
  if constexpr (!std::is_same_v<T, uint32_t>) {  // the depthwise ops take no int32 (spec B §1.1)
    switch (p.op) {
      case Op::depthwise_conv2d:
        depthwise_conv2d<T>(*this, p, a, b, out);
        return;
      case Op::depthwise_conv2d_backprop_input:
        depthwise_backprop_input<T>(*this, p, a, b, out);
        return;
      case Op::depthwise_conv2d_backprop_filter:
        depthwise_backprop_filter<T>(*this, p, a, b, out, workspace);
        return;
      default:
        break;
    }
  }
  throw std::logic_error("gpu: no kernel for " + std::string(op_name(p.op)) + " in this type (" +
                         context_ + ")");
}

}  // namespace convcheck::gpu
