/* Two processes starting together on one cold kernel cache (two MPI ranks on one host) build each
 * program once between them: the build lock (for PoCL devices in PoCL's cache folder) lets one build
 * and store while the other waits and then loads the entry. Without the lock both compile the same
 * programs at once, which is when PoCL, sharing its own cache, can hand out a binary it later aborts
 * on. */
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "device/engine.h"

/* A child: waits for the start signal, builds every device, exits with its number of compiles (cache
 * misses), or 255 on a failure. */
static void child(int start_fd) {
  char go;
  if (read(start_fd, &go, 1) < 0) _exit(255);
  cls_engine_options options = cls_engine_options_from_environment();
  options.log_level = CLS_LOG_WARNING;
  cls_engine *e = NULL;
  if (cls_engine_create(&options, &e) != CLS_OK) _exit(255);
  int misses = 0;
  for (int i = 0; i < cls_engine_device_count(e); i++) {
    cls_build_record rec[32];
    int count = 0;
    if (cls_engine_build_device(e, i, rec, 32, &count) != CLS_OK || count > 32) _exit(255);
    for (int k = 0; k < count; k++) misses += !rec[k].cache_hit;
  }
  cls_engine_destroy(e);
  _exit(misses < 255 ? misses : 254);
}

int main(void) {
  char dir[] = "/tmp/clspeech-cache-shared-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  setenv("CLSPEECH_KERNEL_CACHE_DIR", dir, 1);
  unsetenv("CLSPEECH_KERNEL_CACHE");

  /* No OpenCL in this process before the fork: the children start clean. */
  int start[2];
  CHECK(pipe(start) == 0, "pipe");
  pid_t pids[2];
  for (int c = 0; c < 2; c++) {
    pids[c] = fork();
    if (pids[c] == 0) {
      close(start[1]);
      child(start[0]);
    }
    CHECK(pids[c] > 0, "fork");
  }
  close(start[0]);
  close(start[1]); /* both children read end-of-file at once: go */
  int misses = 0;
  for (int c = 0; c < 2; c++) {
    int status = 0;
    CHECK(waitpid(pids[c], &status, 0) == pids[c], "wait");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 255, "child %d ended with status %d", c, status);
    if (WIFEXITED(status)) {
      printf("process %d compiled %d programs\n", c, WEXITSTATUS(status));
      misses += WEXITSTATUS(status);
    }
  }

  /* The lock file is PoCL's folder's (every device here is PoCL's), none is left in the binary cache. */
  const char *pocl = getenv("POCL_CACHE_DIR");
  if (pocl && *pocl) {
    char lock_path[1200];
    snprintf(lock_path, sizeof lock_path, "%s/.clspeech-build-lock", pocl);
    CHECK(access(lock_path, F_OK) == 0, "%s exists", lock_path);
  }
  int entries = 0, others = 0;
  DIR *d = opendir(dir);
  CHECK(d != NULL, "open %s", dir);
  for (struct dirent *ent; d && (ent = readdir(d));) {
    size_t len = strlen(ent->d_name);
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    if (len > 6 && !strcmp(ent->d_name + len - 6, ".clbin"))
      entries++;
    else
      others++;
  }
  if (d) closedir(d);
  CHECK(entries >= 1, "entries written: %d", entries);
  CHECK_INT(misses, entries); /* every program compiled once, by one of the two */
  CHECK_INT(others, 0); /* no temporary files left */

  /* Clean up. */
  d = opendir(dir);
  for (struct dirent *ent; d && (ent = readdir(d));) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  rmdir(dir);
  return check_finish("test_kernel_cache_shared");
}
