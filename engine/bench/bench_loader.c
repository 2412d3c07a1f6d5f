/* The batch loader's throughput (cls_bench_loader_run in clspeech/internal/bench.h): training's loader
 * (data/batch_loader.h) over a data set's utterances as an epoch's augmented batches, timed by the wall
 * clock from its start until the batches were taken. bench/bench_loader runs it. Prints nothing. */
#include <stdlib.h>

#include "clspeech/features.h"
#include "clspeech/internal/bench.h"
#include "data/batch_loader.h"

cls_status cls_bench_loader_run(const cls_utterance *utts, int n, const cls_bench_loader_config *c,
                                cls_bench_loader *out, cls_error *err) {
  *out = (cls_bench_loader){0};
  if (c->batch < 1 || c->batches < 1 || c->n_augment < 0 || (long long)c->batch * c->batches > n)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "bench loader: %d batches of %d need more than %d utterances",
                         c->batches, c->batch, n);
  cls_augmentation *augs = calloc((size_t)c->n_augment + 1, sizeof *augs);
  if (!augs) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "bench loader: out of host memory");
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < c->n_augment; i++) {
    st = cls_augment_parse(c->augment[i], &augs[i], err);
    if (st == CLS_OK && augs[i].kind == CLS_AUGMENT_OVERLAY)
      st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "bench loader: %s: overlay is not benchmarked", c->augment[i]);
    if (st == CLS_OK) st = cls_augment_check_supported(&augs[i], err);
  }
  cls_mfcc_config cfg = cls_mfcc_default(16000);
  cls_mfcc_tables *t = NULL;
  if (st == CLS_OK) st = cls_mfcc_tables_create(&cfg, &t, err);
  const int used = c->batch * c->batches;
  cls_loader_options o = {.tables = t, .n_context = 9, .depth = 3, .workers = c->workers, .augment = c->n_augment > 0,
                          .epochs = 1, .epoch_size = used, .index_local = c->batch, .index_global = c->batch,
                          .augs = augs, .n_augs = c->n_augment, .seed = 4321};
  cls_loader *l = NULL;
  const double t0 = cls_now_ms();
  if (st == CLS_OK) st = cls_loader_start(utts, used, c->batch, &o, &l, err);
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    if (b->error.status != CLS_OK) st = cls_error_set(err, b->error.status, "%s", b->error.text);
    out->audio_seconds += b->audio_seconds;
    out->batches++;
    cls_loader_done(l, b);
  }
  if (st == CLS_OK) {
    out->ms = (cls_now_ms() - t0) / out->batches;
    out->workers = cls_loader_workers(c->workers, c->batch);
  }
  cls_loader_stop(l);
  cls_mfcc_tables_destroy(t);
  free(augs);
  return st;
}
