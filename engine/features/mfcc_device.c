/* Device features (see mfcc_device.h): owns the plan's buffers, the clFFT plan (baked once, for a
 * chunk of frames, and run once per chunk the batch's frames fill), the three kernels of
 * kernels/mfcc.cl and, for training with --augment, the two of kernels/augment.cl with their per-batch
 * tables, the filterbank's power variant and the power path (augment/power.c) for resized batches. */
#include "features/mfcc_device.h"

#include <clFFT.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "augment_draw.h"
#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "features/augment/device_ops.h"
#include "features/augment/power.h"
#include "ops/ops_util.h"

/* Work-items per frame (mfcc_frame_window) and per context-window row (mfcc_context_windows): each
   work-group strides along its row. */
#define MFCC_COPY_LANES 64

/* clFFT keeps process-wide state: set up with the first plan, torn down after the last. */
static pthread_mutex_t clfft_lock = PTHREAD_MUTEX_INITIALIZER;
static int clfft_users;

struct cls_mfcc_plan {
  cls_engine *engine;
  cls_error *err;                           /* where run-time failures go (cls_mfcc_set_error) */
  const cls_mfcc_tables *t;
  cl_context ctx;
  cl_command_queue bake_queue;
  cl_kernel frame_window, filterbank, context;
  cl_mem hann, band, weight, dct;           /* tables */
  cl_mem samples, frame_start;              /* [sample_cap], int [frame_cap] */
  cl_mem frames, spectrum, feats, tmp;      /* [frame_cap, fft_len], [frame_cap, n_bins] complex, [frame_cap, n_coeff] */
  cl_mem frame_base, n_frames;              /* int [batch_cap] */
  size_t sample_cap, frame_cap, batch_cap;  /* frame_cap: a multiple of chunk */
  clfftPlanHandle fft;                      /* a batch of `chunk` frames */
  int fft_baked;
  size_t chunk;                             /* frames per FFT transform (fft_chunk); 0: the plan covers frame_cap */
  size_t filterbank_local;                  /* work-group size of mfcc_filterbank_dct (CLS_MFCC_FILTERBANK_WG) */
  int f64;                                  /* the double-precision framing and FFT */
  size_t real;                              /* sizeof(double) or sizeof(float) */
  cls_device *device;
  /* --augment (cls_mfcc_enable_augment): the kernels, and a batch's tables (kernels/augment.cl) */
  cl_kernel aug_spectrogram, aug_features;
  cl_kernel filterbank_power;                       /* mfcc_filterbank_dct_power: the power path's features */
  cls_augment_power *power;                         /* pitch, tempo, warp, spectrogram add and multiply */
  cl_mem aug_frame_utt, aug_frame_base, aug_op_first, aug_ops, aug_utt;
  size_t aug_frame_cap, aug_batch_cap, aug_ops_cap; /* bytes */
  int *aug_stage;                                   /* host staging: frame_utt, then op_first */
  size_t aug_stage_cap;                             /* ints */
};

static cls_status cl_check(cls_error *to, cl_int err, const char *what) {
  if (err == CL_SUCCESS) return CLS_OK;
  return cls_error_set(to, CLS_ERR_OPENCL, "mfcc: %s failed: %s", what, cls_cl_error_name(err));
}

static cls_status fft_check(cls_error *to, clfftStatus s, const char *what) {
  if (s == CLFFT_SUCCESS) return CLS_OK;
  return cls_error_set(to, CLS_ERR_OPENCL, "mfcc: clFFT %s failed with status %d", what, (int)s);
}

static cl_mem upload(cls_mfcc_plan *p, const void *data, size_t bytes, cl_int *err) {
  return clCreateBuffer(p->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)data, err);
}

