/* The batch loader's throughput with a number of worker threads (clspeech/internal/bench.h,
 * cls_bench_loader_run): a DeepSpeech CSV's first batch x batches utterances (in the set's order)
 * loaded as a training epoch's batches at 16 kHz with host --augment augmentations (default: codec,
 * DeepSpeech's Ogg/Opus round trip, on every utterance), for each --workers value (0: automatic, the
 * online CPUs, at most 8 and at most the batch); one untimed pass first warms the page cache. Prints ms
 * per batch and audio-seconds per second.
 *   bench_loader --csv train.csv --alphabet alphabet.txt [--augment SPEC]... [--batch 8] [--batches 16]
 *                [--workers 1,2,0] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/data.h"
#include "clspeech/internal/bench.h"

#define MAX_AUGMENT 16

int main(int argc, char **argv) {
  const char *csv = NULL, *alphabet_path = NULL, *augment[MAX_AUGMENT];
  char workers[128] = "1,2,0";
  int n_augment = 0, batch = 8, batches = 16;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--alphabet")) alphabet_path = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--augment") && n_augment < MAX_AUGMENT) augment[n_augment++] = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--batch")) batch = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--batches")) batches = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--workers")) snprintf(workers, sizeof workers, "%s", argv[++i]);
    else
      csv = NULL, i = argc;
  }
  if (!csv || !alphabet_path || batch < 1 || batches < 1) {
    fprintf(stderr, "usage: bench_loader --csv train.csv --alphabet alphabet.txt [--augment SPEC]... [--batch 8] "
                    "[--batches 16] [--workers 1,2,0]\n");
    return 2;
  }
  if (n_augment == 0) augment[n_augment++] = "codec[bitrate=8000~4000]";
  cls_error err;
  cls_alphabet *alphabet = NULL;
  cls_dataset *ds = NULL;
  cls_utterance *utts = NULL;
  cls_status st = cls_alphabet_load(alphabet_path, &alphabet, &err);
  cls_dataset_options dopt = {.alphabet = alphabet};
  if (st == CLS_OK) st = cls_dataset_load(csv, &dopt, &ds, &err);
  const int n = ds ? cls_dataset_size(ds) : 0;
  if (st == CLS_OK && !(utts = calloc((size_t)n + 1, sizeof *utts)))
    st = cls_error_set(&err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int i = 0; st == CLS_OK && i < n; i++) {
    const cls_sample *s = cls_dataset_sample(ds, i);
    utts[i] = (cls_utterance){s->path, s->labels, s->n_labels};
  }
  cls_bench_loader_config c = {.batch = batch, .batches = batches, .workers = 0, .augment = augment,
                               .n_augment = n_augment};
  cls_bench_loader r;
  if (st == CLS_OK) {
    cls_bench_loader_config warm = c;
    warm.n_augment = 0;
    st = cls_bench_loader_run(utts, n, &warm, &r, &err);
  }
  for (char *tok = strtok(workers, ","); st == CLS_OK && tok; tok = strtok(NULL, ",")) {
    c.workers = atoi(tok);
    st = cls_bench_loader_run(utts, n, &c, &r, &err);
    if (st == CLS_OK)
      printf("workers %-4s (%d threads): %8.1f ms per batch of %d, %6.1f audio-s/s (%d batches, %.1f s of audio)\n",
             c.workers ? tok : "auto", r.workers, r.ms, batch, r.audio_seconds / (r.ms * r.batches / 1e3), r.batches,
             r.audio_seconds);
    fflush(stdout);
  }
  if (st != CLS_OK) fprintf(stderr, "bench_loader: %s\n", err.text);
  free(utts);
  cls_dataset_destroy(ds);
  cls_alphabet_destroy(alphabet);
  return st == CLS_OK ? 0 : 1;
}
