/* The GEMM backend per shape class from the device's tuning file (`clspeech bench --tune` stores it):
 * a stored winner is what cls_gemm_backend_of and a new plan's calls take, after the engine prepares
 * the device; a class without an entry, a file with an invalid entry (checksum intact), a damaged file
 * and the gemm_tuning option off all leave every class on its default (own kernels on CPU devices,
 * CLBlast elsewhere). Each engine keeps its kernels and tuning in a fresh folder of its own. */
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

/* Device 0's backend per class after preparing it (which loads the tuning file). */
static void prepared_backends(const char *dir, bool tuning, cls_gemm_backend out[CLS_GEMM_N_CLASSES],
                              cls_device_kind *kind) {
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) out[c] = CLS_GEMM_BACKEND_AUTO;
  cls_engine *e = tuning_engine(dir, tuning);
  if (!e) return;
  int sel[1] = {0}, count = 1;
  cls_status st = cls_engine_prepare(e, sel, &count);
  CHECK(st == CLS_OK && count == 1, "prepare: %s", cls_engine_error(e));
  *kind = cls_engine_device(e, 0)->kind;
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) out[c] = cls_gemm_backend_of(e, 0, (cls_gemm_class)c);
  /* a plan made now takes the same backend per class */
  cls_gemm_plan *g = NULL;
  st = cls_gemm_create(e, 0, &g);
  CHECK(st == CLS_OK, "gemm create: %s", cls_engine_error(e));
  for (int c = 0; c < CLS_GEMM_N_CLASSES && g; c++) {
    const cls_gemm_backend got = cls_gemm_get_class_backend(g, (cls_gemm_class)c);
    CHECK(got == out[c], "plan's %s backend %s, the device's %s", cls_gemm_class_name((cls_gemm_class)c),
          cls_gemm_backend_name(got), cls_gemm_backend_name(out[c]));
  }
  cls_gemm_destroy(g);
  cls_engine_destroy(e);
}

int main(void) {
  char dir[] = "/tmp/clspeech-gemm-backend-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  cls_engine *e = tuning_engine(dir, true);
  if (!e || cls_engine_device_count(e) < 1) {
    cls_engine_destroy(e);
    return check_finish("test_gemm_backend");
  }
  const cls_device_kind kind0 = cls_engine_device(e, 0)->kind;
  const cls_gemm_backend def = cls_gemm_backend_for(kind0);
  const cls_gemm_backend other = def == CLS_GEMM_BACKEND_OWN ? CLS_GEMM_BACKEND_CLBLAST : CLS_GEMM_BACKEND_OWN;
  printf("device 0 (%s): class default %s\n", cls_engine_device(e, 0)->name, cls_gemm_backend_name(def));

  /* no file yet: the class default */
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) CHECK(cls_gemm_backend_of(e, 0, (cls_gemm_class)c) == def, "no file");
  /* the shape classes */
  CHECK_INT(cls_gemm_class_of(2400, 512, 512, false), CLS_GEMM_CLASS_BIG);
  CHECK_INT(cls_gemm_class_of(2400, 29, 512, false), CLS_GEMM_CLASS_THIN);
  CHECK_INT(cls_gemm_class_of(16, 2048, 512, false), CLS_GEMM_CLASS_THIN);
  CHECK_INT(cls_gemm_class_of(16, 2048, 512, true), CLS_GEMM_CLASS_PACKED);

  /* stored: big on the other backend, packed on the default one, thin not measured */
  cls_gemm_tuning t;
  memset(&t, 0, sizeof t);
  snprintf(t.shapes, sizeof t.shapes, "test_gemm_backend");
  t.backend[CLS_GEMM_CLASS_BIG] = (int)other;
  t.backend[CLS_GEMM_CLASS_PACKED] = (int)def;
  char path[1200];
  CHECK(cls_gemm_tuning_store(e, 0, &t, path, sizeof path) == CLS_OK, "store: %s", cls_engine_error(e));
  cls_engine_destroy(e);

  cls_gemm_backend b[CLS_GEMM_N_CLASSES];
  cls_device_kind kind = kind0;
  log_text[0] = '\0';
  prepared_backends(dir, true, b, &kind);
  CHECK(b[CLS_GEMM_CLASS_BIG] == other, "stored big winner %s honoured: got %s", cls_gemm_backend_name(other),
        cls_gemm_backend_name(b[CLS_GEMM_CLASS_BIG]));
  CHECK(b[CLS_GEMM_CLASS_THIN] == def, "thin without an entry: default, got %s", cls_gemm_backend_name(b[1]));
  CHECK(b[CLS_GEMM_CLASS_PACKED] == def, "packed: stored default, got %s", cls_gemm_backend_name(b[2]));
  CHECK_CONTAINS(log_text, "GEMM tuning loaded from");
  char want[64];
  snprintf(want, sizeof want, "): big=%s packed=%s\n", cls_gemm_backend_name(other), cls_gemm_backend_name(def));
  CHECK_CONTAINS(log_text, want);

  /* the gemm_tuning option off: defaults */
  prepared_backends(dir, false, b, &kind);
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) CHECK(b[c] == def, "tuning off: class %d on the default", c);

  /* an invalid entry (the checksum intact): the file is ignored with a warning naming it */
  char bad[64];
  snprintf(bad, sizeof bad, "backend big %s\n", cls_gemm_backend_name(other));
  tuning_rewrite(path, bad, "backend big fastest\n");
  log_text[0] = '\0';
  prepared_backends(dir, true, b, &kind);
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) CHECK(b[c] == def, "invalid entry: class %d on the default", c);
  CHECK_CONTAINS(log_text, "ignored: backend line \"backend big fastest\"");
  CHECK_CONTAINS(log_text, path);

  /* a class named twice: ignored too */
  tuning_rewrite(path, "backend big fastest\n", "backend packed clblast\n");
  log_text[0] = '\0';
  prepared_backends(dir, true, b, &kind);
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) CHECK(b[c] == def, "duplicate entry: class %d on the default", c);
  CHECK_CONTAINS(log_text, "the backend of class packed is given twice");

  /* a damaged file (checksum mismatch): a valid file stored again (the big class on the other backend),
     then one byte changed; ignored with the reason */
  e = tuning_engine(dir, true);
  CHECK(e && cls_gemm_tuning_store(e, 0, &t, path, sizeof path) == CLS_OK, "store again: %s", cls_engine_error(e));
  cls_engine_destroy(e);
  prepared_backends(dir, true, b, &kind);
  CHECK(b[CLS_GEMM_CLASS_BIG] == other, "the file stored again is honoured before it is damaged");
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL, "open %s", path);
  if (f) {
    fseek(f, 30, SEEK_SET);
    fputc('#', f);
    fclose(f);
  }
  log_text[0] = '\0';
  prepared_backends(dir, true, b, &kind);
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) CHECK(b[c] == def, "damaged file: class %d on the default", c);
  CHECK_CONTAINS(log_text, "checksum mismatch");

  char cmd[1300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "removing %s", dir);
  return check_finish("test_gemm_backend");
}