static void release(cl_mem *m) {
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* Frames per FFT transform. The plan is baked once for this batch and run over the batch's frames
 * chunk by chunk, through sub-buffers, so that the FFT's work follows the frames the batch has rather
 * than the capacity (a power of two: up to twice as many) and a longer batch needs no new bake (a
 * clFFT compile). Each chunk's offset into the frame and spectrum buffers must be a multiple of the
 * device's base address alignment: the smallest power of two from `min_chunk` frames that makes both
 * so, or 0 (one transform over the whole capacity, as before) when none up to FFT_CHUNK_MAX does. The
 * least chunk is FFT_CHUNK_CPU frames on CPU devices, where a transform costs about 3.5 us and 128 of
 * them cost more than a launch; FFT_CHUNK_OTHER elsewhere, where a GPU runs a few thousand transforms in
 * about the time of a launch, so that fewer launches count more than padding frames (not measured on a
 * GPU yet). */
#define FFT_CHUNK_CPU 128
#define FFT_CHUNK_OTHER 1024
#define FFT_CHUNK_MAX 8192
static size_t fft_chunk(cl_device_id dev, size_t min_chunk, size_t frame_bytes, size_t spectrum_bytes) {
  cl_uint align_bits = 0;
  if (clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits, NULL) != CL_SUCCESS ||
      align_bits < 8)
    return 0;
  const size_t align = align_bits / 8;
  for (size_t c = min_chunk; c <= FFT_CHUNK_MAX; c *= 2)
    if (c * frame_bytes % align == 0 && c * spectrum_bytes % align == 0) return c;
  return 0;
}

cls_status cls_mfcc_create(cls_engine *e, int device, const cls_mfcc_tables *t, cls_mfcc_plan **out) {
  *out = NULL;
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  if (t->cfg.n_channels > 64)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "mfcc: at most 64 mel channels on the device (got %d)", t->cfg.n_channels);
  cls_mfcc_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->t = t;
  p->ctx = d->context;
  p->bake_queue = d->queue;
  pthread_mutex_lock(&clfft_lock);
  if (clfft_users == 0) {
    /* clFFT's own clfftInitSetupData is a header `inline` with no external definition in C99+ (an
       undefined symbol when not inlined), so the version fields are filled here as it would. */
    clfftSetupData setup;
    memset(&setup, 0, sizeof setup);
    setup.major = clfftVersionMajor;
    setup.minor = clfftVersionMinor;
    setup.patch = clfftVersionPatch;
    st = fft_check(p->err, clfftSetup(&setup), "setup");
  }
  if (st == CLS_OK) clfft_users++;
  pthread_mutex_unlock(&clfft_lock);
  if (st != CLS_OK) {
    free(p);
    return st;
  }
  p->device = d;
  p->f64 = d->info.fp64;
  p->real = p->f64 ? sizeof(double) : sizeof(float);
  p->chunk = fft_chunk(d->id, d->info.kind == CLS_DEVICE_CPU ? FFT_CHUNK_CPU : FFT_CHUNK_OTHER,
                       (size_t)t->fft_len * p->real, (size_t)t->n_bins * 2 * p->real);
  st = cls_device_kernel(e, d, "mfcc", p->f64 ? "mfcc_frame_window_f64" : "mfcc_frame_window", &p->frame_window);
  if (st == CLS_OK)
    st = cls_device_kernel(e, d, "mfcc", p->f64 ? "mfcc_filterbank_dct_f64" : "mfcc_filterbank_dct", &p->filterbank);
  if (st == CLS_OK) st = cls_kernel_compile_wg(e, d, p->filterbank, "mfcc_filterbank_dct", 64, &p->filterbank_local);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "mfcc", "mfcc_context_windows", &p->context);
  float *hann = malloc((size_t)t->window * sizeof(double)), *weight = malloc((size_t)t->n_bins * sizeof *weight);
  float *dct = malloc((size_t)t->cfg.n_coeff * t->cfg.n_channels * sizeof *dct);
  if (st == CLS_OK && (!hann || !weight || !dct)) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (st == CLS_OK) {
    for (int i = 0; i < t->window; i++) hann[i] = (float)t->hann[i];
    const void *hann_data = p->f64 ? (const void *)t->hann : (const void *)hann;
    for (int i = 0; i < t->n_bins; i++) weight[i] = (float)t->weight[i];
    for (int i = 0; i < t->cfg.n_coeff * t->cfg.n_channels; i++) dct[i] = (float)t->dct[i];
    cl_int err = CL_SUCCESS;
    p->hann = upload(p, hann_data, (size_t)t->window * p->real, &err);
    if (err == CL_SUCCESS) p->weight = upload(p, weight, (size_t)t->n_bins * sizeof *weight, &err);
    if (err == CL_SUCCESS) p->band = upload(p, t->band, (size_t)t->n_bins * sizeof *t->band, &err);
    if (err == CL_SUCCESS) p->dct = upload(p, dct, (size_t)t->cfg.n_coeff * t->cfg.n_channels * sizeof *dct, &err);
    st = cl_check(p->err, err, "uploading the tables");
  }
  free(hann);
  free(weight);
  free(dct);
  if (st != CLS_OK) {
    cls_mfcc_destroy(p);
    return st;
  }
  *out = p;
  return CLS_OK;
}

