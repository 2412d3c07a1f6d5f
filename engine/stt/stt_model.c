/* The stt model (see clspeech/stt.h): made from a checkpoint folder as `clspeech transcribe` reads one
 * (the checkpoint chosen as --load_evaluate auto, its geometry, alphabet.txt and features.txt) or from
 * a model package (.clsm: the same, and the scorer it carries, enabled with its weights), the
 * forward-only replica on the chosen device, the decoder's settings and the scorer, and the version.
 * The one-shot calls are stt_one_shot.c's; the status codes and failure details stt_status.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clspeech/clspeech.h"
#include "clspeech/lm.h"
#include "clspeech/package.h"
#include "clspeech/scorer.h"
#include "model/infer.h"
#include "stt/stt_internal.h"

const char *cls_stt_version(void) { return cls_version(); }


/* The feature tables for `rate` Hz and windows of len/step ms, checked against the network's input;
 * `model` names the network and `where` the settings in errors. */
static int make_tables(cls_stt_model *m, int rate, int len, int step, const char *model, const char *where,
                       cls_error *why) {
  cls_error err;
  cls_mfcc_config fc = cls_mfcc_default(rate);
  fc.win_len_ms = len;
  fc.win_step_ms = step;
  if (fc.n_coeff != m->cfg.n_input) {
    cls_error_set(why, CLS_ERR_IO, "%s takes %d coefficients per frame, the features give %d", model, m->cfg.n_input,
                  fc.n_coeff);
    return CLS_STT_ERR_BAD_MODEL;
  }
  if (cls_mfcc_tables_create(&fc, &m->tables, &err) != CLS_OK) {
    cls_error_set(why, CLS_ERR_IO, "%s: %s", where, err.text);
    return CLS_STT_ERR_BAD_MODEL;
  }
  return CLS_STT_OK;
}

/* The checkpoint, its geometry, the feature geometry and the alphabet of folder `dir`, checked against
 * each other. CLS_STT_OK or the code, with `why` set. */
