/* Whole-file reading, making folders (and preparing one for writing: stale
 * temporary files of dead processes removed, a probe write), the cache folder's place and on/off
 * settings (see file_util.h). */
#include "base/file_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

cls_status cls_read_file_max(const char *path, size_t max, bool stop_at_nul, char **out, size_t *out_len,
                             cls_error *err) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  int too_big = 0;
  while (buf) {
    if (len == cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    /* at most max + 1 bytes, so that a larger file (or an endless device or pipe) is found out */
    size_t want = cap - len;
    if (want > max + 1 - len) want = max + 1 - len;
    size_t got = fread(buf + len, 1, want, f);
    const int nul = stop_at_nul && memchr(buf + len, '\0', got) != NULL;
    len += got;
    if (len > max) {
      too_big = 1;
      break;
    }
    if (got == 0 || nul) break;
  }
  int failed = ferror(f), saved = errno;
  fclose(f);
  if (!buf) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  if (too_big || failed) {
    free(buf);
    if (too_big)
      cls_error_set(err, CLS_ERR_IO, "%s: larger than %zu bytes; refused", path, max);
    else
      cls_error_set(err, CLS_ERR_IO, "%s: cannot read: %s", path, strerror(saved));
    return CLS_ERR_IO;
  }
  *out = buf;
  *out_len = len;
  return CLS_OK;
}

cls_status cls_read_file(const char *path, char **out, size_t *out_len, cls_error *err) {
  return cls_read_file_max(path, SIZE_MAX - 1, false, out, out_len, err);
}

cls_status cls_make_dirs(const char *path) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0) {
    errno = ENOENT;
    return CLS_ERR_IO;
  }
  if (len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return CLS_ERR_IO;
  }
  memcpy(buf, path, len + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    int rc = mkdir(buf, 0755);
    *p = '/';
    if (rc != 0 && errno != EEXIST) return CLS_ERR_IO;
  }
  return mkdir(buf, 0755) != 0 && errno != EEXIST ? CLS_ERR_IO : CLS_OK;
}

/* PID of a temporary file's name NAME.tmp.PID.N, or 0 when the name is not of that form. */
static long temp_file_pid(const char *name) {
  const char *tmp = NULL;
  for (const char *p = strstr(name, ".tmp."); p; p = strstr(p + 1, ".tmp.")) tmp = p;
  if (!tmp || tmp == name) return 0;
  const char *s = tmp + 5;
  long pid = 0;
  for (; *s >= '0' && *s <= '9' && pid < 1000000000L; s++) pid = pid * 10 + (*s - '0');
  if (pid <= 0 || *s != '.' || !s[1]) return 0;
  for (s++; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return pid;
}

int cls_remove_stale_temporaries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  const time_t now = time(NULL);
  char path[4400];
  int removed = 0;
  for (struct dirent *ent; (ent = readdir(d));) {
    const long pid = temp_file_pid(ent->d_name);
    if (pid == 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive (or not ours to ask): kept */
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
    if (lstat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || now - sb.st_mtime < CLS_LEFTOVER_AGE_S) continue;
    if (unlink(path) == 0) removed++;
  }
  closedir(d);
  return removed;
}

cls_status cls_dir_prepare_for_writing(const char *dir, int *removed, cls_error *err) {
  if (removed) *removed = 0;
  if (cls_make_dirs(dir) != CLS_OK) {
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot make the folder: %s", dir, strerror(errno));
  }
  const int n = cls_remove_stale_temporaries(dir);
  if (n < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open the folder: %s", dir, strerror(errno));
  if (removed) *removed = n;
  char path[4400];
  snprintf(path, sizeof path, "%s/.clspeech-write-probe.%ld", dir, (long)getpid());
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int ok = fd >= 0 && write(fd, "x", 1) == 1;
  int saved = errno;
  if (fd >= 0) {
    ok = close(fd) == 0 && ok;
    if (!ok) saved = errno;
    unlink(path);
  }
  if (!ok) return cls_error_set(err, CLS_ERR_IO, "%s: cannot write in the folder: %s", dir, strerror(saved));
  return CLS_OK;
}

bool cls_setting_off(const char *v) {
  return v && (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "OFF") || !strcmp(v, "no") || !strcmp(v, "false"));
}

bool cls_cache_dir_resolve(const char *dir, const char *xdg_cache_home, const char *home, const char *leaf,
                           char *out, size_t cap) {
  if (!cap) return false;
  int n;
  if (dir && *dir)
    n = snprintf(out, cap, "%s", dir);
  else if (xdg_cache_home && *xdg_cache_home)
    n = snprintf(out, cap, "%s/clspeech/%s", xdg_cache_home, leaf);
  else if (home && *home)
    n = snprintf(out, cap, "%s/.cache/clspeech/%s", home, leaf);
  else
    n = -1;
  if (n <= 0 || (size_t)n >= cap) {
    out[0] = '\0';
    return false;
  }
  return true;
}
