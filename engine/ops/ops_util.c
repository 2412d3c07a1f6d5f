/* Shared plumbing of the op plans (see ops_util.h), and the per-queue profiling hook. */
#include "ops/ops_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "device/log.h"

cls_status cls_ops_device(cls_engine *e, int index, cls_device **out) {
  *out = NULL;
  if (!e) return CLS_ERR_INVALID_ARGUMENT;
  if (index < 0 || index >= e->n_devices) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "no device with index %d", index);
  cls_status st = cls_engine_build_device(e, index, NULL, 0, NULL);
  if (st == CLS_OK) *out = &e->devices[index];
  return st;
}

cls_status cls_engine_device_cl(cls_engine *e, int index, cl_context *context, cl_device_id *device,
                                cl_command_queue *queue) {
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, index, &d);
  if (st != CLS_OK) return st;
  if (context) *context = d->context;
  if (device) *device = d->id;
  if (queue) *queue = d->queue;
  return CLS_OK;
}

cls_status cls_engine_device_context(cls_engine *e, int index, cl_context *context, cl_device_id *device) {
  return cls_engine_device_cl(e, index, context, device, NULL);
}

/* ---- profiling hook ---- */

typedef struct profile_slot {
  cl_command_queue q;
  cls_ops_profile_fn fn;
  void *user;
  cls_ops_profile_cmd gemm; /* the GEMM being enqueued (gemm.gemm_call 0: none) */
  int gemm_calls;
} profile_slot;

static profile_slot profile_slots[CLS_OPS_PROFILE_QUEUES];
static atomic_int profile_attached; /* slots in use: 0 keeps every launch off the lock */
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;

static profile_slot *profile_find(cl_command_queue q) {
  for (int i = 0; i < CLS_OPS_PROFILE_QUEUES; i++)
    if (profile_slots[i].q == q) return &profile_slots[i];
  return NULL;
}

static bool profile_off(cl_command_queue q) {
  return atomic_load_explicit(&profile_attached, memory_order_acquire) == 0 || !q;
}

cls_status cls_ops_profile_attach(cl_command_queue q, cls_ops_profile_fn fn, void *user) {
  if (!q || !fn) return CLS_ERR_INVALID_ARGUMENT;
  pthread_mutex_lock(&profile_lock);
  profile_slot *s = profile_find(q);
  if (!s && (s = profile_find(NULL))) atomic_fetch_add(&profile_attached, 1);
  if (s) {
    memset(s, 0, sizeof *s);
    s->q = q;
    s->fn = fn;
    s->user = user;
  }
  pthread_mutex_unlock(&profile_lock);
  return s ? CLS_OK : CLS_ERR_INVALID_ARGUMENT;
}

void cls_ops_profile_detach(cl_command_queue q) {
  if (!q) return;
  pthread_mutex_lock(&profile_lock);
  profile_slot *s = profile_find(q);
  if (s) {
    memset(s, 0, sizeof *s);
    atomic_fetch_sub(&profile_attached, 1);
  }
  pthread_mutex_unlock(&profile_lock);
}

bool cls_ops_profiling(cl_command_queue q) {
  if (profile_off(q)) return false;
  pthread_mutex_lock(&profile_lock);
  bool on = profile_find(q) != NULL;
  pthread_mutex_unlock(&profile_lock);
  return on;
}

void cls_ops_profile_note(cl_command_queue q, const cls_ops_profile_cmd *cmd, cl_event event) {
  if (profile_off(q) || !event) return;
  pthread_mutex_lock(&profile_lock);
  profile_slot *s = profile_find(q);
  if (s) {
    cls_ops_profile_cmd c = *cmd;
    if (s->gemm.gemm_call) {
      c.m = s->gemm.m;
      c.n = s->gemm.n;
      c.k = s->gemm.k;
      c.trans_a = s->gemm.trans_a;
      c.trans_b = s->gemm.trans_b;
      c.gemm_call = s->gemm.gemm_call;
    }
    s->fn(s->user, &c, event);
  }
  pthread_mutex_unlock(&profile_lock);
}

void cls_ops_profile_gemm_begin(cl_command_queue q, size_t m, size_t n, size_t k, bool trans_a, bool trans_b) {
  if (profile_off(q)) return;
  pthread_mutex_lock(&profile_lock);
  profile_slot *s = profile_find(q);
  if (s) {
    cls_ops_profile_cmd g = {"gemm", (int)m, (int)n, (int)k, trans_a, trans_b, ++s->gemm_calls};
    s->gemm = g;
  }
  pthread_mutex_unlock(&profile_lock);
}

