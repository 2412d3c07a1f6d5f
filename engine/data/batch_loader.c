/* Background batch preparation (see batch_loader.h): one producer thread, a ring of `depth` slots,
 * a mutex and condition variables. The thread owns a slot from when it takes it free until it marks it
 * ready; the consumer owns it from cls_loader_next until cls_loader_done. The producer fills one batch
 * at a time: it publishes the batch's utterances as a job, and it and the pool's helper threads (workers
 * - 1 of them, started with the loader) take them in index order, each writing only its utterance's
 * entries; the producer then merges the results in index order, as one thread would have. */
#include "data/batch_loader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clspeech/features.h"
#include "features/augment/host_pass.h"
#include "features/augment/tempo.h"

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

/* One utterance's outcome beside the batch's own [B] entries (audio, n_audio, frames, features). */
typedef struct utt_result {
  double seconds; /* its audio's duration */
  int counted;    /* seconds count toward the batch's audio_seconds */
  cls_error error;
} utt_result;

typedef struct slot {
  cls_host_batch b;
  enum slot_state state;
  size_t windows_cap;
} slot;

struct cls_loader {
  const cls_utterance *utts;
  int n, batch_size, n_batches;
  cls_loader_options opt;
  slot *slots;
  int depth;
  int next_fill, next_take; /* batch numbers */
  int stop;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  /* The pool: the producer and its helpers prepare the job's utterances job_next .. job_count in order,
     until one fails or the loader stops; job_busy are being prepared. All under lock. */
  int workers, n_helpers;
  pthread_t *helpers;      /* [workers - 1], n_helpers of them started */
  pthread_cond_t work;     /* a job was published, or stop */
  pthread_cond_t finished; /* job_busy fell to 0 */
  cls_host_batch *job;     /* the batch being filled */
  float **job_feats;       /* [B] its features (the host-features path) */
  utt_result *results;     /* [batch_size] */
  int job_next, job_count, job_busy, job_failed;
};

static void clear_audio(cls_host_batch *b, int count) {
  for (int i = 0; i < count; i++) {
    free(b->audio[i]);
    b->audio[i] = NULL;
  }
}

/* Features [frames, n_coeff] of one utterance on the host, through the cache. The cache is best
 * effort: its failures are not the batch's (NULL cls_error), a miss computes the features. */
static cls_status host_features(const cls_loader *l, const char *path, float **feats, size_t *frames, double *seconds,
                                cls_error *err) {
  const cls_mfcc_tables *t = l->opt.tables;
  char key[65] = "";
  int cached = l->opt.feature_cache && *l->opt.feature_cache &&
               cls_feature_cache_key(path, &t->cfg, key, NULL) == CLS_OK &&
               cls_feature_cache_load(l->opt.feature_cache, key, t->cfg.n_coeff, feats, frames);
  if (cached) {
    *seconds = cls_frames_seconds((int64_t)*frames, t->cfg.sample_rate, t->window, t->step);
    return CLS_OK;
  }
  cls_audio a;
  cls_status st = cls_audio_read(path, t->cfg.sample_rate, &a, err);
  if (st != CLS_OK) return st;
  *seconds = (double)a.n_samples / a.sample_rate;
  *frames = cls_mfcc_frames(t, a.n_samples);
  *feats = malloc((*frames ? *frames : 1) * (size_t)t->cfg.n_coeff * sizeof **feats);
  if (!*feats) {
    cls_audio_free(&a);
    return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory for features", path);
  }
  cls_mfcc_host(t, a.samples, a.n_samples, *feats);
  cls_audio_free(&a);
  if (*key) cls_feature_cache_store(l->opt.feature_cache, key, t->cfg.n_coeff, *feats, *frames, NULL);
  return CLS_OK;
}

/* Utterance i of batch b: its audio (decoded, augmented) or its features, frames and duration; writes
 * only entry i of b's [B] arrays and of feats, and r. */
