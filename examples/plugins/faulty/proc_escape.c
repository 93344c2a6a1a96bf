/* proc_escape.c: run() looks for convcheck's open results.jsonl through /proc/PARENT/fd and
 * appends a forged record to it. Strict sandbox (Landlock): /proc/PARENT is closed to it; `pass`,
 * and results.jsonl holds no forged line. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>

#include "probe.h"

static int probe(const convcheck_problem* p, char* err, size_t len) {
  char dir[64], path[320], target[512];
  DIR* d;
  struct dirent* e;
  int entries = 0, links = 0, found = 0;
  (void)p, (void)err, (void)len;
  snprintf(dir, sizeof dir, "/proc/%d/fd", (int)getppid());
  d = opendir(dir);
  said("opendir(/proc/parent/fd)", d ? 0 : -1);
  if (!d) return 0;
  while ((e = readdir(d)) != NULL) {
    ssize_t n;
    if (e->d_name[0] == '.') continue;
    ++entries;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    n = readlink(path, target, sizeof target - 1);
    if (n <= 0) continue;
    ++links;
    target[n] = 0;
    if (strstr(target, "results.jsonl")) {
      const int fd = open(path, O_WRONLY | O_APPEND);
      found = 1;
      said("open(results.jsonl through /proc/parent/fd)", fd);
      if (fd >= 0) {
        const char forged[] = "{\"FORGED\": true}\n";
        said("write(forged record)", write(fd, forged, sizeof forged - 1));
        close(fd);
      }
    }
  }
  closedir(d);
  fprintf(stderr, "probe: /proc/parent/fd: %d entries, %d links read, results.jsonl %s\n", entries,
          links, found ? "found" : "not found");
  return 0;
}
PROBE_TABLE("proc_escape", "probe: forges results.jsonl through /proc/PARENT/fd")
