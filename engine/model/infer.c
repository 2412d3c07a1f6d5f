/* The forward-only replica (see clspeech/model.h and infer.h): parameters, the model's activations
 * and the batch buffers on one device, a checkpoint's or a model package's parameters, and logits for
 * audio files: whole utterances through the batch loader, or one utterance streamed in chunks (audio,
 * features, context windows and the model a chunk at a time, the LSTM state carried over). */
#include "model/infer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/package.h"
#include "device/engine.h"
#include "device/log.h"
#include "model/batch_input.h"
#include "model/package_format.h"
#include "ops/ops_util.h"

struct cls_infer {
  cls_engine *e;
  int device;
  cls_infer_config c;
  cls_mfcc_tables *tables;
  cl_context ctx;
  cl_command_queue q;
  cls_model *model;
  cls_batch_input *input;
  size_t n_params, bytes;
  cl_mem params;   /* [n_params] */
  float *host;     /* [n_params] checkpoint staging */
  float *logits;   /* [max_frames*max_batch, n_classes] */
  /* streaming (c.stream_frames > 0; c.max_frames is then the chunk) */
  cl_mem h_state, c_state; /* [1, n_hidden] */
  float *zeros;            /* [n_hidden] */
  float *samples;          /* [(chunk + 2 n_context - 1) * step + window] decoded, not yet featurised */
  float *feats;            /* [chunk + 2 n_context, n_coeff] features of frames fbase .. fend */
  float *windows;          /* [chunk, input width] */
  float *chunk_logits;     /* [chunk, n_classes] the logits of the last chunk run */
  float *stream_logits;    /* cls_infer_run only: all the logits of the utterance streamed, grown as they come */
  size_t stream_cap;       /* floats */
};

static cls_status cl_ok(cls_infer *t, cl_int err, const char *what) {
  return cls_ops_cl_check(t->e, t->device, err, what);
}

static void log_placement(cls_infer *t) {
  const cls_device_info *d = cls_engine_device(t->e, t->device);
  const size_t pb = t->n_params * sizeof(float);
  cls_log(t->e, CLS_LOG_NOTICE,
          "placement: forward-only replica on device %d:%d (%s, %s): capacity %d utterances x %d frames; device "
          "memory %.1f MiB (parameters %.1f MiB; activations, batch and workspaces %.1f MiB; no gradient, Adam or "
          "reduction buffers)",
          d->platform_index, d->device_index, d->name, d->driver_version, t->c.max_batch, t->c.max_frames,
          (double)t->bytes / 1048576.0, (double)pb / 1048576.0, (double)(t->bytes - pb) / 1048576.0);
}

/* Streaming's buffers: the LSTM state carried between chunks on the device, and the host's staging
 * for a chunk's samples, features, context windows and logits. */
static cls_status create_stream_buffers(cls_infer *t) {
  cls_engine *e = t->e;
  const cls_infer_config *c = &t->c;
  cl_int cl_err = CL_SUCCESS;
  cls_status st;
  const size_t hb = (size_t)c->model.n_hidden * sizeof(float);
  const size_t ctx2 = 2 * (size_t)c->model.n_context, T = (size_t)c->stream_frames;
  t->h_state = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, hb, NULL, &cl_err);
  if (t->h_state) t->c_state = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, hb, NULL, &cl_err);
  st = cl_ok(t, t->c_state ? CL_SUCCESS : cl_err, "allocating the LSTM state");
  t->bytes += 2 * hb;
  t->zeros = calloc((size_t)c->model.n_hidden, sizeof(float));
  t->samples = malloc(((T + ctx2 - 1) * (size_t)t->tables->step + (size_t)t->tables->window) * sizeof(float));
  t->feats = malloc((T + ctx2) * (size_t)c->features.n_coeff * sizeof(float));
  t->windows = malloc(T * (size_t)cls_model_input_width(&c->model) * sizeof(float));
  t->chunk_logits = malloc(T * (size_t)c->model.n_classes * sizeof(float));
  if (st == CLS_OK && (!t->zeros || !t->samples || !t->feats || !t->windows || !t->chunk_logits))
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for streaming in chunks of %d frames",
                  c->stream_frames);
  return st;
}

