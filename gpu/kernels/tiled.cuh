// The tiled path: f32-compute implicit GEMMs in shared-memory tiles with register blocking, for
// conv2d (fprop), backprop input / conv2d_transpose (dgrad, one GEMM per stride phase) and
// backprop filter (wgrad, deterministic split-K). f16, bf16 and TF32 problems use it too: their
// operands reach the kernels as f32 canonical copies.
//
// A CTA of kThreads = 128 threads computes a kBM x kBN = 128 x 64 tile of C = A * B, each thread
// an 8 x 8 block (rows ty*8 + i, columns tx*8 + j; ty = tid / 8, tx = tid % 8), over K in steps of
// kBK = 8, double-buffered in shared memory. The CTA's work is written as phases separated by
// barriers, each a `__host__ __device__` function of (cta, thread, shared memory, registers):
//   begin(cta, tid, sm, r)      zero the accumulators, set r.steps (the CTA's K-steps, the same
//                               in every thread), gather K-step 0 into sm buffer 0
//   -- barrier --
//   for kt < r.steps:
//     step(cta, tid, kt, sm, r)   gather K-step kt+1 into registers; FMAs on sm buffer kt&1
//     stage(cta, tid, kt, sm, r)  store the gathered K-step into sm buffer (kt+1)&1
//     -- barrier --
//   end(cta, tid, sm, r)        write the accumulators
// The device runs them in one kernel (gpu/launch.cuh); the host emulation runs each phase for
// all threads of a CTA before the next (gpu/emulator.h). step() reads only the buffer stage()
// does not write, so one barrier per K-step suffices.
//
// Per element of C the sum is one sequential FMA chain in increasing k (a split-K slice for
// wgrad), like the direct path: the same numeric contract. Operand elements outside the GEMM
// (k >= K, rows m >= M, padding taps, out_backprop positions out of range) are loaded as 0 and
// multiplied: an exact 0 term when the other factor is finite. The steps functions therefore take
// this path only when the operand multiplied with those zeros is all finite (checked on the
// device); otherwise the direct path, which skips them, runs (spec: padding is no term, so
// 0 * Inf must never appear).
#pragma once

#include <cstdint>

#include "gpu/kernels/common.cuh"

