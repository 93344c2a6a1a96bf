/* Compiled with -std=c89 -pedantic: the plugin header must stay usable from strict C89. */
#include "convcheck_plugin.h"

int convcheck_header_is_c89(void) {
  convcheck_problem p;
  convcheck_contract k;
  p.op = CONVCHECK_OP_CONV2D;
  k.chain = CONVCHECK_CHAIN_LINEAR;
  return (int)(p.op + k.chain + (int)sizeof(convcheck_plugin));
}
