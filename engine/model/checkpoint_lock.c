/* The checkpoint folder's lock (see clspeech/model.h): one trainer at a time writes a folder. An
 * flock(2) on DIR/clspeech.lock, which holds the holder's PID and host for the refusal's message;
 * the kernel drops the lock when the process ends however it ends, so a killed trainer's file never
 * blocks the next one, and the file itself is left in place (removing it would let two processes
 * lock two different files of the same name). */
#include "clspeech/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* The holder's "pid=P host=H" line, or "an unknown process" when the file says nothing yet (the holder
 * took the lock but has not written it). */
static void read_holder(int fd, char *out, size_t cap) {
  char text[320] = "";
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  text[strcspn(text, "\r\n")] = '\0';
  int pid = 0;
  char host[256] = "";
  if (sscanf(text, "pid=%d host=%255s", &pid, host) == 2 && pid > 0)
    snprintf(out, cap, "process %d on host %s", pid, host);
  else
    snprintf(out, cap, "an unknown process");
}

cls_status cls_checkpoint_lock(const char *dir, int *lock, cls_error *err) {
  *lock = -1;
  char path[CLS_PATH_CAP];
  snprintf(path, sizeof path, "%s/%s", dir, CLS_CHECKPOINT_LOCK);
  const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open the lock file: %s", path, strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    char holder[320];
    read_holder(fd, holder, sizeof holder);
    close(fd);
    if (e == EWOULDBLOCK)
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                           "%s is in use: %s trains into it (it holds %s); two trainers in one folder would mix "
                           "their checkpoints. Wait for it to end, or train into another folder",
                           dir, holder, path);
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot lock: %s", path, strerror(e));
  }
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0 || !host[0]) snprintf(host, sizeof host, "unknown");
  char text[320];
  const int n = snprintf(text, sizeof text, "pid=%ld host=%s\n", (long)getpid(), host);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
    const int e = errno;
    close(fd);
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot write the holder: %s", path, strerror(e));
  }
  *lock = fd;
  return CLS_OK;
}

void cls_checkpoint_unlock(int lock) {
  if (lock >= 0) close(lock); /* the lock goes with the last descriptor */
}