namespace convcheck::gpu::k::tiled {

inline constexpr int kBM = 128, kBN = 64, kBK = 8, kThreads = 128, kTM = 8, kTN = 8;

struct alignas(16) Smem {
  float a[2][kBK][kBM];  // A tile, k-major
  float b[2][kBK][kBN];  // B tile, k-major
};

CONVCHECK_HD int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// A position in a K (or M) index space of three nested axes (outer, middle, inner), moved
/// forward without divisions: index = (outer * n_mid + mid) * n_in + in.
struct Cursor {
  int64_t outer = 0, mid = 0, in = 0;
  CONVCHECK_HD void advance(int64_t d, int64_t n_mid, int64_t n_in) {
    in += d;
    while (in >= n_in) {
      in -= n_in;
      if (++mid == n_mid) {
        mid = 0;
        ++outer;
      }
    }
  }
  CONVCHECK_HD static Cursor at(int64_t index, int64_t n_mid, int64_t n_in) {
    Cursor c;
    c.in = index % n_in;
    const int64_t r = index / n_in;
    c.mid = r % n_mid;
    c.outer = r / n_mid;
    return c;
  }
};

/// The accumulators and the FMAs of one K-step from shared-memory buffer `buf`.
struct Acc {
  float v[kTM][kTN];
  CONVCHECK_HD void zero() {
    for (int i = 0; i < kTM; ++i)
      for (int j = 0; j < kTN; ++j) v[i][j] = 0.0f;
  }
  CONVCHECK_HD void fma_step(const Smem& sm, int buf, int tid) {
    const int ty = tid / (kBN / kTN), tx = tid % (kBN / kTN);
    CONVCHECK_UNROLL
    for (int kk = 0; kk < kBK; ++kk) {
      float av[kTM], bv[kTN];
      for (int i = 0; i < kTM; ++i) av[i] = sm.a[buf][kk][ty * kTM + i];
      for (int j = 0; j < kTN; ++j) bv[j] = sm.b[buf][kk][tx * kTN + j];
      for (int i = 0; i < kTM; ++i)
        for (int j = 0; j < kTN; ++j) v[i][j] = mul_add(av[i], bv[j], v[i][j]);
    }
  }
};

// Gather layouts of one K-step (kBK x kBM of A, kBK x kBN of B) over the 128 threads:
//   A k-contiguous (fprop, dgrad: channels are the inner K axis): thread tid loads row tid,
//     k = 0..7 (eight consecutive channels);
//   A m-contiguous (wgrad: channels are the inner M axis): k = tid / 16, rows (tid % 16)*8 + 0..7;
//   B (n-contiguous everywhere): k = tid / 16, columns (tid % 16)*4 + 0..3.
inline constexpr int kALoads = kBK * kBM / kThreads;  // 8
inline constexpr int kBLoads = kBK * kBN / kThreads;  // 4
static_assert(kThreads == kBM && kALoads == kBK, "A k-contiguous: one row per thread");
static_assert(kBM / kALoads == 16 && kThreads / 16 == kBK, "A m-contiguous: 16 threads a k");
static_assert(kBN / kBLoads == 16, "B: 16 threads a k");
static_assert((kBM / kTM) * (kBN / kTN) == kThreads, "one 8 x 8 block of C per thread");

CONVCHECK_HD void store_a_kcontig(Smem& sm, int buf, int tid, const float* v) {
  for (int e = 0; e < kALoads; ++e) sm.a[buf][e][tid] = v[e];
}
CONVCHECK_HD void store_a_mcontig(Smem& sm, int buf, int tid, const float* v) {
  const int k = tid / 16, m = (tid % 16) * 8;
  for (int e = 0; e < kALoads; ++e) sm.a[buf][k][m + e] = v[e];
}
CONVCHECK_HD void store_b(Smem& sm, int buf, int tid, const float* v) {
  const int k = tid / 16, n = (tid % 16) * 4;
  for (int e = 0; e < kBLoads; ++e) sm.b[buf][k][n + e] = v[e];
}

// ---- conv2d (fprop)
// ------------------------------------------------------------------------------ Per group g: C[m,
// n] = y[pixel m, g*Og + n], M = N*OH*OW, Ncol = Og = O/G, K = KH*KW*Cf with k = (a*KW + b)*Cf + q;
// A[m, k] = x[n, i*sh + a*dh - pad_top, j*sw + b*dw - pad_left, g*Cf + q] (0 for padding), B[k, n]
// = w[a, b, q, g*Og + n] = w[k*O + g*Og + n].
struct FpropTile {
  ConvShape s;
  const float* x;
  const float* w;
  float* y;
  int64_t M, K, Og, m_tiles, n_tiles;

  struct Regs {
    Acc acc;
    int steps;
    float a_next[kALoads], b_next[kBLoads];
    int64_t row_base;  // offset of x[n, 0, 0, g*Cf]
    int64_t h0, w0;    // i*sh - pad_top, j*sw - pad_left
    bool row_ok;
    Cursor ka;  // (a, b, q) of this thread's first A column in the next K-step
  };

  CONVCHECK_HD int64_t ctas() const { return s.G * m_tiles * n_tiles; }
  CONVCHECK_HD void tile_of(int64_t cta, int64_t* g, int64_t* m0, int64_t* n0) const {
    *n0 = cta % n_tiles * kBN;
    const int64_t r = cta / n_tiles;
    *m0 = r % m_tiles * kBM;
    *g = r / m_tiles;
  }