static void prepare(const cls_loader *l, cls_host_batch *b, float **feats, int i, utt_result *r) {
  const cls_loader_options *o = &l->opt;
  const cls_mfcc_tables *t = o->tables;
  const cls_utterance *u = &l->utts[b->first + i];
  cls_error_clear(&r->error);
  r->seconds = 0;
  r->counted = 0;
  if (o->host_features) {
    size_t frames = 0;
    host_features(l, u->path, &feats[i], &frames, &r->seconds, &r->error);
    b->frames[i] = (int)frames;
    r->counted = 1;
    return;
  }
  cls_audio a;
  if (cls_audio_read(u->path, t->cfg.sample_rate, &a, &r->error) != CLS_OK) return;
  cls_error why;
  if (b->augmented && o->n_augs > 0 &&
      cls_augment_samples(o->augs, o->n_augs, o->sources, o->seed, o->epoch_key, b->aug_index[i], b->aug_clock[i],
                          a.samples, a.n_samples, a.sample_rate, &why) != CLS_OK)
    cls_error_set(&r->error, why.status, "%s: --augment: %s", u->path, why.text);
  b->audio[i] = a.samples;
  b->n_audio[i] = a.n_samples;
  b->frames[i] = (int)cls_mfcc_frames(t, a.n_samples);
  /* tempo changes the frame count: the tower's input and CTC take the count after it */
  if (b->augmented && o->n_augs > 0 && b->frames[i] > 0)
    b->frames[i] = cls_augment_frames(o->augs, o->n_augs, o->seed, o->epoch_key, b->aug_index[i], b->aug_clock[i],
                                      b->frames[i], cls_ctc_min_frames(u->labels, u->n_labels), o->max_frames,
                                      t->cfg.win_step_ms);
  r->seconds = (double)a.n_samples / a.sample_rate;
  r->counted = 1;
}

/* Takes the job's utterances in order and prepares them until none is left to take, one has failed or
 * the loader stops. Called with the lock held; holds it again on return. */
static void work(cls_loader *l) {
  while (!l->stop && !l->job_failed && l->job_next < l->job_count) {
    const int i = l->job_next++;
    cls_host_batch *b = l->job;
    float **feats = l->job_feats;
    utt_result *r = &l->results[i];
    l->job_busy++;
    pthread_mutex_unlock(&l->lock);
    prepare(l, b, feats, i, r);
    pthread_mutex_lock(&l->lock);
    if (r->error.status != CLS_OK) l->job_failed = 1;
    if (--l->job_busy == 0) pthread_cond_broadcast(&l->finished);
  }
}

static void *helper(void *arg) {
  cls_loader *l = arg;
  pthread_mutex_lock(&l->lock);
  while (!l->stop) {
    work(l);
    if (!l->stop) pthread_cond_wait(&l->work, &l->lock);
  }
  pthread_mutex_unlock(&l->lock);
  return NULL;
}

/* Prepares batch b's utterances on the producer and the helpers; 0 when the loader stopped first. One
 * worker takes them one after the other and stops at the first failure, as the loader always did. */
static int prepare_all(cls_loader *l, cls_host_batch *b, float **feats) {
  pthread_mutex_lock(&l->lock);
  l->job = b;
  l->job_feats = feats;
  l->job_next = 0;
  l->job_count = b->batch;
  l->job_failed = 0;
  pthread_cond_broadcast(&l->work);
  work(l);
  while (l->job_busy > 0) pthread_cond_wait(&l->finished, &l->lock);
  const int done = !l->stop || l->job_failed || l->job_next == l->job_count;
  l->job_count = 0;
  pthread_mutex_unlock(&l->lock);
  return done;
}

