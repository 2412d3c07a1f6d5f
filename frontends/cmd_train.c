/* `clspeech train`: DeepSpeech-compatible training with a tower on each selected OpenCL device
 * (DeepSpeech's flags and defaults), then the test report. Loads and validates the data sets, builds the
 * trainer, loads or initialises the parameters (a checkpoint to train on checked first: train_transfer.c),
 * runs the epochs with progress lines (and --metrics_files' loss after each validation, summaries under
 * --summary_dir), and evaluates --test_files (after training, the checkpoints it saved). With --horovod
 * under mpirun it starts MPI (cls_world_start): rank 0 alone prints progress, writes flags.txt and runs
 * the test; the other ranks print their warnings prefixed with their rank; the ranks agree on their
 * settings and data before any work (train_agree.c); a rank that fails ends the whole job
 * (cls_world_abort), and a rank that leaves tells the others (cls_world_leave). The save folder is
 * locked for the run (cls_checkpoint_lock): one trainer per folder. Every run by one process begins with
 * the time estimate (train_estimate.c); --estimate prints it and stops there, having written nothing.
 * After the test, rank 0 exports (--export_dir) and transcribes --one_shot_infer (train_after.c). */
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
#include "model_setup.h"
#include "progress.h"
#include "test_report.h"
#include "train_after.h"
#include "train_agree.h"
#include "train_auto_input.h"
#include "train_estimate.h"
#include "train_flags.h"
#include "train_transfer.h"
#include "transcript.h"

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
  cls_error why = {CLS_OK, ""}, w;
  for (int i = 0; i < used; i++) {
    int64_t l = cls_train_frame_limit(engine, sel[i], opt, max_batch, max_labels, cap, &w);
    if (l < limit) {
      limit = l;
      why = w;
    }
  }
  const int m = (int)(limit > 0 ? limit - 1 : 0); /* the tower is sized one frame past the longest */
  const double s = cls_frames_seconds(m, f->audio_sample_rate, tables->window, tables->step);
  *frame_limit = m;
  return data_sets_drop_longer("training set", train, n_train, m, s, why.text, f->strict);
}

/* Everything one `clspeech train` run holds, so each stage below is a function of it and one exit path
 * (finish) frees it all. Stays where it is: `table` points into `f`. */
typedef struct train_cmd {
  train_flags f;
  cli_flag table[TRAIN_FLAGS_COUNT];
  int n_flags;
  cls_alphabet *alphabet;
  cls_train_options opt;
  cls_train_fault fault;
  cls_mfcc_tables *tables;
  int world; /* cls_world_start succeeded */
  int rank, ranks;
  char host[256], command[320];
  data_set *train, *dev, *metrics, *test;
  int n_train, n_dev, n_metrics, n_test;
  cls_engine *engine;
  cls_trainer *trainer;
  int sel[CLS_MAX_DEVICES], n_sel;
  progress_printer progress;
  train_estimate estimate; /* the estimate and the epochs' measured times */
  int lock; /* the save folder's lock (cls_checkpoint_lock), -1 when not held */
  train_auto_paths auto_paths; /* --auto_input_dataset's sets and alphabet */
} train_cmd;

/* Flags --load_train init would ignore when training ("no flag is ever ignored"): nothing is loaded, so
 * there is no folder to load from and no layer to drop. The test pass after training evaluates what
 * this run saved (--save_checkpoint_dir), so --load_checkpoint_dir has no use either. 0 or the exit
 * status. */