void cls_mfcc_destroy(cls_mfcc_plan *p) {
  if (!p) return;
  if (p->fft_baked) clfftDestroyPlan(&p->fft);
  cl_kernel ks[] = {p->frame_window, p->filterbank, p->context, p->aug_spectrogram, p->aug_features, p->filterbank_power};
  cls_augment_power_destroy(p->power);
  for (int i = 0; i < 6; i++)
    if (ks[i]) clReleaseKernel(ks[i]);
  cl_mem *ms[] = {&p->hann,        &p->band,     &p->weight,        &p->dct,            &p->samples,
                  &p->frame_start, &p->frames,   &p->spectrum,      &p->feats,          &p->tmp,
                  &p->frame_base,  &p->n_frames, &p->aug_frame_utt, &p->aug_frame_base, &p->aug_op_first,
                  &p->aug_ops,     &p->aug_utt};
  for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) release(ms[i]);
  free(p->aug_stage);
  pthread_mutex_lock(&clfft_lock);
  if (--clfft_users == 0) clfftTeardown();
  pthread_mutex_unlock(&clfft_lock);
  free(p);
}

/* Grows the frame buffers to at least `frames` frames (a multiple of the chunk), and bakes the FFT plan
 * for a chunk the first time (for the whole capacity, re-baked as it grows, when there is no chunk). */
static cls_status ensure_frames(cls_mfcc_plan *p, size_t frames) {
  if (frames <= p->frame_cap && p->fft_baked) return CLS_OK;
  size_t cap = p->frame_cap ? p->frame_cap : p->chunk ? p->chunk : 64;
  while (cap < frames) cap *= 2;
  cls_error *e = p->err;
  const cls_mfcc_tables *t = p->t;
  release(&p->frames);
  release(&p->spectrum);
  release(&p->feats);
  release(&p->frame_start);
  p->frame_cap = 0; /* until the new buffers are all there */
  cl_int err = CL_SUCCESS;
  p->frames = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE, cap * (size_t)t->fft_len * p->real, NULL, &err);
  if (err == CL_SUCCESS)
    p->spectrum = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE, cap * (size_t)t->n_bins * 2 * p->real, NULL, &err);
  if (err == CL_SUCCESS)
    p->feats = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE, cap * (size_t)t->cfg.n_coeff * sizeof(float), NULL, &err);
  if (err == CL_SUCCESS) p->frame_start = clCreateBuffer(p->ctx, CL_MEM_READ_ONLY, cap * sizeof(int), NULL, &err);
  cls_status st = cl_check(e, err, "allocating frame buffers");
  if (st != CLS_OK) return st;
  p->frame_cap = cap;
  if (p->fft_baked && p->chunk) return CLS_OK;
  if (p->fft_baked) {
    clfftDestroyPlan(&p->fft);
    p->fft_baked = 0;
    release(&p->tmp);
  }
  size_t len = (size_t)t->fft_len;
  st = fft_check(e, clfftCreateDefaultPlan(&p->fft, p->ctx, CLFFT_1D, &len), "plan");
  if (st != CLS_OK) return st;
  size_t in_stride = 1, out_stride = 1;
  st = fft_check(e, clfftSetPlanPrecision(p->fft, p->f64 ? CLFFT_DOUBLE : CLFFT_SINGLE), "precision");
  if (st == CLS_OK) st = fft_check(e, clfftSetLayout(p->fft, CLFFT_REAL, CLFFT_HERMITIAN_INTERLEAVED), "layout");
  if (st == CLS_OK) st = fft_check(e, clfftSetResultLocation(p->fft, CLFFT_OUTOFPLACE), "result location");
  if (st == CLS_OK) st = fft_check(e, clfftSetPlanBatchSize(p->fft, p->chunk ? p->chunk : cap), "batch size");
  if (st == CLS_OK) st = fft_check(e, clfftSetPlanInStride(p->fft, CLFFT_1D, &in_stride), "in stride");
  if (st == CLS_OK) st = fft_check(e, clfftSetPlanOutStride(p->fft, CLFFT_1D, &out_stride), "out stride");
  if (st == CLS_OK)
    st = fft_check(e, clfftSetPlanDistance(p->fft, (size_t)t->fft_len, (size_t)t->n_bins), "distance");
  if (st == CLS_OK) st = fft_check(e, clfftBakePlan(p->fft, 1, &p->bake_queue, NULL, NULL), "bake");
  size_t tmp_bytes = 0;
  if (st == CLS_OK) st = fft_check(e, clfftGetTmpBufSize(p->fft, &tmp_bytes), "temporary buffer size");
  if (st == CLS_OK && tmp_bytes > 0) {
    p->tmp = clCreateBuffer(p->ctx, CL_MEM_READ_WRITE, tmp_bytes, NULL, &err);
    st = cl_check(e, err, "allocating clFFT's temporary buffer");
  }
  if (st == CLS_OK) {
    p->fft_baked = 1;
  } else { /* the next call starts the plan over */
    clfftDestroyPlan(&p->fft);
    release(&p->tmp);
  }
  return st;
}

