/* under_read.c: over_read.c reading one element before the start of out_backprop instead. */
#define UNDER_READ
#include "over_read.c"
