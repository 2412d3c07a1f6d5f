/* Failure classes (label `towers`): each kind of failure keeps its status where the layers meet, and
 * only a device's drops a tower. On three PoCL devices, a trainer of three towers is fed: a bad row at
 * the loader (an utterance whose file is no audio: the loader's CLS_ERR_IO with the file named, the
 * towers kept; the crew's loader start refusing a batch of 0 with CLS_ERR_INVALID_ARGUMENT, not an
 * out-of-memory); a host allocation failure, a file error and an invalid argument injected into a
 * tower (the run stops with that status, three towers kept); device memory exhausted, an OpenCL
 * (kernel) failure, a kernel build failure and a failed self-test injected into a tower (dropped,
 * training finishes on two). Under hybrid and async. The OpenCL codes map as the device layer says:
 * CL_MEM_OBJECT_ALLOCATION_FAILURE and CL_OUT_OF_RESOURCES to CLS_ERR_DEVICE_OUT_OF_MEMORY, anything
 * else (CL_OUT_OF_HOST_MEMORY included) to CLS_ERR_OPENCL. */
#include <stdlib.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/data.h"
#include "clspeech/internal/train.h"
#include "clspeech/train.h"
#include "data_files.h"
#include "towers_engine.h"
#include "ops/ops_util.h"
#include "train/crew.h"
#include "train/trainer.h"


static cls_model_config model; /* DeepSpeech's, H = 16, 29 classes (set in main) */

static cls_train_options options(const char *strategy) {
  cls_train_options o = cls_train_options_default(model.n_hidden, model.n_classes);
  o.train_batch_size = 2;
  o.epochs = strcmp(strategy, "async") ? 3 : 4; /* a step 2 (hybrid: one step an epoch), reached by tower 1 */
  o.random_seed = 1234;
  o.checkpoint_secs = 0;
  o.max_to_keep = 1;
  o.load_train = CLS_LOAD_INIT;
  o.host_features = 1;
  CHECK_INT(cls_strategy_parse(strategy, &o.strategy), CLS_OK);
  CHECK_INT(cls_balance_parse("equal", &o.balance), CLS_OK);
  return o;
}

typedef struct data {
  cls_utterance u[16];
  int n, max_frames, max_labels;
} data;

/* Trains three towers on n utterances of d with `fault` injected (NULL: none); the status, and the towers
   left in *left. */
static cls_status train(cls_engine *e, const int *dev, const data *d, int n, const char *strategy,
                        const cls_train_fault *fault, int *left) {
  cls_trainer *t = NULL;
  cls_train_options o = options(strategy);
  cls_status st = cls_trainer_create(e, dev, 3, &o, o.train_batch_size * 2, d->max_frames, d->max_labels, &t);
  CHECK(st == CLS_OK, "trainer: %s", cls_engine_error(e));
  *left = 0;
  if (!t) return st;
  if (fault) CHECK_INT(cls_trainer_set_fault(t, fault), CLS_OK);
  st = cls_trainer_load(t, CLS_LOAD_INIT, 0);
  if (st == CLS_OK) st = cls_trainer_train(t, d->u, n, NULL, 0, NULL, NULL);
  *left = cls_trainer_tower_count(t);
  cls_trainer_destroy(t);
  return st;
}

/* The crew's loader start passes the loader's own status up: bad arguments are not out of memory. */
static void check_loader_start(cls_engine *e, const int *dev, const data *d) {
  cls_trainer *t = NULL;
  cls_train_options o = options("hybrid");
  CHECK_INT(cls_trainer_create(e, dev, 3, &o, 4, d->max_frames, d->max_labels, &t), CLS_OK);
  if (!t) return;
  cls_loader *l = NULL;
  const cls_status st = cls_crew_start_loader(cls_trainer_crew(t), d->u, d->n, 0, 2, &l);
  CHECK_INT(st, CLS_ERR_INVALID_ARGUMENT);
  CHECK(!cls_crew_is_device_fault(st), "an invalid argument counted as a device fault");
  CHECK_CONTAINS(cls_engine_error(e), "batch loader: bad arguments");
  CHECK(l == NULL, "a loader was left");
  const cls_status tst = cls_crew_start_train_loader(cls_trainer_crew(t), 0, d->u, d->n, 0, 2, 0, 0, 0, &l);
  CHECK_INT(tst, CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_trainer_tower_count(t), 3);
  cls_trainer_destroy(t);
}