static cls_status ensure_samples(cls_mfcc_plan *p, size_t n, size_t batch) {
  cl_int err = CL_SUCCESS;
  if (n > p->sample_cap) {
    release(&p->samples);
    size_t cap = p->sample_cap ? p->sample_cap : 65536;
    while (cap < n) cap *= 2;
    p->samples = clCreateBuffer(p->ctx, CL_MEM_READ_ONLY, cap * sizeof(float), NULL, &err);
    if (err != CL_SUCCESS) return cl_check(p->err, err, "allocating the sample buffer");
    p->sample_cap = cap;
  }
  if (batch > p->batch_cap) {
    release(&p->frame_base);
    release(&p->n_frames);
    p->frame_base = clCreateBuffer(p->ctx, CL_MEM_READ_ONLY, batch * sizeof(int), NULL, &err);
    if (err == CL_SUCCESS) p->n_frames = clCreateBuffer(p->ctx, CL_MEM_READ_ONLY, batch * sizeof(int), NULL, &err);
    if (err != CL_SUCCESS) return cl_check(p->err, err, "allocating per-utterance tables");
    p->batch_cap = batch;
  }
  return CLS_OK;
}

/* The plan's transform of `in` to `out`, reported to a profiling recorder as mfcc_fft (the event of
   clFFT's last kernel of the transform). */
static cls_status enqueue_fft(cls_mfcc_plan *p, cl_command_queue q, cl_mem in, cl_mem out) {
  cl_event own;
  cl_event *ev = cls_ops_profile_event(q, NULL, &own);
  clfftStatus s = clfftEnqueueTransform(p->fft, CLFFT_FORWARD, 1, &q, 0, NULL, ev, &in, &out, p->tmp);
  cls_ops_profile_enqueued(q, "mfcc_fft", s == CLFFT_SUCCESS, NULL, own);
  return fft_check(p->err, s, "transform");
}

/* Frames [fft_len] of the uploaded samples, Hann-windowed (mfcc_frame_window), and their spectra
 * (clFFT, in chunks of p->chunk frames when the plan has them). */
