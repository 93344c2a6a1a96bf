// Shared by the fuzz targets: how a target reports a broken invariant (a "finding"), and a
// scratch file holding the input, for the readers that take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace convcheck::fuzz {

/// A broken invariant: says what, with the input (escaped), and aborts, which libFuzzer records as
/// a crash with the input saved (and the replay driver reports as a failure).
[[noreturn]] inline void finding(const std::string& what, std::string_view input) {
  std::string shown;
  for (std::size_t i = 0; i < input.size() && i < 2000; ++i) {
    const unsigned char c = static_cast<unsigned char>(input[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      shown += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      shown += buf;
    }
  }
  std::fprintf(stderr, "FINDING: %s\n  input (%zu bytes): \"%s\"\n", what.c_str(), input.size(),
               shown.c_str());
  std::abort();
}

/// The input as an anonymous in-memory file (memfd), reachable by path as /proc/self/fd/N: the
/// readers' file paths (fstat, fseek, sizes checked against the file) get fuzzed too.
class MemFile {
 public:
  explicit MemFile(std::string_view bytes) {
    fd_ = memfd_create("convcheck-fuzz", 0);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n <= 0) {
        std::perror("write");
        std::abort();
      }
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace convcheck::fuzz
