/* On-disk kernel binary cache (see kernel_cache.h). Owns the cache folder, the entry format, the
 * atomic write and the build lock; it knows nothing of OpenCL beyond the device record used
 * in the key.
 *
 * Entry file <key>.clbin:
 *   8 bytes  "CLSPKBIN"
 *   4 bytes  format version, little-endian
 *   4 bytes  zero
 *   8 bytes  payload length, little-endian
 *  32 bytes  SHA-256 of the payload
 *   payload  the program binary as clGetProgramInfo(CL_PROGRAM_BINARIES) gave it */
/* flock (BSD, in glibc's default set) for the build lock: a lock of the open file, so that two engines
 * in one process exclude each other too, unlike POSIX record locks. */
#define _DEFAULT_SOURCE
#include "device/kernel_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/sha256.h"
#include "device/log.h"

#define CACHE_FORMAT_VERSION 1u
#define HEADER_SIZE 56
static const char magic[8] = {'C', 'L', 'S', 'P', 'K', 'B', 'I', 'N'};

void cls_kernel_cache_init(cls_engine *e) {
  const cls_engine_options *o = &e->options;
  size_t len = strnlen(o->kernel_cache_dir, sizeof o->kernel_cache_dir);
  e->cache_enabled = o->kernel_cache && len > 0 && len <= CLS_KERNEL_CACHE_DIR_MAX;
  if (!e->cache_enabled) return;
  /* Entries and tuning files half-written by processes that died are removed as the folder is opened. */
  char tuning[1200];
  snprintf(tuning, sizeof tuning, "%s/gemm-tuning", o->kernel_cache_dir);
  cls_remove_stale_temporaries(o->kernel_cache_dir);
  cls_remove_stale_temporaries(tuning);
}

const char *cls_engine_cache_dir(const cls_engine *e) {
  return e && e->cache_enabled ? e->options.kernel_cache_dir : NULL;
}

static void hash_field(cls_sha256 *h, const void *data, size_t n) {
  uint64_t len = n;
  cls_sha256_update(h, &len, sizeof len);
  cls_sha256_update(h, data, n);
}

void cls_kernel_cache_key(const cls_device_info *d, const char *source, size_t source_len, const char *options,
                          char key[65]) {
  cls_sha256 h;
  cls_sha256_init(&h);
  uint32_t version = CACHE_FORMAT_VERSION;
  hash_field(&h, &version, sizeof version);
  hash_field(&h, source, source_len);
  hash_field(&h, options, strlen(options));
  /* A sub-device runs the same binaries as its device: its name's " [sub-device k/N]" is left out. */
  char name[sizeof d->name];
  snprintf(name, sizeof name, "%s", d->name);
  char *sub = strstr(name, " [sub-device ");
  if (sub) *sub = '\0';
  const char *fields[] = {name, d->vendor, d->driver_version, d->device_version, d->platform_name, d->platform_version};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) hash_field(&h, fields[i], strlen(fields[i]));
  uint8_t digest[32];
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, key);
}

bool cls_kernel_cache_entry_check(const unsigned char *entry, size_t len, size_t *payload_len) {
  *payload_len = 0;
  if (len < HEADER_SIZE || memcmp(entry, magic, 8) != 0 || cls_get_le(entry + 8, 4) != CACHE_FORMAT_VERSION ||
      cls_get_le(entry + 12, 4) != 0)
    return false;
  const uint64_t n = cls_get_le(entry + 16, 8);
  if (n == 0 || n > CLS_KERNEL_CACHE_MAX_PAYLOAD || n != len - HEADER_SIZE) return false;
  cls_sha256 h;
  uint8_t digest[32];
  cls_sha256_init(&h);
  cls_sha256_update(&h, entry + HEADER_SIZE, (size_t)n);
  cls_sha256_final(&h, digest);
  if (memcmp(digest, entry + 24, 32) != 0) return false;
  *payload_len = (size_t)n;
  return true;
}

