/* Two processes starting together on one cold kernel cache (two MPI ranks on one host) build each
 * program once between them: the build lock (for PoCL devices in PoCL's cache folder) lets one build
 * and store while the other waits and then loads the entry. Without the lock both compile the same
 * programs at once, which is when PoCL, sharing its own cache, can hand out a binary it later aborts
 * on. And a waiter loads its entry as soon as it is there, without waiting for the lock. */
#define _DEFAULT_SOURCE /* flock */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "device/engine.h"

/* Where a child's log sends one byte when it finds an entry corrupt (-1: nowhere). */
static int corrupt_fd = -1;

static void child_log(void *user, cls_log_level level, const char *message) {
  (void)user;
  (void)level;
  if (corrupt_fd >= 0 && strstr(message, "is corrupt") && write(corrupt_fd, "c", 1) < 0) _exit(255);
}

/* A child: waits for the start signal, builds every device, exits with its number of compiles (cache
 * misses), or 255 on a failure. */
static void child(int start_fd) {
  char go;
  if (read(start_fd, &go, 1) < 0) _exit(255);
  cls_engine_options options = cls_engine_options_from_environment();
  options.log = child_log;
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

/* Copies a file, flipping the byte at `flip` (-1: none). */
static void copy_file(const char *from, const char *to, long flip) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  CHECK(in && out, "copy %s to %s", from, to);
  long at = 0;
  for (int c; in && out && (c = fgetc(in)) != EOF; at++) fputc(at == flip ? c ^ 0x5a : c, out);
  if (in) fclose(in);
  if (out) fclose(out);
}

/* Removes a flat folder and its files; whether the folder is gone. */
static bool remove_folder(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *ent; d && (ent = readdir(d));) {
    if (!strcmp(ent->d_name, ".") || !strcmp(ent->d_name, "..")) continue;
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    unlink(path);
  }
  if (d) closedir(d);
  return rmdir(dir) == 0;
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
    /* ".": a lock file, there for drivers other than PoCL */
    if (ent->d_name[0] == '.') continue;
    if (len > 6 && !strcmp(ent->d_name + len - 6, ".clbin"))
      entries++;
    else
      others++;
  }
  if (d) closedir(d);
  CHECK(entries >= 1, "entries written: %d", entries);
  CHECK_INT(misses, entries); /* every program compiled once, by one of the two */
  CHECK_INT(others, 0); /* no temporary files left */

  /* A waiter does not wait for the lock once its entry is there. This process holds the locks (as a
     busy or stopped builder would) while a child starts on a copy of the cache whose first entry is
     corrupt: once the child has found it corrupt, and 1.5 s later, this process renames the good entry
     into place; the child rebuilds nothing and ends while the locks are still held. (The corrupt entry
     it read does not count as ready.) */
  char copy[] = "/tmp/clspeech-cache-shared-copy-XXXXXX";
  CHECK(mkdtemp(copy) != NULL, "mkdtemp");
  char first[400] = "", good[400] = "";
  d = opendir(dir);
  for (struct dirent *ent; d && (ent = readdir(d));) {
    size_t len = strlen(ent->d_name);
    if (len <= 6 || strcmp(ent->d_name + len - 6, ".clbin")) continue;
    char from[400], to[400];
    snprintf(from, sizeof from, "%s/%s", dir, ent->d_name);
    snprintf(to, sizeof to, "%s/%s", copy, ent->d_name);
    copy_file(from, to, first[0] ? -1 : 200); /* the first one copied gets byte 200 flipped */
    if (!first[0]) {
      snprintf(first, sizeof first, "%s", to);
      snprintf(good, sizeof good, "%s", from);
    }
  }
  if (d) closedir(d);
  if (!(pocl && *pocl)) printf("POCL_CACHE_DIR is not set: the held-lock part was not run\n");
  if (pocl && *pocl && first[0]) {
    char lock_path[1200];
    snprintf(lock_path, sizeof lock_path, "%s/.clspeech-build-lock", pocl);
    char copy_lock_path[400];
    snprintf(copy_lock_path, sizeof copy_lock_path, "%s/.clspeech-build-lock", copy); /* other drivers' */
    int lock = open(lock_path, O_RDWR), copy_lock = open(copy_lock_path, O_RDWR | O_CREAT, 0644);
    CHECK(lock >= 0 && flock(lock, LOCK_EX) == 0, "hold %s", lock_path);
    CHECK(copy_lock >= 0 && flock(copy_lock, LOCK_EX) == 0, "hold %s", copy_lock_path);
    setenv("CLSPEECH_KERNEL_CACHE_DIR", copy, 1);
    int go[2], found[2];
    CHECK(pipe(go) == 0 && pipe(found) == 0, "pipe");
    pid_t waiter = fork();
    if (waiter == 0) {
      close(go[1]);
      close(found[0]);
      corrupt_fd = found[1];
      child(go[0]);
    }
    close(go[0]);
    close(go[1]);
    close(found[1]);
    struct pollfd pf = {found[0], POLLIN, 0};
    char byte = 0;
    CHECK(poll(&pf, 1, 60000) == 1 && read(found[0], &byte, 1) == 1, "the child found the corrupt entry");
    close(found[0]);
    struct timespec pause = {1, 500 * 1000 * 1000};
    nanosleep(&pause, NULL); /* the child is waiting for the lock now */
    char staged[420];
    snprintf(staged, sizeof staged, "%s.new", first);
    copy_file(good, staged, -1);
    CHECK(rename(staged, first) == 0, "rename the good entry into place");
    int status = -1;
    struct timespec tenth = {0, 100 * 1000 * 1000};
    for (int tries = 0; tries < 600 && waitpid(waiter, &status, WNOHANG) == 0; tries++) nanosleep(&tenth, NULL);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "the waiter ended within 60 s, still under the held lock, having compiled nothing (status %d)", status);
    if (!WIFEXITED(status)) {
      kill(waiter, SIGKILL);
      waitpid(waiter, &status, 0);
    }
    if (lock >= 0) close(lock);
    if (copy_lock >= 0) close(copy_lock);
  }
  CHECK(remove_folder(copy), "%s removed", copy);
  CHECK(remove_folder(dir), "%s removed", dir);
  return check_finish("test_kernel_cache_shared");
}