/* The checkpoint's staging and the logits read back, both on the host. */
static cls_status create_host_buffers(cls_infer *t) {
  cls_engine *e = t->e;
  const cls_infer_config *c = &t->c;
  const size_t pb = t->n_params * sizeof(float);
  cls_status st = CLS_OK;
  t->bytes += cls_batch_input_device_bytes(t->input) + cls_model_activation_bytes(t->model);
  t->host = malloc(pb);
  const size_t rows = (size_t)c->max_frames * (size_t)c->max_batch, classes = (size_t)c->model.n_classes;
  const size_t logits = rows <= SIZE_MAX / sizeof(float) / classes ? rows * classes * sizeof(float) : SIZE_MAX;
  t->logits = logits < SIZE_MAX ? malloc(logits) : NULL;
  if (!t->host)
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", t->n_params);
  else if (!t->logits)
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY,
                  "out of host memory for the logits buffer (%d frames x %d utterances x %d classes)", c->max_frames,
                  c->max_batch, c->model.n_classes);
  return st;
}

cls_status cls_infer_create(cls_engine *e, int device, const cls_infer_config *c, cls_infer **out) {
  *out = NULL;
  if (c->max_batch < 1 || c->max_frames < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "forward-only replica: %d utterances x %d frames: both must be at least 1", c->max_batch,
                    c->max_frames);
  if (c->model.n_input != c->features.n_coeff)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "the model takes %d coefficients per frame, the features give %d",
                    c->model.n_input, c->features.n_coeff);
  if (c->stream_frames < 0 || (c->stream_frames > 0 && c->max_batch != 1))
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "forward-only replica: streaming in chunks of %d frames takes one utterance at a time, not %d",
                    c->stream_frames, c->max_batch);
  cls_infer *t = calloc(1, sizeof *t);
  if (!t) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  t->e = e;
  t->device = device;
  t->c = *c;
  if (c->stream_frames > 0) {
    t->c.max_frames = c->stream_frames; /* the model and batch buffers hold one chunk */
    t->c.host_features = 1;             /* features a chunk at a time on the host */
  }
  c = &t->c;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  t->n_params = cls_model_layout(&c->model, views);
  cls_error err;
  cls_status st = cls_fail_wrap(e, cls_mfcc_tables_create(&c->features, &t->tables, &err), &err, NULL);
  cl_device_id id = NULL;
  if (st == CLS_OK) st = cls_engine_device_cl(e, device, &t->ctx, &id, NULL);
  cl_int cl_err = CL_SUCCESS;
  if (st == CLS_OK) {
    t->q = clCreateCommandQueue(t->ctx, id, CL_QUEUE_PROFILING_ENABLE, &cl_err);
    st = cl_ok(t, t->q ? CL_SUCCESS : cl_err, "creating the compute queue");
  }
  if (st == CLS_OK) st = cls_model_create(e, device, &c->model, c->max_frames, c->max_batch, 1, &t->model);
  const size_t pb = t->n_params * sizeof(float);
  if (st == CLS_OK) {
    t->params = clCreateBuffer(t->ctx, CL_MEM_READ_WRITE, pb, NULL, &cl_err);
    st = cl_ok(t, t->params ? CL_SUCCESS : cl_err, "allocating device memory");
    t->bytes += pb;
  }
  cls_batch_input_config ic = {c->model, t->tables, c->host_features, c->max_batch, c->max_frames, 1, NULL, 0, 0};
  if (st == CLS_OK) st = cls_batch_input_create(e, device, t->ctx, &ic, &t->input);
  if (st == CLS_OK && c->stream_frames > 0) st = create_stream_buffers(t);
  if (st == CLS_OK) st = create_host_buffers(t);
  if (st != CLS_OK) {
    cls_infer_destroy(t);
    return st;
  }
  if (c->log_placement) log_placement(t);
  *out = t;
  return CLS_OK;
}

void cls_infer_destroy(cls_infer *t) {
  if (!t) return;
  if (t->q) clFinish(t->q);
  cls_model_destroy(t->model);
  cls_batch_input_destroy(t->input);
  if (t->params) clReleaseMemObject(t->params);
  if (t->h_state) clReleaseMemObject(t->h_state);
  if (t->c_state) clReleaseMemObject(t->c_state);
  free(t->zeros);
  free(t->samples);
  free(t->feats);
  free(t->windows);
  free(t->chunk_logits);
  free(t->stream_logits);
  if (t->q) clReleaseCommandQueue(t->q);
  cls_mfcc_tables_destroy(t->tables);
  free(t->host);
  free(t->logits);
  free(t);
}

size_t cls_infer_device_bytes(const cls_infer *t) { return t->bytes; }

cls_status cls_infer_write_params(cls_infer *t, const float *params) {
  return cl_ok(t, clEnqueueWriteBuffer(t->q, t->params, CL_TRUE, 0, t->n_params * sizeof(float), params, 0, NULL, NULL),
               "uploading parameters");
}

