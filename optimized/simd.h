// Vector traits the micro-kernels are written against: one struct per (ISA, element type).
//
// A trait names the element type T, the register type V, its width W in elements, and the few
// operations the kernels use: zero, load, broadcast, fused multiply-add, store, a non-temporal
// store (stream: p aligned to the vector's width), and the partial
// (masked) load/store of the first n lanes (n <= 0: none; n >= W: all). Partial loads never touch
// memory beyond the n lanes (masked loads do not fault), so a kernel can stop exactly at the end
// of a buffer.
//
// Which traits exist depends on the flags the including file is compiled with: Scalar always;
// the AVX2 ones under __AVX2__ and __FMA__; the AVX-512 ones under __AVX512F__ (or, emulated
// through SIMDe on AVX2, CONVCHECK_OPT_AVX512_EMULATED: avx512_emulation.h). Only the
// kernels_<isa>.cpp files include this header, each inside its own namespace (so that inline
// functions compiled for different ISAs never merge at link time), after <cstdint> and, for the
// vector ISAs, <immintrin.h>. Hence no include guard and no includes here.

/// Portable lanes of one element. `fma` is a multiply then an add (two roundings for floats, as the
/// generic build has no fused multiply-add; wrapping arithmetic for uint32_t).
template <class E>
struct Scalar {
  using T = E;
  using V = E;
  static constexpr int W = 1;
  static V zero() { return E(0); }
  static V load(const E* p) { return *p; }
  static V bcast(const E* p) { return *p; }
  static V fma(V a, V b, V c) { return a * b + c; }
  static V add(V a, V b) { return a + b; }
  static void store(E* p, V v) { *p = v; }
  static void stream(E* p, V v) { *p = v; }
  static constexpr int kTranspose = 0;  // no transpose_block
  static constexpr int kRegs = 16;      // vector registers
  static V load_n(const E* p, int64_t n) { return n > 0 ? *p : E(0); }
  static void store_n(E* p, V v, int64_t n) {
    if (n > 0) *p = v;
  }
};

#if defined(__AVX2__) && defined(__FMA__)
struct Avx2F32 {
  using T = float;
  using V = __m256;
  static constexpr int W = 8;
  static __m256i mask(int64_t n) {
    static const int32_t table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    const int64_t k = n < 0 ? 0 : n > 8 ? 8 : n;
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - k));
  }
  static constexpr int kRegs = 16;  // vector registers
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static V bcast(const T* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static void stream(T* p, V v) { _mm256_stream_ps(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_n(T* p, V v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
  // Transposes the 8 x 8 block src[i*lds + j] into dst[j*ldd + i]; ORs into *nonfinite a mask
  // that is nonzero iff the block holds an Inf or NaN.
  static constexpr int kTranspose = 8;
  static void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd, uint32_t* nonfinite) {
    __m256 r[8], t[8];
    __m256 bad = _mm256_setzero_ps();
    for (int i = 0; i < 8; ++i) {
      r[i] = _mm256_loadu_ps(src + i * lds);
      bad = _mm256_or_ps(
          bad, _mm256_cmp_ps(_mm256_sub_ps(r[i], r[i]), _mm256_setzero_ps(), _CMP_NEQ_UQ));
    }
    *nonfinite |= static_cast<uint32_t>(_mm256_movemask_ps(bad));
    // pairs of rows interleaved, then quads, then the 128-bit halves exchanged
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h) {
      r[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; ++i) {
      _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[4 + i], 0x20));
      _mm256_storeu_ps(dst + (4 + i) * ldd, _mm256_permute2f128_ps(r[i], r[4 + i], 0x31));
    }
  }
};

