/* `clspeech train`: DeepSpeech-compatible training with a tower on each selected OpenCL device
 * (DeepSpeech's flags and defaults), then the test report. Loads and validates the data sets, builds the trainer, loads or
 * initialises the parameters, runs the epochs with progress lines (and --metrics_files' loss after each validation,
 * summaries under --summary_dir), and evaluates --test_files. With --horovod under mpirun it starts MPI
 * (cls_world_start): rank 0 alone prints progress, writes flags.txt and runs the test; the other ranks print
 * their warnings prefixed with their rank; a rank that fails ends the whole job (cls_world_abort). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clspeech/data.h"
#include "clspeech/internal/train.h"
#include "clspeech/model.h"
#include "data_sets.h"
#include "progress.h"
#include "test_report.h"
#include "train_flags.h"

/* Whether the training set (one CSV list) has fewer usable samples than a batch: an error, named. */
static int too_few_for_a_batch(const data_set *train, int n_train, int batch) {
  if (n_train != 1 || train[0].n >= batch) return 0;
  fprintf(stderr, "clspeech train: the training set has %d usable samples, fewer than --train_batch_size %d\n",
          train[0].n, batch);
  return CLI_EXIT_FAILURE;
}

/* The longest utterance (frames) and transcript (labels) over every set. */
static void all_sets_max(const data_set *sets[4], const int n[4], int *max_frames, int *max_labels) {
  *max_frames = *max_labels = 1;
  for (int i = 0; i < 4; i++) data_sets_max(sets[i], n[i], max_frames, max_labels);
}

/* Utterances longer than a tower can hold on the devices used (cls_train_frame_limit; the device memory
 * taken as at most CLSPEECH_DEVICE_MEMORY_MB MiB when that is set, for tests and shared devices) are
 * skipped from the training set, each named; the evaluation sets keep them (the trainer streams them),
 * and *limit gets the frames a tower holds. 0 or an exit status. */
static int drop_too_long(cls_engine *engine, const int *sel, int used, const cls_train_options *opt,
                         const train_flags *f, const cls_mfcc_tables *tables, int max_batch, int max_labels,
                         data_set *train, int n_train, int *frame_limit) {
  uint64_t cap = 0;
  const char *cap_mb = getenv("CLSPEECH_DEVICE_MEMORY_MB");
  if (cap_mb && *cap_mb) {
    char *end = NULL;
    errno = 0;
    unsigned long long mb = strtoull(cap_mb, &end, 10);
    if (errno || *end || mb < 1 || mb > (1ULL << 40)) {
      fprintf(stderr, "clspeech train: CLSPEECH_DEVICE_MEMORY_MB=%s: must be a whole number of MiB, 1 .. 2^40\n",
              cap_mb);
      return CLI_EXIT_USAGE;
    }
    cap = (uint64_t)mb << 20;
  }
  int64_t limit = INT32_MAX;
  char why[512] = "", w[512];
  for (int i = 0; i < used; i++) {
    int64_t l = cls_train_frame_limit(engine, sel[i], opt, max_batch, max_labels, cap, w, sizeof w);
    if (l < limit) {
      limit = l;
      snprintf(why, sizeof why, "%s", w);
    }
  }
  const int m = (int)(limit > 0 ? limit - 1 : 0); /* the tower is sized one frame past the longest */
  const double s = cls_frames_seconds(m, f->audio_sample_rate, tables->window, tables->step);
  *frame_limit = m;
  return data_sets_drop_longer("training set", train, n_train, m, s, why, f->strict);
}

