#include "core/limits.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace convcheck {

namespace {

uint64_t g_limit = 0;  // 0: not set, use the default
constexpr uint64_t kSaturated = UINT64_MAX;
constexpr uint64_t kPerElementExtra = 32;

uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}
uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
uint64_t elements(const std::array<int64_t, 4>& s) {
  uint64_t n = 1;
  for (int64_t d : s) n = sat_mul(n, d > 0 ? static_cast<uint64_t>(d) : 0);
  return n;
}
std::string shape_text(const std::array<int64_t, 4>& s) {
  return shape_string(Shape(s.begin(), s.end()));
}

}  // namespace

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return sat_mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page));
}

uint64_t default_memory_limit() {
  const uint64_t phys = physical_memory_bytes();
  return phys ? phys / 2 : uint64_t{4} << 30;
}

uint64_t memory_limit() {
  return g_limit ? g_limit : default_memory_limit();
}

void set_memory_limit(uint64_t bytes) {
  if (bytes == 0) throw InvalidArgument("the memory limit must be positive");
  g_limit = bytes;
}

void reset_memory_limit() {
  g_limit = 0;
}

bool memory_limit_is_default() {
  return g_limit == 0;
}

const char* memory_use_name(MemoryUse use) {
  switch (use) {
    case MemoryUse::compute:
      return "compute";
    case MemoryUse::bench:
      return "bench";
    case MemoryUse::oracle:
      return "the oracle (check, fuzz, run)";
  }
  return "?";
}

int memory_factor(MemoryUse use) {
  return use == MemoryUse::oracle ? 4 : 2;
}

MemoryEstimate estimate_memory(const Problem& p, const Geometry& g, MemoryUse use) {
  MemoryEstimate e;
  const uint64_t per = dtype_size(p.dtype) + kPerElementExtra;
  uint64_t total_elements = 0;
  for (Role r : {Role::input, Role::filter, Role::out_backprop}) {
    const std::array<int64_t, 4> s = logical_shape(g, r);
    const uint64_t n = elements(s);
    total_elements = sat_add(total_elements, n);
    e.breakdown += std::string(e.breakdown.empty() ? "" : ", ") + role_name(r) + " " +
                   shape_text(s) + " " + std::to_string(n) + (n == 1 ? " element" : " elements");
  }
  // valid_padded (oracle/relations.cpp) materialises the zero-padded input.
  const bool padded = p.padding.kind == PaddingKind::EXPLICIT &&
                      (g.pad_top || g.pad_bottom || g.pad_left || g.pad_right);
  if (use == MemoryUse::oracle && padded) {
    const std::array<int64_t, 4> s = {g.N, g.H + g.pad_top + g.pad_bottom,
                                      g.W + g.pad_left + g.pad_right, g.C};
    const uint64_t n = elements(s);
    total_elements = sat_add(total_elements, n);
    e.breakdown += ", zero-padded input " + shape_text(s) + " " + std::to_string(n) +
                   (n == 1 ? " element" : " elements");
  }
  const int factor = memory_factor(use);
  e.bytes = sat_mul(sat_mul(total_elements, per), static_cast<uint64_t>(factor));
  e.breakdown += "; " + std::to_string(per) + " bytes each (" + dtype_name(p.dtype) + " " +
                 std::to_string(dtype_size(p.dtype)) + " + " + std::to_string(kPerElementExtra) +
                 " for the reference's companions), x" + std::to_string(factor) + " for " +
                 memory_use_name(use);
  return e;
}

namespace {
std::string limit_text(uint64_t max_bytes) {
  const bool is_default = memory_limit_is_default() && max_bytes == memory_limit();
  return "the memory limit of " + format_bytes(max_bytes) + " (" + std::to_string(max_bytes) +
         " bytes" +
         (is_default ? ", half of physical memory; set it with --max-bytes" : ", --max-bytes") +
         ")";
}
}  // namespace

Status check_memory(const Problem& p, const Geometry& g, MemoryUse use, uint64_t max_bytes) {
  const MemoryEstimate e = estimate_memory(p, g, use);
  if (e.bytes <= max_bytes) return Status::Ok();
  const std::string needs =
      e.bytes == kSaturated ? "more than 2^64 bytes"
                            : format_bytes(e.bytes) + " (" + std::to_string(e.bytes) + " bytes)";
  return Status::Error(std::string(op_name(p.op)) + ": the problem needs " + needs +
                       " of memory, more than " + limit_text(max_bytes) +
                       "; refused before allocating: " + e.breakdown);
}

