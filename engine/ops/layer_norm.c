/* Layer normalisation op plan (see clspeech/ops.h): the three kernels of kernels/layer_norm.cl (forward,
 * the input gradient, the column sums of gamma's and beta's gradients, each with the optional dropout)
 * and their launches. */
#include "clspeech/ops.h"

#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "work_items.h"

/* Fixed work-group size of the row kernels (the grid is rounded up to it), as dense.c's: a CPU driver
 * compiles a kernel once per work-group size. The column sums' groups are CLS_COLSUM_LOCAL. */
#define LN_LOCAL 64

struct cls_layer_norm_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int hidden;
  cl_kernel fwd, bwd_dx, bwd_params;
};

cls_status cls_layer_norm_create(cls_engine *e, int device, int hidden, cls_layer_norm_plan **plan) {
  *plan = NULL;
  if (hidden <= 0) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "layer norm: bad feature count %d", hidden);
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_layer_norm_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->hidden = hidden;
  st = cls_device_kernel(e, d, "layer_norm", "layer_norm_fwd", &p->fwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "layer_norm", "layer_norm_bwd_dx", &p->bwd_dx);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "layer_norm", "layer_norm_bwd_params", &p->bwd_params);
  if (st != CLS_OK) {
    cls_layer_norm_destroy(p);
    return st;
  }
  *plan = p;
  return CLS_OK;
}

size_t cls_layer_norm_stats_floats(int rows) { return 2 * (size_t)(rows > 0 ? rows : 0); }

/* A view's offset as the kernels' int argument. */
static int off(cls_buf b) { return (int)b.offset; }

/* Dropout's kernel arguments (see LN_DROPOUT_ARGS in kernels/layer_norm.cl); rate 0 without. */
static void dropout_args(cls_kargs *ka, const cls_dense_act *d) {
  float rate = d ? d->dropout_rate : 0.0f, scale = 1.0f / (1.0f - rate);
  cls_kargs_float(ka, rate);
  cls_kargs_float(ka, scale);
  cls_kargs_uint(ka, d ? d->seed : 0u);
  cls_kargs_uint(ka, d ? d->step : 0u);
  cls_kargs_uint(ka, d ? d->layer : 0u);
  cls_kargs_int(ka, d && d->batch > 0 ? d->batch : 1);
  cls_kargs_int(ka, d ? d->utterance_offset : 0);
}

/* A dropout the kernels can draw: a rate in [0, 1), and the batch size when it drops anything. */
static cls_status check_dropout(cls_error *e, const char *call, const cls_dense_act *d) {
  if (!d) return CLS_OK;
  if (!(d->dropout_rate >= 0 && d->dropout_rate < 1))
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "%s: dropout rate %g is not in [0, 1)", call,
                         (double)d->dropout_rate);
  if (d->dropout_rate > 0 && d->batch <= 0)
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "%s: dropout needs the batch size (got %d)", call, d->batch);
  return CLS_OK;
}

/* CLS_OK when every buffer is given; else the failure naming the first missing one. */
static cls_status given(cls_error *e, const char *call, int n, const cls_buf *bufs, const char *const *names) {
  for (int i = 0; i < n; i++)
    if (!bufs[i].mem) return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "%s: no buffer given for %s", call, names[i]);
  return CLS_OK;
}

cls_status cls_layer_norm_forward(cls_layer_norm_plan *p, cl_command_queue q, int rows, cls_buf x, cls_buf gamma,
                                  cls_buf beta, cls_buf y, cls_buf stats, const cls_dense_act *dropout,
                                  cl_event *event) {
  cls_error *e = p->err;
  if (rows < 0) return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "layer norm: %d rows", rows);
  if (rows == 0) return CLS_OK;
  const cls_buf bufs[] = {x, gamma, beta, y, stats};
  const char *const names[] = {"x", "gamma", "beta", "y", "stats"};
  cls_status st = given(e, "layer norm", 5, bufs, names);
  if (st == CLS_OK) st = check_dropout(e, "layer norm", dropout);
  if (st != CLS_OK) return st;
  cls_kargs ka = cls_kargs_begin(e, p->fwd, "layer_norm_fwd");
  cls_kargs_int(&ka, rows);
  cls_kargs_int(&ka, p->hidden);
  cls_kargs_mem(&ka, x.mem);
  cls_kargs_int(&ka, off(x));
  cls_kargs_mem(&ka, y.mem);
  cls_kargs_int(&ka, off(y));
  cls_kargs_mem(&ka, gamma.mem);
  cls_kargs_int(&ka, off(gamma));
  cls_kargs_mem(&ka, beta.mem);
  cls_kargs_int(&ka, off(beta));
  cls_kargs_mem(&ka, stats.mem);
  cls_kargs_int(&ka, off(stats));
  cls_kargs_float(&ka, CLS_LAYER_NORM_EPSILON);
  dropout_args(&ka, dropout);
  st = cls_kargs_end(&ka);
  size_t global = (size_t)rows, local = LN_LOCAL;
  if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->fwd, "layer_norm_fwd", 1, &global, &local, event);
  return st;
}