int cmd_train(int argc, char **argv) {
  train_flags f;
  train_flags_defaults(&f);
  int n_flags = 0;
  cli_flag *table = train_flags_table(&f, &n_flags);
  int rc = cli_parse_flags(argc, argv, 2, table, n_flags, "train",
                           "Trains a DeepSpeech model (DeepSpeech 0.9's flags and defaults) and tests it.", NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&f, "train"))) return rc;
  if (!*f.train_files && !*f.test_files) {
    fprintf(stderr, "clspeech train: nothing to do: give --train_files and/or --test_files\n");
    return CLI_EXIT_USAGE;
  }
  cls_error err;
  cls_alphabet *alphabet = NULL;
  if (cls_alphabet_load(f.alphabet_config_path, &alphabet, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: --alphabet_config_path: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  cls_train_options opt = train_flags_options(&f, cls_alphabet_size(alphabet) + 1);
  /* Fault injection for tests: the one environment variable of training (the engine reads none). */
  cls_train_fault fault;
  if (cls_train_fault_parse(getenv("CLSPEECH_FAULT"), &fault, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: CLSPEECH_FAULT=%s\n", err.text);
    cls_alphabet_destroy(alphabet);
    return CLI_EXIT_USAGE;
  }
  if (fault.kind != CLS_FAULT_NONE)
    fprintf(stderr, "clspeech: warning: fault injection: %s tower %d at step %lld (CLSPEECH_FAULT)\n",
            fault.kind == CLS_FAULT_FAIL ? "fail" : "perturb", fault.tower, (long long)fault.step);
  cls_mfcc_tables *tables = NULL;
  if (cls_mfcc_tables_create(&opt.features, &tables, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: %s\n", err.text);
    cls_alphabet_destroy(alphabet);
    return CLI_EXIT_USAGE;
  }
  int rank = 0, ranks = 1;
  char host[256] = "", command[320] = "train";
  if (f.horovod) {
    cls_error why;
    cls_status wst = cls_world_start(&rank, &ranks, host, sizeof host, &why);
    if (wst != CLS_OK) {
      fprintf(stderr, "clspeech train: --horovod: %s\n", why.text);
      cls_mfcc_tables_destroy(tables);
      cls_alphabet_destroy(alphabet);
      return wst == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    }
    cli_log_rank(ranks > 1 ? rank : -1, host, f.log_placement);
    if (ranks > 1) snprintf(command, sizeof command, "train: rank %d of %d on host %s", rank, ranks, host);
  }
  /* The checkpoint folder proven writable (and rid of dead processes' temporary files) before any work; by
   * rank 0 alone under --horovod (the only rank that writes there). */
  if (*f.train_files && f.epochs > 0 && rank == 0) {
    int stale = 0;
    if (cls_dir_prepare_for_writing(f.save_checkpoint_dir, &stale, &err) != CLS_OK) {
      const char *flag = cli_flag_seen(table, n_flags, "save_checkpoint_dir") ? "save_checkpoint_dir" : "checkpoint_dir";
      fprintf(stderr, "clspeech train: --%s: %s\n", flag, err.text);
      rc = CLI_EXIT_FAILURE;
    } else if (stale) {
      fprintf(stderr, "clspeech: removed %d temporary files of dead processes from %s\n", stale, f.save_checkpoint_dir);
    }
  }
  cls_dataset_options dopt = {alphabet, f.audio_sample_rate, tables->window, tables->step, f.reverse_train,
                              f.limit_train, f.strict};
  data_set *train = NULL, *dev = NULL, *test = NULL, *metrics = NULL;
  int n_train = 0, n_dev = 0, n_test = 0, n_metrics = 0;
  if (!rc) rc = data_sets_load("training set", f.train_files, 0, &dopt, &train, &n_train);
  dopt.reverse = f.reverse_dev;
  dopt.limit = f.limit_dev;
  if (!rc) rc = data_sets_load("validation set", f.dev_files, 1, &dopt, &dev, &n_dev);
  if (!rc) rc = data_sets_load("metrics set", f.metrics_files, 1, &dopt, &metrics, &n_metrics);
  dopt.reverse = f.reverse_test;
  dopt.limit = f.limit_test;
  if (!rc) rc = data_sets_load("test set", f.test_files, 1, &dopt, &test, &n_test);
  if (!rc) rc = too_few_for_a_batch(train, n_train, f.train_batch_size);
  cls_engine *engine = NULL;
  cls_trainer *trainer = NULL;
  int sel[CLS_MAX_DEVICES], n_sel = 0;
  cls_status st = CLS_OK;
  if (!rc) rc = cli_open_devices(command, f.devices, &engine, sel, CLS_MAX_DEVICES, &n_sel);
  if (!rc) {
    const int training = n_train > 0 && f.epochs > 0, used = training ? n_sel : 1;
    for (int i = 0; i < used && rank == 0; i++) {
      const cls_device_info *d = cls_engine_device(engine, sel[i]);
      fprintf(stderr, "clspeech: %s device %d:%d (%s)%s\n", training ? "training on" : "evaluating on",
              d->platform_index, d->device_index, d->name,
              training && f.towers_per_device > 1 ? " (several towers)" : "");
    }
    const data_set *sets[4] = {train, dev, metrics, test};
    const int n_sets[4] = {n_train, n_dev, n_metrics, n_test};
    int max_frames = 1, max_labels = 1;
    all_sets_max(sets, n_sets, &max_frames, &max_labels);
    int max_batch = f.train_batch_size;
    if (f.dev_batch_size > max_batch) max_batch = f.dev_batch_size;
    if (f.test_batch_size > max_batch) max_batch = f.test_batch_size;
    /* Evaluation alone runs on the first device: towers are for training. */
    if (!training) opt.towers_per_device = 1;
    int frame_limit = 1;
    rc = drop_too_long(engine, sel, used, &opt, &f, tables, max_batch, max_labels, train, n_train, &frame_limit);
    if (!rc) {
      all_sets_max(sets, n_sets, &max_frames, &max_labels); /* the training set may have lost utterances */
      if (max_frames > frame_limit) max_frames = frame_limit; /* the longer evaluation utterances stream */
      if (max_frames < 1) max_frames = 1;
    }
    if (!rc && training) rc = too_few_for_a_batch(train, n_train, f.train_batch_size);
    if (!rc) st = cls_trainer_create(engine, sel, used, &opt, max_batch, max_frames, max_labels, &trainer);
    if (!rc && st == CLS_OK) st = cls_trainer_set_fault(trainer, &fault);
    if (st != CLS_OK) rc = cli_report(command, engine, st);
  }
  progress_printer progress;
  progress_init(&progress, f.show_progressbar);
  if (!rc && n_train > 0 && f.epochs > 0) {
    st = cls_trainer_load(trainer, f.load_train_mode, 0);
    if (st == CLS_OK && rank == 0) {
      char path[4200];
      snprintf(path, sizeof path, "%s/flags.txt", f.save_checkpoint_dir);
      if (cls_make_dirs(f.save_checkpoint_dir) != CLS_OK || train_flags_write(&f, path) != 0)
        fprintf(stderr, "clspeech: warning: cannot write %s: %s\n", path, strerror(errno));
      /* What transcription needs beside the weights: the alphabet and the feature geometry. */
      if (cls_checkpoint_describe(f.save_checkpoint_dir, f.alphabet_config_path, f.audio_sample_rate, f.feature_win_len,
                                  f.feature_win_step, &err) != CLS_OK)
        fprintf(stderr, "clspeech: warning: %s\n", err.text);
    }
    if (st == CLS_OK) {
      cls_eval_set *dev_sets = calloc((size_t)(n_dev + n_metrics + 1), sizeof *dev_sets);
      for (int i = 0; i < n_dev; i++) dev_sets[i] = data_set_eval(&dev[i]);
      for (int i = 0; i < n_metrics; i++) dev_sets[n_dev + i] = data_set_eval(&metrics[i]);
      st = cls_trainer_train_with_metrics(trainer, train[0].utts, train[0].n, dev_sets, n_dev, dev_sets + n_dev,
                                          n_metrics, rank == 0 ? progress_print : NULL, &progress);
      free(dev_sets);
    }
    if (st != CLS_OK) rc = cli_report(command, engine, st);
    else if (rank == 0)
      fprintf(stderr, "clspeech: FINISHED optimization (global step %lld)\n",
              (long long)cls_trainer_counters(trainer).global_step);
  }
  if (!rc && n_test > 0 && rank == 0) { /* the test set: rank 0 alone, as DeepSpeech */
    st = cls_trainer_load(trainer, f.load_evaluate_mode, 1);
    if (st != CLS_OK) rc = cli_report("train", engine, st);
    if (!rc) rc = test_report_run(engine, trainer, alphabet, &f, test, n_test, &progress);
  }
  cls_trainer_destroy(trainer);
  cls_engine_destroy(engine);
  data_sets_free(train, n_train);
  data_sets_free(dev, n_dev);
  data_sets_free(metrics, n_metrics);
  data_sets_free(test, n_test);
  cls_mfcc_tables_destroy(tables);
  cls_alphabet_destroy(alphabet);
  if (rc && ranks > 1) {
    fprintf(stderr, "clspeech train: rank %d of %d on host %s failed (exit status %d): ending every rank's process\n",
            rank, ranks, host, rc);
    cls_world_abort(rc);
  }
  if (f.horovod) cls_world_stop();
  return rc;
}