static int unused_with_init(const train_cmd *c) {
  const train_flags *f = &c->f;
  if (!*f->train_files || f->epochs <= 0 || f->load_train_mode != CLS_LOAD_INIT) return 0;
  if (f->drop_source_layers > 0) {
    fprintf(stderr,
            "clspeech train: --drop_source_layers %d with --load_train init: nothing is loaded, so no layer is dropped; "
            "leave out one or the other (transfer learning loads: --load_train auto, best or last)\n",
            f->drop_source_layers);
    return CLI_EXIT_USAGE;
  }
  if (cli_flag_seen(c->table, c->n_flags, "load_checkpoint_dir")) {
    fprintf(stderr,
            "clspeech train: --load_checkpoint_dir %s with --load_train init: nothing is loaded from it (the test "
            "pass after training uses --save_checkpoint_dir's); leave out one or the other\n",
            f->load_checkpoint_dir);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* --test_output_file must be none of the run's inputs: the data sets' CSVs (comma-separated lists), the
 * alphabet, the scorer, a file of the folder the checkpoints come from (the output rule). 0 or exit 2. */
static int test_output_not_an_input(const train_flags *f) {
  const char *out = f->test_output_file;
  if (!*out) return 0;
  const struct { const char *flag, *value; } lists[] = {{"--train_files", f->train_files},
                                                         {"--dev_files", f->dev_files},
                                                         {"--test_files", f->test_files},
                                                         {"--metrics_files", f->metrics_files}};
  int rc = 0;
  for (size_t i = 0; !rc && i < sizeof lists / sizeof *lists; i++) {
    char one[CLS_PATH_CAP];
    for (const char *p = lists[i].value; !rc && p && *p;) {
      const char *comma = strchr(p, ',');
      const size_t n = comma ? (size_t)(comma - p) : strlen(p);
      snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one ? n : sizeof one - 1), p);
      rc = cli_refuse_input("train", "--test_output_file", out, lists[i].flag, one);
      p = comma ? comma + 1 : NULL;
    }
  }
  if (!rc) rc = cli_refuse_input("train", "--test_output_file", out, "--alphabet_config_path", f->alphabet_config_path);
  if (!rc) rc = cli_refuse_input("train", "--test_output_file", out, "--scorer_path", f->scorer_path);
  if (!rc) rc = cli_refuse_input_folder("train", "--test_output_file", out, "--load_checkpoint_dir", f->load_checkpoint_dir);
  return rc;
}

/* The flags parsed and checked. 0, or -1 after --help (exit status 0), or the exit status. */
static int parse_train_flags(train_cmd *c, int argc, char **argv) {
  train_flags_defaults(&c->f);
  c->n_flags = train_flags_table(&c->f, c->table);
  int rc = cli_parse_flags(argc, argv, 2, c->table, c->n_flags, "train",
                           "Trains a DeepSpeech model (DeepSpeech 0.9's flags and defaults) and tests it.", NULL, 0, NULL);
  if (rc) return rc == 1 ? -1 : CLI_EXIT_USAGE;
  if ((rc = train_flags_finish(&c->f, "train")) ||
      (rc = train_auto_input(&c->f, c->table, c->n_flags, &c->auto_paths)) || (rc = unused_with_init(c)) ||
      (rc = test_output_not_an_input(&c->f)))
    return rc;
  if (c->f.estimate && (!*c->f.train_files || c->f.epochs <= 0)) {
    fprintf(stderr, "clspeech train: --estimate times training: give --train_files and --epochs 1 or more\n");
    return CLI_EXIT_USAGE;
  }
  if (!*c->f.train_files && !*c->f.test_files && !*c->f.export_dir && !*c->f.one_shot_infer) {
    fprintf(stderr,
            "clspeech train: nothing to do: give --train_files, --test_files, --export_dir and/or --one_shot_infer\n");
    return CLI_EXIT_USAGE;
  }
  return train_after_check("train", &c->f);
}

/* The alphabet, the training options, the test-only fault (CLSPEECH_FAULT) and the MFCC tables. 0 or the
 * exit status. */
