/*
 * convcheck plugin ABI, version 1: how a third-party convolution kernel is judged by convcheck.
 *
 * A plugin is a shared library that exports one C function,
 *
 *     const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version);
 *
 * returning a table of plain function pointers (below). Name it on any convcheck command as the
 * backend `plugin:PATH` (check, fuzz, run, bench):
 *
 *     convcheck check 'conv2d_backprop_input:input=1x5x5x3,filter=3x3x3x2,padding=SAME' \
 *         --backends plugin:./libmykernel.so,reference
 *
 * convcheck never loads a plugin into its own process. A helper process (convcheck-plugin-host)
 * loads it and calls it; operands and the result live in shared memory surrounded by inaccessible
 * guard pages, and the other bytes of a buffer's pages hold canaries. A problem is run with every
 * buffer starting right after a guard page, and once also with every buffer ending as close to the
 * next one as 64-byte alignment allows. So:
 *   - a write past the result, or a read past either end of a buffer that reaches a guard page,
 *     is the verdict `fail [out_of_bounds]`, a write to an operand (mapped read-only)
 *     `fail [operand_modified]`;
 *   - a crash (SIGSEGV, SIGABRT, ...) is `crashed`, with the signal; the helper is restarted for
 *     the next call;
 *   - a call that does not return within --plugin-timeout seconds (default 60) is `timeout`; the
 *     helper is killed (SIGKILL) and restarted.
 * What the plugin prints (stdout, stderr) is captured: the last 64 KiB per case go into the case's
 * record, never to convcheck's own output.
 * The helper runs in a sandbox (README: Security model; --plugin-sandbox): threads are fine, but
 * fork and exec fail with EPERM, signals reach only its own process, and (strict) files can be
 * written only in its working directory, a private scratch directory (also $TMPDIR).
 *
 * Language: plain C (C89 syntax; needs <stddef.h> and <stdint.h>), usable from C, C++ (extern "C"),
 * Rust (#[repr(C)]), Fortran (bind(C)). Enums are passed as int32_t; every struct has only
 * fixed-width members, in an order with no implicit padding.
 *
 * Versioning. CONVCHECK_PLUGIN_ABI_VERSION changes whenever a struct or a function signature
 * changes. The host passes its version to convcheck_plugin_get(); the plugin returns a table whose
 * first member is the version it was built against (return NULL to refuse outright). The host
 * refuses a table of another version, naming both versions ("... built for convcheck plugin ABI
 * version 999; this convcheck speaks version 1"). `abi_version` stays the first member in every
 * future version so that this check keeps working.
 *
 * Semantics: TensorFlow's (design §2-§3, spec/tf-semantics.md Part A). Operands and results are
 * dense, C-order, in the storage layouts convcheck uses everywhere (and writes as .npy):
 *   activations (input, out_backprop, the forward output, the input gradient):
 *       the problem's format: NHWC = [N][H][W][C], NCHW = [N][C][H][W];
 *   filters (and the filter gradient): HWIO = [KH][KW][Cf][K] for the conv2d family,
 *       RSCM = [KH][KW][C][M] for the depthwise family;
 *   elements: f16 and bf16 as raw 16-bit patterns (uint16_t), f32 float, f64 double, i32 int32_t;
 *       little-endian as the machine.
 * Every op reads two of the three roles and writes one result:
 *   conv2d, depthwise_conv2d                        read input, filter;      write output
 *                                                                            (shaped like
 * out_backprop) conv2d_backprop_input, conv2d_transpose, depthwise_conv2d_backprop_input read
 * filter, out_backprop; write an input-shaped result conv2d_backprop_filter,
 *   depthwise_conv2d_backprop_filter                read input, out_backprop; write a filter-shaped
 *                                                                            result
 * conv2d_transpose is described by the forward conv it transposes: `input` is TF's output_shape,
 * `out_backprop` TF's `value`; it computes exactly what conv2d_backprop_input computes.
 * The index law (forward): out[n,oh,ow,k] = sum_{kh,kw,ci} in[n, oh*sh - pad_top + kh*dh,
 * ow*sw - pad_left + kw*dw, g*Cf + ci] * w[kh,kw,ci,k], g = k / (K/groups), terms outside the input
 * (padding) absent; depthwise: out[n,oh,ow,c*M+m] = sum in[n,.,.,c] * w[kh,kw,c,m]. The backprop
 * ops are its adjoints. The result must have every element written; operands must not be changed.
 *
 * Threads: a plugin may use threads. When it uses OpenMP, the host sets omp_set_num_threads() to
 * the harness's thread count before each call. Calls are never concurrent.
 */