  CONVCHECK_HD void gather(int64_t cta, int tid, int kt, Regs& r) const {
    int64_t g, m0, n0;
    tile_of(cta, &g, &m0, &n0);
    Cursor c = r.ka;
    for (int e = 0; e < kALoads; ++e) {
      float v = 0.0f;
      if (r.row_ok && c.outer < s.KH) {
        const int64_t h = r.h0 + c.outer * s.dh, wc = r.w0 + c.mid * s.dw;
        if (h >= 0 && h < s.H && wc >= 0 && wc < s.W)
          v = x[r.row_base + (h * s.W + wc) * s.C + c.in];
      }
      r.a_next[e] = v;
      c.advance(1, s.KW, s.Cf);
    }
    r.ka.advance(kBK, s.KW, s.Cf);
    const int64_t k = static_cast<int64_t>(kt) * kBK + tid / 16;
    for (int e = 0; e < kBLoads; ++e) {
      const int64_t n = n0 + (tid % 16) * 4 + e;
      r.b_next[e] = k < K && n < Og ? w[k * s.O + g * Og + n] : 0.0f;
    }
  }

  CONVCHECK_HD void begin(int64_t cta, int tid, Smem& sm, Regs& r) const {
    int64_t g, m0, n0;
    tile_of(cta, &g, &m0, &n0);
    r.acc.zero();
    r.steps = static_cast<int>(ceil_div(K, kBK));
    const int64_t m = m0 + tid;
    r.row_ok = m < M;
    r.row_base = r.h0 = r.w0 = 0;
    if (r.row_ok) {
      const int64_t j = m % s.OW, ni = m / s.OW;
      const int64_t i = ni % s.OH, n = ni / s.OH;
      r.row_base = n * s.H * s.W * s.C + g * s.Cf;
      r.h0 = i * s.sh - s.pad_top;
      r.w0 = j * s.sw - s.pad_left;
    }
    r.ka = Cursor{};
    if (r.steps == 0) return;
    gather(cta, tid, 0, r);
    store_a_kcontig(sm, 0, tid, r.a_next);
    store_b(sm, 0, tid, r.b_next);
  }
  CONVCHECK_HD void step(int64_t cta, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 < r.steps) gather(cta, tid, kt + 1, r);
    r.acc.fma_step(sm, kt & 1, tid);
  }
  CONVCHECK_HD void stage(int64_t, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 >= r.steps) return;
    store_a_kcontig(sm, (kt + 1) & 1, tid, r.a_next);
    store_b(sm, (kt + 1) & 1, tid, r.b_next);
  }
  CONVCHECK_HD void end(int64_t cta, int tid, Smem&, Regs& r) const {
    int64_t g, m0, n0;
    tile_of(cta, &g, &m0, &n0);
    const int ty = tid / (kBN / kTN), tx = tid % (kBN / kTN);
    for (int i = 0; i < kTM; ++i) {
      const int64_t m = m0 + ty * kTM + i;
      if (m >= M) continue;
      for (int j = 0; j < kTN; ++j) {
        const int64_t n = n0 + tx * kTN + j;
        if (n < Og) y[m * s.O + g * Og + n] = r.acc.v[i][j];
      }
    }
  }
};

// ---- backprop input (dgrad), one GEMM per stride phase ------------------------------------------
// Input rows h with (h + pad_top) mod sh = rh form row phase rh: h = h0 + u*sh (h0 =
// (rh - pad_top) mod sh), and only taps a = a_first + ta*a_step (those with (rh - a*dh) divisible
// by sh) reach them, through out_backprop row i = u + i_base - ta*i_step; likewise columns. Per
// (phase, group): C[m, n] = dx[n_img, h, w, g*Cf + n], m = (n_img, u, v), Ncol = Cf,
// K = (count_a * count_b) * Og with k = (ta*count_b + tb)*Og + o;
// A[m, k] = dy[n_img, i, j, g*Og + o] (0 when i, j are out of range),
// B[k, n] = wT[a, b, g*Og + o, n] (the filter with its two channel axes swapped, so that B is
// contiguous along n). A phase without taps has K = 0: its rows are written as zeros.
struct PhaseAxis {
  int64_t first = 0, step = 1, count = 0, i_step = 0, i_base = 0;  // taps and out_backprop offset
  int64_t start = 0, size = 0;                                     // rows start + u*s, u < size
};
CONVCHECK_HD PhaseAxis phase_axis(int64_t rho, int64_t pad, int64_t d, int64_t s, int64_t K,
                                  int64_t extent) {
  PhaseAxis p;
  const int64_t g = gcd64(s, d);
  p.step = s / g;
  p.i_step = d / g;
  p.start = floor_mod(rho - pad, s);
  p.size = p.start < extent ? (extent - 1 - p.start) / s + 1 : 0;
  for (int64_t a = 0; a < p.step && a < K; ++a) {
    if (floor_mod(rho - a * d, s) == 0) {
      p.first = a;
      p.count = (K - 1 - a) / p.step + 1;
      p.i_base = floor_div(p.start + pad - a * d, s);  // exact: divisible by construction
      return p;
    }
  }
  return p;  // no taps
}

