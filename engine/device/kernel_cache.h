/* The on-disk cache of built kernel binaries. An entry is keyed by a SHA-256 of everything that
 * changes the binary (source, build options, device, driver, platform, cache format), carries a
 * checksum of its payload, and is written to a temporary file that is synced and renamed, so that
 * readers never see a half-written entry. A corrupt entry reads as a miss. */
#ifndef CLS_KERNEL_CACHE_H
#define CLS_KERNEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/engine.h"

/* The longest cache folder path: an entry's name (a 64-digit key and ".clbin", or
 * "gemm-tuning/<16 digits>.txt") and a temporary suffix must still fit in the engine's 1024 bytes. */
#define CLS_KERNEL_CACHE_DIR_MAX 943

/* Turns the cache on when the engine's options ask for it (kernel_cache, and a kernel_cache_dir of 1
 * to CLS_KERNEL_CACHE_DIR_MAX bytes), removing the temporary files of dead processes there
 * (cls_remove_stale_temporaries). */
void cls_kernel_cache_init(cls_engine *engine);

/* Hex key for a program built from `source` with `options` on `device`. */
void cls_kernel_cache_key(const cls_device_info *device, const char *source, size_t source_len, const char *options,
                          char key[65]);

typedef enum cls_cache_result { CLS_CACHE_HIT = 0, CLS_CACHE_MISS = 1, CLS_CACHE_CORRUPT = 2 } cls_cache_result;

/* The largest program binary an entry may hold (2 GiB). */
#define CLS_KERNEL_CACHE_MAX_PAYLOAD ((uint64_t)1 << 31)

/* Whether `entry` [len] (a whole entry file) is well formed: magic, version, a reserved zero, a
 * payload length of 1 .. CLS_KERNEL_CACHE_MAX_PAYLOAD that is exactly the rest of the entry, and the
 * payload's SHA-256. *payload_len receives the length (the payload starts at byte 56). */
bool cls_kernel_cache_entry_check(const unsigned char *entry, size_t len, size_t *payload_len);

/* Which file an entry was: entries are renamed into place whole, so a new entry is a new file. */
typedef struct cls_cache_file_id {
  bool exists;
  uint64_t dev, ino;
} cls_cache_file_id;

/* On a hit, *data (malloc'ed; free it) and *size hold the binary. `seen` (may be NULL) receives which
 * file was read, hit or corrupt (exists false on a miss). */
cls_cache_result cls_kernel_cache_load(const cls_engine *engine, const char *key, unsigned char **data, size_t *size,
                                       cls_cache_file_id *seen);

/* Writes an entry atomically; CLS_ERR_IO (with the engine's error text set) when it cannot. */
cls_status cls_kernel_cache_store(cls_engine *engine, const char *key, const unsigned char *data, size_t size);

/* How long one engine waits for build locks without a sign of progress (the lock taken, or a new
 * entry appearing), all its programs together, before it builds without them for good (the holder
 * may be stopped; a process that dies lets go at once). */
#define CLS_KERNEL_CACHE_LOCK_WAIT_MS 300000.0

/* Takes the build lock in `lock_dir` (an exclusive flock on <lock_dir>/.clspeech-build-lock; the
 * folder is made if missing). Processes building into the binary cache take turns under it: the
 * holder builds one program and stores its entry, a waiter then finds the entry. For PoCL devices
 * the lock is in PoCL's cache folder, which is what they really share (see program.c).
 * Returns the lock's descriptor, or -1 when the cache is off, the lock cannot be taken (a folder
 * without write or read access, a file system without locks), or the engine has waited its
 * CLS_KERNEL_CACHE_LOCK_WAIT_MS; the caller then builds without it. While waiting it also returns
 * -1, with *entry_ready true, as soon as an entry for `key` other than `seen` (the file the caller
 * last read, or none) is in the cache. The engine's first
 * wait of over a second is logged as a notice naming `waiting_for`. Locks of one open file: two engines in one
 * process exclude each other too (except over NFS, where Linux turns them into POSIX locks). */
int cls_kernel_cache_lock(cls_engine *engine, const char *lock_dir, const char *key, const char *waiting_for,
                          const cls_cache_file_id *seen, bool *entry_ready);

/* Lets go of a lock cls_kernel_cache_lock returned (-1 is ignored). */
void cls_kernel_cache_unlock(int fd);

#endif
