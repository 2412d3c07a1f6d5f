/* The check of every row `clspeech import` read (see clspeech/internal/import.h): duplicates on the
 * caller's thread, then each row's transcript and audio header on a pool of threads taking rows in turn,
 * the headers from and into the cache (data/import_cache.h), and the progress reported from the caller's
 * thread. */
#include "clspeech/internal/import.h"

#include "base/utf8.h"
#include "data/audio_problem.h"
#include "data/import_cache.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

typedef struct checker {
  cls_import_list *list;
  const cls_import_check_options *o;
  int rate, window, step;
  const cls_import_cache *cache;
  cls_import_cache_entry *probed; /* [list->n]: what this run learnt of each row's audio (path NULL: nothing) */
  atomic_int next, done, cached, opened;
  atomic_int failed;              /* out of memory */
} checker;

typedef struct by_path {
  const char *path;
  int index;
} by_path;

static int cmp_by_path(const void *a, const void *b) {
  const by_path *x = a, *y = b;
  int c = strcmp(x->path, y->path);
  return c ? c : (x->index > y->index) - (x->index < y->index);
}

static cls_status mark_duplicates(cls_import_list *list, cls_error *err) {
  by_path *v = malloc((size_t)(list->n ? list->n : 1) * sizeof *v);
  if (!v) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's check: out of memory");
  int n = 0;
  for (int i = 0; i < list->n; i++)
    if (list->rows[i].reason == CLS_IMPORT_KEPT) v[n++] = (by_path){list->rows[i].path, i};
  qsort(v, (size_t)n, sizeof *v, cmp_by_path);
  /* Each run of one path in row order: its first row stays, the others are duplicates of it. */
  for (int i = 1, first = 0; i < n; i++) {
    if (strcmp(v[first].path, v[i].path) != 0) {
      first = i;
      continue;
    }
    const cls_import_row *orig = &list->rows[v[first].index];
    cls_import_row *r = &list->rows[v[i].index];
    r->reason = CLS_IMPORT_DUPLICATE;
    snprintf(r->detail, sizeof r->detail, "the audio of %.120s:%d", list->sources[orig->source], orig->line);
  }
  free(v);
  return CLS_OK;
}

/* The row's transcript: normalised in place, then the alphabet; the labels for CTC into *labels
 * (codepoints without an alphabet). 0 when out of memory. */
static int check_text(checker *ck, cls_import_row *r, int32_t **labels, int *n_labels) {
  if (!r->transcript) {
    r->reason = CLS_IMPORT_NO_TRANSCRIPT;
    snprintf(r->detail, sizeof r->detail, "no transcript for this audio file");
    return 1;
  }
  char *norm = NULL;
  uint32_t digit = 0;
  cls_error e;
  cls_status st = cls_import_normalize(r->transcript, &ck->o->text, &norm, &digit, &e);
  if (st == CLS_ERR_OUT_OF_MEMORY) return 0;
  if (st != CLS_OK) {
    r->reason = CLS_IMPORT_BAD_TEXT;
    snprintf(r->detail, sizeof r->detail, "the transcript is not UTF-8: %.150s", e.text);
    return 1;
  }
  free(r->transcript);
  r->transcript = norm;
  const size_t tl = strlen(norm);
  if (tl == 0) {
    r->reason = CLS_IMPORT_EMPTY_TRANSCRIPT;
    snprintf(r->detail, sizeof r->detail, "nothing is left of the transcript after normalisation");
    return 1;
  }
  if (digit && !ck->o->text.keep_digits) {
    int32_t d = (int32_t)digit;
    char what[48];
    cls_alphabet_describe_chars(&d, 1, what, sizeof what);
    r->reason = CLS_IMPORT_DIGITS;
    snprintf(r->detail, sizeof r->detail, "the transcript holds the digit %s: numbers must be spelled out", what);
    return 1;
  }
  int32_t *l = malloc(tl * sizeof *l);
  if (!l) return 0;
  int n = 0;
  if (ck->o->alphabet) {
    int32_t missing[8];
    int n_missing = 0;
    st = cls_alphabet_encode(ck->o->alphabet, norm, l, (int)tl, &n, missing, 8, &n_missing);
    if (st == CLS_ERR_OUT_OF_MEMORY) {
      free(l);
      return 0;
    }
    if (n_missing > 0) {
      int w = snprintf(r->detail, sizeof r->detail, "characters not in the alphabet: ");
      cls_alphabet_describe_chars(missing, n_missing < 8 ? n_missing : 8, r->detail + w, sizeof r->detail - (size_t)w);
      r->reason = CLS_IMPORT_NOT_IN_ALPHABET;
      free(l);
      return 1;
    }
  } else {
    for (size_t i = 0; i < tl; n++) {
      uint32_t cp = 0;
      const int k = cls_utf8_decode((const unsigned char *)norm + i, tl - i, &cp);
      l[n] = (int32_t)cp;
      i += k ? (size_t)k : 1;
    }
  }
  *labels = l;
  *n_labels = n;
  return 1;
}

