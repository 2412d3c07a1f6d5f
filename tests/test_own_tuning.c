/* Our own kernels' stored tuning (`clspeech bench --tune` writes the tuning file's own line): a stored
 * tile reaches the device's build options and the built kernels (the plan's tile geometry, read back from
 * gemm.cl; the LSTM sequence kernels' from lstm_seq.cl), with a notice; it is ignored with a notice when measured on other kernels (an older
 * clspeech: the digest differs), and with a warning when the file is another device's, or when its own
 * line holds an item that is not a tunable in its range (a file cannot inject other build options); the
 * gemm_tuning option off and an untuned prepare leave the defaults. Each engine keeps its kernels and
 * tuning in the one folder of this run. */
#include <stdlib.h>
#include <unistd.h>

#include "base/file_util.h"
#include "check.h"
#include "log_capture.h"
#include "tuning_test.h"
#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "device/engine.h"
#include "device/gemm_tuning.h"
#include "ops/gemm.h"

static char dir[] = "/tmp/clspeech-own-tuning-XXXXXX";

/* Device 0 prepared (untuned or not): its build options (copied into opts), the own tile's MR and (seq_mr
 * not NULL) the LSTM sequence kernels' MR. */
static int prepared_mrs(bool tuning, bool untuned, char *opts, size_t cap, int *seq_mr) {
  log_text[0] = '\0';
  cls_engine *e = tuning_engine(dir, tuning);
  int sel[1] = {0}, count = 1, mr = -1;
  cls_status st = untuned ? cls_engine_prepare_untuned(e, sel, &count) : cls_engine_prepare(e, sel, &count);
  CHECK(st == CLS_OK && count == 1, "prepare: %s", cls_engine_error(e));
  snprintf(opts, cap, "%s", cls_engine_build_options(e, 0));
  cls_gemm_plan *g = NULL;
  CHECK(cls_gemm_create(e, 0, &g) == CLS_OK, "gemm create: %s", cls_engine_error(e));
  if (g) cls_gemm_set_backend(g, CLS_GEMM_BACKEND_OWN);
  /* one small product, so that the own kernels are loaded and their geometry read */
  cl_command_queue q = e->devices[0].queue;
  cl_context ctx = e->devices[0].context;
  cl_int err;
  float host[64] = {0};
  cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
  cls_buf b = {m, 0};
  if (g && m) {
    CHECK(cls_gemm(g, q, false, false, 4, 4, 4, 1.0f, b, 4, b, 4, 0.0f, (cls_buf){m, 32}, 4, NULL) == CLS_OK, "gemm: %s",
          cls_engine_error(e));
    clFinish(q);
    cls_gemm_geometry(g, &mr, NULL);
  }
  if (m) clReleaseMemObject(m);
  cls_gemm_destroy(g);
  if (seq_mr) { /* the LSTM's sequence kernels' tile, as built */
    cls_lstm_plan *lstm = NULL;
    CHECK(cls_lstm_create(e, 0, 4, 2, 8, 8, &lstm) == CLS_OK, "lstm create: %s", cls_engine_error(e));
    *seq_mr = -1;
    if (lstm) cls_lstm_sequence_tile(lstm, seq_mr, NULL);
    cls_lstm_destroy(lstm);
  }
  cls_engine_destroy(e);
  return mr;
}

static int prepared_mr(bool tuning, bool untuned, char *opts, size_t cap) {
  return prepared_mrs(tuning, untuned, opts, cap, NULL);
}

static void store(const char *own, const char *digest) {
  cls_engine *e = tuning_engine(dir, true);
  cls_gemm_tuning t;
  memset(&t, 0, sizeof t);
  snprintf(t.shapes, sizeof t.shapes, "H=32 (test)");
  snprintf(t.own, sizeof t.own, "%s", own);
  snprintf(t.own_kernels, sizeof t.own_kernels, "%s", digest);
  char path[1200];
  CHECK(cls_gemm_tuning_store(e, 0, &t, path, sizeof path) == CLS_OK, "store: %s", cls_engine_error(e));
  cls_engine_destroy(e);
}