cls_status cls_infer_load(cls_infer *t, const char *path) {
  cls_error err;
  cls_checkpoint_vars s;
  cls_status st = cls_checkpoint_load(path, &t->c.model, t->host, NULL, NULL, &s, NULL, 0, &err);
  if (st != CLS_OK) return cls_fail_wrap(t->e, st, &err, NULL);
  cls_log(t->e, CLS_LOG_INFO, "Loaded checkpoint %s (global step %lld)", path, (long long)s.global_step);
  return cls_infer_write_params(t, t->host);
}

cls_status cls_infer_load_package(cls_infer *t, const cls_package *pkg) {
  const cls_package_info *in = cls_package_get_info(pkg);
  const cls_model_config *m = &t->c.model;
  if (!in) return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "cls_infer_load_package: no package");
  if (memcmp(&in->model, m, sizeof *m)) {
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT,
                    "%s: the package's model (n_hidden %d, n_classes %d, n_input %d, n_context %d, relu_clip %g) is "
                    "not the replica's (%d, %d, %d, %d, %g)",
                    cls_package_name(pkg), in->model.n_hidden, in->model.n_classes, in->model.n_input,
                    in->model.n_context, (double)in->model.relu_clip, m->n_hidden, m->n_classes, m->n_input,
                    m->n_context, (double)m->relu_clip);
  }
  cls_error err;
  if (cls_package_params(pkg, t->host, t->n_params, &err) != CLS_OK) return cls_fail(t->e, err.status, "%s", err.text);
  cls_log(t->e, CLS_LOG_INFO, "Loaded model package %s (from %s, global step %lld)", cls_package_name(pkg),
          in->source_checkpoint, (long long)in->global_step);
  return cls_infer_write_params(t, t->host);
}

cls_status cls_infer_batch(cls_infer *t, const cls_host_batch *b, float *logits, int *time, float *losses) {
  cls_model_batch mb;
  cls_status st = cls_batch_input_put(t->input, t->q, b, 0, b->batch, &mb);
  if (st == CLS_OK) st = cls_model_forward(t->model, t->q, &mb, cls_buf_of(t->params), NULL, losses);
  if (st == CLS_OK) {
    size_t bytes = (size_t)mb.time * (size_t)mb.batch * (size_t)t->c.model.n_classes * sizeof(float);
    st = cl_ok(t, clEnqueueReadBuffer(t->q, cls_model_logits(t->model).mem, CL_TRUE, 0, bytes, logits, 0, NULL, NULL),
               "reading logits");
  }
  if (time) *time = mb.time;
  return st;
}

static cls_status run_windows(cls_infer *t, int index, int n);

/* Output frames obase .. obase+n of the utterance streamed: their context windows from the features
 * held (frames fbase .. fend; zero before frame 0 and, once the audio has ended, from fend on), through
 * the model from the carried state, their logits read into chunk_logits and handed to on_chunk. */
static cls_status stream_chunk(cls_infer *t, int index, size_t obase, int n, size_t fbase, size_t fend,
                               cls_infer_chunk_fn on_chunk, void *user) {
  const int ctx = t->c.model.n_context, nc = t->c.features.n_coeff;
  const size_t width = (size_t)cls_model_input_width(&t->c.model);
  for (int i = 0; i < n; i++)
    for (int w = 0; w <= 2 * ctx; w++) {
      const long long src = (long long)obase + i - ctx + w;
      float *dst = t->windows + (size_t)i * width + (size_t)w * nc;
      if (src >= 0 && (size_t)src < fend) memcpy(dst, t->feats + ((size_t)src - fbase) * nc, (size_t)nc * sizeof(float));
      else memset(dst, 0, (size_t)nc * sizeof(float));
    }
  cls_status st = run_windows(t, index, n);
  if (st == CLS_OK && on_chunk) st = on_chunk(user, (int64_t)obase, n, t->chunk_logits);
  return st;
}

/* The n context windows in t->windows through the model from the state in h_state, c_state, their
 * logits read into chunk_logits. */
static cls_status run_windows(cls_infer *t, int index, int n) {
  const int C = t->c.model.n_classes;
  cls_host_batch hb;
  memset(&hb, 0, sizeof hb);
  int frames = n;
  int32_t no_label = 0, no_length = 0;
  hb.batch = 1;
  hb.first = index;
  hb.time = n;
  hb.max_label = 1;
  hb.frames = &frames;
  hb.windows = t->windows;
  hb.host_windows = 1;
  hb.labels = &no_label;
  hb.label_len = &no_length;
  cls_model_batch mb;
  cls_status st = cls_batch_input_put(t->input, t->q, &hb, 0, 1, &mb);
  if (st == CLS_OK) st = cls_model_infer_chunk(t->model, t->q, &mb, cls_buf_of(t->params), cls_buf_of(t->h_state),
                                               cls_buf_of(t->c_state));
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueReadBuffer(t->q, cls_model_logits(t->model).mem, CL_TRUE, 0, (size_t)n * C * sizeof(float),
                                      t->chunk_logits, 0, NULL, NULL),
               "reading logits");
  return st;
}

