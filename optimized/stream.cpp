// Streamed (non-temporal) stores of results: when an op may use them (internal.h, stream_result),
// the switch and counters the tests use, and the fence that ends a streamed piece.
#include <atomic>
#include <cstdint>

#include "optimized/internal.h"

namespace convcheck::opt {

namespace {
bool g_allow_streamed = true;  // allow_streamed_stores (tests)
std::atomic<int64_t> g_streamed_rows{0};
}  // namespace

bool stream_result(bool may_stream, Isa isa, const void* out, int64_t bytes) {
  return g_allow_streamed && may_stream && isa != Isa::generic && over_twice_l2(bytes) &&
         reinterpret_cast<uintptr_t>(out) % kLine == 0;
}

bool stream_depthwise_rows(const Geometry& g, Isa isa, const void* out, int64_t result_elements,
                           int64_t elem, bool may_stream) {
  return g.M == 1 && g.KH * g.KW <= kDepthwiseGroupTaps && (g.C * elem) % kLine == 0 &&
         stream_result(may_stream, isa, out, result_elements * elem);
}

void allow_streamed_stores(bool allow) {
  g_allow_streamed = allow;
}

int64_t streamed_depthwise_rows_for_tests() {
  return g_streamed_rows.exchange(0, std::memory_order_relaxed);
}

void end_streamed_rows(int64_t rows) {
  store_fence();
  g_streamed_rows.fetch_add(rows, std::memory_order_relaxed);
}

}  // namespace convcheck::opt