struct DgradTile {
  ConvShape s;
  const float* dy;
  const float* wt;  // [KH, KW, O, Cf]
  float* dx;
  int64_t Og, m_tiles, n_tiles;  // m_tiles covers the largest phase

  struct Phase {
    PhaseAxis row, col;
    int64_t g, m0, n0, M, K;
  };
  struct Regs {
    Acc acc;
    int steps;
    float a_next[kALoads], b_next[kBLoads];
    Phase ph;
    int64_t dy_base;  // offset of dy[n_img, 0, 0, g*Og]
    int64_t u, v;
    bool row_ok;
    Cursor ka, kb;  // (ta, tb, o) of the thread's next A column / B row
  };

  CONVCHECK_HD int64_t ctas() const { return s.sh * s.sw * s.G * m_tiles * n_tiles; }
  CONVCHECK_HD Phase phase_of(int64_t cta) const {
    Phase p;
    p.n0 = cta % n_tiles * kBN;
    int64_t r = cta / n_tiles;
    p.m0 = r % m_tiles * kBM;
    r /= m_tiles;
    p.g = r % s.G;
    r /= s.G;
    const int64_t rw = r % s.sw, rh = r / s.sw;
    p.row = phase_axis(rh, s.pad_top, s.dh, s.sh, s.KH, s.H);
    p.col = phase_axis(rw, s.pad_left, s.dw, s.sw, s.KW, s.W);
    p.M = s.N * p.row.size * p.col.size;
    p.K = p.row.count * p.col.count * Og;
    return p;
  }

  CONVCHECK_HD void gather(int tid, Regs& r) const {
    const Phase& p = r.ph;
    Cursor c = r.ka;
    for (int e = 0; e < kALoads; ++e) {
      float v = 0.0f;
      if (r.row_ok && c.outer < p.row.count) {
        const int64_t i = r.u + p.row.i_base - c.outer * p.row.i_step;
        const int64_t j = r.v + p.col.i_base - c.mid * p.col.i_step;
        if (i >= 0 && i < s.OH && j >= 0 && j < s.OW)
          v = dy[r.dy_base + (i * s.OW + j) * s.O + c.in];
      }
      r.a_next[e] = v;
      c.advance(1, p.col.count, Og);
    }
    r.ka.advance(kBK, p.col.count, Og);
    const Cursor& kb = r.kb;  // this thread's B row
    for (int e = 0; e < kBLoads; ++e) {
      const int64_t n = p.n0 + (tid % 16) * 4 + e;
      float v = 0.0f;
      if (kb.outer < p.row.count && n < s.Cf) {
        const int64_t a = p.row.first + kb.outer * p.row.step;
        const int64_t b = p.col.first + kb.mid * p.col.step;
        v = wt[((a * s.KW + b) * s.O + p.g * Og + kb.in) * s.Cf + n];
      }
      r.b_next[e] = v;
    }
    r.kb.advance(kBK, p.col.count, Og);
  }