/* The audio header of row i: from the cache when it holds the file's size and mtime, else probed. */
static void check_audio(checker *ck, int i, cls_audio_header *h, int *problem, char *detail, size_t cap) {
  cls_import_row *r = &ck->list->rows[i];
  struct stat sb;
  if (stat(r->path, &sb) != 0) {
    *problem = CLS_AUDIO_MISSING;
    snprintf(detail, cap, "%s", strerror(errno));
    return;
  }
  if (!S_ISREG(sb.st_mode)) {
    *problem = CLS_AUDIO_NOT_AUDIO;
    snprintf(detail, cap, "not a regular file");
    return;
  }
  r->filesize = (int64_t)sb.st_size;
  const int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
  const cls_import_cache_entry *e = ck->cache ? cls_import_cache_find(ck->cache, r->path, r->filesize, mtime) : NULL;
  cls_import_cache_entry *mine = &ck->probed[i];
  if (e) {
    atomic_fetch_add(&ck->cached, 1);
    *h = e->header;
    *problem = e->problem;
    snprintf(detail, cap, "%.150s", e->detail);
  } else {
    atomic_fetch_add(&ck->opened, 1);
    cls_error why = {0};
    memset(h, 0, sizeof *h);
    *problem = (int)cls_audio_probe(r->path, h, &why);
    snprintf(detail, cap, "%.150s", *problem ? why.text : "");
  }
  mine->path = r->path;
  mine->size = r->filesize;
  mine->mtime_ns = mtime;
  mine->problem = *problem;
  mine->header = *h;
  snprintf(mine->detail, sizeof mine->detail, "%.150s", detail);
}

/* Checks row i; 0 when out of memory. */
static int check_row(checker *ck, int i) {
  cls_import_row *r = &ck->list->rows[i];
  if (r->reason != CLS_IMPORT_KEPT) return 1;
  int32_t *labels = NULL;
  int n = 0;
  if (!check_text(ck, r, &labels, &n)) return 0;
  if (r->reason != CLS_IMPORT_KEPT) return 1;
  cls_audio_header h;
  int problem = 0;
  char detail[160];
  check_audio(ck, i, &h, &problem, detail, sizeof detail);
  if (problem != CLS_AUDIO_FINE) {
    r->reason = problem == CLS_AUDIO_MISSING ? CLS_IMPORT_AUDIO_MISSING : CLS_IMPORT_AUDIO_UNREADABLE;
    cls_audio_problem_describe((cls_audio_problem)problem, detail, r->detail, sizeof r->detail);
    free(labels);
    return 1;
  }
  r->seconds = (double)h.frames / h.sample_rate;
  const cls_frame_count fc = cls_audio_frame_count(&h, ck->rate, ck->window, ck->step);
  const int need = cls_ctc_min_frames(labels, n);
  free(labels);
  if (fc.frames < need) {
    r->reason = CLS_IMPORT_TOO_SHORT;
    snprintf(r->detail, sizeof r->detail, "%d characters need %d feature frames, the audio gives %lld (%.2f s)", n, need,
             (long long)fc.frames, r->seconds);
  } else if (ck->o->max_seconds > 0 && r->seconds > ck->o->max_seconds) {
    r->reason = CLS_IMPORT_TOO_LONG;
    snprintf(r->detail, sizeof r->detail, "%.2f s of audio, more than --max_seconds %g", r->seconds, ck->o->max_seconds);
  } else if (ck->o->min_chars_per_second > 0 && n / r->seconds < ck->o->min_chars_per_second) {
    r->reason = CLS_IMPORT_TOO_SLOW;
    snprintf(r->detail, sizeof r->detail, "%d characters in %.2f s: %.2f a second, fewer than --min_chars_per_second %g",
             n, r->seconds, n / r->seconds, ck->o->min_chars_per_second);
  }
  return 1;
}

