/* Model packages (engine/model/package_*.c, clspeech/package.h): a checkpoint written as a package
 * and read back gives the checkpoint's weights bit for bit, its geometry, the alphabet byte for byte,
 * the feature settings and where it came from, and holds no Adam slot or other training variable;
 * a scorer (the binary LM form) is stored as is with its lm_alpha and lm_beta exactly; the same
 * inputs give the same bytes; the checkpoint choice from a folder follows --load_evaluate; and each
 * kind of bad package (magic, another version, truncated, a flipped byte, and with the checksum made
 * right again: a section out of the file, a bad shape, a NaN weight, an unknown section) and bad
 * writer input (a missing folder, an ARPA scorer, an alphabet of the wrong size) is refused naming the
 * file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data_present.h"
#include "data_files.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "model/package_format.h"

#define ALPHABET4 "a\nb\nc\n \n" /* 4 labels: a model of 5 classes, not the 4 of the one here */

static cls_model_config cfg;

/* A path in the test's folder that stays valid to the end (tmp_path's are reused after 8 calls). */
static const char *path_of(const char *name) {
  static char paths[32][640];
  static int next;
  char *p = paths[next++ % 32];
  snprintf(p, sizeof paths[0], "%s", tmp_path(name));
  return p;
}
static size_t n_params;

static void fill(float *x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((int32_t)(seed >> 8) - (1 << 23)) / (float)(1 << 20);
  }
}

static unsigned char *read_all(const char *path, size_t *size) {
  char *buf = NULL;
  cls_error err;
  *size = 0;
  if (cls_read_file(path, &buf, size, &err) != CLS_OK) return NULL;
  return (unsigned char *)buf;
}

/* The package's bytes with its checksum made right again (after a deliberate change). */
static void fix_checksum(unsigned char *file, size_t size) {
  uint8_t sum[PKG_CHECKSUM_BYTES];
  cls_package_checksum(file, size, sum);
  memcpy(file + PKG_H_CHECKSUM, sum, sizeof sum);
}

/* The table entry of section `name` in a package's bytes (NULL when absent). */
static unsigned char *entry(unsigned char *file, const char *name) {
  const int n = (int)cls_get_le(file + PKG_H_N_SECTIONS, 4);
  for (int i = 0; i < n; i++) {
    unsigned char *e = file + PKG_HEADER_BYTES + (size_t)i * PKG_ENTRY_BYTES;
    if (!strcmp((const char *)e, name)) return e;
  }
  return NULL;
}

/* Parsing `bytes` fails with CLS_ERR_INVALID_ARGUMENT, and the text names the input and says `why`. */
static void refused(const unsigned char *bytes, size_t size, const char *why, const char *what) {
  cls_error err = {0};
  cls_package *p = NULL;
  cls_status st = cls_package_parse(bytes, size, "bad.clsm", &p, &err);
  CHECK(st == CLS_ERR_INVALID_ARGUMENT && !p, "%s: status %s", what, cls_status_string(st));
  CHECK_CONTAINS(err.text, "bad.clsm: ");
  CHECK_CONTAINS(err.text, why);
  cls_package_close(p);
}

static void check_bad_packages(const char *good_path) {
  size_t size = 0;
  unsigned char *good = read_all(good_path, &size);
  CHECK(good && size > 4096, "reading %s", good_path);
  if (!good) return;
  unsigned char *b = malloc(size);
  memcpy(b, good, size);
  b[1] = 'X';
  refused(b, size, "not a clspeech model package", "magic");
  memcpy(b, good, size);
  cls_put_le(b + PKG_H_VERSION, 2, 4);
  fix_checksum(b, size);
  refused(b, size, "model package format version 2, this clspeech reads version 1", "version");
  refused(good, size / 2, "truncated: the header says", "truncated");
  refused(good, 40, "truncated: 40 bytes", "truncated header");
  memcpy(b, good, size);
  b[size - 3] ^= 0x10;
  refused(b, size, "checksum mismatch (file corrupt or truncated)", "flipped byte");
  /* with the checksum right again: the structure's own checks */
  memcpy(b, good, size);
  unsigned char *e = entry(b, "layer_6/bias");
  cls_put_le(e + PKG_E_SIZE, size, 8);
  fix_checksum(b, size);
  refused(b, size, "section \"layer_6/bias\" at bytes", "section past the end");
  memcpy(b, good, size);
  e = entry(b, "layer_2/weights");
  cls_put_le(e + PKG_E_OFFSET, cls_get_le(e + PKG_E_OFFSET, 8) + 4, 8);
  fix_checksum(b, size);
  refused(b, size, "not 64-byte aligned", "misaligned section");
  memcpy(b, good, size);
  e = entry(b, "layer_1/weights");
  cls_put_le(e + PKG_E_SHAPE, cls_get_le(e + PKG_E_SHAPE, 8) - 1, 8);
  fix_checksum(b, size);
  refused(b, size, "tensor \"layer_1/weights\" is dtype 1, 2 dims", "shape");
  memcpy(b, good, size);
  e = entry(b, "layer_5/weights");
  const uint32_t nan_bits = 0x7fc00000u;
  cls_put_le(b + cls_get_le(e + PKG_E_OFFSET, 8) + 8, nan_bits, 4);
  fix_checksum(b, size);
  refused(b, size, "tensor \"layer_5/weights\" holds NaN at element 2", "NaN weight");
  memcpy(b, good, size);
  e = entry(b, "layer_3/bias");
  memcpy(e, "layer_3/bias/Adam", sizeof "layer_3/bias/Adam");
  fix_checksum(b, size);
  refused(b, size, "unknown section \"layer_3/bias/Adam\"", "an Adam slot");
  memcpy(b, good, size);
  e = entry(b, "meta");
  unsigned char *meta = b + cls_get_le(e + PKG_E_OFFSET, 8);
  unsigned char *hidden = (unsigned char *)strstr((char *)meta, "n_hidden=");
  CHECK(hidden != NULL, "meta has n_hidden");
  if (hidden) {
    hidden[9] = 'x';
    fix_checksum(b, size);
    refused(b, size, "metadata n_hidden is", "n_hidden not a number");
  }
  free(b);
  free(good);
}