static int read_folder(cls_stt_model *m, const char *dir, char *ckpt, size_t ckpt_cap, cls_error *why) {
  cls_error err;
  if (cls_checkpoint_choose(dir, CLS_LOAD_AUTO, ckpt, ckpt_cap, NULL, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return CLS_STT_ERR_NO_MODEL;
  }
  if (cls_checkpoint_peek_model(ckpt, &m->cfg, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return CLS_STT_ERR_BAD_MODEL;
  }
  int rate = 0, len = 0, step = 0, found = 0;
  if (cls_checkpoint_read_features(dir, &rate, &len, &step, &found, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return CLS_STT_ERR_BAD_MODEL;
  }
  if (!found) {
    cls_error_set(why, CLS_ERR_IO, "%s: no %s (the feature settings; `clspeech train` writes it beside the checkpoints)", dir,
             CLS_CHECKPOINT_FEATURES);
    return CLS_STT_ERR_BAD_MODEL;
  }
  char file[CLS_PATH_CAP];
  snprintf(file, sizeof file, "%s/%s", dir, CLS_CHECKPOINT_ALPHABET);
  if (cls_alphabet_load(file, &m->alphabet, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return CLS_STT_ERR_BAD_MODEL;
  }
  if (cls_alphabet_size(m->alphabet) + 1 != m->cfg.n_classes) {
    cls_error_set(why, CLS_ERR_IO, "%s has %d classes, but %s gives %d labels (+1 blank)", ckpt, m->cfg.n_classes, file,
             cls_alphabet_size(m->alphabet));
    return CLS_STT_ERR_BAD_MODEL;
  }
  snprintf(file, sizeof file, "%s/%s", dir, CLS_CHECKPOINT_FEATURES);
  return make_tables(m, rate, len, step, ckpt, file, why);
}

/* A package's geometry, alphabet and feature settings (checked by the reader), its scorer joined to
 * the alphabet and enabled with the package's weights. The package stays open for open_device. */
static int read_package(cls_stt_model *m, const char *path, cls_package **pkg, cls_error *why) {
  cls_error err;
  if (cls_package_open(path, pkg, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return err.status == CLS_ERR_OUT_OF_MEMORY ? CLS_STT_ERR_OUT_OF_MEMORY : CLS_STT_ERR_BAD_MODEL;
  }
  const cls_package_info *in = cls_package_get_info(*pkg);
  m->cfg = in->model;
  char name[CLS_PATH_CAP];
  snprintf(name, sizeof name, "%s (alphabet)", path);
  if (cls_alphabet_parse(in->alphabet, in->alphabet_bytes, name, &m->alphabet, &err) != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    return CLS_STT_ERR_BAD_MODEL;
  }
  int rc = make_tables(m, in->audio_sample_rate, in->feature_win_len, in->feature_win_step, path, path, why);
  if (rc != CLS_STT_OK || !in->scorer) return rc;
  const int n = cls_alphabet_size(m->alphabet);
  const char **labels = malloc((size_t)n * sizeof *labels);
  stt_scorer_ref *ref = calloc(1, sizeof *ref);
  if (!labels || !ref) {
    free(labels);
    free(ref);
    cls_error_set(why, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for its scorer", path);
    return CLS_STT_ERR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < n; i++) labels[i] = cls_alphabet_label(m->alphabet, i);
  snprintf(name, sizeof name, "%s (scorer)", path);
  cls_status st = cls_lm_parse_binary(in->scorer, in->scorer_bytes, name, &ref->lm, &err);
  if (st == CLS_OK) st = cls_scorer_create(ref->lm, labels, n, &ref->scorer, NULL, &err);
  free(labels);
  if (st != CLS_OK) {
    stt_copy(why->text, sizeof why->text, err.text);
    cls_lm_destroy(ref->lm);
    free(ref);
    return st == CLS_ERR_OUT_OF_MEMORY ? CLS_STT_ERR_OUT_OF_MEMORY : CLS_STT_ERR_SCORER;
  }
  ref->refs = 1;
  m->scorer = ref;
  m->alpha = in->lm_alpha;
  m->beta = in->lm_beta;
  return CLS_STT_OK;
}

/* The engine, the device chosen and the replica with the parameters of the checkpoint or package. */
static int open_device(cls_stt_model *m, const char *devices, const char *ckpt, const cls_package *pkg,
                       cls_error *why) {
  cls_status st = cls_engine_create(NULL, &m->engine);
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  if (st == CLS_OK) st = cls_engine_select(m->engine, devices, sel, CLS_MAX_DEVICES, &n_sel);
  if (st == CLS_OK) st = cls_engine_prepare(m->engine, sel, &n_sel);
  if (st == CLS_OK && n_sel < 1) {
    stt_copy(why->text, sizeof why->text, "no OpenCL device selected");
    return CLS_STT_ERR_DEVICE;
  }
  cls_infer_config ic = {m->cfg, m->tables->cfg, 1, NULL, 1, 1, 0, CLS_STT_CHUNK_FRAMES};
  if (st == CLS_OK) st = cls_infer_create(m->engine, sel[0], &ic, &m->infer);
  if (st == CLS_OK) st = pkg ? cls_infer_load_package(m->infer, pkg) : cls_infer_load(m->infer, ckpt);
  if (st == CLS_OK) return CLS_STT_OK;
  stt_copy(why->text, sizeof why->text, m->engine ? cls_engine_error(m->engine) : "cannot create the OpenCL engine");
  return st == CLS_ERR_IO ? CLS_STT_ERR_BAD_MODEL : stt_status_of(st);
}

int cls_stt_model_create(const char *path, const char *devices, cls_stt_model **out, char *detail, size_t cap) {
  cls_error why = {CLS_OK, ""};
  if (out) *out = NULL;
  if (!path || !out) {
    stt_copy(detail, cap, "cls_stt_model_create: NULL path or output");
    return CLS_STT_ERR_INVALID_ARGUMENT;
  }
  struct stat sb;
  if (stat(path, &sb) != 0) {
    cls_error_set(&why, CLS_ERR_IO, "%s: no such file or folder", path);
    stt_copy(detail, cap, why.text);
    return CLS_STT_ERR_NO_MODEL;
  }
  cls_stt_model *m = calloc(1, sizeof *m);
  if (!m) {
    stt_copy(detail, cap, "out of memory");
    return CLS_STT_ERR_OUT_OF_MEMORY;
  }
  pthread_mutex_init(&m->lock, NULL);
  m->refs = 1;
  m->beam_width = 1024;
  m->alpha = CLS_LM_ALPHA_DEFAULT;
  m->beta = CLS_LM_BETA_DEFAULT;
  char ckpt[CLS_PATH_CAP] = "";
  cls_package *pkg = NULL;
  int rc = S_ISDIR(sb.st_mode) ? read_folder(m, path, ckpt, sizeof ckpt, &why) : read_package(m, path, &pkg, &why);
  if (rc == CLS_STT_OK) rc = open_device(m, devices, ckpt, pkg, &why);
  cls_package_close(pkg);
  if (rc != CLS_STT_OK) {
    stt_copy(detail, cap, why.text);
    cls_stt_model_free(m);
    return rc;
  }
  stt_copy(detail, cap, "");
  *out = m;
  return CLS_STT_OK;
}

void stt_scorer_release(cls_stt_model *m, stt_scorer_ref *ref) {
  (void)m;
  if (!ref) return;
  if (--ref->refs == 0) {
    cls_scorer_destroy(ref->scorer);
    cls_lm_destroy(ref->lm);
    free(ref);
  }
}

/* Everything the model holds; no stream holds it any more. */
static void model_destroy(cls_stt_model *m) {
  stt_scorer_release(m, m->scorer);
  for (int i = 0; i < m->n_hot; i++) free(m->hot_words[i]);
  free(m->hot_words);
  free(m->hot_boosts);
  cls_infer_destroy(m->infer);
  cls_engine_destroy(m->engine);
  cls_mfcc_tables_destroy(m->tables);
  cls_alphabet_destroy(m->alphabet);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

void stt_model_release(cls_stt_model *m) {
  pthread_mutex_lock(&m->lock);
  const int last = --m->refs == 0;
  pthread_mutex_unlock(&m->lock);
  if (last) model_destroy(m);
}

/* The program's hold: streams still made from the model keep it (and the API on them) alive. */
void cls_stt_model_free(cls_stt_model *m) {
  if (m) stt_model_release(m);
}

int cls_stt_model_sample_rate(const cls_stt_model *m) { return m ? m->tables->cfg.sample_rate : 0; }

int cls_stt_model_beam_width(const cls_stt_model *m) {
  if (!m) return 0;
  pthread_mutex_lock((pthread_mutex_t *)&m->lock);
  const int w = m->beam_width;
  pthread_mutex_unlock((pthread_mutex_t *)&m->lock);
  return w;
}

int cls_stt_model_set_beam_width(cls_stt_model *m, int beam_width) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (beam_width < 1 || beam_width > 65536)
    return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "beam width %d: it must be 1 .. 65536", beam_width);
  pthread_mutex_lock(&m->lock);
  m->beam_width = beam_width;
  pthread_mutex_unlock(&m->lock);
  return CLS_STT_OK;
}

int cls_stt_model_enable_scorer(cls_stt_model *m, const char *path) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!path) return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "enable scorer: NULL path");
  const int n = cls_alphabet_size(m->alphabet);
  const char **labels = malloc((size_t)n * sizeof *labels);
  stt_scorer_ref *ref = calloc(1, sizeof *ref);
  if (!labels || !ref) {
    free(labels);
    free(ref);
    return stt_model_fail(m, CLS_STT_ERR_OUT_OF_MEMORY, "%s: out of memory for the scorer", path);
  }
  for (int i = 0; i < n; i++) labels[i] = cls_alphabet_label(m->alphabet, i);
  cls_error err;
  const cls_status st = cls_scorer_load(path, labels, n, &ref->scorer, NULL, &err);
  free(labels);
  pthread_mutex_lock(&m->lock);
  if (st != CLS_OK) {
    const int code = st == CLS_ERR_OUT_OF_MEMORY ? CLS_STT_ERR_OUT_OF_MEMORY : CLS_STT_ERR_SCORER;
    const int rc = stt_model_fail_locked(m, code, "%s", err.text);
    pthread_mutex_unlock(&m->lock);
    free(ref);
    return rc;
  }
  ref->refs = 1;
  stt_scorer_release(m, m->scorer);
  m->scorer = ref;
  pthread_mutex_unlock(&m->lock);
  return CLS_STT_OK;
}

int cls_stt_model_disable_scorer(cls_stt_model *m) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&m->lock);
  stt_scorer_release(m, m->scorer);
  m->scorer = NULL;
  pthread_mutex_unlock(&m->lock);
  return CLS_STT_OK;
}