static cls_status window_and_transform(cls_mfcc_plan *p, cl_command_queue q, size_t total_frames) {
  cls_error *e = p->err;
  const cls_mfcc_tables *t = p->t;
  int nfr = (int)total_frames;
  cls_kargs ka = cls_kargs_begin(e, p->frame_window, "mfcc_frame_window");
  cls_kargs_int(&ka, nfr);
  cls_kargs_int(&ka, t->window);
  cls_kargs_int(&ka, t->fft_len);
  cls_kargs_mem(&ka, p->samples);
  cls_kargs_mem(&ka, p->frame_start);
  cls_kargs_mem(&ka, p->hann);
  cls_kargs_mem(&ka, p->frames);
  cls_status st = cls_kargs_end(&ka);
  /* Frames up to the last chunk's end (the capacity without chunks): those past the batch's are zero.
     A batch of no frames frames and transforms nothing. */
  const size_t chunk = p->chunk ? p->chunk : p->frame_cap;
  const size_t n_chunks = (total_frames + chunk - 1) / chunk;
  size_t g2[2] = {MFCC_COPY_LANES, n_chunks * chunk}, l2[2] = {MFCC_COPY_LANES, 1}; /* a work-group per frame */
  if (st == CLS_OK && n_chunks) st = cls_ops_launch_to(e, q, p->frame_window, "mfcc_frame_window", 2, g2, l2, NULL);
  if (st == CLS_OK && n_chunks && !p->chunk)
    st = enqueue_fft(p, q, p->frames, p->spectrum);
  cl_int err = CL_SUCCESS;
  for (size_t c = 0; st == CLS_OK && p->chunk && c < n_chunks; c++) {
    const size_t fb = chunk * (size_t)t->fft_len * p->real, sb = chunk * (size_t)t->n_bins * 2 * p->real;
    cl_buffer_region in = {c * fb, fb}, out = {c * sb, sb};
    cl_mem sub[2] = {NULL, NULL};
    sub[0] = clCreateSubBuffer(p->frames, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &in, &err);
    if (err == CL_SUCCESS) sub[1] = clCreateSubBuffer(p->spectrum, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &out, &err);
    st = cl_check(e, err, "making a chunk's sub-buffers");
    if (st == CLS_OK) st = enqueue_fft(p, q, sub[0], sub[1]);
    /* Released here, freed once the transform that uses them is done (OpenCL keeps them until then). */
    for (int i = 0; i < 2; i++)
      if (sub[i]) clReleaseMemObject(sub[i]);
  }
  return st;
}

/* Each frame's context window of 2 n_context + 1 frames' features into `windows`
 * [max_frames, batch, ...] (mfcc_context_windows). */
static cls_status enqueue_context_windows(cls_mfcc_plan *p, cl_command_queue q, int batch, int max_frames,
                                          int n_context, cls_buf windows) {
  cls_error *e = p->err;
  const cls_mfcc_tables *t = p->t;
  int wo = (int)windows.offset;
  cls_kargs ka = cls_kargs_begin(e, p->context, "mfcc_context_windows");
  cls_kargs_int(&ka, max_frames);
  cls_kargs_int(&ka, batch);
  cls_kargs_int(&ka, n_context);
  cls_kargs_int(&ka, t->cfg.n_coeff);
  cls_kargs_mem(&ka, p->feats);
  cls_kargs_mem(&ka, p->frame_base);
  cls_kargs_mem(&ka, p->n_frames);
  cls_kargs_mem(&ka, windows.mem);
  cls_kargs_int(&ka, wo);
  cls_status st = cls_kargs_end(&ka);
  /* a work-group of MFCC_COPY_LANES work-items per window row (kernels/mfcc.cl) */
  size_t gw[2] = {MFCC_COPY_LANES, (size_t)max_frames * (size_t)batch}, lw[2] = {MFCC_COPY_LANES, 1};
  if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->context, "mfcc_context_windows", 2, gw, lw, NULL);
  return st;
}

/* The features of n_frames frames (mfcc_filterbank_dct) from the spectrum, or (power set) from --augment's
 * power spectrogram (mfcc_filterbank_dct_power). */
static cls_status enqueue_filterbank(cls_mfcc_plan *p, cl_command_queue q, cl_mem power, int n_frames) {
  const cls_mfcc_tables *t = p->t;
  cl_kernel k = power ? p->filterbank_power : p->filterbank;
  const char *name = power ? "mfcc_filterbank_dct_power" : "mfcc_filterbank_dct";
  cls_kargs ka = cls_kargs_begin(p->err, k, name);
  cls_kargs_int(&ka, n_frames);
  cls_kargs_int(&ka, t->n_bins);
  cls_kargs_int(&ka, t->start);
  cls_kargs_int(&ka, t->end);
  cls_kargs_int(&ka, t->cfg.n_channels);
  cls_kargs_int(&ka, t->cfg.n_coeff);
  cls_kargs_mem(&ka, power ? power : p->spectrum);
  cls_kargs_mem(&ka, p->band);
  cls_kargs_mem(&ka, p->weight);
  cls_kargs_mem(&ka, p->dct);
  cls_kargs_mem(&ka, p->feats);
  cls_status st = cls_kargs_end(&ka);
  size_t g1 = (size_t)n_frames, l1 = p->filterbank_local;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, k, name, 1, &g1, &l1, NULL);
  return st;
}

/* ---- --augment ---- */