cls_status cls_infer_windows(cls_infer *t, const float *windows, int n, float *h, float *c, float *logits) {
  if (t->c.stream_frames <= 0 || n < 1 || n > t->c.stream_frames)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT,
                    "forward-only replica: %d frames of windows: it takes 1 .. %d (made with stream_frames)", n,
                    t->c.stream_frames);
  const size_t hb = (size_t)t->c.model.n_hidden * sizeof(float);
  const size_t width = (size_t)cls_model_input_width(&t->c.model);
  memcpy(t->windows, windows, (size_t)n * width * sizeof(float));
  cls_status st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->h_state, CL_FALSE, 0, hb, h, 0, NULL, NULL),
                        "writing the LSTM state");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->c_state, CL_TRUE, 0, hb, c, 0, NULL, NULL), "writing the LSTM state");
  if (st == CLS_OK) st = run_windows(t, 0, n);
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueReadBuffer(t->q, t->h_state, CL_FALSE, 0, hb, h, 0, NULL, NULL), "reading the LSTM state");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueReadBuffer(t->q, t->c_state, CL_TRUE, 0, hb, c, 0, NULL, NULL), "reading the LSTM state");
  if (st == CLS_OK) memcpy(logits, t->chunk_logits, (size_t)n * (size_t)t->c.model.n_classes * sizeof(float));
  return st;
}

/* One utterance streamed: decoded, featurised and run a chunk of T frames at a time. Frame k takes
 * samples k*step .. k*step+window; a chunk's windows need n_context frames on each side, so a chunk
 * runs once the features reach n_context frames past it (or the audio has ended). *frames receives the
 * utterance's frames. */
static cls_status stream_one(cls_infer *t, const char *path, int index, cls_infer_chunk_fn on_chunk, void *user,
                             int64_t *frames) {
  const cls_mfcc_tables *tb = t->tables;
  const size_t T = (size_t)t->c.stream_frames, ctx = (size_t)t->c.model.n_context, nc = (size_t)tb->cfg.n_coeff;
  const size_t S = (size_t)tb->step, W = (size_t)tb->window, rows = T + 2 * ctx;
  cls_error err;
  cls_audio_stream *s = NULL;
  cls_status opened = cls_audio_stream_open(path, tb->cfg.sample_rate, &s, NULL, &err);
  if (opened != CLS_OK) return cls_fail_wrap(t->e, opened, &err, NULL);
  const size_t hb = (size_t)t->c.model.n_hidden * sizeof(float);
  cls_status st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->h_state, CL_FALSE, 0, hb, t->zeros, 0, NULL, NULL),
                        "zeroing the LSTM state");
  if (st == CLS_OK)
    st = cl_ok(t, clEnqueueWriteBuffer(t->q, t->c_state, CL_TRUE, 0, hb, t->zeros, 0, NULL, NULL),
               "zeroing the LSTM state");
  size_t fbase = 0, fend = 0, obase = 0, ns = 0, drop = 0; /* samples[0 .. ns) start at sample fend*S */
  int ended = 0;
  while (st == CLS_OK) {
    /* Features until the held rows are full or the audio ends. */
    while (!ended && fend - fbase < rows) {
      const size_t want = (rows - (fend - fbase) - 1) * S + W;
      while (ns < want) {
        size_t got = 0;
        const cls_status read = cls_audio_stream_read(s, t->samples + ns, want - ns, &got, &err);
        if (read != CLS_OK) {
          st = cls_fail_wrap(t->e, read, &err, NULL);
          break;
        }
        if (got == 0) {
          ended = 1;
          break;
        }
        const size_t d = got < drop ? got : drop; /* samples between frames (a step longer than the window) */
        memmove(t->samples + ns, t->samples + ns + d, (got - d) * sizeof(float));
        drop -= d;
        ns += got - d;
      }
      if (st != CLS_OK) break;
      size_t k = ns >= W ? 1 + (ns - W) / S : 0;
      if (k > rows - (fend - fbase)) k = rows - (fend - fbase);
      if (k == 0) break;
      cls_mfcc_host(tb, t->samples, (k - 1) * S + W, t->feats + (fend - fbase) * nc);
      fend += k;
      if (k * S > ns) {
        drop = k * S - ns;
        ns = 0;
      } else {
        ns -= k * S;
        memmove(t->samples, t->samples + k * S, ns * sizeof(float));
      }
    }
    if (st != CLS_OK) break;
    size_t n = 0;
    if (ended) n = fend - obase < T ? fend - obase : T;
    else if (fend - obase >= T + ctx) n = T;
    if (n == 0) break;
    st = stream_chunk(t, index, obase, (int)n, fbase, fend, on_chunk, user);
    obase += n;
    const size_t keep = obase > ctx ? obase - ctx : 0; /* the left context of the next chunk */
    if (keep > fbase) {
      memmove(t->feats, t->feats + (keep - fbase) * nc, (fend - keep) * nc * sizeof(float));
      fbase = keep;
    }
  }
  cls_audio_stream_close(s);
  if (st == CLS_OK && fend == 0) st = cls_fail(t->e, CLS_ERR_IO, "%s: shorter than one feature window", path);
  if (st == CLS_OK && fend > (size_t)INT32_MAX) st = cls_fail(t->e, CLS_ERR_IO, "%s: too many frames", path);
  *frames = (int64_t)fend;
  return st;
}

