// Internals of the mutant backends, shared by the driver, the kernels and tests/test_mutants.cpp.
//
// A mutant is the reference's maths written once more (mutants/kernels.cpp) with exactly one bug
// switched on. Bug::none is the bug-free path: not registered, it exists so that a test can show
// the copy equals the reference bit for bit before any bug is planted.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/backend.h"

namespace convcheck::mutants {

enum class Bug {
  none,                      // no bug: bit-identical to the reference (tests only)
  same_pad_before,           // SAME's odd padding element top/left instead of bottom/right
  no_dilation,               // the index law ignores dilation (shapes stay the problem's)
  swap_strides,              // the index law uses the H stride for W and vice versa
  flip_filter,               // true convolution: filter taps read at KH-1-a, KW-1-b
  drop_last_row,             // out_backprop row OH-1 ignored (forward ops: input row H-1)
  depthwise_order,           // depthwise output channel m*C+k instead of k*M+m
  filter_io_swapped,         // filter read as HWOI (depthwise: RSMC) instead of HWIO (RSCM)
  ignore_groups,             // group 0's channels for all (backprop input: group 0's outputs)
  nchw_as_nhwc,              // NCHW activations read and written as if NHWC
  oob_write,                 // also writes the element just past the end of the result
  unwritten_tail,            // never writes the last result element
  nan_to_zero,               // NaN operands read as 0
  low_precision_accumulate,  // running sum rounded to bf16 after every add (floating dtypes)
  int_saturate,              // int32 sums clamp to [INT32_MIN, INT32_MAX] instead of wrapping
  nondeterministic,          // plain sums, order changes every run (floating; int32 is exact)
  vector_tail,               // channel loops blocked by 8: the tail block (count % 8 > 0,
                             // count > 8) left out of the reduction
  batch_unroll_tail,         // batch loop unrolled by 4: images past the last full 4 left out
  index16,                   // activation offsets kept in 16 bits (wrap past 2^16 elements)
  cancellation,              // products as ((x+y)^2 - (x-y)^2) / 4 in the accumulation
                             // precision: fine at equal scales, wrong when the roles differ
  flush_to_zero,             // subnormal results flushed to zero (the contract says no FTZ)
  spatial_unroll_tail,       // output-column loop unrolled by 4: columns past the last full 4
                             // left out
  zero_padding_terms,        // padding read as zeros that are multiplied (0 * Inf = NaN where TF
                             // has no term): forward and backprop filter
  half_accumulate,           // f16/bf16 running sums rounded to the dtype after every add
  f64_in_f32,                // f64 computed in float (operands, products and sums)
  truncate_16bit,            // f16/bf16 results rounded toward zero instead of to nearest even
  silent_tf32,               // f32 operands rounded to TF32 (11 significant bits) on the way in
  i32_via_f32,               // int32 sums accumulated in float (exact only below 2^24)
  lost_update,               // racy accumulation: a partial sum is lost in some elements, a
                             // different set each run
  over_read_by_one,          // also reads the element just past the end of its second operand
  stale_cache,  // returns its last result when the op, dtype, tensor shapes and the operands'
                // scale (rounded log2 of the mean |x|, count of non-finite values) match the last
                // call's: never the data itself, nor strides, dilations or padding
  padding_taps_unwritten,  // backprop filter (dense and depthwise) never writes the filter taps
                           // that meet only padding (their exact value is 0), as oneDNN 2.6.3's
                           // bf16 kernel does (suites/regressions.txt)
};

inline constexpr Bug kAllBugs[] = {Bug::same_pad_before,
                                   Bug::no_dilation,
                                   Bug::swap_strides,
                                   Bug::flip_filter,
                                   Bug::drop_last_row,
                                   Bug::depthwise_order,
                                   Bug::filter_io_swapped,
                                   Bug::ignore_groups,
                                   Bug::nchw_as_nhwc,
                                   Bug::oob_write,
                                   Bug::unwritten_tail,
                                   Bug::nan_to_zero,
                                   Bug::low_precision_accumulate,
                                   Bug::int_saturate,
                                   Bug::nondeterministic,
                                   Bug::vector_tail,
                                   Bug::batch_unroll_tail,
                                   Bug::index16,
                                   Bug::cancellation,
                                   Bug::flush_to_zero,
                                   Bug::spatial_unroll_tail,
                                   Bug::zero_padding_terms,
                                   Bug::half_accumulate,
                                   Bug::f64_in_f32,
                                   Bug::truncate_16bit,
                                   Bug::silent_tf32,
                                   Bug::i32_via_f32,
                                   Bug::lost_update,
                                   Bug::over_read_by_one,
                                   Bug::stale_cache,
                                   Bug::padding_taps_unwritten};

/// "same_pad_before", ...; "none" for Bug::none.
const char* bug_name(Bug bug);
/// The registered names only (never "none").
std::optional<Bug> parse_bug(std::string_view name);

/// The backend "mutant:<bug_name(bug)>"; Bug::none gives the unregistered "mutant:none".
std::unique_ptr<Backend> make_mutant(Bug bug);

}  // namespace convcheck::mutants