/* The device layer's mapping of OpenCL codes, and which statuses are device faults. */
static void check_classes(cls_engine *e) {
  static cls_error err;
  CHECK_INT(cls_ops_cl_check_to(e, &err, 0, CL_MEM_OBJECT_ALLOCATION_FAILURE, "allocating device memory"),
            CLS_ERR_DEVICE_OUT_OF_MEMORY);
  CHECK_CONTAINS(err.text, "allocating device memory failed: CL_MEM_OBJECT_ALLOCATION_FAILURE");
  CHECK_INT(cls_ops_cl_check_to(e, &err, 0, CL_OUT_OF_RESOURCES, "clFinish"), CLS_ERR_DEVICE_OUT_OF_MEMORY);
  CHECK_INT(cls_ops_cl_check_to(e, &err, 0, CL_OUT_OF_HOST_MEMORY, "clFinish"), CLS_ERR_OPENCL);
  CHECK_INT(cls_ops_cl_check_to(e, &err, 0, CL_INVALID_KERNEL_ARGS, "clEnqueueNDRangeKernel"), CLS_ERR_OPENCL);
  CHECK_INT(cls_ops_cl_check_to(e, &err, 0, CL_SUCCESS, "clFinish"), CLS_OK);
  const cls_status device[] = {CLS_ERR_OPENCL, CLS_ERR_DEVICE_OUT_OF_MEMORY, CLS_ERR_BLAS, CLS_ERR_BUILD,
                               CLS_ERR_SELFTEST};
  const cls_status other[] = {CLS_OK, CLS_ERR_INVALID_ARGUMENT, CLS_ERR_OUT_OF_MEMORY, CLS_ERR_NO_PLATFORM,
                              CLS_ERR_NO_DEVICE, CLS_ERR_IO, CLS_ERR_DIVERGED, CLS_ERR_WORLD, CLS_ERR_NO_STEP};
  for (size_t i = 0; i < sizeof device / sizeof *device; i++)
    CHECK(cls_crew_is_device_fault(device[i]), "%s is no device fault", cls_status_string(device[i]));
  for (size_t i = 0; i < sizeof other / sizeof *other; i++)
    CHECK(!cls_crew_is_device_fault(other[i]), "%s is a device fault", cls_status_string(other[i]));
}

int main(void) {
  if (!data_present()) return check_finish("test_failure_classes");
  model = cls_model_config_deepspeech(16, 29);
  cls_alphabet *a = NULL;
  cls_dataset *ds = shared_dataset(TOWERS_CSVS, &a);
  int sel[8], n_sel = 0;
  cls_engine *e = towers_engine(3, sel, 8, &n_sel);
  if (!e || !ds || n_sel < 3) return check_finish("test_failure_classes");
  check_classes(e);

  data d;
  memset(&d, 0, sizeof d);
  d.n = cls_dataset_size(ds);
  for (int i = 0; i < d.n && i < 8; i++) {
    const cls_sample *s = cls_dataset_sample(ds, i);
    d.u[i] = (cls_utterance){s->path, s->labels, s->n_labels};
  }
  if (d.n > 6) d.n = 6;
  cls_dataset_batch_max(ds, 0, d.n, &d.max_frames, &d.max_labels);
  CHECK_INT(d.n, 6);
  check_loader_start(e, sel, &d);

  /* A bad row: the second utterance names a file that is no audio. The loader's status comes through. */
  CHECK(data_files_open("clspeech-failure"), "a temporary folder");
  write_text("not-audio.wav", "this is not a WAV file\n");
  static char not_audio[640];
  snprintf(not_audio, sizeof not_audio, "%s", tmp_path("not-audio.wav"));
  data bad = d;
  bad.u[1].path = not_audio;
  int left = 0;
  cls_status st = train(e, sel, &bad, 4, "hybrid", NULL, &left);
  printf("  bad row: %s\n    %s\n", cls_status_string(st), cls_engine_error(e));
  CHECK(st == CLS_ERR_IO, "a bad row gave %s, not the loader's CLS_ERR_IO", cls_status_string(st));
  CHECK_CONTAINS(cls_engine_error(e), "not-audio.wav");
  CHECK_INT(left, 3);

  /* Injected into tower 1 at step 2: the status the run ends with, and whether the tower goes. */
  typedef struct injected {
    cls_status status;
    int dropped;
  } injected;
  const injected cases[] = {{CLS_ERR_OUT_OF_MEMORY, 0}, {CLS_ERR_IO, 0}, {CLS_ERR_INVALID_ARGUMENT, 0},
                            {CLS_ERR_DEVICE_OUT_OF_MEMORY, 1}, {CLS_OK /* CLS_ERR_OPENCL */, 1}, {CLS_ERR_BUILD, 1},
                            {CLS_ERR_SELFTEST, 1}};
  const char *strategies[2] = {"hybrid", "async"};
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
      /* async: only the classes apart (host and device memory) */
      if (k == 1 && cases[i].status != CLS_ERR_OUT_OF_MEMORY && cases[i].status != CLS_ERR_DEVICE_OUT_OF_MEMORY)
        continue;
      const cls_status want = cases[i].status != CLS_OK ? cases[i].status : CLS_ERR_OPENCL;
      const cls_train_fault f = {CLS_FAULT_FAIL, 1, 2, cases[i].status};
      log_text[0] = '\0';
      st = train(e, sel, &d, d.n, strategies[k], &f, &left);
      printf("  %s, %s injected: %s, %d towers left\n", strategies[k], cls_status_string(want), cls_status_string(st),
             left);
      if (cases[i].dropped) {
        CHECK(st == CLS_OK, "%s %s: training goes on: %s", strategies[k], cls_status_string(want), cls_engine_error(e));
        CHECK_INT(left, 2);
        CHECK_CONTAINS(log_text, "is dropped; 2 towers left");
        CHECK_CONTAINS(log_text, "(injected fault)");
      } else {
        CHECK(st == want, "%s: %s injected, %s came back", strategies[k], cls_status_string(want),
              cls_status_string(st));
        CHECK_INT(left, 3);
        CHECK_CONTAINS(cls_engine_error(e), "(injected fault)");
        CHECK(strstr(log_text, "is dropped") == NULL, "%s: a tower was dropped for %s", strategies[k],
              cls_status_string(want));
      }
    }
  }

  data_files_close();
  cls_engine_destroy(e);
  cls_dataset_destroy(ds);
  cls_alphabet_destroy(a);
  return check_finish("test_failure_classes");
}