/* The device's file with `from` replaced by `to`, sealed again. */
static void rewrite(const char *from, const char *to) {
  cls_engine *e = tuning_engine(dir, true);
  char path[1200];
  CHECK(cls_gemm_tuning_path(e, 0, path, sizeof path) == CLS_OK, "path");
  cls_engine_destroy(e);
  tuning_rewrite(path, from, to);
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char opts[2048], digest[17];
  cls_gemm_own_kernels_digest(digest);
  CHECK(strlen(digest) == 16 && strspn(digest, "0123456789abcdef") == 16, "digest %s", digest);

  /* the options a file may hold */
  cls_error why;
  CHECK(cls_gemm_own_options_check("-DCLS_GEMM_MR=8 -DCLS_GEMM_NV=3 -DCLS_GEMM_K_UNROLL=4", &why), "%s", why.text);
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=17", &why), "MR 17 out of range");
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=8 -cl-fast-relaxed-math", &why), "a build flag");
  CHECK_CONTAINS(why.text, "-cl-fast-relaxed-math");
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_FAULT=1", &why), "the fault switch is not a tunable");
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=8x", &why), "a value with a tail");
  CHECK(cls_gemm_own_options_check("-DCLS_GEMM_MR=8 -DCLS_LSTM_SEQ_MR=8 -DCLS_LSTM_SEQ_NV=2", &why), "%s", why.text);
  CHECK(!cls_gemm_own_options_check("-DCLS_LSTM_SEQ_MR=17", &why), "the sequence tile's MR 17 out of range");
  CHECK(!cls_gemm_own_options_check("-DCLS_LSTM_SEQ_FAULT=1", &why), "the sequence fault switch is not a tunable");
  CHECK(!cls_gemm_own_options_check("-D=3", &why), "no macro");
  /* values the kernels' preprocessor would read otherwise, or not at all */
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=4294967301", &why), "a value that wraps to 5 in an int");
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=08", &why), "a leading zero (octal to the preprocessor)");
  CHECK(!cls_gemm_own_options_check("-DCLS_GEMM_MR=+5", &why), "a sign");
  CHECK(cls_gemm_own_options_check("-DCLS_GEMM_NARROW_COPY=0", &why), "0: %s", why.text);

  const int default_mr = prepared_mr(true, false, opts, sizeof opts);
  CHECK(default_mr >= 1 && default_mr != 5, "the default tile's MR is %d", default_mr);
  CHECK(!strstr(log_text, "own kernels' tuning loaded"), "nothing stored yet: %s", log_text);

  /* stored: in the build options, in the kernels, and said */
  store("-DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2", digest);
  CHECK_INT(prepared_mr(true, false, opts, sizeof opts), 5);
  CHECK_CONTAINS(opts, " -DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2");
  CHECK_CONTAINS(log_text, "own kernels' tuning loaded from ");
  CHECK_CONTAINS(log_text, "(tuned at H=32 (test)): -DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2");
  /* the LSTM's sequence tile alike, in the sequence kernels alone (the GEMM's tile stays the default) */
  int default_seq_mr = 0, seq_mr = 0;
  CHECK_INT(prepared_mrs(false, false, opts, sizeof opts, &default_seq_mr), default_mr);
  CHECK(default_seq_mr >= 1 && default_seq_mr != 3, "the default sequence tile's MR is %d", default_seq_mr);
  store("-DCLS_LSTM_SEQ_MR=3 -DCLS_LSTM_SEQ_NV=1", digest);
  CHECK_INT(prepared_mrs(true, false, opts, sizeof opts, &seq_mr), default_mr);
  CHECK_INT(seq_mr, 3);
  CHECK_CONTAINS(opts, " -DCLS_LSTM_SEQ_MR=3 -DCLS_LSTM_SEQ_NV=1");
  CHECK_INT(prepared_mrs(true, true, opts, sizeof opts, &seq_mr), default_mr);
  CHECK_INT(seq_mr, default_seq_mr);
  store("-DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2", digest);
  /* the option off, or an untuned prepare (bench --tune measures the defaults): not taken */
  CHECK_INT(prepared_mr(false, false, opts, sizeof opts), default_mr);
  CHECK(!strstr(opts, "-DCLS_GEMM_MR=5"), "gemm_tuning off: %s", opts);
  CHECK_INT(prepared_mr(true, true, opts, sizeof opts), default_mr);
  CHECK(!strstr(opts, "-DCLS_GEMM_MR=5"), "untuned: %s", opts);

  /* measured on other kernels: ignored with a notice */
  store("-DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2", "0123456789abcdef");
  CHECK_INT(prepared_mr(true, false, opts, sizeof opts), default_mr);
  CHECK(!strstr(opts, "-DCLS_GEMM_MR=5"), "another digest: %s", opts);
  CHECK_CONTAINS(log_text, "measured on other kernels (digest 0123456789abcdef");
  CHECK_CONTAINS(log_text, "ignored, the defaults kept");

  /* another device's file (its header names another device): ignored with a warning */
  store("-DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2", digest);
  rewrite("\ndevice ", "\ndevice another ");
  CHECK_INT(prepared_mr(true, false, opts, sizeof opts), default_mr);
  CHECK(!strstr(opts, "-DCLS_GEMM_MR=5"), "another device's file: %s", opts);
  CHECK_CONTAINS(log_text, "written for another device");

  /* an own line with a build flag in it: the file is refused whole */
  store("-DCLS_GEMM_MR=5 -DCLS_GEMM_NV=2", digest);
  rewrite("-DCLS_GEMM_NV=2", "-cl-fast-relaxed-math");
  CHECK_INT(prepared_mr(true, false, opts, sizeof opts), default_mr);
  CHECK(!strstr(opts, "relaxed"), "a build flag from the file: %s", opts);
  CHECK_CONTAINS(log_text, "is not one of the own kernels' tunables");

  char rm[128];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  CHECK_INT(system(rm), 0);
  return check_finish("test_own_tuning");
}