int cls_stt_model_set_scorer_alpha_beta(cls_stt_model *m, float alpha, float beta) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!isfinite(alpha) || !isfinite(beta)) /* the decoder refuses them: refused here, where the cause is */
    return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "scorer alpha %g and beta %g: both must be finite",
                          (double)alpha, (double)beta);
  pthread_mutex_lock(&m->lock);
  m->alpha = alpha;
  m->beta = beta;
  pthread_mutex_unlock(&m->lock);
  return CLS_STT_OK;
}

static int find_hot_word(const cls_stt_model *m, const char *word) {
  for (int i = 0; i < m->n_hot; i++)
    if (!strcmp(m->hot_words[i], word)) return i;
  return -1;
}

int cls_stt_model_add_hot_word(cls_stt_model *m, const char *word, float boost) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!word || !*word || strchr(word, ' '))
    return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "hot-word \"%s\": it must be one word (no space)",
                          word ? word : "(NULL)");
  if (!isfinite(boost))
    return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "hot-word \"%s\": boost %g is not finite", word,
                          (double)boost);
  pthread_mutex_lock(&m->lock);
  int rc = CLS_STT_OK;
  if (!m->scorer) rc = stt_model_fail_locked(m, CLS_STT_ERR_NO_SCORER, "hot-word \"%s\": no scorer is enabled", word);
  else if (find_hot_word(m, word) >= 0)
    rc = stt_model_fail_locked(m, CLS_STT_ERR_HOT_WORD, "\"%s\" is already a hot-word", word);
  if (rc == CLS_STT_OK && m->n_hot == m->cap_hot) {
    const int cap = m->cap_hot ? 2 * m->cap_hot : 8;
    char **w = realloc(m->hot_words, (size_t)cap * sizeof *w);
    if (w) m->hot_words = w;
    double *b = w ? realloc(m->hot_boosts, (size_t)cap * sizeof *b) : NULL;
    if (b) m->hot_boosts = b;
    if (w && b) m->cap_hot = cap;
    else rc = stt_model_fail_locked(m, CLS_STT_ERR_OUT_OF_MEMORY, "hot-word \"%s\": out of memory", word);
  }
  char *copy = rc == CLS_STT_OK ? malloc(strlen(word) + 1) : NULL;
  if (rc == CLS_STT_OK && !copy)
    rc = stt_model_fail_locked(m, CLS_STT_ERR_OUT_OF_MEMORY, "hot-word \"%s\": out of memory", word);
  if (rc == CLS_STT_OK) {
    strcpy(copy, word);
    m->hot_words[m->n_hot] = copy;
    m->hot_boosts[m->n_hot++] = boost;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

int cls_stt_model_erase_hot_word(cls_stt_model *m, const char *word) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!word) return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "erase hot-word: NULL word");
  pthread_mutex_lock(&m->lock);
  const int i = find_hot_word(m, word);
  int rc = CLS_STT_OK;
  if (!m->scorer) rc = stt_model_fail_locked(m, CLS_STT_ERR_NO_SCORER, "hot-word \"%s\": no scorer is enabled", word);
  else if (i < 0) rc = stt_model_fail_locked(m, CLS_STT_ERR_HOT_WORD, "\"%s\" is not a hot-word", word);
  if (rc == CLS_STT_OK) {
    free(m->hot_words[i]);
    m->hot_words[i] = m->hot_words[m->n_hot - 1];
    m->hot_boosts[i] = m->hot_boosts[m->n_hot - 1];
    m->n_hot--;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

int cls_stt_model_clear_hot_words(cls_stt_model *m) {
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&m->lock);
  int rc = CLS_STT_OK;
  if (!m->scorer) rc = stt_model_fail_locked(m, CLS_STT_ERR_NO_SCORER, "clear hot-words: no scorer is enabled");
  if (rc == CLS_STT_OK) {
    for (int i = 0; i < m->n_hot; i++) free(m->hot_words[i]);
    m->n_hot = 0;
  }
  pthread_mutex_unlock(&m->lock);
  return rc;
}

const char *cls_stt_model_detail(const cls_stt_model *m) { return m ? m->detail.text : ""; }
