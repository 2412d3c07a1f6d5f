/* The output rule every writer follows (see clspeech/base.h, cls_output_open): what an output path is
 * decides how it is written — atomically through a temporary file and a rename for a new path or a regular
 * file, the target of a symlink likewise in the target's folder, a character device or FIFO in place —
 * and the comparison of two paths by device and inode that refuses an output which is also an input. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clspeech/base.h"

/* Symlinks followed before a path is taken for a loop (as the kernel's own limit). */
#define MAX_LINKS 40

struct cls_output {
  FILE *f;
  int in_place;            /* a character device or FIFO: no temporary file, no rename */
  char path[PATH_MAX + 1]; /* what is written: the path, or the last symlink's target */
  char tmp[PATH_MAX + 64]; /* the temporary file (atomic writes) */
};

static const char *kind_name(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISBLK(m)) return "a block device";
  return "not a file clspeech writes";
}

/* `path` with every symlink followed (the last target need not exist) into out[cap]. */
static cls_status follow_links(const char *path, char *out, size_t cap, cls_error *err) {
  if (strlen(path) >= cap) return cls_error_set(err, CLS_ERR_IO, "%s: the path is too long", path);
  snprintf(out, cap, "%s", path);
  for (int hops = 0;; hops++) {
    struct stat st;
    if (lstat(out, &st) != 0 || !S_ISLNK(st.st_mode)) return CLS_OK;
    if (hops == MAX_LINKS) return cls_error_set(err, CLS_ERR_IO, "%s: more than %d symlinks in a row", path, MAX_LINKS);
    char target[PATH_MAX + 1];
    ssize_t n = readlink(out, target, sizeof target - 1);
    if (n < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot read the symlink: %s", out, strerror(errno));
    target[n] = '\0';
    if (target[0] == '/') {
      if ((size_t)n >= cap) return cls_error_set(err, CLS_ERR_IO, "%s: the symlink's target is too long", out);
      snprintf(out, cap, "%s", target);
    } else { /* relative to the link's folder */
      const char *slash = strrchr(out, '/');
      const size_t dir = slash ? (size_t)(slash - out) + 1 : 0;
      if (dir + (size_t)n >= cap) return cls_error_set(err, CLS_ERR_IO, "%s: the symlink's target is too long", out);
      memmove(out + dir, target, (size_t)n + 1);
    }
  }
}

cls_status cls_output_open(const char *path, cls_output **out, cls_error *err) {
  *out = NULL;
  if (!path || !*path) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "no output path given");
  cls_output *o = calloc(1, sizeof *o);
  if (!o) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = follow_links(path, o->path, sizeof o->path, err);
  struct stat sb;
  const int exists = st == CLS_OK && stat(o->path, &sb) == 0;
  if (st == CLS_OK && exists && (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode))) {
    /* written in place: a FIFO waits here for its reader, as any writer of one does */
    int fd = open(o->path, O_WRONLY | O_CLOEXEC);
    o->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
      st = cls_error_set(err, CLS_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
      if (fd >= 0) close(fd);
    }
    o->in_place = 1;
  } else if (st == CLS_OK && exists && !S_ISREG(sb.st_mode)) {
    st = cls_error_set(err, CLS_ERR_IO, "%s: is %s: not written", path, kind_name(sb.st_mode));
  } else if (st == CLS_OK) {
    static _Atomic unsigned counter;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld.%u", o->path, (long)getpid(), counter++);
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    o->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!o->f) {
      st = cls_error_set(err, CLS_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
      if (fd >= 0) {
        close(fd);
        unlink(o->tmp);
      }
    }
    /* a new file takes the mode of the one it replaces */
    if (o->f && exists) fchmod(fileno(o->f), sb.st_mode & 07777);
  }
  if (st != CLS_OK) {
    free(o);
    return st;
  }
  *out = o;
  return CLS_OK;
}

FILE *cls_output_file(cls_output *o) { return o ? o->f : NULL; }

cls_status cls_output_commit(cls_output *o, const char *path, cls_error *err) {
  if (!o) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "no output to commit");
  int ok = fflush(o->f) == 0 && !ferror(o->f);
  if (ok && !o->in_place) ok = fsync(fileno(o->f)) == 0;
  int saved = errno;
  ok = fclose(o->f) == 0 && ok;
  if (!ok && !saved) saved = errno;
  if (ok && !o->in_place && rename(o->tmp, o->path) != 0) {
    ok = 0;
    saved = errno;
  }
  if (!ok && !o->in_place) unlink(o->tmp);
  free(o);
  if (!ok) return cls_error_set(err, CLS_ERR_IO, "%s: cannot write: %s", path, strerror(saved ? saved : EIO));
  return CLS_OK;
}

void cls_output_abort(cls_output *o) {
  if (!o) return;
  fclose(o->f);
  if (!o->in_place) unlink(o->tmp);
  free(o);
}

cls_status cls_write_atomic(const char *path, const void *const *chunks, const size_t *sizes, int n, cls_error *err) {
  cls_output *o = NULL;
  cls_status st = cls_output_open(path, &o, err);
  if (st != CLS_OK) return st;
  int ok = 1;
  for (int i = 0; ok && i < n; i++) ok = sizes[i] == 0 || fwrite(chunks[i], 1, sizes[i], o->f) == sizes[i];
  if (!ok) {
    const int saved = errno;
    cls_output_abort(o);
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot write: %s", path, strerror(saved ? saved : EIO));
  }
  return cls_output_commit(o, path, err);
}

bool cls_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || !*a || !*b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
