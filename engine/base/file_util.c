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

/* "N bytes" with, for a whole number of KiB, MiB or GiB, that too: the cap as the error states it. */
static void cap_text(size_t max, char *buf, size_t cap) {
  static const char *const unit[] = {"GiB", "MiB", "KiB"};
  for (int u = 0; u < 3; u++) {
    const size_t scale = (size_t)1 << (30 - 10 * u);
    if (max >= scale && max % scale == 0) {
      snprintf(buf, cap, "%zu bytes (%zu %s)", max, max / scale, unit[u]);
      return;
    }
  }
  snprintf(buf, cap, "%zu bytes", max);
}

cls_status cls_read_stream_max(FILE *f, const char *name, const void *head, size_t head_len, size_t max,
                               bool stop_at_nul, char **out, size_t *out_len, cls_error *err) {
  *out = NULL;
  *out_len = 0;
  size_t len = 0, cap = (size_t)1 << 16;
  while (cap < head_len + 1) cap *= 2;
  char *buf = malloc(cap);
  int too_big = head_len > max, done = too_big;
  if (buf && head_len) {
    memcpy(buf, head, head_len);
    len = head_len;
    done = done || (stop_at_nul && memchr(buf, '\0', len) != NULL);
  }
  while (buf && !done) {
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
    if (len > max) too_big = 1;
    done = too_big || got == 0 || nul;
  }
  int failed = ferror(f), saved = errno;
  if (!buf) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  if (too_big || failed) {
    free(buf);
    char cap_str[64];
    cap_text(max, cap_str, sizeof cap_str);
    if (too_big)
      cls_error_set(err, CLS_ERR_IO, "%s: larger than %s, the most this reader takes; refused", name, cap_str);
    else
      cls_error_set(err, CLS_ERR_IO, "%s: cannot read: %s", name, strerror(saved));
    return CLS_ERR_IO;
  }
  *out = buf;
  *out_len = len;
  return CLS_OK;
}

cls_status cls_read_file_max(const char *path, size_t max, bool stop_at_nul, char **out, size_t *out_len,
                             cls_error *err) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  cls_status st = cls_read_stream_max(f, path, NULL, 0, max, stop_at_nul, out, out_len, err);
  fclose(f);
  return st;
}

cls_status cls_read_stream_magic(FILE *f, const char *name, const void *magic, size_t magic_len, size_t max,
                                 char **out, size_t *out_len, cls_error *err) {
  *out = NULL;
  *out_len = 0;
  char head[64];
  if (magic_len > sizeof head) magic_len = sizeof head;
  size_t got = fread(head, 1, magic_len, f);
  if (ferror(f)) return cls_error_set(err, CLS_ERR_IO, "%s: cannot read: %s", name, strerror(errno));
  if (got == magic_len && memcmp(head, magic, magic_len) == 0)
    return cls_read_stream_max(f, name, head, got, max, false, out, out_len, err);
  /* not this format: what was read is all the caller's parser needs to say so */
  *out = malloc(got ? got : 1);
  if (!*out) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  if (got) memcpy(*out, head, got);
  *out_len = got;
  return CLS_OK;
}

cls_status cls_read_file_magic(const char *path, const void *magic, size_t magic_len, size_t max, char **out,
                               size_t *out_len, cls_error *err) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  cls_status st = cls_read_stream_magic(f, path, magic, magic_len, max, out, out_len, err);
  fclose(f);
  return st;
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
  char path[CLS_PATH_CAP];
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
  char path[CLS_PATH_CAP];
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
