/* TensorFlow event files (see event_file.h): summaries as protobuf-c messages, their encoding into
 * Event records, the file's name, and the flush thread. */
#include "base/event_file.h"

#include <errno.h>
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tf_event.pb-c.h> /* generated from tf_event.proto at build time */

#include "base/tfrecord.h"

/* ---- summaries ---- */

struct cls_summary {
  int n, cap;
  Tensorflow__Summary__Value *values;       /* [cap] */
  Tensorflow__HistogramProto *histos;       /* [cap], histos[i] the histogram of values[i] when it has one */
  Tensorflow__Summary__Value **pointers;    /* [cap], what Tensorflow__Summary lists */
};

cls_summary *cls_summary_create(void) { return calloc(1, sizeof(cls_summary)); }

static void free_value(cls_summary *s, int i) {
  free(s->values[i].tag);
  free(s->histos[i].bucket_limit);
  free(s->histos[i].bucket);
}

void cls_summary_clear(cls_summary *s) {
  if (!s) return;
  for (int i = 0; i < s->n; i++) free_value(s, i);
  s->n = 0;
}

void cls_summary_destroy(cls_summary *s) {
  if (!s) return;
  cls_summary_clear(s);
  free(s->values);
  free(s->histos);
  free(s->pointers);
  free(s);
}

int cls_summary_count(const cls_summary *s) { return s ? s->n : 0; }

/* A new value slot with its tag, or NULL. */
static Tensorflow__Summary__Value *add_value(cls_summary *s, const char *tag, cls_status *st) {
  *st = CLS_ERR_INVALID_ARGUMENT;
  if (!s || !tag || !*tag) return NULL;
  *st = CLS_ERR_OUT_OF_MEMORY;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 32;
    Tensorflow__Summary__Value *v = realloc(s->values, (size_t)cap * sizeof *v);
    if (v) s->values = v;
    Tensorflow__HistogramProto *h = realloc(s->histos, (size_t)cap * sizeof *h);
    if (h) s->histos = h;
    Tensorflow__Summary__Value **p = realloc(s->pointers, (size_t)cap * sizeof *p);
    if (p) s->pointers = p;
    if (!v || !h || !p) return NULL;
    s->cap = cap;
  }
  Tensorflow__Summary__Value *v = &s->values[s->n];
  tensorflow__summary__value__init(v);
  tensorflow__histogram_proto__init(&s->histos[s->n]);
  v->tag = strdup(tag);
  if (!v->tag) return NULL;
  s->n++;
  *st = CLS_OK;
  return v;
}

cls_status cls_summary_scalar(cls_summary *s, const char *tag, double value) {
  cls_status st;
  Tensorflow__Summary__Value *v = add_value(s, tag, &st);
  if (!v) return st;
  v->value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
  v->simple_value = (float)value;
  return CLS_OK;
}

cls_status cls_summary_histogram(cls_summary *s, const char *tag, const cls_tensor_stats *stats) {
  cls_status st;
  Tensorflow__Summary__Value *v = add_value(s, tag, &st);
  if (!v) return st;
  Tensorflow__HistogramProto *h = &s->histos[s->n - 1];
  const double *limits = cls_histo_limits();
  /* TF's EncodeToProto without preserve_zero_buckets: a run of empty buckets becomes one entry at
     the run's last limit. */
  size_t n = 0;
  for (int i = 0; i < CLS_HISTO_BUCKETS; n++) {
    if (stats->buckets[i++]) continue;
    while (i < CLS_HISTO_BUCKETS && !stats->buckets[i]) i++;
  }
  h->bucket_limit = malloc(n * sizeof(double));
  h->bucket = malloc(n * sizeof(double));
  if (!h->bucket_limit || !h->bucket) return CLS_ERR_OUT_OF_MEMORY; /* freed with the value */
  size_t k = 0;
  for (int i = 0; i < CLS_HISTO_BUCKETS; k++) {
    double end = limits[i], count = stats->buckets[i];
    i++;
    if (count <= 0)
      while (i < CLS_HISTO_BUCKETS && !stats->buckets[i]) end = limits[i++];
    h->bucket_limit[k] = end;
    h->bucket[k] = count;
  }
  h->n_bucket_limit = h->n_bucket = k;
  h->min = stats->n ? stats->min : DBL_MAX;
  h->max = stats->n ? stats->max : -DBL_MAX;
  h->num = (double)stats->n;
  h->sum = cls_tensor_stats_sum(stats);
  h->sum_squares = cls_tensor_stats_sum_squares(stats);
  v->value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO; /* v->histo is set when the event is written */
  return CLS_OK;
}

/* ---- files ---- */

struct cls_event_file {
  FILE *f;
  char path[CLS_PATH_CAP]; /* folder + name */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t flusher;
  int thread_started, stop, dirty;
  double flush_secs;
  cls_error failure;       /* the first failure, sticky (status CLS_OK: none) */
  unsigned char *buf;      /* the encoding of the event being written */
  size_t buf_cap;
};

