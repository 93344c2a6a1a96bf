KNOB=[("""      kt.sum_into(first + e0, partial + e0, filter_elements, chunks - 1, e1 - e0);""",
"""      if (!g_pair_val) {
        kt.sum_into(first + e0, partial + e0, filter_elements, chunks - 1, e1 - e0);
      } else {
        const int64_t blk = 1024 * g_pair_val;
        for (int64_t b = e0; b < e1; b += blk) {
          const int64_t n = std::min(blk, e1 - b);
          const int64_t nb = std::min(blk, std::max<int64_t>(0, e1 - b - n));
          for (int64_t c = 0; c < chunks - 1; ++c) {
            const char* q = reinterpret_cast<const char*>(partial + c * filter_elements + b + n);
            for (int64_t o = 0; o < nb * (int64_t)sizeof(T); o += 64) __builtin_prefetch(q + o, 0, 2);
          }
          kt.sum_into(first + b, partial + b, filter_elements, chunks - 1, n);
        }
      }""")]
