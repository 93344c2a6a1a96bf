/*
 * minimal.c: the smallest complete convcheck plugin, to copy from.
 *
 * A naive conv2d_backprop_input (TF's Conv2DBackpropInput) for f32, NHWC or NCHW, any strides,
 * dilations, pads and groups, accumulating in f32. Everything else is declined with a reason,
 * which convcheck reports as `unsupported`.
 *
 *   cc -shared -fPIC -O2 -I<convcheck>/plugins minimal.c -o minimal.so
 *   convcheck check 'conv2d_backprop_input:input=1x5x5x2,filter=3x3x2x3,padding=SAME' \
 *       --backends plugin:./minimal.so
 */
#include <stdio.h>

#include "convcheck_plugin.h"

static int say(char* out, size_t len, const char* text) {
  snprintf(out, len, "%s", text);
  return 1;
}

static int can_implement(const convcheck_problem* p, char* reason, size_t len) {
  if (p->op != CONVCHECK_OP_CONV2D_BACKPROP_INPUT)
    return say(reason, len, "the minimal plugin implements conv2d_backprop_input only");
  if (p->dtype != CONVCHECK_DTYPE_F32) return say(reason, len, "the minimal plugin is f32 only");
  return 0;
}

static int contract(const convcheck_problem* p, convcheck_contract* k, char* err, size_t len) {
  (void)p;
  (void)err;
  (void)len;
  snprintf(k->name, sizeof k->name, "minimal-f32");
  k->u_in = 0;                       /* operands used as stored */
  k->u_acc = 1.0 / (1 << 24);        /* f32 accumulation: u = 2^-24 */
  k->u_out = 0;                      /* the f32 accumulator is the result */
  k->chain = CONVCHECK_CHAIN_LINEAR; /* one running sum: at most n roundings */
  k->block = 0;
  k->flush_subnormals = 0;
  k->deterministic = 1;
  return 0;
}

/* Storage index of activation element (n, y, x, c) of a [N, Y, X, C] tensor in either format. */
static int64_t act(const convcheck_problem* p, int64_t n, int64_t y, int64_t x, int64_t c,
                   int64_t Y, int64_t X, int64_t C) {
  if (p->format == CONVCHECK_FORMAT_NCHW) return ((n * C + c) * Y + y) * X + x;
  return ((n * Y + y) * X + x) * C + c;
}

/* dx[n,h,w,c] = sum over taps (kh,kw) and the output channels k of c's group of
 *   w[kh,kw,c % Cf,k] * dy[n,oh,ow,k]   where h = oh*sh - pad_top + kh*dh (and likewise w). */
static int run(const convcheck_problem* p, const void* input, const void* filter_,
               const void* out_backprop, void* result, char* err, size_t len) {
  const float* w = (const float*)filter_;
  const float* dy = (const float*)out_backprop;
  float* dx = (float*)result;
  const int64_t Cf = p->filter_in, K = p->filter_out, Kg = K / p->groups;
  int64_t n, h, x, c, kh, kw, k;
  (void)input;
  (void)err;
  (void)len;
  for (n = 0; n < p->n; ++n)
    for (h = 0; h < p->h; ++h)
      for (x = 0; x < p->w; ++x)
        for (c = 0; c < p->c; ++c) {
          const int64_t g = c / Cf;
          float sum = 0;
          for (kh = 0; kh < p->kh; ++kh) {
            const int64_t ty = h + p->pad_top - kh * p->dilation_h;
            int64_t oh;
            if (ty < 0 || ty % p->stride_h) continue;
            oh = ty / p->stride_h;
            if (oh >= p->oh) continue;
            for (kw = 0; kw < p->kw; ++kw) {
              const int64_t tx = x + p->pad_left - kw * p->dilation_w;
              int64_t ow;
              if (tx < 0 || tx % p->stride_w) continue;
              ow = tx / p->stride_w;
              if (ow >= p->ow) continue;
              for (k = g * Kg; k < (g + 1) * Kg; ++k)
                sum += w[((kh * p->kw + kw) * Cf + c % Cf) * K + k] *
                       dy[act(p, n, oh, ow, k, p->oh, p->ow, p->oc)];
            }
          }
          dx[act(p, n, h, x, c, p->h, p->w, p->c)] = sum;
        }
  return 0;
}

#ifndef MINIMAL_NO_ENTRY /* the faulty examples reuse this file's functions with their own table \
                          */
static const convcheck_plugin table = {
    CONVCHECK_PLUGIN_ABI_VERSION,
    CONVCHECK_MEMORY_HOST,
    "minimal",
    "naive f32 conv2d_backprop_input in plain C (examples/plugins/minimal.c)",
    NULL, /* available: always */
    can_implement,
    contract,
    run};

CONVCHECK_PLUGIN_EXPORT const convcheck_plugin* convcheck_plugin_get(uint32_t host_abi_version) {
  (void)host_abi_version; /* the host checks table.abi_version against its own */
  return &table;
}
#endif
