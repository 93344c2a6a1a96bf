/* threads.c: run() computes on 4 pthreads (what OpenMP and threaded kernels do). Threads are
 * allowed in every sandbox mode: `pass`. */
#include <pthread.h>

#include "probe.h"

static void* spin(void* arg) {
  return arg;
}

static int probe(const convcheck_problem* p, char* err, size_t len) {
  pthread_t t[4];
  int i, made = 0;
  (void)p;
  for (i = 0; i < 4; ++i) made += pthread_create(&t[i], NULL, spin, NULL) == 0;
  said("pthread_create x4 (threads made)", made);
  for (i = 0; i < made; ++i) pthread_join(t[i], NULL);
  if (made != 4) {
    snprintf(err, len, "pthread_create failed");
    return 1;
  }
  return 0;
}
PROBE_TABLE("threads", "probe: runs 4 pthreads")