void require_memory(const Problem& p, const Geometry& g, MemoryUse use, uint64_t max_bytes) {
  if (Status s = check_memory(p, g, use, max_bytes); !s.ok()) throw ResourceLimit(s.reason());
}

void require_memory(const Problem& p, const Geometry& g, MemoryUse use) {
  require_memory(p, g, use, memory_limit());
}

void require_allocation(uint64_t bytes, const std::string& what) {
  const uint64_t max_bytes = memory_limit();
  if (bytes <= max_bytes) return;
  throw ResourceLimit(what + " needs " + format_bytes(bytes) + " (" + std::to_string(bytes) +
                      " bytes), more than " + limit_text(max_bytes) +
                      "; refused before allocating");
}

std::string format_bytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v < 10    ? "%.2f %s"
                : v < 100 ? "%.1f %s"
                          : "%.0f %s",
                v, kUnits[u]);
  return buf;
}

uint64_t parse_byte_size(std::string_view text, const std::string& what) {
  const std::string shown(text.substr(0, 64));
  auto bad = [&](const std::string& why) {
    return InvalidArgument(what + " '" + shown + "': " + why +
                           " (expected a positive byte count, optionally with a binary suffix "
                           "K, M, G, T or P, e.g. 8G)");
  };
  std::size_t i = 0;
  uint64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) throw bad("does not fit in 64 bits");
    v = v * 10 + digit;
    ++i;
  }
  if (i == 0) throw bad("not a number");
  std::string suffix;
  for (; i < text.size(); ++i)
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    static const char kLetters[] = "KMGTP";
    std::size_t k = 0;
    while (kLetters[k] && suffix[0] != kLetters[k]) ++k;
    const std::string rest = suffix.substr(1);
    if (!kLetters[k] || !(rest.empty() || rest == "B" || rest == "IB")) {
      throw bad("unknown suffix '" + std::string(text.substr(text.size() - suffix.size())) + "'");
    }
    shift = 10 * static_cast<int>(k + 1);
  }
  if (v == 0) throw bad("must be positive");
  if (shift && v > (UINT64_MAX >> shift)) throw bad("does not fit in 64 bits");
  return v << shift;
}

int max_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (cpus <= 0) cpus = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  return std::max(kMinThreadCap, kThreadsPerCpu * cpus);
}

void check_thread_count(long long n, const std::string& what) {
  const int cap = max_threads();
  if (n < 1 || n > cap)
    throw InvalidArgument(what + ": expected a thread count from 1 to " + std::to_string(cap) +
                          " (" + std::to_string(kThreadsPerCpu) +
                          " per CPU this process may use), got " + std::to_string(n));
}

std::vector<int> parse_thread_counts(std::string_view text, const std::string& what,
                                     const std::string& expected) {
  std::vector<int> counts;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string item(text.substr(0, comma));
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != 0 || errno == ERANGE)
      throw InvalidArgument(what + ": " + expected + ", got '" + item + "'");
    check_thread_count(n, what);
    counts.push_back(static_cast<int>(n));
    if (comma == std::string_view::npos) return counts;
    text.remove_prefix(comma + 1);
  }
}

void check_thread_environment() {
  for (const char* var : {"OMP_NUM_THREADS", "OMP_THREAD_LIMIT"}) {
    const char* e = std::getenv(var);
    if (!e || !*e) continue;
    // OMP_NUM_THREADS is a list, one count per nesting level: "8" or "4,2"; OMP_THREAD_LIMIT is
    // one number (the OpenMP runtime would ignore "4,2" there, and run with no limit).
    const bool list = std::string(var) == "OMP_NUM_THREADS";
    const std::string what = std::string(var) + "=" + e;
    const std::string expected =
        std::string("expected a positive integer") + (list ? " or a list of them" : "");
    if (parse_thread_counts(e, what, expected).size() > 1 && !list)
      throw InvalidArgument(what + ": " + expected + ", got a list");
  }
}

}  // namespace convcheck