  CONVCHECK_HD void begin(int64_t cta, int tid, Smem& sm, Regs& r) const {
    r.ph = phase_of(cta);
    const Phase& p = r.ph;
    r.acc.zero();
    r.steps = p.m0 < p.M ? static_cast<int>(ceil_div(p.K, kBK)) : 0;
    const int64_t m = p.m0 + tid;
    r.row_ok = m < p.M;
    r.u = r.v = r.dy_base = 0;
    if (r.row_ok) {
      r.v = m % p.col.size;
      const int64_t nu = m / p.col.size;
      r.u = nu % p.row.size;
      r.dy_base = nu / p.row.size * s.OH * s.OW * s.O + p.g * Og;
    }
    r.ka = Cursor{};
    r.kb = p.col.count > 0 && Og > 0 ? Cursor::at(tid / 16, p.col.count, Og) : Cursor{};
    if (r.steps == 0) return;  // no taps (or no rows): end() writes the zeros
    gather(tid, r);
    store_a_kcontig(sm, 0, tid, r.a_next);
    store_b(sm, 0, tid, r.b_next);
  }
  CONVCHECK_HD void step(int64_t, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 < r.steps) gather(tid, r);
    r.acc.fma_step(sm, kt & 1, tid);
  }
  CONVCHECK_HD void stage(int64_t, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 >= r.steps) return;
    store_a_kcontig(sm, (kt + 1) & 1, tid, r.a_next);
    store_b(sm, (kt + 1) & 1, tid, r.b_next);
  }
  CONVCHECK_HD void end(int64_t, int tid, Smem&, Regs& r) const {
    const Phase& p = r.ph;
    const int ty = tid / (kBN / kTN), tx = tid % (kBN / kTN);
    for (int i = 0; i < kTM; ++i) {
      const int64_t m = p.m0 + ty * kTM + i;
      if (m >= p.M) continue;
      const int64_t v = m % p.col.size, nu = m / p.col.size;
      const int64_t u = nu % p.row.size, n_img = nu / p.row.size;
      const int64_t h = p.row.start + u * s.sh, wc = p.col.start + v * s.sw;
      float* out = dx + ((n_img * s.H + h) * s.W + wc) * s.C + p.g * s.Cf;
      for (int j = 0; j < kTN; ++j) {
        const int64_t n = p.n0 + tx * kTN + j;
        if (n < s.Cf) out[n] = r.acc.v[i][j];
      }
    }
  }
};

/// wT[a, b, o, q] = w[a, b, q, o]: the filter with its channel axes swapped (dgrad's B operand).
struct FilterSwapIO {
  ConvShape s;
  const float* w;
  float* wt;
  CONVCHECK_HD void operator()(int64_t idx) const {  // idx over wT
    const int64_t q = idx % s.Cf, r = idx / s.Cf;
    const int64_t o = r % s.O, tap = r / s.O;
    wt[idx] = w[(tap * s.Cf + q) * s.O + o];
  }
};

// ---- backprop filter (wgrad), deterministic split-K
// ---------------------------------------------- Per group g: C[m, n] = dw[a, b, q, g*Og + n] with
// m = (a*KW + b)*Cf + q, M = KH*KW*Cf, Ncol = Og; K = N*OH*OW with k = t = (n*OH + i)*OW + j, cut
// into the plan's chunks (a slice per CTA); A[m, t] = x[n, i*sh + a*dh - pad_top, j*sw + b*dw -
// pad_left, g*Cf + q] (0 for padding), B[t, n] = dy[t, g*Og + n]. A slice's tile goes to
// partials[slice][E] (E = filter elements) for the fixed-order ReduceChunks, or straight to dw when
// there is one slice.
struct WgradTile {
  ConvShape s;
  const float* x;
  const float* dy;
  float* out;  // partials [chunks][E], or dw
  int64_t Og, M, m_tiles, n_tiles, chunks, chunk_len, reduce_len;

  struct Regs {
    Acc acc;
    int steps;
    float a_next[kALoads], b_next[kBLoads];
    int64_t g, m0, n0, t0, t1;
    Cursor mc;  // (a, b, q) of this thread's first A row
    Cursor tc;  // (n, i, j) of this thread's t in the next K-step
    int64_t t;
  };

  CONVCHECK_HD int64_t ctas() const { return s.G * m_tiles * n_tiles * chunks; }
  CONVCHECK_HD void tile_of(int64_t cta, int64_t* g, int64_t* m0, int64_t* n0,
                            int64_t* chunk) const {
    *chunk = cta % chunks;
    int64_t r = cta / chunks;
    *n0 = r % n_tiles * kBN;
    r /= n_tiles;
    *m0 = r % m_tiles * kBM;
    *g = r / m_tiles;
  }

