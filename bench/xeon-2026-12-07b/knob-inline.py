KNOB=[("if (f.fetch_add(1, std::memory_order_acq_rel) == chunks - 1) sum_piece(part, piece);",
       "if (f.fetch_add(1, std::memory_order_acq_rel) == chunks - 1 && g_pair_val) sum_piece(part, piece);"),
("    if (mirrored) {  // dw[q][o]",
 """    if (chunks > 1 && !g_pair_val) {
#pragma omp barrier
      int64_t e0, e1;
      split_range(filter_elements, nt, tid, &e0, &e1);
      kt.sum_into(first + e0, partial + e0, filter_elements, chunks - 1, e1 - e0);
    }
    if (mirrored) {  // dw[q][o]""")]
