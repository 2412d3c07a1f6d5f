/* The whole DeepSpeech network assembled from the op kernels against the same network in
 * TensorFlow (tests/ref/make_model_fixtures.py; llm.c's test_gpt2 idea), on every device: logits,
 * per-utterance CTC losses, the gradient of every parameter, and the losses of ten TF1 Adam steps; with
 * and without --layer_norm (its LayerNorm tensors after the others in the flat buffer).
 * Tolerances are relative to each tensor's largest magnitude (float32 sums in a different order,
 * through six layers and 40 recurrent steps), stated at each comparison. */
#include "check.h"
#include "clspeech/model.h"
#include "clspeech/ops.h"
#include "ops_test.h"

static double max_abs(const float *v, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
  return m;
}

static void run(tst_env *env, int dev, cls_safetensors *fx) {
  const char *ln = cls_safetensors_meta(fx, "layer_norm");
  cls_model_config cfg = {tst_meta_int(fx, "n_input"), tst_meta_int(fx, "n_context"), tst_meta_int(fx, "n_hidden"),
                          tst_meta_int(fx, "n_classes"), (float)atof(cls_safetensors_meta(fx, "relu_clip")),
                          ln ? atoi(ln) : 0};
  int T = tst_meta_int(fx, "T"), B = tst_meta_int(fx, "B"), I = cls_model_input_width(&cfg);
  const cls_tensor_info *lab = cls_safetensors_find(fx, "labels");
  int L = lab ? (int)lab->shape[1] : 1;
  cls_param_view views[CLS_MODEL_MAX_TENSORS], base[CLS_MODEL_N_TENSORS];
  size_t n_params = 0;
  const int n_tensors = cls_model_layout_all(&cfg, views, &n_params);
  CHECK_INT(n_tensors, cfg.layer_norm ? CLS_MODEL_MAX_TENSORS : CLS_MODEL_N_TENSORS);
  /* the first tensors as cls_model_layout gives them, the flat buffer's size included */
  CHECK(cls_model_layout(&cfg, base) == n_params, "cls_model_layout's flat buffer differs");
  for (int i = 0; i < CLS_MODEL_N_TENSORS; i++)
    CHECK(!strcmp(base[i].name, views[i].name) && base[i].offset == views[i].offset && base[i].count == views[i].count,
          "cls_model_layout's tensor %d differs", i);
  for (int i = CLS_MODEL_N_TENSORS; i < n_tensors; i++)
    CHECK(views[i].ndim == 1 && views[i].shape[0] == cfg.n_hidden && strstr(views[i].name, "/LayerNorm/"),
          "tensor %d: %s", i, views[i].name);
  { /* the frame estimate's LSTM part is what the LSTM's workspace grows by per frame of an utterance */
    const size_t H = (size_t)cfg.n_hidden, fixed = (4 * H * H + 6 * (size_t)B * H) * sizeof(float);
    size_t lstm_per_frame = 0;
    cls_model_frame_bytes(&cfg, L, &lstm_per_frame);
    cls_lstm_plan *lp = NULL;
    CHECK_INT(cls_lstm_create(env->engine, dev, T, B, cfg.n_hidden, cfg.n_hidden, &lp), CLS_OK);
    if (lp)
      CHECK(cls_lstm_workspace_bytes(lp, T, B) == fixed + lstm_per_frame * (size_t)T * B,
            "LSTM workspace %zu bytes, the frame estimate gives %zu + %zu x %d frames", cls_lstm_workspace_bytes(lp, T, B),
            fixed, lstm_per_frame, T * B);
    cls_lstm_destroy(lp);
  }
  float *params = calloc(n_params, sizeof *params), *grads = calloc(n_params, sizeof *grads);
  for (int i = 0; i < n_tensors; i++) {
    char name[256];
    snprintf(name, sizeof name, "param/%s", views[i].name);
    const float *p = tst_tensor(fx, name, CLS_F32, (int64_t)views[i].count);
    if (p) memcpy(params + views[i].offset, p, views[i].count * sizeof(float));
  }
  const float *features = tst_tensor(fx, "features", CLS_F32, (int64_t)T * B * I);
  const int32_t *seq_len = tst_tensor(fx, "seq_len", CLS_I32, B);
  const int32_t *labels = tst_tensor(fx, "labels", CLS_I32, (int64_t)B * L);
  const int32_t *label_len = tst_tensor(fx, "label_lengths", CLS_I32, B);
  const float *ref_logits = tst_tensor(fx, "logits", CLS_F32, (int64_t)T * B * cfg.n_classes);
  const float *ref_losses = tst_tensor(fx, "per_utterance_loss", CLS_F32, B);
  const float *ref_adam = tst_tensor(fx, "adam_losses", CLS_F32, 10);
  if (!features || !seq_len || !labels || !label_len || !ref_logits || !ref_losses || !ref_adam) goto out;

  cls_model *model = NULL;
  cls_status st = cls_model_create(env->engine, dev, &cfg, T, B, L, &model);
  CHECK(st == CLS_OK, "model create: %s", cls_engine_error(env->engine));
  if (!model) goto out;
  printf("  parameters %zu, activation memory %.1f KiB\n", n_params, cls_model_activation_bytes(model) / 1024.0);
  cl_command_queue q = tst_queue(env, dev);
  cl_mem p = tst_buffer(env, dev, params, n_params * sizeof(float));
  cl_mem g = tst_buffer(env, dev, NULL, n_params * sizeof(float));
  cl_mem m = tst_buffer(env, dev, NULL, n_params * sizeof(float)), v = tst_buffer(env, dev, NULL, n_params * sizeof(float));
  cl_mem fb = tst_buffer(env, dev, features, (size_t)T * B * I * sizeof(float));
  cl_mem sb = tst_buffer(env, dev, seq_len, (size_t)B * sizeof(int32_t));
  cl_mem lb = tst_buffer(env, dev, labels, (size_t)B * L * sizeof(int32_t));
  cl_mem llb = tst_buffer(env, dev, label_len, (size_t)B * sizeof(int32_t));
  cls_model_batch batch = {T, B, cls_buf_of(fb), cls_buf_of(sb), cls_buf_of(lb), cls_buf_of(llb)};
  float losses[64];
  st = cls_model_train_step(model, q, &batch, cls_buf_of(p), NULL, cls_buf_of(g), 1.0f / (float)B, CLS_OVERWRITE, losses);
  CHECK(st == CLS_OK, "train step: %s", cls_engine_error(env->engine));

  size_t nl = (size_t)T * B * cfg.n_classes;
  float *logits = malloc(nl * sizeof *logits);
  tst_read(env, dev, cls_model_logits(model).mem, logits, nl * sizeof(float));
  /* Logits: within 1e-5 of their largest magnitude. */
  tst_compare("logits", logits, ref_logits, nl, 0, 1e-5 * max_abs(ref_logits, nl));
  /* Losses (tens of nats): relative 1e-5. */
  tst_compare("per-utterance CTC loss", losses, ref_losses, (size_t)B, 1e-5, 0);
  tst_read(env, dev, g, grads, n_params * sizeof(float));
  for (int i = 0; i < n_tensors; i++) {
    char name[256];
    snprintf(name, sizeof name, "grad/%s", views[i].name);
    const float *ref = tst_tensor(fx, name, CLS_F32, (int64_t)views[i].count);
    /* Gradients: within 1e-4 of the tensor's largest gradient, plus 1e-3 relative. */
    if (ref) tst_compare(views[i].name, grads + views[i].offset, ref, views[i].count, 1e-3, 1e-4 * max_abs(ref, views[i].count));
  }

  /* Ten Adam steps (TF1 semantics), the loss before each step against TF's. */
  float lr = (float)atof(cls_safetensors_meta(fx, "adam_lr")), b1 = (float)atof(cls_safetensors_meta(fx, "adam_beta1"));
  float b2 = (float)atof(cls_safetensors_meta(fx, "adam_beta2")), eps = (float)atof(cls_safetensors_meta(fx, "adam_epsilon"));
  cls_adam_plan *adam = NULL;
  CHECK_INT(cls_adam_create(env->engine, dev, &adam), CLS_OK);
  cls_adam_state state = cls_adam_state_init(b1, b2);
  float step_losses[10];
  for (int s = 0; adam && s < 10; s++) {
    st = cls_model_train_step(model, q, &batch, cls_buf_of(p), NULL, cls_buf_of(g), 1.0f / (float)B, CLS_OVERWRITE, losses);
    CHECK(st == CLS_OK, "step %d: %s", s, cls_engine_error(env->engine));
    double mean = 0;
    for (int b = 0; b < B; b++) mean += losses[b];
    step_losses[s] = (float)(mean / B);
    st = cls_adam_update(adam, q, n_params, cls_buf_of(p), cls_buf_of(m), cls_buf_of(v), cls_buf_of(g), lr, b1, b2, eps,
                         &state, NULL);
    CHECK(st == CLS_OK, "adam: %s", cls_engine_error(env->engine));
  }
  for (int s = 0; s < 10; s++) printf("  step %d: loss %.6f (TensorFlow %.6f)\n", s, step_losses[s], ref_adam[s]);
  /* Relative 1e-4 over ten steps (Adam's normalised updates amplify rounding differences a little). */
  tst_compare("losses of 10 Adam steps", step_losses, ref_adam, 10, 1e-4, 0);
  cls_adam_destroy(adam);
  free(logits);
  cl_mem mems[] = {p, g, m, v, fb, sb, lb, llb};
  for (size_t i = 0; i < sizeof mems / sizeof *mems; i++) clReleaseMemObject(mems[i]);
  cls_model_destroy(model);
out:
  free(params);
  free(grads);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_model");
  const char *files[] = {"model_small.safetensors", "model_small_layer_norm.safetensors"};
  for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
    cls_safetensors *fx = tst_fixture(files[f]);
    for (int i = 0; fx && i < env.n_devices; i++) {
      printf("%s, device %s\n", files[f], tst_device_name(&env, env.devices[i]));
      run(&env, env.devices[i], fx);
    }
    cls_safetensors_free(fx);
  }
  tst_close_env(&env);
  return check_finish("test_model");
}