cls_status cls_mfcc_enable_augment(cls_mfcc_plan *p) {
  if (p->aug_features) return CLS_OK;
  cls_status st = cls_device_kernel(p->engine, p->device, "augment",
                                    p->f64 ? "augment_spectrogram_f64" : "augment_spectrogram", &p->aug_spectrogram);
  if (st == CLS_OK)
    st = cls_device_kernel(p->engine, p->device, "mfcc", "mfcc_filterbank_dct_power", &p->filterbank_power);
  if (st == CLS_OK) st = cls_augment_power_create(p->engine, p->device, p->f64, &p->power);
  if (st == CLS_OK) st = cls_device_kernel(p->engine, p->device, "augment", "augment_features", &p->aug_features);
  return st;
}

/* A read-only buffer of at least `need` bytes in *m (capacity *cap bytes), grown by doubling. */
static cls_status ensure_buffer(cls_mfcc_plan *p, cl_mem *m, size_t *cap, size_t need) {
  return cl_check(p->err, cls_ops_grow_buffer(p->ctx, CL_MEM_READ_ONLY, m, cap, need), "allocating augmentation tables");
}

/* The batch's augmentation tables (kernels/augment.cl): each frame's utterance, the utterances' first
 * frames, their operations (rebased to the batch's first) and their indices in the epoch. */
static cls_status upload_augment_tables(cls_mfcc_plan *p, cl_command_queue q, int batch, const cls_augment_batch *aug,
                                        const int *base, const int *nf, size_t total_frames) {
  const int first_op = aug->op_first[0], n_ops = aug->op_first[batch] - first_op;
  /* Staged in the plan: the writes do not block, and the compute's clFinish ends them. */
  const size_t stage = total_frames + (size_t)batch + 1;
  if (stage > p->aug_stage_cap) {
    free(p->aug_stage);
    p->aug_stage = malloc(stage * sizeof *p->aug_stage);
    p->aug_stage_cap = p->aug_stage ? stage : 0;
  }
  int *frame_utt = p->aug_stage, *op_first = p->aug_stage ? p->aug_stage + total_frames : NULL;
  cls_status st = frame_utt ? CLS_OK : cls_error_set(p->err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int b = 0; st == CLS_OK && b < batch; b++)
    for (int f = 0; f < nf[b]; f++) frame_utt[base[b] + f] = b;
  for (int b = 0; st == CLS_OK && b <= batch; b++) op_first[b] = aug->op_first[b] - first_op;
  const size_t ib = sizeof(int), per_batch = (size_t)(batch + 1) * ib;
  size_t batch_cap = p->aug_batch_cap;
  if (st == CLS_OK) st = ensure_buffer(p, &p->aug_frame_utt, &p->aug_frame_cap, (total_frames ? total_frames : 1) * ib);
  if (st == CLS_OK) st = ensure_buffer(p, &p->aug_frame_base, &batch_cap, per_batch);
  if (st == CLS_OK) st = ensure_buffer(p, &p->aug_op_first, &p->aug_batch_cap, per_batch);
  batch_cap = p->aug_batch_cap;
  if (st == CLS_OK) st = ensure_buffer(p, &p->aug_utt, &batch_cap, per_batch);
  if (st == CLS_OK) st = ensure_buffer(p, &p->aug_ops, &p->aug_ops_cap, (size_t)n_ops * sizeof(cls_augment_op));
  cl_int err = CL_SUCCESS;
  if (st == CLS_OK && total_frames)
    err = clEnqueueWriteBuffer(q, p->aug_frame_utt, CL_FALSE, 0, total_frames * ib, frame_utt, 0, NULL, NULL);
  if (st == CLS_OK && err == CL_SUCCESS)
    err = clEnqueueWriteBuffer(q, p->aug_frame_base, CL_FALSE, 0, (size_t)batch * ib, base, 0, NULL, NULL);
  if (st == CLS_OK && err == CL_SUCCESS)
    err = clEnqueueWriteBuffer(q, p->aug_op_first, CL_FALSE, 0, per_batch, op_first, 0, NULL, NULL);
  if (st == CLS_OK && err == CL_SUCCESS)
    err = clEnqueueWriteBuffer(q, p->aug_utt, CL_FALSE, 0, (size_t)batch * sizeof(uint32_t), aug->utterance, 0, NULL, NULL);
  if (st == CLS_OK && err == CL_SUCCESS)
    err = clEnqueueWriteBuffer(q, p->aug_ops, CL_FALSE, 0, (size_t)n_ops * sizeof(cls_augment_op), aug->ops + first_op, 0,
                               NULL, NULL);
  if (st == CLS_OK) st = cl_check(p->err, err, "uploading augmentation tables");
  return st;
}