static void *worker(void *arg) {
  checker *ck = arg;
  for (;;) {
    const int i = atomic_fetch_add(&ck->next, 1);
    if (i >= ck->list->n || atomic_load(&ck->failed)) break;
    if (!check_row(ck, i)) atomic_store(&ck->failed, 1);
    atomic_fetch_add(&ck->done, 1);
  }
  return NULL;
}

static cls_status write_cache(checker *ck, cls_error *err) {
  int n = 0;
  for (int i = 0; i < ck->list->n; i++)
    if (ck->probed[i].path) ck->probed[n++] = ck->probed[i];
  return cls_import_cache_write(ck->o->cache_path, ck->probed, n, err);
}

cls_status cls_import_check(cls_import_list *list, const cls_import_check_options *o, cls_import_check_report *report,
                            cls_error *err) {
  if (report) memset(report, 0, sizeof *report);
  checker ck = {.list = list, .o = o};
  ck.rate = o->sample_rate > 0 ? o->sample_rate : 16000;
  ck.window = o->window > 0 ? o->window : ck.rate * 32 / 1000;
  ck.step = o->step > 0 ? o->step : ck.rate * 20 / 1000;
  cls_status st = mark_duplicates(list, err);
  if (st != CLS_OK) return st;
  cls_import_cache cache = {0};
  if (o->cache_path && (st = cls_import_cache_read(o->cache_path, &cache, err)) != CLS_OK) return st;
  ck.cache = &cache;
  ck.probed = calloc((size_t)(list->n ? list->n : 1), sizeof *ck.probed);
  if (!ck.probed) {
    cls_import_cache_free(&cache);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's check: out of memory");
  }
  int threads = o->threads;
  if (threads <= 0) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    threads = cpus > 0 ? (int)(cpus < MAX_THREADS ? cpus : MAX_THREADS) : 1;
  }
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  if (threads > list->n) threads = list->n > 0 ? list->n : 1;
  pthread_t tid[MAX_THREADS];
  int started = 0;
  while (started < threads && pthread_create(&tid[started], NULL, worker, &ck) == 0) started++;
  if (started == 0) worker(&ck); /* no thread: the caller's */
  while (started > 0 && atomic_load(&ck.done) < list->n && !atomic_load(&ck.failed)) {
    if (o->progress) o->progress(o->progress_user, atomic_load(&ck.done), list->n);
    const struct timespec tick = {0, 100 * 1000 * 1000};
    nanosleep(&tick, NULL);
  }
  for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
  if (o->progress) o->progress(o->progress_user, atomic_load(&ck.done), list->n);
  if (atomic_load(&ck.failed)) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "the import's check: out of memory");
  if (st == CLS_OK && o->cache_path) st = write_cache(&ck, err);
  if (report) {
    report->cached = atomic_load(&ck.cached);
    report->probed = atomic_load(&ck.opened);
  }
  free(ck.probed);
  cls_import_cache_free(&cache);
  return st;
}
