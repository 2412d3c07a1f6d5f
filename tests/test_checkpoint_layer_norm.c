/* Checkpoints of a model with --layer_norm: the LayerNorm tensors (layer_N/LayerNorm/beta and /gamma of
 * layers 1, 2, 3 and 5) saved under DeepSpeech's names with their Adam slots and the switch in the
 * metadata, loaded back exactly; the switch read by cls_checkpoint_peek_model; a file with the norms
 * refused by a model without them and the other way round; a transfer that drops layer_5 drops its
 * norm too and loads the others'. */
#include <stdlib.h>
#include <unistd.h>

#include "base/safetensors.h"
#include "check.h"
#include "clspeech/model.h"

static void fill(float *x, size_t n, float scale, int mod) {
  for (size_t i = 0; i < n; i++) x[i] = scale * (float)(i % (size_t)mod) + (scale > 0 ? 0.5f * scale : 0.0f);
}

int main(void) {
  cls_model_config cfg = {2, 1, 4, 3, 20.0f, 1}, plain = cfg;
  plain.layer_norm = 0;
  cls_param_view views[CLS_MODEL_MAX_TENSORS];
  size_t n = 0, n_plain = 0;
  CHECK_INT(cls_model_layout_all(&cfg, views, &n), CLS_MODEL_MAX_TENSORS);
  CHECK_INT(cls_model_layout_all(&plain, views, &n_plain), CLS_MODEL_N_TENSORS);
  CHECK_INT(n, n_plain + CLS_MODEL_N_LAYER_NORM * 4); /* 8 tensors of n_hidden = 4 after the others */
  cls_model_layout_all(&cfg, views, NULL);
  float *p = malloc(n * sizeof *p), *m = malloc(n * sizeof *m), *v = malloc(n * sizeof *v);
  float *p2 = malloc(n * sizeof *p2), *m2 = malloc(n * sizeof *m2), *v2 = malloc(n * sizeof *v2);
  if (!p || !m || !v || !p2 || !m2 || !v2) return 1;
  fill(p, n, 0.25f, 13);
  fill(m, n, 0.001f, 7);
  fill(v, n, 0.0001f, 5);
  cls_checkpoint_vars vars = {7, 0.001f, {0.5f, 0.25f, 7}, 0}, back;
  cls_error err;
  char dir[] = "/tmp/clspeech-ln-ckpt-XXXXXX", path[600], without[600];
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(path, sizeof path, "%s/ln.safetensors", dir);
  snprintf(without, sizeof without, "%s/plain.safetensors", dir);
  CHECK_INT(cls_checkpoint_save(path, &cfg, p, m, v, &vars, NULL, 0, &err), CLS_OK);
  CHECK_INT(cls_checkpoint_save(without, &plain, p, m, v, &vars, NULL, 0, &err), CLS_OK);

  /* the file: DeepSpeech's names, the slots, the switch */
  cls_safetensors *st = NULL;
  CHECK_INT(cls_safetensors_read(path, &st, &err), CLS_OK);
  if (st) {
    const char *names[] = {"layer_1/LayerNorm/beta", "layer_2/LayerNorm/gamma/Adam", "layer_3/LayerNorm/beta/Adam_1",
                           "layer_5/LayerNorm/gamma"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
      const cls_tensor_info *t = cls_safetensors_find(st, names[i]);
      CHECK(t && t->ndim == 1 && t->shape[0] == 4, "tensor %s", names[i]);
    }
    CHECK(cls_safetensors_find(st, "layer_6/LayerNorm/beta") == NULL, "layer_6 has no norm");
    const char *ln = cls_safetensors_meta(st, "layer_norm");
    CHECK(ln && !strcmp(ln, "1"), "metadata layer_norm: %s", ln ? ln : "(none)");
    cls_safetensors_free(st);
  }
  st = NULL;
  CHECK_INT(cls_safetensors_read(without, &st, &err), CLS_OK);
  if (st) {
    CHECK(cls_safetensors_meta(st, "layer_norm") == NULL, "a checkpoint without the norms has no layer_norm key");
    CHECK(cls_safetensors_find(st, "layer_1/LayerNorm/beta") == NULL, "no norms without --layer_norm");
    cls_safetensors_free(st);
  }

  /* peeked and loaded back exactly */
  cls_model_config peeked = plain;
  CHECK_INT(cls_checkpoint_peek_model(path, &peeked, &err), CLS_OK);
  CHECK_INT(peeked.layer_norm, 1);
  CHECK_INT(cls_checkpoint_peek_model(without, &peeked, &err), CLS_OK);
  CHECK_INT(peeked.layer_norm, 0);
  CHECK_INT(cls_checkpoint_load(path, &cfg, p2, m2, v2, &back, NULL, 0, &err), CLS_OK);
  CHECK(!memcmp(p, p2, n * sizeof *p) && !memcmp(m, m2, n * sizeof *m) && !memcmp(v, v2, n * sizeof *v),
        "parameters or slots differ after the round trip");
  CHECK(back.global_step == 7 && back.adam.step == 7, "vars %lld %lld", (long long)back.global_step,
        (long long)back.adam.step);

  /* the switch must agree */
  CHECK_INT(cls_checkpoint_load(path, &plain, p2, m2, v2, &back, NULL, 0, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "the checkpoint was trained with --layer_norm; this model lacks it");
  CHECK_INT(cls_checkpoint_load(without, &cfg, p2, m2, v2, &back, NULL, 0, &err), CLS_ERR_IO);
  CHECK_CONTAINS(err.text, "the checkpoint was trained without --layer_norm; this model has it");

  /* --drop_source_layers 2 (layer_5 and layer_6): layer_5's norm stays as the caller put it */
  for (size_t i = 0; i < n; i++) p2[i] = -7.0f;
  CHECK_INT(cls_checkpoint_load_dropping(path, &cfg, 2, p2, NULL, NULL, &back, NULL, 0, &err), CLS_OK);
  int wrong = 0;
  for (int t = 0; t < CLS_MODEL_MAX_TENSORS; t++) {
    int dropped = t >= cls_model_first_dropped(2) && t < CLS_MODEL_N_TENSORS;
    dropped |= !strncmp(views[t].name, "layer_5/LayerNorm/", 18);
    for (size_t k = 0; k < views[t].count; k++) {
      float want = dropped ? -7.0f : p[views[t].offset + k];
      wrong += p2[views[t].offset + k] != want;
    }
  }
  CHECK_INT(wrong, 0);

  unlink(path);
  unlink(without);
  rmdir(dir);
  free(p);
  free(m);
  free(v);
  free(p2);
  free(m2);
  free(v2);
  return check_finish("test_checkpoint_layer_norm");
}
