// Fuzz target: the .npy reader (core/npy.h).
//
// For any input: parse_npy (the in-memory image) either refuses it with InvalidArgument or returns
// a tensor; read_npy on the same bytes as a file (a memfd: the regular-file path, sizes checked
// against fstat) and, for inputs that fit a pipe's buffer, through a pipe (the path for devices
// and pipes, read whole) must agree: both refuse, or both return the same dtype, shape and bytes.
// An accepted tensor survives format_npy -> parse_npy unchanged, and every element reads as a
// double. Anything else (another exception, a sanitizer report, a disagreement) is a finding.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/npy.h"
#include "fuzz/fuzz_common.h"

using namespace convcheck;
using convcheck::fuzz::finding;
using convcheck::fuzz::MemFile;

namespace {

struct Outcome {
  std::optional<Tensor> tensor;  // empty: refused
  std::string message;
};

template <class F>
Outcome attempt(F&& f, std::string_view input, const char* who) {
  Outcome o;
  try {
    o.tensor = f();
  } catch (const InvalidArgument& e) {
    o.message = e.what();
    if (o.message.empty()) finding(std::string(who) + ": empty refusal message", input);
  }
  return o;
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.bytes() == b.bytes() &&
         (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

void agree(const Outcome& a, const Outcome& b, const char* who, std::string_view input) {
  if (a.tensor.has_value() != b.tensor.has_value()) {
    finding(std::string("parse_npy and ") + who + " disagree: " +
                (a.tensor ? "parse_npy accepts, " + std::string(who) + " says: " + b.message
                          : "parse_npy says: " + a.message + "; " + who + " accepts"),
            input);
  }
  if (a.tensor && !same(*a.tensor, *b.tensor))
    finding(std::string("parse_npy and ") + who + " read different tensors", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const std::string_view input(bytes);

  const Outcome parsed = attempt([&] { return parse_npy(bytes, "fuzz.npy"); }, input, "parse_npy");
  {
    const MemFile file(input);
    agree(parsed, attempt([&] { return read_npy(file.path()); }, input, "read_npy"), "read_npy",
          input);
  }
  if (size < 60000) {  // fits the pipe buffer: written whole before it is read
    int fds[2];
    if (pipe(fds) != 0) finding("pipe() failed", input);
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = write(fds[1], bytes.data() + done, size - done);
      if (n <= 0) finding("write to pipe failed", input);
      done += static_cast<std::size_t>(n);
    }
    close(fds[1]);
    const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
    agree(parsed, attempt([&] { return read_npy(path); }, input, "read_npy (pipe)"),
          "read_npy (pipe)", input);
    close(fds[0]);
  }
  if (!parsed.tensor) return 0;

  const Tensor& t = *parsed.tensor;
  const std::string image = format_npy(t);
  const Outcome again = attempt([&] { return parse_npy(image, "again.npy"); }, input, "again");
  if (!again.tensor)
    finding("format_npy of an accepted tensor is refused: " + again.message, input);
  if (!same(t, *again.tensor)) finding("format_npy -> parse_npy changed the tensor", input);
  if (format_npy(*again.tensor) != image) finding("format_npy is not stable", input);
  double sink = 0;
  for (int64_t i = 0; i < t.size(); ++i) sink += t.get(i) == t.get(i) ? 0 : 1;
  (void)sink;
  return 0;
}