int main(void) {
  if (!data_present()) return check_finish("test_package");
  if (!data_files_open("test_package")) return 1;
  cfg = cls_model_config_deepspeech(6, 4);
  cls_param_view views[CLS_MODEL_N_TENSORS];
  n_params = cls_model_layout(&cfg, views);
  float *params = malloc(n_params * sizeof(float)), *m = malloc(n_params * sizeof(float));
  float *v = malloc(n_params * sizeof(float)), *back = malloc(n_params * sizeof(float));
  fill(params, n_params, 1);
  fill(m, n_params, 2);
  for (size_t i = 0; i < n_params; i++) v[i] = fabsf(m[i]);
  cls_checkpoint_vars vars = {1234, 0.001f, {0.9f, 0.99f, 1234}, 0};
  cls_error err = {0};
  make_dir("run");
  const char *run = path_of("run");
  /* a folder as training leaves it: train-1234 and best_dev-1000 with other weights */
  CHECK(cls_checkpoint_save_in(run, "train", 5, &cfg, params, m, v, &vars, NULL, 0, NULL, 0, &err) == CLS_OK, "%s",
        err.text);
  float *best = malloc(n_params * sizeof(float));
  fill(best, n_params, 3);
  cls_checkpoint_vars best_vars = vars;
  best_vars.global_step = 1000;
  CHECK(cls_checkpoint_save_in(run, "best_dev", 1, &cfg, best, m, v, &best_vars, NULL, 0, NULL, 0, &err) == CLS_OK,
        "%s", err.text);
  write_text("alphabet.txt", "a\nb\n \n");
  /* 3 labels + blank: the config above has 4 classes */
  CHECK(cls_checkpoint_describe(run, path_of("alphabet.txt"), 16000, 32, 20, &err) == CLS_OK, "%s", err.text);

  /* write from the folder (last), read back */
  const char *pkg_path = path_of("last.clsm");
  cls_package_summary sum;
  cls_status st = cls_package_write_from_dir(pkg_path, run, CLS_LOAD_LAST, NULL, 0, 0, &sum, &err);
  CHECK(st == CLS_OK, "write: %s", err.text);
  remember(pkg_path);
  CHECK_INT(sum.n_tensors, CLS_MODEL_N_TENSORS);
  CHECK_INT(sum.n_params, n_params);
  CHECK_INT(sum.global_step, 1234);
  CHECK_INT(sum.scorer_bytes, 0);
  struct stat sb;
  CHECK(stat(pkg_path, &sb) == 0 && (uint64_t)sb.st_size == sum.file_bytes, "file size %lld vs %llu",
        (long long)sb.st_size, (unsigned long long)sum.file_bytes);
  /* no Adam slots: the weights, the table and small text sections only, well under weights + 1 slot */
  const uint64_t weights = n_params * sizeof(float);
  CHECK(sum.file_bytes < weights + 64 * 20 + PKG_HEADER_BYTES + 15 * PKG_ENTRY_BYTES + 1024,
        "package of %llu bytes for %llu bytes of weights", (unsigned long long)sum.file_bytes,
        (unsigned long long)weights);
  cls_package *pkg = NULL;
  st = cls_package_open(pkg_path, &pkg, &err);
  CHECK(st == CLS_OK && pkg, "open: %s", err.text);
  if (pkg) {
    const cls_package_info *in = cls_package_get_info(pkg);
    CHECK(!memcmp(&in->model, &cfg, sizeof cfg), "geometry n_hidden %d n_classes %d relu_clip %g", in->model.n_hidden,
          in->model.n_classes, (double)in->model.relu_clip);
    CHECK_INT(in->version, CLS_PACKAGE_VERSION);
    CHECK_INT(in->audio_sample_rate, 16000);
    CHECK_INT(in->feature_win_len, 32);
    CHECK_INT(in->feature_win_step, 20);
    CHECK_INT(in->global_step, 1234);
    CHECK(!strcmp(in->source_checkpoint, "train-1234.safetensors"), "source %s", in->source_checkpoint);
    CHECK(!strcmp(in->clspeech_version, cls_version()), "version %s", in->clspeech_version);
    CHECK(in->alphabet_bytes == 6 && !memcmp(in->alphabet, "a\nb\n \n", 6), "alphabet bytes");
    CHECK(in->scorer == NULL && in->scorer_bytes == 0, "no scorer");
    CHECK_INT(in->n_tensors, CLS_MODEL_N_TENSORS);
    CHECK_INT(in->n_sections, CLS_MODEL_N_TENSORS + 2);
    for (int i = 0; i < in->n_sections; i++) {
      const char *name = cls_package_section_name(pkg, i);
      CHECK(name && !strstr(name, "Adam") && !strstr(name, "power") && !strstr(name, "learning_rate") &&
                !strstr(name, "global_step"),
            "section %d is %s", i, name ? name : "(null)");
    }
    CHECK(cls_package_section_name(pkg, in->n_sections) == NULL, "no section past the last");
    memset(back, 0xff, n_params * sizeof(float));
    CHECK(cls_package_params(pkg, back, n_params, &err) == CLS_OK, "%s", err.text);
    CHECK(!memcmp(back, params, n_params * sizeof(float)), "weights bit-identical to the checkpoint's");
    CHECK(cls_package_params(pkg, back, n_params - 1, &err) == CLS_ERR_INVALID_ARGUMENT, "a wrong count refused");
    CHECK_CONTAINS(err.text, "last.clsm");
  }
  cls_package_close(pkg);
  check_bad_packages(pkg_path);

  /* best: the best_dev checkpoint; the same inputs give the same bytes */
  const char *best_path = path_of("best.clsm"), *again_path = path_of("again.clsm");
  CHECK(cls_package_write_from_dir(best_path, run, CLS_LOAD_AUTO, "", 0, 0, &sum, &err) == CLS_OK, "%s", err.text);
  CHECK(cls_package_write_from_dir(again_path, run, CLS_LOAD_BEST, NULL, 0, 0, NULL, &err) == CLS_OK, "%s", err.text);
  remember(best_path);
  remember(again_path);
  CHECK_INT(sum.global_step, 1000);
  size_t n1 = 0, n2 = 0;
  unsigned char *f1 = read_all(best_path, &n1), *f2 = read_all(again_path, &n2);
  CHECK(f1 && f2 && n1 == n2 && !memcmp(f1, f2, n1), "the same inputs give the same bytes");
  free(f1);
  free(f2);
  pkg = NULL;
  CHECK(cls_package_open(best_path, &pkg, &err) == CLS_OK, "%s", err.text);
  if (pkg) {
    CHECK(cls_package_params(pkg, back, n_params, &err) == CLS_OK, "%s", err.text);
    CHECK(!memcmp(back, best, n_params * sizeof(float)), "best_dev's weights");
  }
  cls_package_close(pkg);

  /* with a scorer: the binary form stored byte for byte, lm_alpha and lm_beta exactly */
  const char *arpa = CLS_FIXTURE_DIR "/lm_small.arpa";
  cls_lm *lm = NULL;
  CHECK(cls_lm_load_arpa(arpa, &lm, &err) == CLS_OK, "%s", err.text);
  const char *clm = path_of("lm.clm");
  CHECK(cls_lm_save_binary(lm, clm, &err) == CLS_OK, "%s", err.text);
  remember(clm);
  cls_lm_destroy(lm);
  const char *scored = path_of("scored.clsm");
  const double alpha = 0.931289039105002, beta = 1.1834137581510284;
  CHECK(cls_package_write_from_dir(scored, run, CLS_LOAD_LAST, clm, alpha, beta, &sum, &err) == CLS_OK, "%s",
        err.text);
  remember(scored);
  size_t clm_size = 0;
  unsigned char *clm_bytes = read_all(clm, &clm_size);
  CHECK_INT(sum.scorer_bytes, clm_size);
  pkg = NULL;
  CHECK(cls_package_open(scored, &pkg, &err) == CLS_OK, "%s", err.text);
  if (pkg && clm_bytes) {
    const cls_package_info *in = cls_package_get_info(pkg);
    CHECK(in->scorer_bytes == clm_size && !memcmp(in->scorer, clm_bytes, clm_size), "the scorer byte for byte");
    CHECK(((uintptr_t)in->scorer - (uintptr_t)cls_package_get_info(pkg)->alphabet) % 64 == 0, "scorer aligned");
    CHECK(in->lm_alpha == alpha && in->lm_beta == beta, "lm_alpha %.17g lm_beta %.17g", in->lm_alpha, in->lm_beta);
    CHECK_INT(in->n_sections, CLS_MODEL_N_TENSORS + 3);
    cls_lm *again = NULL;
    CHECK(cls_lm_parse_binary(in->scorer, in->scorer_bytes, "scorer", &again, &err) == CLS_OK, "%s", err.text);
    cls_lm_destroy(again);
  }
  cls_package_close(pkg);
  free(clm_bytes);

  /* bad writer input, each naming the file */
  const char *nowhere = path_of("nowhere.clsm");
  st = cls_package_write_from_dir(nowhere, path_of("no_such_run"), CLS_LOAD_AUTO, NULL, 0, 0, NULL, &err);
  CHECK(st == CLS_ERR_IO, "missing folder: %s", cls_status_string(st));
  CHECK_CONTAINS(err.text, "no checkpoint to load in ");
  CHECK_CONTAINS(err.text, "no_such_run");
  st = cls_package_write_from_dir(nowhere, run, CLS_LOAD_LAST, arpa, 1, 1, NULL, &err);
  CHECK(st == CLS_ERR_INVALID_ARGUMENT, "ARPA scorer: %s", cls_status_string(st));
  CHECK_CONTAINS(err.text, "lm_small.arpa: not clspeech's binary language model form");
  write_text("alphabet5.txt", ALPHABET4);
  char checkpoint[1024];
  CHECK(cls_checkpoint_find(run, "train", checkpoint, sizeof checkpoint, &err) == CLS_OK, "%s", err.text);
  cls_package_source src = {checkpoint, path_of("alphabet5.txt"), 16000, 32, 20, NULL, 0, 0};
  st = cls_package_write(nowhere, &src, NULL, &err);
  CHECK(st != CLS_OK, "an alphabet of the wrong size is refused");
  CHECK_CONTAINS(err.text, "alphabet5.txt");
  src.alphabet_path = path_of("alphabet.txt");
  src.audio_sample_rate = 10;
  st = cls_package_write(nowhere, &src, NULL, &err);
  CHECK(st == CLS_ERR_INVALID_ARGUMENT, "a sample rate out of range is refused");
  CHECK(stat(nowhere, &sb) != 0, "a failed write leaves no file");
  st = cls_package_write("/nonexistent-folder/x.clsm", &(cls_package_source){checkpoint, path_of("alphabet.txt"),
                                                                             16000, 32, 20, NULL, 0, 0},
                         NULL, &err);
  CHECK(st == CLS_ERR_IO, "an unwritable place: %s", cls_status_string(st));
  CHECK_CONTAINS(err.text, "/nonexistent-folder/x.clsm");
  st = cls_package_open(path_of("no_such.clsm"), &pkg, &err);
  CHECK(st == CLS_ERR_IO && !pkg, "a missing package: %s", cls_status_string(st));
  CHECK_CONTAINS(err.text, "no_such.clsm");

  /* the fuzz target's seeds load once their zeroed checksum is filled in */
  const char *seeds[] = {CLS_FIXTURE_DIR "/../fuzz/corpus/package/tiny_n_hidden2.clsm",
                         CLS_FIXTURE_DIR "/../fuzz/corpus/package/tiny_scorer.clsm"};
  for (int i = 0; i < 2; i++) {
    size_t size = 0;
    unsigned char *seed = read_all(seeds[i], &size);
    CHECK(seed && size > PKG_HEADER_BYTES, "reading %s", seeds[i]);
    if (!seed) continue;
    fix_checksum(seed, size);
    pkg = NULL;
    CHECK(cls_package_parse(seed, size, seeds[i], &pkg, &err) == CLS_OK, "%s", err.text);
    CHECK(pkg && cls_package_get_info(pkg)->model.n_hidden == 2, "seed %d is n_hidden 2", i);
    CHECK(pkg && (cls_package_get_info(pkg)->scorer != NULL) == (i == 1), "seed %d's scorer", i);
    cls_package_close(pkg);
    free(seed);
  }

  remove_dir(run);
  free(params);
  free(m);
  free(v);
  free(back);
  free(best);
  data_files_close();
  return check_finish("test_package");
}