static int load_alphabet_and_options(train_cmd *c) {
  cls_error err;
  int arc = model_setup_flag_alphabet("train", &c->f, &c->alphabet);
  if (arc) return arc;
  c->opt = train_flags_options(&c->f, cls_alphabet_size(c->alphabet) + 1);
  /* The scorer before any training: a bad --scorer_path fails now, not after the epochs. */
  if (*c->f.test_files) {
    int rc = transcript_scorer_load(&c->f, c->alphabet, "train");
    if (rc) return rc;
  }
  /* Fault injection for tests: the one environment variable of training (the engine reads none). */
  if (cls_train_fault_parse(getenv("CLSPEECH_FAULT"), &c->fault, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: CLSPEECH_FAULT=%s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  if (c->fault.kind != CLS_FAULT_NONE)
    fprintf(stderr, "clspeech: warning: fault injection: %s tower %d at step %lld (CLSPEECH_FAULT)\n",
            c->fault.kind == CLS_FAULT_FAIL ? "fail" : "perturb", c->fault.tower, (long long)c->fault.step);
  if (cls_mfcc_tables_create(&c->opt.features, &c->tables, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: %s\n", err.text);
    return CLI_EXIT_USAGE;
  }
  return 0;
}

/* Training from a checkpoint: its n_hidden and alphabet checked against the flags (a different alphabet
 * only with the output layer dropped) before any work. 0 or the exit status. */
static int check_checkpoint_to_load(train_cmd *c) {
  if (!*c->f.train_files || c->f.epochs <= 0) return 0;
  return train_transfer_check(&c->f, c->alphabet);
}

/* --horovod: MPI started, this rank's messages prefixed and its command name set. 0 or the exit status. */
static int start_world(train_cmd *c) {
  if (!c->f.horovod) return 0;
  cls_error why;
  cls_status wst = cls_world_start(&c->rank, &c->ranks, c->host, sizeof c->host, &why);
  if (wst != CLS_OK) {
    fprintf(stderr, "clspeech train: --horovod: %s\n", why.text);
    return wst == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
  }
  c->world = 1;
  if (c->f.estimate && c->ranks > 1) { /* before any work, as usage errors are */
    fprintf(stderr, "clspeech train: --estimate is made by one process: run it without mpirun\n");
    return CLI_EXIT_USAGE;
  }
  cli_log_rank(c->ranks > 1 ? c->rank : -1, c->host, c->f.log_placement);
  if (c->ranks > 1)
    snprintf(c->command, sizeof c->command, "train: rank %d of %d on host %s", c->rank, c->ranks, c->host);
  return 0;
}

/* The checkpoint folder proven writable, locked for this run (a second trainer there is refused, exit
 * status 2, naming the holder), and rid of dead processes' temporary files and of checkpoints no index
 * lists, before any work; by rank 0 alone under --horovod (the only rank that writes there). 0 or the
 * exit status. */
static int prepare_checkpoint_dir(train_cmd *c) {
  if (!*c->f.train_files || c->f.epochs <= 0 || c->rank != 0 || c->f.estimate) return 0;
  int stale = 0;
  cls_error err;
  const char *flag =
      cli_flag_seen(c->table, c->n_flags, "save_checkpoint_dir") ? "save_checkpoint_dir" : "checkpoint_dir";
  if (cls_dir_prepare_for_writing(c->f.save_checkpoint_dir, &stale, &err) != CLS_OK) {
    fprintf(stderr, "clspeech train: --%s: %s\n", flag, err.text);
    return CLI_EXIT_FAILURE;
  }
  cls_status st = cls_checkpoint_lock(c->f.save_checkpoint_dir, &c->lock, &err);
  if (st != CLS_OK) {
    fprintf(stderr, "clspeech train: --%s: %s\n", flag, err.text);
    return cli_exit_status(st);
  }
  if (stale)
    fprintf(stderr, "clspeech: removed %d temporary files of dead processes from %s\n", stale,
            c->f.save_checkpoint_dir);
  char names[1024];
  const int orphans = cls_checkpoint_remove_orphans(c->f.save_checkpoint_dir, c->lock, names, sizeof names);
  if (orphans > 0)
    fprintf(stderr, "clspeech: removed %d checkpoint file%s that no index lists (left by a killed run) from %s: %s\n",
            orphans, orphans == 1 ? "" : "s", c->f.save_checkpoint_dir, names);
  return 0;
}

/* The training, validation, metrics and test sets, each with its own --reverse_* and --limit_*. 0 or the
 * exit status. */
static int load_data_sets(train_cmd *c) {
  const train_flags *f = &c->f;
  cls_dataset_options dopt = {c->alphabet, f->audio_sample_rate, c->tables->window, c->tables->step,
                              f->reverse_train, f->limit_train, f->strict, !f->normalize_sample_rate};
  int rc = data_sets_load("training set", f->train_files, 0, &dopt, &c->train, &c->n_train);
  dopt.reverse = f->reverse_dev;
  dopt.limit = f->limit_dev;
  if (!rc) rc = data_sets_load("validation set", f->dev_files, 1, &dopt, &c->dev, &c->n_dev);
  if (!rc) rc = data_sets_load("metrics set", f->metrics_files, 1, &dopt, &c->metrics, &c->n_metrics);
  dopt.reverse = f->reverse_test;
  dopt.limit = f->limit_test;
  if (!rc) rc = data_sets_load("test set", f->test_files, 1, &dopt, &c->test, &c->n_test);
  if (!rc) rc = too_few_for_a_batch(c->train, c->n_train, f->train_batch_size);
  return rc;
}

/* --horovod with several ranks: every rank's settings and data the same (train_agree.h), before any
 * work. 0 or the exit status (2 on every rank, each naming the setting and the ranks' values). */
static int agree_across_ranks(train_cmd *c) {
  if (c->ranks <= 1) return 0;
  /* For tests alone: the ranks' guard of every collective (engine/train/world.c) without this check. */
  const char *skip = getenv("CLSPEECH_SKIP_AGREEMENT");
  if (skip && !strcmp(skip, "1")) {
    fprintf(stderr, "clspeech: warning: the ranks' settings are not compared (CLSPEECH_SKIP_AGREEMENT=1, for tests)\n");
    return 0;
  }
  const train_agree_sets sets = {c->train,   c->dev,   c->metrics,       c->n_train,
                                 c->n_dev,   c->n_metrics, c->f.augments, c->f.n_augments};
  return train_agree(c->command, c->table, c->n_flags, c->alphabet, &sets);
}

/* Whether this run trains (else it only evaluates the test set). */
static int is_training(const train_cmd *c) { return c->n_train > 0 && c->f.epochs > 0; }

/* The trainer sized for every set (the training set rid of what the devices cannot hold) on the devices
 * used (evaluation alone: the first, one tower), with the test fault set. 0 or the exit status. */
static int create_trainer(train_cmd *c) {
  const int training = is_training(c), used = training ? c->n_sel : 1;
  for (int i = 0; i < used && c->rank == 0; i++) {
    const cls_device_info *d = cls_engine_device(c->engine, c->sel[i]);
    fprintf(stderr, "clspeech: %s device %d:%d (%s)%s\n", training ? "training on" : "evaluating on",
            d->platform_index, d->device_index, d->name,
            training && c->f.towers_per_device > 1 ? " (several towers)" : "");
  }
  const data_set *sets[4] = {c->train, c->dev, c->metrics, c->test};
  const int n_sets[4] = {c->n_train, c->n_dev, c->n_metrics, c->n_test};
  int max_frames = 1, max_labels = 1;
  all_sets_max(sets, n_sets, &max_frames, &max_labels);
  int max_batch = c->f.train_batch_size;
  if (c->f.dev_batch_size > max_batch) max_batch = c->f.dev_batch_size;
  if (c->f.test_batch_size > max_batch) max_batch = c->f.test_batch_size;
  /* Evaluation alone runs on the first device: towers are for training. */
  if (!training) c->opt.towers_per_device = 1;
  int frame_limit = 1;
  int rc = drop_too_long(c->engine, c->sel, used, &c->opt, &c->f, c->tables, max_batch, max_labels, c->train,
                         c->n_train, &frame_limit);
  if (rc) return rc;
  all_sets_max(sets, n_sets, &max_frames, &max_labels); /* the training set may have lost utterances */
  if (max_frames > frame_limit) max_frames = frame_limit; /* the longer evaluation utterances stream */
  if (max_frames < 1) max_frames = 1;
  if (training && (rc = too_few_for_a_batch(c->train, c->n_train, c->f.train_batch_size))) return rc;
  cls_status st = cls_trainer_create(c->engine, c->sel, used, &c->opt, max_batch, max_frames, max_labels, &c->trainer);
  if (st == CLS_OK) st = cls_trainer_set_fault(c->trainer, &c->fault);
  return st == CLS_OK ? 0 : cli_report(c->command, c->engine, st);
}

/* Rank 0, beside the checkpoints: flags.txt and what transcription needs beside the weights (the alphabet
 * and the feature geometry). Failures are warnings. */
static void describe_checkpoint_dir(const train_flags *f) {
  char path[CLS_PATH_CAP];
  cls_error err;
  snprintf(path, sizeof path, "%s/flags.txt", f->save_checkpoint_dir);
  if (cls_make_dirs(f->save_checkpoint_dir) != CLS_OK || train_flags_write(f, path) != 0)
    fprintf(stderr, "clspeech: warning: cannot write %s: %s\n", path, strerror(errno));
  /* --bytes_output_mode: the folder's alphabet.txt is the bytes alphabet's text, copied onto itself */
  char bytes_file[CLS_PATH_CAP];
  snprintf(bytes_file, sizeof bytes_file, "%s/%s", f->save_checkpoint_dir, CLS_CHECKPOINT_ALPHABET);
  const void *chunk = CLS_ALPHABET_BYTES_TEXT;
  size_t size = strlen(CLS_ALPHABET_BYTES_TEXT);
  if (f->bytes_output_mode && cls_write_atomic(bytes_file, &chunk, &size, 1, &err) != CLS_OK)
    fprintf(stderr, "clspeech: warning: %s\n", err.text);
  else if (cls_checkpoint_describe(f->save_checkpoint_dir, f->bytes_output_mode ? bytes_file : f->alphabet_config_path,
                                   f->audio_sample_rate, f->feature_win_len, f->feature_win_step, &err) != CLS_OK)
    fprintf(stderr, "clspeech: warning: %s\n", err.text);
}

/* The epochs: the trainer loaded (--load_train), the run estimated by a single process (with --estimate
 * only that), the validation and metrics sets passed as evaluation sets, progress printed by rank 0 and
 * the epochs' measured times after it. 0 or the exit status. */
static int train_epochs(train_cmd *c) {
  cls_status st = cls_trainer_load(c->trainer, c->f.load_train_mode, 0);
  if (st == CLS_OK && c->rank == 0 && !c->f.estimate) describe_checkpoint_dir(&c->f);
  if (st == CLS_OK) {
    cls_eval_set *dev_sets = calloc((size_t)(c->n_dev + c->n_metrics + 1), sizeof *dev_sets);
    if (!dev_sets) {
      fprintf(stderr, "clspeech train: out of memory\n");
      return CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < c->n_dev; i++) dev_sets[i] = data_set_eval(&c->dev[i]);
    for (int i = 0; i < c->n_metrics; i++) dev_sets[c->n_dev + i] = data_set_eval(&c->metrics[i]);
    int rc = c->ranks > 1 ? 0
                          : train_estimate_make(&c->estimate, c->engine, c->trainer, &c->train[0], dev_sets,
                                                c->n_dev + c->n_metrics, c->command);
    if (rc || c->f.estimate) {
      free(dev_sets);
      return rc;
    }
    c->estimate.progress = c->rank == 0 ? &c->progress : NULL;
    st = cls_trainer_train_with_metrics(c->trainer, c->train[0].utts, c->train[0].n, dev_sets, c->n_dev,
                                        dev_sets + c->n_dev, c->n_metrics, train_estimate_progress, &c->estimate);
    free(dev_sets);
  }
  if (st != CLS_OK) return cli_report(c->command, c->engine, st);
  train_estimate_report(&c->estimate);
  if (c->rank == 0)
    fprintf(stderr, "clspeech: FINISHED optimization (global step %lld)\n",
            (long long)cls_trainer_counters(c->trainer).global_step);
  return 0;
}

/* After training and testing, rank 0 alone, as DeepSpeech: --export_dir, then --one_shot_infer, from
 * the checkpoints this run saved (else --load_checkpoint_dir's). 0 or the exit status. */
static int after_training(train_cmd *c) {
  if (c->rank != 0 || c->f.estimate || (!*c->f.export_dir && !*c->f.one_shot_infer)) return 0;
  const char *dir = is_training(c) ? c->f.save_checkpoint_dir : c->f.load_checkpoint_dir;
  int rc = *c->f.export_dir ? train_after_export(c->command, &c->f, c->table, c->n_flags, dir) : 0;
  if (!rc && *c->f.one_shot_infer) rc = train_after_one_shot(c->command, &c->f, c->table, c->n_flags, dir);
  return rc;
}

/* The stages in order; the first failure's exit status, or 0. */
static int train_stages(train_cmd *c) {
  int rc;
  if (!*c->f.train_files && !*c->f.test_files) return after_training(c); /* an export or a transcript alone */
  if ((rc = load_alphabet_and_options(c)) || (rc = check_checkpoint_to_load(c)) || (rc = start_world(c)) ||
      (rc = prepare_checkpoint_dir(c)) || (rc = load_data_sets(c)) || (rc = agree_across_ranks(c)))
    return rc;
  if ((rc = cli_open_devices(c->command, c->f.devices, &c->engine, c->sel, CLS_MAX_DEVICES, &c->n_sel)) ||
      (rc = create_trainer(c)))
    return rc;
  progress_init(&c->progress, c->f.show_progressbar);
  if (is_training(c) && ((rc = train_epochs(c)) || c->f.estimate)) return rc;
  if (c->n_test > 0 && c->rank == 0) { /* the test set: rank 0 alone, as DeepSpeech */
    /* After training, the checkpoints it saved (DeepSpeech 0.9 tests --load_checkpoint_dir's, and warns). */
    const char *dir = is_training(c) ? c->f.save_checkpoint_dir : c->f.load_checkpoint_dir;
    if (is_training(c) && strcmp(c->f.save_checkpoint_dir, c->f.load_checkpoint_dir))
      fprintf(stderr, "clspeech: testing the checkpoints this run saved in %s (--save_checkpoint_dir), not %s\n",
              c->f.save_checkpoint_dir, c->f.load_checkpoint_dir);
    cls_status st = cls_trainer_load_from(c->trainer, dir, c->f.load_evaluate_mode, 1);
    if (st != CLS_OK) return cli_report("train", c->engine, st);
    if ((rc = test_report_run(c->engine, c->trainer, c->alphabet, &c->f, c->test, c->n_test, &c->progress)))
      return rc;
  }
  return after_training(c);
}

/* The one exit path: everything freed; under --horovod a failed rank ends every rank, MPI stopped. */
static int finish(train_cmd *c, int rc) {
  cls_trainer_destroy(c->trainer);
  cls_engine_destroy(c->engine);
  data_sets_free(c->train, c->n_train);
  data_sets_free(c->dev, c->n_dev);
  data_sets_free(c->metrics, c->n_metrics);
  data_sets_free(c->test, c->n_test);
  cls_mfcc_tables_destroy(c->tables);
  cls_alphabet_destroy(c->alphabet);
  transcript_scorer_free(&c->f);
  cls_checkpoint_unlock(c->lock);
  c->lock = -1;
  if (!c->world) return rc;
  /* A failure every rank saw at once (a disagreement): each reports it and stops; any other ends the job. */
  if (rc && c->ranks > 1 && !cls_world_failed_together()) {
    fprintf(stderr, "clspeech train: rank %d of %d on host %s failed (exit status %d): ending every rank's process\n",
            c->rank, c->ranks, c->host, rc);
    cls_world_abort(rc);
  }
  cls_world_leave(rc); /* the others told, so that none waits for this rank */
  cls_world_stop();
  return rc;
}

int cmd_train(int argc, char **argv) {
  train_cmd c;
  memset(&c, 0, sizeof c);
  c.ranks = 1;
  c.lock = -1;
  snprintf(c.command, sizeof c.command, "train");
  int rc = parse_train_flags(&c, argc, argv);
  if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
  return finish(&c, train_stages(&c));
}