cls_cache_result cls_kernel_cache_load(const cls_engine *e, const char *key, unsigned char **data, size_t *size,
                                       cls_cache_file_id *seen) {
  *data = NULL;
  *size = 0;
  if (seen) memset(seen, 0, sizeof *seen);
  if (!e->cache_enabled) return CLS_CACHE_MISS;
  char path[1200];
  snprintf(path, sizeof path, "%s/%s.clbin", e->options.kernel_cache_dir, key);
  FILE *f = fopen(path, "rb");
  if (!f) return CLS_CACHE_MISS;
  cls_cache_result result = CLS_CACHE_CORRUPT;
  unsigned char *entry = NULL;
  /* The file's real size bounds what is read: a header claiming more is corrupt, not an allocation. */
  struct stat sb;
  const bool stated = fstat(fileno(f), &sb) == 0;
  if (stated && seen) *seen = (cls_cache_file_id){true, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
  if (!stated || !S_ISREG(sb.st_mode) || sb.st_size < HEADER_SIZE ||
      (uint64_t)sb.st_size > HEADER_SIZE + CLS_KERNEL_CACHE_MAX_PAYLOAD)
    goto done;
  const size_t len = (size_t)sb.st_size;
  entry = malloc(len);
  size_t n = 0;
  if (!entry || fread(entry, 1, len, f) != len || fgetc(f) != EOF || !cls_kernel_cache_entry_check(entry, len, &n))
    goto done;
  memmove(entry, entry + HEADER_SIZE, n);
  *data = entry;
  *size = n;
  entry = NULL;
  result = CLS_CACHE_HIT;
done:
  free(entry);
  fclose(f);
  return result;
}

cls_status cls_kernel_cache_store(cls_engine *e, const char *key, const unsigned char *data, size_t size) {
  if (!e->cache_enabled) return CLS_OK;
  const char *dir = e->options.kernel_cache_dir;
  if (cls_make_dirs(dir) != CLS_OK)
    return cls_fail(e, CLS_ERR_IO, "kernel cache: cannot create folder %s: %s", dir, strerror(errno));
  char path[1200];
  cls_error err;
  snprintf(path, sizeof path, "%s/%s.clbin", e->options.kernel_cache_dir, key);
  unsigned char header[HEADER_SIZE] = {0};
  memcpy(header, magic, 8);
  cls_put_le(header + 8, CACHE_FORMAT_VERSION, 4);
  cls_put_le(header + 16, size, 8);
  cls_sha256 h;
  cls_sha256_init(&h);
  cls_sha256_update(&h, data, size);
  cls_sha256_final(&h, header + 24);
  const void *chunks[2] = {header, data};
  size_t sizes[2] = {HEADER_SIZE, size};
  if (cls_write_atomic(path, chunks, sizes, 2, &err) != CLS_OK)
    return cls_fail(e, CLS_ERR_IO, "kernel cache: %s", err.text);
  return CLS_OK;
}

static int open_lock(const char *path) {
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  /* another user's lock file in a shared folder: flock needs no write access */
  if (fd < 0 && errno == EACCES) fd = open(path, O_RDONLY | O_CLOEXEC);
  return fd;
}

int cls_kernel_cache_lock(cls_engine *e, const char *lock_dir, const char *key, const char *waiting_for,
                          const cls_cache_file_id *seen, bool *entry_ready) {
  *entry_ready = false;
  if (!e->cache_enabled || e->build_lock_given_up || !lock_dir || !*lock_dir) return -1;
  char path[1200], entry[1200];
  snprintf(path, sizeof path, "%s/.clspeech-build-lock", lock_dir);
  snprintf(entry, sizeof entry, "%s/%s.clbin", e->options.kernel_cache_dir, key);
  int fd = cls_make_dirs(lock_dir) == CLS_OK ? open_lock(path) : -1;
  if (fd < 0) {
    cls_log(e, CLS_LOG_DEBUG, "kernel cache: no build lock (%s: %s); building without it", path, strerror(errno));
    return -1;
  }
  const double t0 = cls_now_ms();
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
      e->build_lock_stalled_ms = 0.0;
      return fd;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      cls_log(e, CLS_LOG_DEBUG, "kernel cache: no build lock (%s: %s); building without it", path, strerror(errno));
      break;
    }
    /* entries are renamed into place whole: a file other than the one the caller read is complete */
    struct stat now;
    if (stat(entry, &now) == 0 &&
        !(seen && seen->exists && (uint64_t)now.st_dev == seen->dev && (uint64_t)now.st_ino == seen->ino)) {
      *entry_ready = true;
      e->build_lock_stalled_ms = 0.0;
      close(fd);
      return -1;
    }
    const double waited = cls_now_ms() - t0;
    if (e->build_lock_stalled_ms + waited > CLS_KERNEL_CACHE_LOCK_WAIT_MS) {
      e->build_lock_given_up = true;
      cls_log(e, CLS_LOG_WARNING,
              "kernel cache: waited %.0f s for another process holding %s, with no progress; building without the "
              "lock from now on",
              (e->build_lock_stalled_ms + waited) / 1000.0, path);
      break;
    }
    if (!e->build_lock_told && waited > 1000.0) {
      cls_log(e, CLS_LOG_NOTICE,
              "kernel cache: another process is building kernels (lock %s); %s waits for it, and so will the rest",
              path, waiting_for);
      e->build_lock_told = true;
    }
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
  }
  e->build_lock_stalled_ms += cls_now_ms() - t0;
  close(fd);
  return -1;
}

void cls_kernel_cache_unlock(int fd) {
  if (fd < 0) return;
  flock(fd, LOCK_UN);
  close(fd);
}
