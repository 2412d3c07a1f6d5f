/* The audio-header cache of `clspeech import` (see import_cache.h): a text file, a version line, then
 * a line an entry "SIZE<TAB>MTIME_NS<TAB>PROBLEM<TAB>FRAMES<TAB>RATE<TAB>CHANNELS<TAB>DETAIL<TAB>PATH",
 * sorted by path and looked up by bisection. */
#include "data/import_cache.h"

#include "base/file_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char VERSION[] = "clspeech import cache 1\n";
#define CACHE_MAX_BYTES ((size_t)1 << 30)

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const cls_import_cache_entry *)a)->path, ((const cls_import_cache_entry *)b)->path);
}

void cls_import_cache_free(cls_import_cache *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->v[i].path);
  free(c->v);
  c->v = NULL;
  c->n = 0;
}

/* Parses one line (NUL-terminated, no line end) into e; 0 when malformed. */
static int parse_line(char *line, cls_import_cache_entry *e) {
  char *f[8];
  int n = 0;
  f[n++] = line;
  for (char *p = line; *p && n < 8; p++)
    if (*p == '\t') {
      *p = '\0';
      f[n++] = p + 1;
    }
  if (n != 8 || !f[7][0]) return 0;
  char *end;
  long long v[6];
  for (int i = 0; i < 6; i++) {
    v[i] = strtoll(f[i], &end, 10);
    if (end == f[i] || *end) return 0;
  }
  if (v[2] < 0 || v[2] > 5 || v[4] < 0 || v[4] > 1000000 || v[5] < 0 || v[5] > 1000) return 0;
  memset(e, 0, sizeof *e);
  e->size = v[0];
  e->mtime_ns = v[1];
  e->problem = (int)v[2];
  e->header.frames = v[3];
  e->header.sample_rate = (int)v[4];
  e->header.channels = (int)v[5];
  snprintf(e->detail, sizeof e->detail, "%s", f[6]);
  e->path = strdup(f[7]);
  return e->path != NULL;
}

cls_status cls_import_cache_read(const char *path, cls_import_cache *c, cls_error *err) {
  c->v = NULL;
  c->n = 0;
  char *text = NULL;
  size_t len = 0;
  if (cls_read_file_max(path, CACHE_MAX_BYTES, true, &text, &len, NULL) != CLS_OK) return CLS_OK;
  const size_t vl = sizeof VERSION - 1;
  if (len < vl || memcmp(text, VERSION, vl) != 0 || memchr(text, '\0', len)) {
    free(text);
    return CLS_OK;
  }
  int cap = 0;
  for (size_t i = vl; i < len; i++) cap += text[i] == '\n';
  c->v = malloc((size_t)(cap ? cap : 1) * sizeof *c->v);
  if (!c->v) {
    free(text);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  for (size_t p = vl; p < len;) {
    char *nl = memchr(text + p, '\n', len - p);
    if (!nl) break; /* a last line without its end: cut short, skipped */
    *nl = '\0';
    if (c->n < cap && parse_line(text + p, &c->v[c->n])) c->n++;
    p = (size_t)(nl - text) + 1;
  }
  free(text);
  qsort(c->v, (size_t)c->n, sizeof *c->v, cmp_entry);
  return CLS_OK;
}

const cls_import_cache_entry *cls_import_cache_find(const cls_import_cache *c, const char *path, int64_t size,
                                                    int64_t mtime_ns) {
  if (!c->n) return NULL;
  cls_import_cache_entry key;
  key.path = (char *)path;
  const cls_import_cache_entry *e = bsearch(&key, c->v, (size_t)c->n, sizeof *c->v, cmp_entry);
  return e && e->size == size && e->mtime_ns == mtime_ns ? e : NULL;
}

cls_status cls_import_cache_write(const char *path, const cls_import_cache_entry *v, int n, cls_error *err) {
  cls_output *out = NULL;
  cls_status st = cls_output_open(path, &out, err);
  if (st != CLS_OK) return st;
  FILE *f = cls_output_file(out);
  fputs(VERSION, f);
  for (int i = 0; i < n; i++) {
    if (strpbrk(v[i].path, "\t\n\r")) continue;
    char detail[sizeof v[i].detail];
    snprintf(detail, sizeof detail, "%s", v[i].detail);
    for (char *p = detail; *p; p++)
      if (*p == '\t' || *p == '\n' || *p == '\r') *p = ' ';
    fprintf(f, "%lld\t%lld\t%d\t%lld\t%d\t%d\t%s\t%s\n", (long long)v[i].size, (long long)v[i].mtime_ns, v[i].problem,
            (long long)v[i].header.frames, v[i].header.sample_rate, v[i].header.channels, detail, v[i].path);
  }
  return cls_output_commit(out, path, err);
}