static double wall_time(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Records the first failure (lock held). */
static void fail(cls_event_file *f, const char *what, int errnum) {
  if (f->failure.status != CLS_OK) return;
  cls_error_set(&f->failure, CLS_ERR_IO, "%s: %s: %s", f->path, what, strerror(errnum));
}

/* Encodes and appends one event (lock held). */
static void put_event(cls_event_file *f, const Tensorflow__Event *ev) {
  if (f->failure.status != CLS_OK) return;
  size_t n = tensorflow__event__get_packed_size(ev);
  if (n > f->buf_cap) {
    unsigned char *b = realloc(f->buf, n);
    if (!b) {
      cls_error_set(&f->failure, CLS_ERR_OUT_OF_MEMORY, "%s: out of host memory for an event of %zu bytes", f->path, n);
      return;
    }
    f->buf = b;
    f->buf_cap = n;
  }
  tensorflow__event__pack(ev, f->buf);
  errno = 0;
  if (cls_tfrecord_write(f->f, f->buf, n) != CLS_OK) fail(f, "writing an event", errno ? errno : EIO);
  f->dirty = 1;
}

static void flush_locked(cls_event_file *f) {
  if (!f->dirty || f->failure.status != CLS_OK) return;
  if (fflush(f->f) != 0) fail(f, "flushing", errno);
  f->dirty = 0;
}

static void *flush_thread(void *arg) {
  cls_event_file *f = arg;
  pthread_mutex_lock(&f->lock);
  while (!f->stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double next = (double)until.tv_nsec * 1e-9 + f->flush_secs;
    until.tv_sec += (time_t)next;
    until.tv_nsec = (long)((next - (double)(time_t)next) * 1e9);
    while (!f->stop && pthread_cond_timedwait(&f->wake, &f->lock, &until) == 0) {
    }
    flush_locked(f);
  }
  pthread_mutex_unlock(&f->lock);
  return NULL;
}

cls_status cls_event_file_open(const char *dir, double flush_secs, cls_event_file **out, cls_error *err) {
  static int serial;
  static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
  *out = NULL;
  if (!dir || !*dir || !(flush_secs > 0)) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "event file: a folder and a flush interval above 0 are needed");
  }
  if (cls_make_dirs(dir) != CLS_OK)
    return cls_error_set(err, CLS_ERR_IO, "%s: cannot make the folder: %s", dir, strerror(errno));
  cls_event_file *f = calloc(1, sizeof *f);
  if (!f) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  char host[256] = "localhost";
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  pthread_mutex_lock(&serial_lock);
  int n = serial++;
  pthread_mutex_unlock(&serial_lock);
  snprintf(f->path, sizeof f->path, "%s/events.out.tfevents.%010lld.%s.%ld.%d", dir, (long long)time(NULL), host,
           (long)getpid(), n);
  f->f = fopen(f->path, "wbx");
  if (!f->f) {
    cls_error_set(err, CLS_ERR_IO, "%s: cannot create: %s", f->path, strerror(errno));
    free(f);
    return CLS_ERR_IO;
  }
  f->flush_secs = flush_secs;
  pthread_mutex_init(&f->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&f->wake, &attr);
  pthread_condattr_destroy(&attr);
  Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
  ev.wall_time = wall_time();
  ev.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
  ev.file_version = "brain.Event:2";
  put_event(f, &ev);
  flush_locked(f);
  if (f->failure.status == CLS_OK) {
    f->thread_started = pthread_create(&f->flusher, NULL, flush_thread, f) == 0;
    if (!f->thread_started) fail(f, "starting the flush thread", EAGAIN);
  }
  if (f->failure.status != CLS_OK) {
    cls_status st = cls_error_set(err, f->failure.status, "%s", f->failure.text);
    cls_event_file_close(f, NULL);
    return st;
  }
  *out = f;
  return CLS_OK;
}

cls_status cls_event_file_write(cls_event_file *f, int64_t step, const cls_summary *s, cls_error *err) {
  Tensorflow__Summary sum = TENSORFLOW__SUMMARY__INIT;
  for (int i = 0; i < s->n; i++) {
    s->pointers[i] = &s->values[i];
    /* The histograms' array may have moved since the value was added (realloc). */
    if (s->values[i].value_case == TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO) s->values[i].histo = &s->histos[i];
  }
  sum.n_value = (size_t)s->n;
  sum.value = s->pointers;
  Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
  ev.wall_time = wall_time();
  ev.step = step;
  ev.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
  ev.summary = &sum;
  pthread_mutex_lock(&f->lock);
  put_event(f, &ev);
  cls_status st = f->failure.status;
  if (st != CLS_OK) cls_error_set(err, st, "%s", f->failure.text);
  pthread_mutex_unlock(&f->lock);
  return st;
}

cls_status cls_event_file_close(cls_event_file *f, cls_error *err) {
  if (!f) return CLS_OK;
  pthread_mutex_lock(&f->lock);
  f->stop = 1;
  pthread_cond_signal(&f->wake);
  pthread_mutex_unlock(&f->lock);
  if (f->thread_started) pthread_join(f->flusher, NULL);
  flush_locked(f);
  if (fclose(f->f) != 0) fail(f, "closing", errno);
  cls_status st = f->failure.status;
  if (st != CLS_OK) cls_error_set(err, st, "%s", f->failure.text);
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->wake);
  free(f->buf);
  free(f);
  return st;
}

const char *cls_event_file_path(const cls_event_file *f) { return f->path; }