static void fill(cls_loader *l, slot *s, int k) {
  cls_host_batch *b = &s->b;
  const cls_mfcc_tables *t = l->opt.tables;
  const int nc = t->cfg.n_coeff, ctx = l->opt.n_context, width = (2 * ctx + 1) * nc;
  b->first = k * l->batch_size;
  b->batch = l->n - b->first < l->batch_size ? l->n - b->first : l->batch_size;
  cls_error_clear(&b->error);
  const cls_loader_options *o = &l->opt;
  b->augmented = o->augment;
  b->host_windows = o->host_features;
  b->aug_epoch = o->epoch_key;
  for (int i = 0; o->augment && i < b->batch; i++) {
    const long long at = b->first + i, local = o->index_local > 0 ? o->index_local : 1;
    const long long g = at / local * o->index_global + o->index_first + at % local;
    b->aug_index[i] = (uint32_t)g;
    const double size = o->epoch_size > 0 ? o->epoch_size : 1, epochs = o->epochs > 0 ? o->epochs : 1;
    b->aug_clock[i] = (o->run_epoch + (double)g / size) / epochs;
  }
  b->time = 0;
  b->audio_seconds = 0;
  b->max_label = 1;
  for (int i = 0; i < b->batch; i++)
    if (l->utts[b->first + i].n_labels > b->max_label) b->max_label = l->utts[b->first + i].n_labels;
  free(b->labels);
  b->labels = calloc((size_t)b->batch * (size_t)b->max_label, sizeof *b->labels);
  float **feats = calloc((size_t)b->batch, sizeof *feats);
  if (!b->labels || !feats) {
    cls_error_set(&b->error, CLS_ERR_OUT_OF_MEMORY, "out of host memory preparing a batch");
    free(feats);
    return;
  }
  for (int i = 0; i < b->batch; i++) {
    const cls_utterance *u = &l->utts[b->first + i];
    if (u->n_labels > 0) memcpy(b->labels + (size_t)i * b->max_label, u->labels, (size_t)u->n_labels * sizeof *u->labels);
    b->label_len[i] = u->n_labels;
  }
  if (!prepare_all(l, b, feats)) {
    cls_error_set(&b->error, CLS_ERR_IO, "batch loader: stopped before the batch was read");
  } else {
    /* in index order, as one thread: the first failure is the batch's, the sum is the same double */
    int failed = b->batch;
    for (int i = 0; i < b->batch; i++) {
      const utt_result *r = &l->results[i];
      if (r->counted) b->audio_seconds += r->seconds;
      if (r->error.status != CLS_OK) {
        b->error = r->error;
        failed = i;
        break;
      }
      if (b->frames[i] > b->time) b->time = b->frames[i];
    }
    for (int i = failed + 1; i < b->batch; i++) { /* prepared beside the failing one: as if never read */
      free(b->audio[i]);
      b->audio[i] = NULL;
    }
  }
  if (b->error.status == CLS_OK && l->opt.host_features) {
    size_t need = (size_t)b->time * (size_t)b->batch * (size_t)width;
    if (need > s->windows_cap) {
      free(b->windows);
      b->windows = malloc(need * sizeof *b->windows);
      s->windows_cap = b->windows ? need : 0;
    }
    if (!b->windows) {
      cls_error_set(&b->error, CLS_ERR_OUT_OF_MEMORY, "out of host memory for a batch's features");
    } else {
      /* Row t*B + b: frames t-ctx .. t+ctx of utterance b, zero outside it (DeepSpeech's windows). */
      memset(b->windows, 0, need * sizeof *b->windows);
      for (int t2 = 0; t2 < b->time; t2++)
        for (int i = 0; i < b->batch; i++)
          for (int w = 0; w < 2 * ctx + 1; w++) {
            int src = t2 - ctx + w;
            if (src >= 0 && src < b->frames[i])
              memcpy(b->windows + ((size_t)t2 * b->batch + i) * width + (size_t)w * nc, feats[i] + (size_t)src * nc,
                     (size_t)nc * sizeof(float));
          }
    }
  }
  for (int i = 0; i < b->batch; i++) free(feats[i]);
  free(feats);
}

static void *run(void *arg) {
  cls_loader *l = arg;
  pthread_mutex_lock(&l->lock);
  while (!l->stop && l->next_fill < l->n_batches) {
    slot *s = &l->slots[l->next_fill % l->depth];
    if (s->state != SLOT_FREE) {
      pthread_cond_wait(&l->changed, &l->lock);
      continue;
    }
    int k = l->next_fill++;
    s->state = SLOT_FILLING;
    pthread_mutex_unlock(&l->lock);
    fill(l, s, k);
    pthread_mutex_lock(&l->lock);
    s->state = SLOT_READY;
    pthread_cond_broadcast(&l->changed);
  }
  pthread_mutex_unlock(&l->lock);
  return NULL;
}

int cls_loader_workers(int workers, int batch_size) {
  if (workers > 0) return workers < batch_size ? workers : batch_size > 0 ? batch_size : 1;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int n = cpus < 1 ? 1 : cpus > 8 ? 8 : (int)cpus;
  return n < batch_size ? n : batch_size > 0 ? batch_size : 1;
}