cls_status cls_layer_norm_backward(cls_layer_norm_plan *p, cl_command_queue q, int rows, cls_buf x, cls_buf gamma,
                                   cls_buf stats, cls_buf dy, cls_buf dx, cls_buf dgamma, cls_buf dbeta,
                                   cls_write_mode mode, const cls_dense_act *dropout, cl_event *event) {
  cls_error *e = p->err;
  if (rows < 0) return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "layer norm backward: %d rows", rows);
  const cls_buf bufs[] = {x, gamma, stats, dy, dgamma, dbeta};
  const char *const names[] = {"x", "gamma", "stats", "dy", "dgamma", "dbeta"};
  cls_status st = given(e, "layer norm backward", 6, bufs, names);
  if (st == CLS_OK) st = check_dropout(e, "layer norm backward", dropout);
  if (st != CLS_OK) return st;
  if (dx.mem && dx.mem == x.mem && dx.offset == x.offset)
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "layer norm backward: dx must not be x");
  /* No rows: the sums over them are 0, which the kernel writes (or adds). */
  int acc = mode == CLS_ACCUMULATE;
  cls_kargs ka = cls_kargs_begin(e, p->bwd_params, "layer_norm_bwd_params");
  cls_kargs_int(&ka, rows);
  cls_kargs_int(&ka, p->hidden);
  cls_kargs_mem(&ka, x.mem);
  cls_kargs_int(&ka, off(x));
  cls_kargs_mem(&ka, dy.mem);
  cls_kargs_int(&ka, off(dy));
  cls_kargs_mem(&ka, stats.mem);
  cls_kargs_int(&ka, off(stats));
  cls_kargs_mem(&ka, dgamma.mem);
  cls_kargs_int(&ka, off(dgamma));
  cls_kargs_mem(&ka, dbeta.mem);
  cls_kargs_int(&ka, off(dbeta));
  cls_kargs_int(&ka, acc);
  dropout_args(&ka, dropout);
  st = cls_kargs_end(&ka);
  /* the parameter gradients first: they read dy, which dx may overwrite */
  size_t global = ((size_t)p->hidden + CLS_COLSUM_W - 1) / CLS_COLSUM_W, local = CLS_COLSUM_LOCAL;
  cl_event *last = dx.mem && rows > 0 ? NULL : event;
  if (st == CLS_OK)
    st = cls_ops_launch_to(e, q, p->bwd_params, "layer_norm_bwd_params", 1, &global, &local, last);
  if (st != CLS_OK || !dx.mem || rows == 0) return st;
  ka = cls_kargs_begin(e, p->bwd_dx, "layer_norm_bwd_dx");
  cls_kargs_int(&ka, rows);
  cls_kargs_int(&ka, p->hidden);
  cls_kargs_mem(&ka, x.mem);
  cls_kargs_int(&ka, off(x));
  cls_kargs_mem(&ka, dy.mem);
  cls_kargs_int(&ka, off(dy));
  cls_kargs_mem(&ka, dx.mem);
  cls_kargs_int(&ka, off(dx));
  cls_kargs_mem(&ka, gamma.mem);
  cls_kargs_int(&ka, off(gamma));
  cls_kargs_mem(&ka, stats.mem);
  cls_kargs_int(&ka, off(stats));
  dropout_args(&ka, dropout);
  st = cls_kargs_end(&ka);
  global = (size_t)rows;
  local = LN_LOCAL;
  if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->bwd_dx, "layer_norm_bwd_dx", 1, &global, &local, event);
  return st;
}

void cls_layer_norm_destroy(cls_layer_norm_plan *p) {
  if (!p) return;
  if (p->fwd) clReleaseKernel(p->fwd);
  if (p->bwd_dx) clReleaseKernel(p->bwd_dx);
  if (p->bwd_params) clReleaseKernel(p->bwd_params);
  free(p);
}

void cls_layer_norm_set_error(cls_layer_norm_plan *p, cls_error *err) { p->err = err; }