/* augment_spectrogram over the spectrum (features = 0), or augment_features over the features. */
static cls_status enqueue_augment(cls_mfcc_plan *p, cl_command_queue q, cl_kernel k, const cls_augment_batch *aug,
                                  int n_frames, int features) {
  const cls_mfcc_tables *t = p->t;
  const char *name = features ? "augment_features" : "augment_spectrogram";
  const int width = features ? t->cfg.n_coeff : t->n_bins;
  cls_kargs ka = cls_kargs_begin(p->err, k, name);
  cls_kargs_int(&ka, n_frames);
  cls_kargs_int(&ka, width);
  cls_kargs_mem(&ka, features ? p->feats : p->spectrum);
  cls_kargs_mem(&ka, p->aug_frame_utt);
  cls_kargs_mem(&ka, p->aug_frame_base);
  cls_kargs_mem(&ka, p->aug_op_first);
  cls_kargs_mem(&ka, p->aug_ops);
  cls_kargs_mem(&ka, p->aug_utt);
  cls_kargs_uint(&ka, (cl_uint)aug->seed);
  cls_kargs_uint(&ka, (cl_uint)aug->epoch);
  cls_status st = cls_kargs_end(&ka);
  /* a work-item per 4 values of a frame; the driver picks the work-group */
  size_t g[2] = {((size_t)width + 3) / 4, (size_t)n_frames};
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, k, name, 2, g, NULL, NULL);
  return st;
}

cls_status cls_mfcc_compute(cls_mfcc_plan *p, cl_command_queue q, int batch, const float *const *samples,
                            const size_t *n_samples, int n_context, cls_buf windows, int *time, int *frames,
                            float *features) {
  return cls_mfcc_compute_augmented(p, q, batch, samples, n_samples, NULL, n_context, windows, time, frames, features);
}

