/* Checkpoint digests (issue 45): the index records each file's SHA-256 at the save (the older files'
 * carried over while they are kept) and every load checks it, so a checkpoint whose bytes changed but
 * stay finite is refused naming the file; a checkpoint from before digests (an index of names alone)
 * still loads, and says so through cls_checkpoint_has_digest. A tiny model, no device. */
#include <stdlib.h>
#include <unistd.h>

#include "base/file_util.h"
#include "base/safetensors.h"
#include "check.h"
#include "clspeech/model.h"

static const cls_model_config cfg = {2, 1, 4, 3, 20.0f, 0};

static cls_status save(const char *dir, int64_t step, const float *p, const float *m, const float *v) {
  cls_checkpoint_vars s = {step, 0.001f, {0.5f, 0.25f, step}, 0};
  cls_error err;
  cls_status st = cls_checkpoint_save_in(dir, "train", 2, &cfg, p, m, v, &s, NULL, 0, NULL, 0, &err);
  if (st != CLS_OK) printf("save: %s\n", err.text);
  return st;
}

static cls_status load(const char *path, float *p, float *m, float *v, cls_error *err) {
  cls_checkpoint_vars s;
  return cls_checkpoint_load(path, &cfg, p, m, v, &s, NULL, 0, err);
}

/* Flips the lowest mantissa bit of the first weight of layer_1: still finite, still in range. */
static int tamper(const char *path) {
  cls_safetensors *st = NULL;
  if (cls_safetensors_read(path, &st, NULL) != CLS_OK) return 0;
  const cls_tensor_info *t = cls_safetensors_find(st, "layer_1/weights");
  const long at = t ? (long)(st->data - st->file) + (long)t->offset : -1;
  cls_safetensors_free(st);
  FILE *f = at > 0 ? fopen(path, "r+b") : NULL;
  if (!f) return 0;
  int c = fseek(f, at, SEEK_SET) == 0 ? fgetc(f) : EOF;
  int ok = c != EOF && fseek(f, at, SEEK_SET) == 0 && fputc(c ^ 1, f) != EOF;
  return fclose(f) == 0 && ok;
}

/* The index with its digest lines left out: an index written before digests. */
static int strip_digests(const char *index) {
  char *text = NULL, out[4096] = "";
  size_t len = 0;
  if (cls_read_file(index, &text, &len, NULL) != CLS_OK) return 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    if (strncmp(line, "sha256 ", 7)) snprintf(out + strlen(out), sizeof out - strlen(out), "%s\n", line);
  free(text);
  FILE *f = fopen(index, "w");
  return f && fputs(out, f) >= 0 && fclose(f) == 0;
}

int main(void) {
  cls_param_view views[CLS_MODEL_N_TENSORS];
  const size_t n = cls_model_layout(&cfg, views);
  float *p = calloc(n, sizeof *p), *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
  if (!p || !m || !v) return 1;
  for (size_t i = 0; i < n; i++) {
    p[i] = 0.25f * (float)(i % 13) - 1.5f;
    m[i] = 0.001f * (float)(i % 7);
    v[i] = 0.0001f * (float)(i % 5);
  }
  char dir[] = "/tmp/clspeech-digest-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char index[600], one[600], two[600], three[600], line[512];
  snprintf(index, sizeof index, "%s/checkpoint", dir);
  snprintf(one, sizeof one, "%s/train-1.safetensors", dir);
  snprintf(two, sizeof two, "%s/train-2.safetensors", dir);
  snprintf(three, sizeof three, "%s/train-3.safetensors", dir);
  cls_error err;

  /* Saved: the index names the file first and records its digest, which is the file's. */
  CHECK_INT(save(dir, 1, p, m, v), CLS_OK);
  CHECK_INT(cls_checkpoint_has_digest(one), 1);
  CHECK_INT(load(one, p, m, v, &err), CLS_OK);
  FILE *f = fopen(index, "r");
  CHECK(f && fgets(line, sizeof line, f) && !strcmp(line, "train-1.safetensors\n"), "first line %s", line);
  CHECK(f && fgets(line, sizeof line, f) && !strncmp(line, "sha256 train-1.safetensors ", 27) && strlen(line) == 27 + 65,
        "digest line %s", line);
  if (f) fclose(f);

  /* Two more with max_to_keep 2: train-3 and train-2 kept, each with its digest (train-2's carried). */
  CHECK_INT(save(dir, 2, p, m, v), CLS_OK);
  CHECK_INT(save(dir, 3, p, m, v), CLS_OK);
  CHECK(access(one, F_OK) != 0, "train-1 was not removed");
  CHECK_INT(cls_checkpoint_has_digest(two), 1);
  CHECK_INT(cls_checkpoint_has_digest(three), 1);
  CHECK_INT(load(two, p, m, v, &err), CLS_OK);

  /* One bit of a weight changed, the value still finite: refused, naming the file and the index. */
  CHECK(tamper(two), "tampering with %s", two);
  CHECK_INT(load(two, p, m, v, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "train-2.safetensors: checksum mismatch: its SHA-256 is ");
  CHECK_CONTAINS(err.text, "/checkpoint recorded ");
  CHECK_INT(load(three, p, m, v, &err), CLS_OK);
  char path[700];
  CHECK_INT(cls_checkpoint_find(dir, "train", path, sizeof path, &err), CLS_OK);
  CHECK(!strcmp(path, three), "the index names %s", path);

  /* An index from before digests: the same changed file loads (nothing to check it against). */
  CHECK(strip_digests(index), "rewriting %s", index);
  CHECK_INT(cls_checkpoint_has_digest(two), 0);
  CHECK_INT(load(two, p, m, v, &err), CLS_OK);
  /* The next save records its own digest; the undigested older file stays without one. */
  CHECK_INT(save(dir, 4, p, m, v), CLS_OK);
  char four[600];
  snprintf(four, sizeof four, "%s/train-4.safetensors", dir);
  CHECK_INT(cls_checkpoint_has_digest(four), 1);
  CHECK_INT(cls_checkpoint_has_digest(three), 0);
  CHECK_INT(load(three, p, m, v, &err), CLS_OK);

  remove(three);
  remove(four);
  remove(index);
  rmdir(dir);
  free(p);
  free(m);
  free(v);
  return check_finish("test_checkpoint_digest");
}
