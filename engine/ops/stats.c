/* The statistics op plan (see stats.h): owns the summary_stats kernel of one device, TF's bucket
 * limits as floats in a constant buffer, and the result slots (per slot: the shift, the work-groups'
 * partial moments, then the bucket counts), which the host finishes in double. */
#include "ops/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"

enum { MAX_GROUPS = 64 }; /* work-groups per tensor: partial moments read back per slot */

/* A slot's words: the shift, MAX_GROUPS x 4 partial moments (floats), then the bucket counts (uint). */
#define PARTIALS ((size_t)1 + (size_t)MAX_GROUPS * 4)
#define SLOT_WORDS (PARTIALS + CLS_HISTO_BUCKETS)

struct cls_stats_plan {
  cls_engine *e;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int device;
  cl_kernel kernel;
  size_t wg;
  int slots;
  cl_mem limits, results;   /* [CLS_HISTO_BUCKETS] floats; [slots * SLOT_WORDS] words */
  float *host;              /* [slots * SLOT_WORDS] the read-back */
  int *slot_groups;         /* [slots] work-groups of each slot's last launch */
  int64_t *slot_n;          /* [slots] its tensor's size */
};

cls_status cls_stats_create(cls_engine *e, int device, int slots, cls_stats_plan **out) {
  *out = NULL;
  if (slots < 1) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "stats: %d slots (at least 1)", slots);
  cls_device *d = NULL;
  cl_context ctx = NULL;
  cl_device_id id = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st == CLS_OK) st = cls_engine_device_cl(e, device, &ctx, &id, NULL);
  if (st != CLS_OK) return st;
  cls_stats_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->e = e;
  p->err = cls_engine_errors(e);
  p->device = device;
  p->slots = slots;
  p->host = malloc((size_t)slots * SLOT_WORDS * sizeof(float));
  p->slot_groups = calloc((size_t)slots, sizeof *p->slot_groups);
  p->slot_n = calloc((size_t)slots, sizeof *p->slot_n);
  if (!p->host || !p->slot_groups || !p->slot_n) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  if (st == CLS_OK) st = cls_device_kernel(e, d, "summary", "summary_stats", &p->kernel);
  size_t wg[3] = {0, 0, 0}, max_wg = 0;
  if (st == CLS_OK) {
    cl_int err = clGetKernelWorkGroupInfo(p->kernel, id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
    if (err == CL_SUCCESS)
      err = clGetKernelWorkGroupInfo(p->kernel, id, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL);
    st = cls_ops_cl_check(e, device, err, "clGetKernelWorkGroupInfo(summary_stats)");
  }
  if (st == CLS_OK) {
    p->wg = wg[0] ? wg[0] : 64;
    if (max_wg < p->wg)
      st = cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "stats: device %d runs the statistics kernel with work-groups of at most %zu items, but it was "
                    "built for %zu (CLS_WG_1D); lower CLS_WG_1D for this device through CLSPEECH_KERNEL_OPTIONS",
                    device, max_wg, p->wg);
  }
  size_t bytes = 0;
  p->limits = cls_ops_buffer(e, device, ctx, CLS_HISTO_BUCKETS * sizeof(float), &bytes, &st);
  p->results = cls_ops_buffer(e, device, ctx, (size_t)slots * SLOT_WORDS * sizeof(float), &bytes, &st);
  if (st == CLS_OK) {
    /* A blocking write through a queue of the plan's own, so that the limits are there before any use. */
    cl_int err = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(ctx, id, 0, &err);
    st = cls_ops_cl_check(e, device, q ? CL_SUCCESS : err, "creating a queue for the statistics' limits");
    if (st == CLS_OK)
      st = cls_ops_cl_check(e, device,
                            clEnqueueWriteBuffer(q, p->limits, CL_TRUE, 0, CLS_HISTO_BUCKETS * sizeof(float),
                                                 cls_histo_limits_float(), 0, NULL, NULL),
                            "uploading the histogram limits");
    if (q) clReleaseCommandQueue(q);
  }
  if (st != CLS_OK) {
    cls_stats_destroy(p);
    return st;
  }
  *out = p;
  return CLS_OK;
}