  CONVCHECK_HD void gather(int tid, Regs& r) const {
    const bool t_ok = r.t < r.t1;
    Cursor c = r.mc;
    for (int e = 0; e < kALoads; ++e) {
      float v = 0.0f;
      if (t_ok && c.outer < s.KH) {
        const int64_t h = r.tc.mid * s.sh + c.outer * s.dh - s.pad_top;
        const int64_t wc = r.tc.in * s.sw + c.mid * s.dw - s.pad_left;
        if (h >= 0 && h < s.H && wc >= 0 && wc < s.W)
          v = x[((r.tc.outer * s.H + h) * s.W + wc) * s.C + r.g * s.Cf + c.in];
      }
      r.a_next[e] = v;
      c.advance(1, s.KW, s.Cf);
    }
    for (int e = 0; e < kBLoads; ++e) {
      const int64_t n = r.n0 + (tid % 16) * 4 + e;
      r.b_next[e] = t_ok && n < Og ? dy[r.t * s.O + r.g * Og + n] : 0.0f;
    }
    r.t += kBK;
    if (r.t < r.t1) r.tc.advance(kBK, s.OH, s.OW);
  }

  CONVCHECK_HD void begin(int64_t cta, int tid, Smem& sm, Regs& r) const {
    int64_t chunk;
    tile_of(cta, &r.g, &r.m0, &r.n0, &chunk);
    r.acc.zero();
    r.t0 = chunk * chunk_len;
    r.t1 = min64(reduce_len, r.t0 + chunk_len);
    r.steps = r.t1 > r.t0 ? static_cast<int>(ceil_div(r.t1 - r.t0, kBK)) : 0;
    r.mc = Cursor::at(r.m0 + (tid % 16) * 8, s.KW, s.Cf);
    r.t = r.t0 + tid / 16;
    r.tc = Cursor{};
    if (r.steps == 0) return;  // no terms: end() writes zeros
    r.tc = Cursor::at(min64(r.t, r.t1 - 1), s.OH, s.OW);
    gather(tid, r);
    store_a_mcontig(sm, 0, tid, r.a_next);
    store_b(sm, 0, tid, r.b_next);
  }
  CONVCHECK_HD void step(int64_t, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 < r.steps) gather(tid, r);
    r.acc.fma_step(sm, kt & 1, tid);
  }
  CONVCHECK_HD void stage(int64_t, int tid, int kt, Smem& sm, Regs& r) const {
    if (kt + 1 >= r.steps) return;
    store_a_mcontig(sm, (kt + 1) & 1, tid, r.a_next);
    store_b(sm, (kt + 1) & 1, tid, r.b_next);
  }
  CONVCHECK_HD void end(int64_t cta, int tid, Smem&, Regs& r) const {
    int64_t g, m0, n0, chunk;
    tile_of(cta, &g, &m0, &n0, &chunk);
    const int64_t E = M * s.G * Og;  // = KH*KW*Cf*O
    float* dst = out + (chunks > 1 ? chunk * E : 0);
    const int ty = tid / (kBN / kTN), tx = tid % (kBN / kTN);
    for (int i = 0; i < kTM; ++i) {
      const int64_t m = m0 + ty * kTM + i;
      if (m >= M) continue;
      for (int j = 0; j < kTN; ++j) {
        const int64_t n = n0 + tx * kTN + j;
        if (n < Og) dst[m * s.O + g * Og + n] = r.acc.v[i][j];
      }
    }
  }
};

/// flag = 1 when element i is NaN or +-Inf (every writer writes the same value).
struct FlagNonFinite {
  const float* p;
  int* flag;
  CONVCHECK_HD void operator()(int64_t i) const {
    if ((bits_of(p[i]) & 0x7F800000u) == 0x7F800000u) *flag = 1;
  }
};

}  // namespace convcheck::gpu::k::tiled
