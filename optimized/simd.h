// Vector traits the micro-kernels are written against: one struct per (ISA, element type).
//
// A trait names the element type T, the register type V, its width W in elements, and the few
// operations the kernels use: zero, load, broadcast, fused multiply-add, store, and the partial
// (masked) load/store of the first n lanes (n <= 0: none; n >= W: all). Partial loads never touch
// memory beyond the n lanes (masked loads do not fault), so a kernel can stop exactly at the end
// of a buffer.
//
// Which traits exist depends on the flags the including file is compiled with: Scalar always;
// the AVX2 ones under __AVX2__ and __FMA__; the AVX-512 ones under __AVX512F__. Only the
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
  static constexpr bool kTranspose = false;
  static constexpr int kRegs = 16;  // vector registers
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
  static constexpr bool kTranspose = false;
  static constexpr int kRegs = 16;  // vector registers
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static V bcast(const T* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_n(T* p, V v, int64_t n) { _mm256_maskstore_ps(p, mask(n), v); }
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
  static constexpr bool kTranspose = false;
  static constexpr int kRegs = 16;  // vector registers
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static V bcast(const T* p) { return _mm256_broadcast_sd(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm256_maskload_pd(p, mask(n)); }
  static void store_n(T* p, V v, int64_t n) { _mm256_maskstore_pd(p, mask(n), v); }
};
#endif

#if defined(__AVX512F__)
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
  static V load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_n(T* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  // (The _maskz_ forms with a full mask are the plain instructions; GCC 12 warns about the
  // unmasked intrinsics' internal undefined operand.)
  // Transposes the 16 x 16 block src[i*lds + j] into dst[j*ldd + i]; ORs into *nonfinite a mask
  // whose bits mark rows that hold an Inf or NaN.
  static constexpr bool kTranspose = true;
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
  static constexpr bool kTranspose = false;
  static constexpr int kRegs = 32;  // vector registers
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static V bcast(const T* p) { return _mm512_set1_pd(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static V load_n(const T* p, int64_t n) { return _mm512_maskz_loadu_pd(mask(n), p); }
  static void store_n(T* p, V v, int64_t n) { _mm512_mask_storeu_pd(p, mask(n), v); }
};
#endif