void cls_stats_destroy(cls_stats_plan *p) {
  if (!p) return;
  if (p->kernel) clReleaseKernel(p->kernel);
  if (p->limits) clReleaseMemObject(p->limits);
  if (p->results) clReleaseMemObject(p->results);
  free(p->host);
  free(p->slot_groups);
  free(p->slot_n);
  free(p);
}

cls_status cls_stats_enqueue(cls_stats_plan *p, cl_command_queue q, int slot, cls_buf x, size_t n) {
  if (slot < 0 || slot >= p->slots)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "stats: slot %d of %d", slot, p->slots);
  if (n < 1 || n > 0x7fffffff || x.offset > 0x7fffffff)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "stats: a tensor of %zu values at %zu (1 .. 2^31-1)", n,
                         x.offset);
  size_t groups = (n + p->wg - 1) / p->wg;
  if (groups > MAX_GROUPS) groups = MAX_GROUPS;
  const size_t base = (size_t)slot * SLOT_WORDS;
  int ni = (int)n, xo = (int)x.offset, po = (int)base, ho = (int)(base + PARTIALS);
  /* The counts are added to: zero them first (0.0f and 0u are the same bits). */
  cls_status st = cls_ops_fill_to(p->err, q, cls_buf_at(p->results, (size_t)ho), CLS_HISTO_BUCKETS, 0.0f);
  if (st == CLS_OK) {
    cls_kargs ka = cls_kargs_begin(p->err, p->kernel, "summary_stats");
    cls_kargs_int(&ka, ni);
    cls_kargs_mem(&ka, x.mem);
    cls_kargs_int(&ka, xo);
    cls_kargs_mem(&ka, p->limits);
    cls_kargs_mem(&ka, p->results);
    cls_kargs_int(&ka, po);
    cls_kargs_mem(&ka, p->results);
    cls_kargs_int(&ka, ho);
    st = cls_kargs_end(&ka);
  }
  size_t global = groups * p->wg;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->kernel, "summary_stats", 1, &global, &p->wg, NULL);
  if (st == CLS_OK) {
    p->slot_groups[slot] = (int)groups;
    p->slot_n[slot] = (int64_t)n;
  }
  return st;
}

cls_status cls_stats_read(cls_stats_plan *p, cl_command_queue q, int n_slots, cls_tensor_stats *out) {
  if (n_slots < 0 || n_slots > p->slots)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "stats: %d slots read of %d", n_slots, p->slots);
  if (n_slots == 0) return CLS_OK;
  cls_status st =
      cls_ops_cl_check_to(p->e, p->err, p->device,
                          clEnqueueReadBuffer(q, p->results, CL_TRUE, 0, (size_t)n_slots * SLOT_WORDS * sizeof(float),
                                              p->host, 0, NULL, NULL),
                          "reading the statistics");
  for (int s = 0; st == CLS_OK && s < n_slots; s++) {
    const float *w = p->host + (size_t)s * SLOT_WORDS;
    cls_tensor_stats *r = &out[s];
    r->n = p->slot_n[s];
    r->shift = (double)w[0];
    r->s1 = r->s2 = 0;
    r->min = INFINITY;
    r->max = -INFINITY;
    for (int g = 0; g < p->slot_groups[s]; g++) {
      const float *m = w + 1 + 4 * g;
      r->s1 += (double)m[0];
      r->s2 += (double)m[1];
      if ((double)m[2] < r->min) r->min = (double)m[2];
      if ((double)m[3] > r->max) r->max = (double)m[3];
    }
    memcpy(r->buckets, w + PARTIALS, sizeof r->buckets);
  }
  return st;
}

void cls_stats_set_error(cls_stats_plan *p, cls_error *err) { p->err = err; }