cls_status cls_loader_start(const cls_utterance *utts, int n, int batch_size, const cls_loader_options *opt,
                            cls_loader **out, cls_error *err) {
  *out = NULL;
  if (n < 0 || batch_size < 1 || !opt->tables) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "batch loader: bad arguments");
  }
  cls_loader *l = calloc(1, sizeof *l);
  if (!l) goto oom;
  l->utts = utts;
  l->n = n;
  l->batch_size = batch_size;
  l->n_batches = (n + batch_size - 1) / batch_size;
  l->opt = *opt;
  l->depth = opt->depth > 0 ? opt->depth : 2;
  l->slots = calloc((size_t)l->depth, sizeof *l->slots);
  if (!l->slots) goto oom;
  for (int i = 0; i < l->depth; i++) {
    cls_host_batch *b = &l->slots[i].b;
    b->frames = calloc((size_t)batch_size, sizeof *b->frames);
    b->audio = calloc((size_t)batch_size, sizeof *b->audio);
    b->n_audio = calloc((size_t)batch_size, sizeof *b->n_audio);
    b->label_len = calloc((size_t)batch_size, sizeof *b->label_len);
    b->aug_index = calloc((size_t)batch_size, sizeof *b->aug_index);
    b->aug_clock = calloc((size_t)batch_size, sizeof *b->aug_clock);
    if (!b->frames || !b->audio || !b->n_audio || !b->label_len || !b->aug_index || !b->aug_clock) goto oom;
  }
  l->workers = cls_loader_workers(opt->workers, batch_size);
  l->results = calloc((size_t)batch_size, sizeof *l->results);
  l->helpers = calloc((size_t)l->workers, sizeof *l->helpers);
  if (!l->results || !l->helpers) goto oom;
  pthread_mutex_init(&l->lock, NULL);
  pthread_cond_init(&l->changed, NULL);
  pthread_cond_init(&l->work, NULL);
  pthread_cond_init(&l->finished, NULL);
  if (pthread_create(&l->thread, NULL, run, l) != 0) {
    cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "batch loader: cannot start a thread");
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->changed);
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->finished);
    l->thread = 0;
    cls_loader_stop(l);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  /* helpers that cannot start leave their share to the others */
  while (l->n_helpers < l->workers - 1 && pthread_create(&l->helpers[l->n_helpers], NULL, helper, l) == 0) l->n_helpers++;
  *out = l;
  return CLS_OK;
oom:
  cls_loader_stop(l);
  return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "batch loader: out of host memory");
}

cls_host_batch *cls_loader_next(cls_loader *l) {
  pthread_mutex_lock(&l->lock);
  if (l->next_take >= l->n_batches) {
    pthread_mutex_unlock(&l->lock);
    return NULL;
  }
  slot *s = &l->slots[l->next_take % l->depth];
  while (s->state != SLOT_READY) pthread_cond_wait(&l->changed, &l->lock);
  s->state = SLOT_TAKEN;
  l->next_take++;
  pthread_mutex_unlock(&l->lock);
  return &s->b;
}

void cls_loader_done(cls_loader *l, cls_host_batch *b) {
  slot *s = (slot *)b; /* b is the first member of its slot */
  clear_audio(b, b->batch);
  pthread_mutex_lock(&l->lock);
  s->state = SLOT_FREE;
  pthread_cond_broadcast(&l->changed);
  pthread_mutex_unlock(&l->lock);
}

void cls_loader_stop(cls_loader *l) {
  if (!l) return;
  if (l->thread) {
    pthread_mutex_lock(&l->lock);
    l->stop = 1;
    pthread_cond_broadcast(&l->changed);
    pthread_cond_broadcast(&l->work);
    pthread_mutex_unlock(&l->lock);
    pthread_join(l->thread, NULL);
    for (int i = 0; i < l->n_helpers; i++) pthread_join(l->helpers[i], NULL);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->changed);
    pthread_cond_destroy(&l->work);
    pthread_cond_destroy(&l->finished);
  }
  for (int i = 0; l->slots && i < l->depth; i++) {
    cls_host_batch *b = &l->slots[i].b;
    if (b->audio) clear_audio(b, l->batch_size);
    free(b->frames);
    free(b->audio);
    free(b->n_audio);
    free(b->label_len);
    free(b->aug_index);
    free(b->aug_clock);
    free(b->labels);
    free(b->windows);
  }
  free(l->slots);
  free(l->results);
  free(l->helpers);
  free(l);
}
