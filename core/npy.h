// NumPy .npy files (format versions 1.0, 2.0 and 3.0), the on-disk form of every operand and result
// (design §3): '<f2', '<f4', '<f8', '<i4', and bf16 as '<u2' raw bits.
//
// Reading takes what np.save writes (issue 17): either byte order ('>f4' is byte-swapped) and
// either order of elements (fortran_order True, as np.save writes a transposed array, is read
// into C order), so a read tensor is always little-endian C order. Writing is C-order
// little-endian only. Reading is otherwise strict and every error is an InvalidArgument naming
// the file and expected vs got: bad magic, unsupported version, truncated or malformed header,
// unknown descr, wrong dtype, wrong shape, truncated data, trailing bytes.
#pragma once

#include <optional>
#include <string>

#include "core/dtype.h"
#include "core/tensor.h"

namespace convcheck {

/// The descr string a dtype is written with ("<f4"; bf16 -> "<u2").
const char* npy_descr(DType t);

/// Reads any supported .npy file; the dtype is taken from its descr ('<u2' reads as bf16, the only
/// 16-bit unsigned type convcheck stores). The tensor gets `layout`.
Tensor read_npy(const std::string& path, Layout layout = Layout::Plain);

/// Reads a .npy and requires the given dtype and shape; the error names the role (e.g. "input"),
/// the file, what was expected and what the file holds.
Tensor read_npy_expect(const std::string& path, const std::string& role, DType dtype,
                       const Shape& shape, Layout layout);

/// Parses an in-memory .npy image (what read_npy does after reading the file); `name` is used in
/// messages. Exposed for tests and fuzzing.
Tensor parse_npy(const std::string& bytes, const std::string& name, Layout layout = Layout::Plain);

/// Serialises to a version 1.0 image (version 2.0 if the header needs it), header padded so the
/// data starts at a multiple of 64 bytes.
std::string format_npy(const Tensor& t);
/// Writes atomically (temporary file, then rename); throws InvalidArgument when it cannot.
void write_npy(const std::string& path, const Tensor& t);

}  // namespace convcheck