#ifndef CONVCHECK_PLUGIN_H
#define CONVCHECK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define CONVCHECK_PLUGIN_ABI_VERSION 1

/* The one symbol a plugin exports, and the type of a pointer to it. */
#define CONVCHECK_PLUGIN_ENTRY_NAME "convcheck_plugin_get"

#if defined(_WIN32)
#define CONVCHECK_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CONVCHECK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Enumerations (values are part of the ABI) ---------------------------------------------- */
/* clang-format off */

/* convcheck_problem.op */
#define CONVCHECK_OP_CONV2D                            0
#define CONVCHECK_OP_CONV2D_BACKPROP_INPUT             1
#define CONVCHECK_OP_CONV2D_BACKPROP_FILTER            2
#define CONVCHECK_OP_CONV2D_TRANSPOSE                  3
#define CONVCHECK_OP_DEPTHWISE_CONV2D                  4
#define CONVCHECK_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT   5
#define CONVCHECK_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER  6

/* convcheck_problem.dtype: the element type of both operands and the result */
/* IEEE binary16, stored as uint16_t bits */
#define CONVCHECK_DTYPE_F16                            0
#define CONVCHECK_DTYPE_BF16                           1  /* bfloat16, stored as uint16_t bits */
#define CONVCHECK_DTYPE_F32                            2
#define CONVCHECK_DTYPE_F64                            3
/* sums wrap modulo 2^32 (TF's int32 conv2d) */
#define CONVCHECK_DTYPE_I32                            4

/* convcheck_problem.format: the layout of activation tensors */
#define CONVCHECK_FORMAT_NHWC                          0
#define CONVCHECK_FORMAT_NCHW                          1

/* convcheck_problem.padding: how the pads were given (the pad_* members are always resolved) */
#define CONVCHECK_PADDING_VALID                        0
/* TF's split: the odd element goes after (bottom, right) */
#define CONVCHECK_PADDING_SAME                         1
#define CONVCHECK_PADDING_EXPLICIT                     2

/* convcheck_plugin.memory: where the pointers passed to run() live */
#define CONVCHECK_MEMORY_HOST                          0
/* Device (CUDA) pointers. Part of the ABI; this convcheck's runner stages host memory only and
 * declines a device-memory plugin with that reason. Wrap device kernels with host copies. */
#define CONVCHECK_MEMORY_DEVICE                        1

/* convcheck_contract.chain */
/* no rounding in the accumulation (u_acc unused) */
#define CONVCHECK_CHAIN_EXACT                          0
/* any summation order of n terms: at most n roundings */
#define CONVCHECK_CHAIN_LINEAR                         1
/* partial sums of `block` terms, then the partials in turn */
#define CONVCHECK_CHAIN_BLOCKED                        2
/* clang-format on */

/* ---- The problem -------------------------------------------------------------------------- */

/* A validated problem: every derived size is given, and consistent (convcheck's geometry()).
 * Shapes are logical, whatever the format: activations N,H,W,C; the filter KH,KW,in,out. */
/* clang-format off */
typedef struct convcheck_problem {
  int32_t op;      /* CONVCHECK_OP_* */
  int32_t dtype;   /* CONVCHECK_DTYPE_* */
  int32_t format;  /* CONVCHECK_FORMAT_* */
  int32_t padding; /* CONVCHECK_PADDING_*: informational; use pad_* below */
  /* forward input (TF's input; for conv2d_transpose its output_shape) */
  int64_t n, h, w, c;
  /* filter: conv2d family [kh, kw, filter_in = Cf = c / groups, filter_out = K];
   * depthwise family [kh, kw, filter_in = C, filter_out = M (the multiplier)] */
  int64_t kh, kw, filter_in, filter_out;
  /* forward output = out_backprop: [n, oh, ow, oc], oc = K (conv) or C * M (depthwise) */
  int64_t oh, ow, oc;
  int64_t stride_h, stride_w;
  int64_t dilation_h, dilation_w;                    /* TF's convention: 1 = no dilation */
  int64_t pad_top, pad_bottom, pad_left, pad_right;  /* resolved; may be asymmetric */
  int64_t groups;          /* conv2d family: c / filter_in; depthwise: c */
  int64_t multiplier;      /* depthwise: M; conv2d family: 1 */
  /* Element counts of the three roles and of the result (input, filter, out_backprop: as above;
   * result: the count of the role it is shaped like). */
  int64_t input_elements, filter_elements, out_backprop_elements, result_elements;
  /* The canonical convcheck descriptor, NUL-terminated, e.g. for messages; valid during the
   * call. */
  const char* descriptor;
} convcheck_problem;
/* clang-format on */

