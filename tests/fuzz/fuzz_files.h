/* For fuzz targets that read their input from a file: a fresh folder for it, in memory where there is a
 * tmpfs (a file written per input is far faster there), and the input written to a path in it. */
#ifndef CLS_FUZZ_FILES_H
#define CLS_FUZZ_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* dir (cap bytes) gets a new folder's path, clspeech-fuzz-TARGET-XXXXXX under /dev/shm or /tmp; aborts
 * when none can be made. */
static inline void fuzz_make_dir(char *dir, size_t cap, const char *target) {
  snprintf(dir, cap, "%s/clspeech-fuzz-%s-XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", target);
  if (!mkdtemp(dir)) abort();
}

/* size bytes of data as the file at path; 0 when it could not be written whole. */
static inline int fuzz_write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  size_t n = size ? fwrite(data, 1, size, f) : 0;
  return fclose(f) == 0 && n == size;
}

#endif