cls_status cls_infer_stream(cls_infer *t, const char *path, cls_infer_chunk_fn on_chunk, void *user, int64_t *frames) {
  int64_t got = 0;
  if (frames) *frames = 0;
  if (t->c.stream_frames <= 0)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT,
                    "forward-only replica: made without stream_frames, it cannot stream");
  cls_status st = stream_one(t, path, 0, on_chunk, user, &got);
  if (frames) *frames = got;
  return st;
}

/* cls_infer_run's streaming: every chunk's logits appended to stream_logits. */
static cls_status keep_chunk(void *user, int64_t first, int n, const float *logits) {
  cls_infer *t = user;
  const size_t C = (size_t)t->c.model.n_classes, need = ((size_t)first + (size_t)n) * C;
  if (need > t->stream_cap) {
    size_t cap = t->stream_cap ? t->stream_cap : (size_t)t->c.stream_frames * C;
    while (cap < need) cap *= 2;
    float *grown = realloc(t->stream_logits, cap * sizeof *grown);
    if (!grown)
      return cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %lld frames of logits",
                      (long long)first + n);
    t->stream_logits = grown;
    t->stream_cap = cap;
  }
  memcpy(t->stream_logits + (size_t)first * C, logits, (size_t)n * C * sizeof *logits);
  return CLS_OK;
}

cls_status cls_infer_run(cls_infer *t, const char *const *paths, int n, int batch_size, cls_infer_fn on_batch,
                         void *user) {
  if (t->c.stream_frames > 0) {
    cls_status st = CLS_OK;
    for (int i = 0; i < n && st == CLS_OK; i++) {
      int64_t frames = 0;
      st = stream_one(t, paths[i], i, keep_chunk, t, &frames);
      int f = (int)frames;
      if (st == CLS_OK && on_batch) on_batch(user, i, 1, f, t->stream_logits, &f);
    }
    return st;
  }
  if (batch_size < 1 || batch_size > t->c.max_batch)
    return cls_fail(t->e, CLS_ERR_INVALID_ARGUMENT, "a batch of %d utterances: the replica takes 1 to %d", batch_size,
                    t->c.max_batch);
  if (n <= 0) return CLS_OK;
  cls_utterance *utts = calloc((size_t)n, sizeof *utts);
  if (!utts) return cls_fail(t->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int i = 0; i < n; i++) utts[i] = (cls_utterance){paths[i], NULL, 0};
  cls_loader_options lo = {.tables = t->tables, .n_context = t->c.model.n_context,
                           .host_features = t->c.host_features, .feature_cache = t->c.feature_cache, .depth = 3};
  cls_loader *l = NULL;
  cls_error err;
  cls_status st = cls_fail_wrap(t->e, cls_loader_start(utts, n, batch_size, &lo, &l, &err), &err, NULL);
  for (cls_host_batch *b; st == CLS_OK && (b = cls_loader_next(l));) {
    int time = 0;
    st = cls_infer_batch(t, b, t->logits, &time, NULL);
    if (st == CLS_OK && on_batch) on_batch(user, b->first, b->batch, time, t->logits, b->frames);
    cls_loader_done(l, b);
  }
  cls_loader_stop(l);
  free(utts);
  return st;
}