/* ---- The numeric contract ------------------------------------------------------------------ */

/* What the plugin promises about its arithmetic; the oracle holds it to exactly that. Per result
 * element with exact value s, n terms and magnitude M (the op on |operands|) the bound is
 *   tau = (1+u_out)[(2u_in+u_in^2) + gamma_k(u_acc)(1+u_in)^2] M + u_out|s| + (underflow allowance)
 * with gamma_k(u) = k u/(1 - k u) and k the chain length for n terms (see `chain`). Examples:
 *   f32 storage, f32 FMA accumulation:        u_in 0,     u_acc 2^-24, u_out 2^-24, LINEAR
 *   f32 storage, TF32 tensor cores:           u_in 2^-11, u_acc 2^-24, u_out 2^-24, LINEAR
 *   f16 storage, f32 accumulation:            u_in 0,     u_acc 2^-24, u_out 2^-11, LINEAR
 *   f64:                                      u_in 0,     u_acc 2^-53, u_out 2^-53, LINEAR
 *   int32 (wrapping):                         all 0, EXACT (int32 results are compared bitwise) */
typedef struct convcheck_contract {
  char name[64];            /* e.g. "f32-fma"; NUL-terminated */
  double u_in;              /* rounding of operands on the way in (0: used as stored) */
  double u_acc;             /* unit roundoff of the accumulation (0: exact) */
  double u_out;             /* rounding into the result dtype */
  int64_t block;            /* CONVCHECK_CHAIN_BLOCKED: terms per partial sum */
  int32_t chain;            /* CONVCHECK_CHAIN_* */
  int32_t flush_subnormals; /* nonzero: subnormals may be flushed to zero (FTZ/DAZ) */
  int32_t deterministic;    /* nonzero: a rerun on the same operands gives the same bits */
  int32_t reserved;         /* 0 */
} convcheck_contract;

/* ---- The plugin table ---------------------------------------------------------------------- */

/* Every function returns 0 for yes / success and nonzero otherwise, writing a one-line,
 * NUL-terminated reason of at most `len` bytes (including the NUL) into the buffer it is given.
 * The buffers are never NULL. No function may throw (C++) or longjmp out. */
typedef struct convcheck_plugin {
  uint32_t
      abi_version;  /* CONVCHECK_PLUGIN_ABI_VERSION the plugin was built against; always first */
  uint32_t memory;  /* CONVCHECK_MEMORY_HOST or CONVCHECK_MEMORY_DEVICE */
  const char* name; /* short, e.g. "minimal"; reports name the backend plugin:PATH */
  const char* description; /* one line */

  /* Optional (may be NULL: always available). Whether the plugin can run at all on this machine,
   * e.g. "no CUDA device". */
  int (*available)(char* reason, size_t len);

  /* Whether the plugin implements this problem. Declining is never a failure: convcheck reports
   * the verdict `unsupported` with the reason ("only f32", "no dilation"). */
  int (*can_implement)(const convcheck_problem* problem, char* reason, size_t len);

  /* The numeric contract for a problem it implements (called after can_implement said yes). */
  int (*contract)(const convcheck_problem* problem, convcheck_contract* contract, char* err,
                  size_t len);

  /* Computes the op. The role the op does not read is NULL; the other pointers hold
   * problem->*_elements elements each, in the layouts above, and are at least 64-byte aligned
   * (an empty tensor's pointer is valid but points at no accessible memory). Every result element
   * must be written; the operands are read-only. Returning nonzero reports an error (the verdict
   * `crashed`, with `err`). */
  int (*run)(const convcheck_problem* problem, const void* input, const void* filter,
             const void* out_backprop, void* result, char* err, size_t len);
} convcheck_plugin;

/* The entry point. `host_abi_version` is the host's CONVCHECK_PLUGIN_ABI_VERSION. Return the table
 * (static storage; its abi_version is the version the plugin was built against), or NULL to
 * refuse to load. */
typedef const convcheck_plugin* (*convcheck_plugin_get_fn)(uint32_t host_abi_version);
CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* CONVCHECK_PLUGIN_H */