cls_status cls_mfcc_compute_augmented(cls_mfcc_plan *p, cl_command_queue q, int batch, const float *const *samples,
                                      const size_t *n_samples, const cls_augment_batch *aug, int n_context,
                                      cls_buf windows, int *time, int *frames, float *features) {
  cls_error *e = p->err;
  if (aug && !p->aug_features)
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "mfcc: an augmented batch on a plan without --augment's kernels");
  const cls_mfcc_tables *t = p->t;
  if (batch <= 0) return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "mfcc: empty batch");
  size_t total_samples = 0, total_frames = 0;
  /* base, nf: each utterance's first frame and frames from its samples; obase, onf: after --augment's
     resizes (the same arrays when the batch has none) */
  int *base = malloc((size_t)batch * 4 * sizeof *base);
  if (!base) return cls_error_set(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  int *nf = base + batch, *obase = base, *onf = nf;
  for (int b = 0; b < batch; b++) {
    size_t f = cls_mfcc_frames(t, n_samples[b]);
    base[b] = (int)total_frames;
    nf[b] = (int)f;
    total_frames += f;
    total_samples += n_samples[b];
  }
  /* The power path (augment/power.h) when the batch resizes, adds to or multiplies the spectrogram. */
  const int n_power = aug && cls_augment_power_needed(aug, batch);
  size_t out_frames = total_frames;
  if (n_power) {
    obase = base + 2 * batch;
    onf = base + 3 * batch;
    cls_augment_power_frames(aug, batch, nf, onf);
    out_frames = 0;
    for (int b = 0; b < batch; b++) {
      obase[b] = (int)out_frames;
      out_frames += (size_t)onf[b];
    }
  }
  int max_frames = 0;
  for (int b = 0; b < batch; b++) {
    if (frames) frames[b] = onf[b];
    if (onf[b] > max_frames) max_frames = onf[b];
  }
  if (time) *time = max_frames;
  cls_status st = ensure_samples(p, total_samples ? total_samples : 1, (size_t)batch);
  const size_t most = total_frames > out_frames ? total_frames : out_frames;
  if (st == CLS_OK) st = ensure_frames(p, most ? most : 1);
  int *start = st == CLS_OK ? malloc((p->frame_cap) * sizeof *start) : NULL;
  if (st == CLS_OK && !start) st = cls_error_set(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cl_int err = CL_SUCCESS;
  size_t offset = 0;
  for (int b = 0; st == CLS_OK && b < batch; b++) {
    for (int f = 0; f < nf[b]; f++) start[base[b] + f] = (int)(offset + (size_t)f * (size_t)t->step);
    if (n_samples[b])
      err = clEnqueueWriteBuffer(q, p->samples, CL_FALSE, offset * sizeof(float), n_samples[b] * sizeof(float),
                                 samples[b], 0, NULL, NULL);
    if (err != CL_SUCCESS) st = cl_check(e, err, "uploading samples");
    offset += n_samples[b];
  }
  if (st == CLS_OK && total_frames)
    st = cl_check(e, clEnqueueWriteBuffer(q, p->frame_start, CL_FALSE, 0, total_frames * sizeof(int), start, 0, NULL, NULL),
                  "uploading frame offsets");
  if (st == CLS_OK)
    st = cl_check(e, clEnqueueWriteBuffer(q, p->frame_base, CL_FALSE, 0, (size_t)batch * sizeof(int), obase, 0, NULL, NULL),
                  "uploading frame bases");
  if (st == CLS_OK)
    st = cl_check(e, clEnqueueWriteBuffer(q, p->n_frames, CL_FALSE, 0, (size_t)batch * sizeof(int), onf, 0, NULL, NULL),
                  "uploading frame counts");
  const int nfr = (int)out_frames;
  /* Each domain's kernel runs when the batch has an operation of that domain. */
  int n_spectrogram = 0, n_features = 0;
  if (st == CLS_OK && aug && batch > 0) {
    for (int i = aug->op_first[0]; i < aug->op_first[batch]; i++) {
      n_spectrogram += aug->ops[i].domain == CLS_AUGOP_SPECTROGRAM;
      n_features += aug->ops[i].domain == CLS_AUGOP_FEATURES;
    }
    if (n_spectrogram + n_features > 0) st = upload_augment_tables(p, q, batch, aug, obase, onf, out_frames);
  }
  if (st == CLS_OK) st = window_and_transform(p, q, total_frames);
  if (st == CLS_OK && !n_power && n_spectrogram > 0 && total_frames)
    st = enqueue_augment(p, q, p->aug_spectrogram, aug, nfr, 0);
  cl_mem power = NULL;
  if (st == CLS_OK && n_power) {
    const cls_augment_power_batch pb = {batch, t->n_bins, p->spectrum, base, nf, obase, onf, out_frames,
                                        p->aug_op_first, p->aug_ops, p->aug_utt};
    st = cls_augment_power_run(p->power, e, q, aug, &pb, &power);
  }
  if (st == CLS_OK) st = enqueue_filterbank(p, q, power, nfr);
  if (st == CLS_OK && n_features > 0 && out_frames) st = enqueue_augment(p, q, p->aug_features, aug, nfr, 1);
  if (st == CLS_OK && windows.mem && max_frames > 0)
    st = enqueue_context_windows(p, q, batch, max_frames, n_context, windows);
  if (st == CLS_OK && features && out_frames)
    st = cl_check(e, clEnqueueReadBuffer(q, p->feats, CL_TRUE, 0, out_frames * (size_t)t->cfg.n_coeff * sizeof(float),
                                         features, 0, NULL, NULL),
                  "reading features");
  /* The host arrays passed to non-blocking writes must outlive them, on error paths too. */
  cl_int finished = clFinish(q);
  if (st == CLS_OK) st = cl_check(e, finished, "clFinish");
  free(start);
  free(base);
  return st;
}

cls_status cls_mfcc_compute_host(cls_mfcc_plan *p, int batch, const float *const *samples, const size_t *n_samples,
                                 int *frames, float *features) {
  cls_buf none = {NULL, 0};
  return cls_mfcc_compute(p, p->bake_queue, batch, samples, n_samples, 0, none, NULL, frames, features);
}

size_t cls_mfcc_fft_chunk(const cls_mfcc_plan *p) { return p->chunk; }

void cls_mfcc_set_fft_chunk(cls_mfcc_plan *p, size_t chunk) {
  if (!p->fft_baked && !p->frame_cap) p->chunk = chunk;
}

void cls_mfcc_set_error(cls_mfcc_plan *p, cls_error *err) { p->err = err; }