struct Avx2F64 {
  using T = double;
  using V = __m256d;
  static constexpr int W = 4;
  static __m256i mask(int64_t n) {
    static const int64_t table[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
    const int64_t k = n < 0 ? 0 : n > 4 ? 4 : n;
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 4 - k));
  }
  static constexpr int kRegs = 16;  // vector registers
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static V bcast(const T* p) { return _mm256_broadcast_sd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static void stream(T* p, V v) { _mm256_stream_pd(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm256_maskload_pd(p, mask(n)); }
  static void store_n(T* p, V v, int64_t n) { _mm256_maskstore_pd(p, mask(n), v); }
  // Transposes the 4 x 4 block src[i*lds + j] into dst[j*ldd + i] (nonfinite as Avx2F32's).
  static constexpr int kTranspose = 4;
  static void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd, uint32_t* nonfinite) {
    __m256d r[4];
    __m256d bad = _mm256_setzero_pd();
    for (int i = 0; i < 4; ++i) {
      r[i] = _mm256_loadu_pd(src + i * lds);
      bad = _mm256_or_pd(
          bad, _mm256_cmp_pd(_mm256_sub_pd(r[i], r[i]), _mm256_setzero_pd(), _CMP_NEQ_UQ));
    }
    *nonfinite |= static_cast<uint32_t>(_mm256_movemask_pd(bad));
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    _mm256_storeu_pd(dst, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(dst + ldd, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(dst + 2 * ldd, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(dst + 3 * ldd, _mm256_permute2f128_pd(t1, t3, 0x31));
  }
};
#endif

#if defined(__AVX512F__) || defined(CONVCHECK_OPT_AVX512_EMULATED)
struct Avx512F32 {
  using T = float;
  using V = __m512;
  static constexpr int W = 16;
  static __mmask16 mask(int64_t n) {
    return n <= 0 ? __mmask16(0) : n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static V bcast(const T* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static void stream(T* p, V v) { _mm512_stream_ps(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_n(T* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  // (The _maskz_ forms with a full mask are the plain instructions; GCC 12 warns about the
  // unmasked intrinsics' internal undefined operand.)
  // Transposes the 16 x 16 block src[i*lds + j] into dst[j*ldd + i]; ORs into *nonfinite a mask
  // that is nonzero iff the block holds an Inf or NaN.
  static constexpr int kTranspose = 16;
  static constexpr int kRegs = 32;
  static void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd, uint32_t* nonfinite) {
    __m512 r[16], t[16];
    __mmask16 bad = 0;
    for (int i = 0; i < 16; ++i) {
      r[i] = _mm512_loadu_ps(src + i * lds);
      bad |= _mm512_cmp_ps_mask(_mm512_sub_ps(r[i], r[i]), _mm512_setzero_ps(), _CMP_NEQ_UQ);
    }
    *nonfinite |= bad;
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
      r[4 * i] = _mm512_maskz_shuffle_ps(0xFFFF, t[4 * i], t[4 * i + 2], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * i + 1] =
          _mm512_maskz_shuffle_ps(0xFFFF, t[4 * i], t[4 * i + 2], _MM_SHUFFLE(3, 2, 3, 2));
      r[4 * i + 2] =
          _mm512_maskz_shuffle_ps(0xFFFF, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(1, 0, 1, 0));
      r[4 * i + 3] =
          _mm512_maskz_shuffle_ps(0xFFFF, t[4 * i + 1], t[4 * i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int h = 0; h < 2; ++h) {
      for (int i = 0; i < 4; ++i) {
        t[8 * h + i] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 * h + i], r[8 * h + 4 + i], 0x88);
        t[8 * h + 4 + i] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 * h + i], r[8 * h + 4 + i], 0xdd);
      }
    }
    for (int i = 0; i < 8; ++i) {
      r[i] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[8 + i], 0x88);
      r[8 + i] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[i], t[8 + i], 0xdd);
    }
    for (int i = 0; i < 16; ++i) _mm512_storeu_ps(dst + i * ldd, r[i]);
  }
};

struct Avx512F64 {
  using T = double;
  using V = __m512d;
  static constexpr int W = 8;
  static __mmask8 mask(int64_t n) {
    return n <= 0 ? __mmask8(0) : n >= 8 ? __mmask8(0xFF) : __mmask8((1u << n) - 1);
  }
  static constexpr int kRegs = 32;  // vector registers
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static V bcast(const T* p) { return _mm512_set1_pd(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static void stream(T* p, V v) { _mm512_stream_pd(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_pd(mask(n), p); }
  static void store_n(T* p, V v, int64_t n) { _mm512_mask_storeu_pd(p, mask(n), v); }
  // Transposes the 8 x 8 block src[i*lds + j] into dst[j*ldd + i] (nonfinite as Avx512F32's).
  static constexpr int kTranspose = 8;
  static void transpose_block(const T* src, int64_t lds, T* dst, int64_t ldd, uint32_t* nonfinite) {
    __m512d r[8], t[8];
    __mmask8 bad = 0;
    for (int i = 0; i < 8; ++i) {
      r[i] = _mm512_loadu_pd(src + i * lds);
      bad |= _mm512_cmp_pd_mask(_mm512_sub_pd(r[i], r[i]), _mm512_setzero_pd(), _CMP_NEQ_UQ);
    }
    *nonfinite |= bad;
    // pairs of rows interleaved; then 128-bit lanes gathered twice (lanes 0 and 2, or 1 and 3)
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = _mm512_maskz_unpacklo_pd(0xFF, r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm512_maskz_unpackhi_pd(0xFF, r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 2; ++i) {
        r[4 * h + i] = _mm512_maskz_shuffle_f64x2(0xFF, t[4 * h + i], t[4 * h + 2 + i], 0x88);
        r[4 * h + 2 + i] = _mm512_maskz_shuffle_f64x2(0xFF, t[4 * h + i], t[4 * h + 2 + i], 0xdd);
      }
    // r[0..3] hold columns {0,4}, {1,5}, {2,6}, {3,7} of rows 0-3; r[4..7] of rows 4-7
    for (int i = 0; i < 4; ++i) {
      _mm512_storeu_pd(dst + i * ldd, _mm512_maskz_shuffle_f64x2(0xFF, r[i], r[4 + i], 0x88));
      _mm512_storeu_pd(dst + (4 + i) * ldd, _mm512_maskz_shuffle_f64x2(0xFF, r[i], r[4 + i], 0xdd));
    }
  }
};
#endif