void cls_ops_profile_gemm_end(cl_command_queue q) {
  if (profile_off(q)) return;
  pthread_mutex_lock(&profile_lock);
  profile_slot *s = profile_find(q);
  if (s) memset(&s->gemm, 0, sizeof s->gemm);
  pthread_mutex_unlock(&profile_lock);
}

cl_event *cls_ops_profile_event(cl_command_queue q, cl_event *event, cl_event *own) {
  *own = NULL;
  return event ? event : cls_ops_profiling(q) ? own : NULL;
}

void cls_ops_profile_enqueued(cl_command_queue q, const char *name, bool ok, const cl_event *event, cl_event own) {
  if (ok && (event || own)) {
    cls_ops_profile_cmd c = {name, 0, 0, 0, 0, 0, 0};
    cls_ops_profile_note(q, &c, event ? *event : own);
  }
  if (own) clReleaseEvent(own);
}

/* ---- launches ---- */

cl_int cls_ops_grow_buffer(cl_context context, cl_mem_flags flags, cl_mem *m, size_t *cap, size_t need) {
  if (*m && need <= *cap) return CL_SUCCESS;
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
  size_t c = *cap ? *cap : 256;
  while (c < need) c *= 2;
  cl_int err = CL_SUCCESS;
  *m = clCreateBuffer(context, flags, c, NULL, &err);
  if (err != CL_SUCCESS) *m = NULL;
  *cap = err == CL_SUCCESS ? c : 0;
  return err;
}

cls_status cls_ops_launch_to(cls_error *to, cl_command_queue queue, cl_kernel kernel, const char *name, int dims,
                             const size_t *global, const size_t *local, cl_event *event) {
  size_t rounded[3];
  for (int i = 0; i < dims; i++) {
    size_t l = local && local[i] ? local[i] : 1;
    rounded[i] = (global[i] + l - 1) / l * l;
    if (rounded[i] == 0) return CLS_OK; /* nothing to do */
  }
  cl_event own;
  cl_int err = clEnqueueNDRangeKernel(queue, kernel, (cl_uint)dims, NULL, rounded, local, 0, NULL,
                                      cls_ops_profile_event(queue, event, &own));
  cls_ops_profile_enqueued(queue, name, err == CL_SUCCESS, event, own);
  if (err != CL_SUCCESS)
    return cls_error_set(to, CLS_ERR_OPENCL, "%s: clEnqueueNDRangeKernel failed: %s", name, cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_ops_fill_to(cls_error *to, cl_command_queue queue, cls_buf buf, size_t n, float value) {
  if (n == 0) return CLS_OK;
  cl_event own;
  cl_int err = clEnqueueFillBuffer(queue, buf.mem, &value, sizeof value, buf.offset * sizeof(float), n * sizeof(float), 0,
                                   NULL, cls_ops_profile_event(queue, NULL, &own));
  cls_ops_profile_enqueued(queue, "fill", err == CL_SUCCESS, NULL, own);
  if (err != CL_SUCCESS)
    return cls_error_set(to, CLS_ERR_OPENCL, "clEnqueueFillBuffer failed: %s", cls_cl_error_name(err));
  return CLS_OK;
}

cls_status cls_ops_cl_check(cls_engine *e, int index, cl_int err, const char *what) {
  return cls_ops_cl_check_to(e, cls_engine_errors(e), index, err, what);
}

cls_status cls_ops_cl_check_to(const cls_engine *e, cls_error *to, int index, cl_int err, const char *what) {
  if (err == CL_SUCCESS) return CLS_OK;
  const cls_device_info *d = cls_engine_device(e, index);
  return cls_error_set(
      to,
      err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ? CLS_ERR_DEVICE_OUT_OF_MEMORY
                                                                             : CLS_ERR_OPENCL,
      "device %d:%d (%s): %s failed: %s", d ? d->platform_index : -1, d ? d->device_index : -1, d ? d->name : "?", what,
      cls_cl_error_name(err));
}

cl_mem cls_ops_buffer(cls_engine *e, int index, cl_context context, size_t bytes, size_t *total, cls_status *st) {
  return cls_ops_buffer_to(e, cls_engine_errors(e), index, context, bytes, total, st);
}

cl_mem cls_ops_buffer_to(const cls_engine *e, cls_error *to, int index, cl_context context, size_t bytes, size_t *total,
                         cls_status *st) {
  if (*st != CLS_OK) return NULL;
  cl_int err = CL_SUCCESS;
  cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes ? bytes : 4, NULL, &err);
  *st = cls_ops_cl_check_to(e, to, index, m ? CL_SUCCESS : err, "allocating device memory");
  *total += bytes;
  return m;
}
