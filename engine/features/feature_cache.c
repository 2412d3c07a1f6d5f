/* Per-file feature cache (see clspeech/features.h). Entry file <key>.feat:
 *   8 bytes "CLSFEAT1", 8 bytes frames (LE), 4 bytes n_coeff (LE), 4 bytes zero,
 *   32 bytes SHA-256 of the data, then frames * n_coeff float32 (LE). */
#include "clspeech/features.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/sha256.h"

static const char magic[8] = {'C', 'L', 'S', 'F', 'E', 'A', 'T', '1'};
enum { HEADER = 56 };

cls_status cls_feature_cache_key(const char *path, const cls_mfcc_config *cfg, char key[65], cls_error *err) {
  struct stat sb;
  if (stat(path, &sb) != 0) return cls_error_set(err, CLS_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char text[CLS_PATH_CAP + 256]; /* the path and the settings */
  int n = snprintf(text, sizeof text, "v1|%s|%lld|%lld.%09ld|%d|%d|%d|%d|%d|%.17g|%.17g", path, (long long)sb.st_size,
                   (long long)sb.st_mtim.tv_sec, (long)sb.st_mtim.tv_nsec, cfg->sample_rate, cfg->win_len_ms,
                   cfg->win_step_ms, cfg->n_coeff, cfg->n_channels, cfg->lower_hz, cfg->upper_hz);
  cls_sha256 h;
  uint8_t digest[32];
  cls_sha256_init(&h);
  cls_sha256_update(&h, text, (size_t)(n > 0 ? n : 0));
  cls_sha256_final(&h, digest);
  cls_sha256_hex(digest, key);
  return CLS_OK;
}

int cls_feature_cache_load(const char *dir, const char *key, int n_coeff, float **features, size_t *frames) {
  *features = NULL;
  *frames = 0;
  char path[CLS_PATH_CAP];
  snprintf(path, sizeof path, "%s/%s.feat", dir, key);
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char h[HEADER];
  int hit = 0;
  float *data = NULL;
  if (fread(h, 1, HEADER, f) == HEADER && !memcmp(h, magic, 8) && cls_get_le(h + 16, 4) == (uint64_t)n_coeff) {
    uint64_t nf = cls_get_le(h + 8, 8);
    size_t count = (size_t)nf * (size_t)n_coeff;
    if (nf < ((uint64_t)1 << 28) && (data = malloc(count ? count * sizeof *data : 1)) &&
        fread(data, sizeof *data, count, f) == count && fgetc(f) == EOF) {
      cls_sha256 s;
      uint8_t digest[32];
      cls_sha256_init(&s);
      cls_sha256_update(&s, data, count * sizeof *data);
      cls_sha256_final(&s, digest);
      if (!memcmp(digest, h + 24, 32)) {
        *features = data;
        *frames = (size_t)nf;
        data = NULL;
        hit = 1;
      }
    }
  }
  free(data);
  fclose(f);
  return hit;
}

cls_status cls_feature_cache_store(const char *dir, const char *key, int n_coeff, const float *features, size_t frames,
                                   cls_error *err) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    return cls_error_set(err, CLS_ERR_IO, "feature cache: cannot create %s: %s", dir, strerror(errno));
  }
  size_t count = frames * (size_t)n_coeff;
  unsigned char h[HEADER] = {0};
  memcpy(h, magic, 8);
  cls_put_le(h + 8, frames, 8);
  cls_put_le(h + 16, (uint64_t)n_coeff, 4);
  cls_sha256 s;
  cls_sha256_init(&s);
  cls_sha256_update(&s, features, count * sizeof *features);
  cls_sha256_final(&s, h + 24);
  char path[CLS_PATH_CAP];
  snprintf(path, sizeof path, "%s/%s.feat", dir, key);
  const void *chunks[2] = {h, features};
  size_t sizes[2] = {HEADER, count * sizeof *features};
  if (cls_write_atomic(path, chunks, sizes, 2, err) != CLS_OK) return CLS_ERR_IO;
  return CLS_OK;
}
