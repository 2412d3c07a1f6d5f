/* Dense layer op plan (see clspeech/ops.h): the products through the GEMM plan (cls_gemm), kernels/dense.cl
 * for the fused activation, its backward and the bias gradient. */
#include "clspeech/ops.h"

#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "work_items.h"

/* Fixed work-group sizes (the grid is rounded up to them): a CPU driver compiles a kernel once per
 * work-group size, so a size the driver picks per launch would recompile for every new number of rows.
 * The column sums' groups are CLS_COLSUM_LOCAL (kernels/work_items.h). */
#define DENSE_LOCAL 64

struct cls_dense_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int in, out;
  cl_kernel bias_act, act_bwd, bias_grad;
  cls_gemm_plan *gemm;
  bool owns_gemm; /* made by create (not one given by cls_dense_set_gemm) */
};

cls_status cls_dense_create(cls_engine *e, int device, int in, int out, cls_dense_plan **plan) {
  *plan = NULL;
  if (in <= 0 || out <= 0) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "dense: bad shape %d -> %d", in, out);
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_dense_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->in = in;
  p->out = out;
  st = cls_gemm_create(e, device, &p->gemm);
  p->owns_gemm = p->gemm != NULL;
  if (st == CLS_OK) st = cls_device_kernel(e, d, "dense", "dense_bias_act", &p->bias_act);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "dense", "dense_act_bwd", &p->act_bwd);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "dense", "dense_bias_grad", &p->bias_grad);
  if (st != CLS_OK) {
    cls_dense_destroy(p);
    return st;
  }
  *plan = p;
  return CLS_OK;
}

cls_status cls_dense_set_gemm(cls_dense_plan *p, cls_gemm_plan *gemm) {
  if (!p || !gemm) return CLS_ERR_INVALID_ARGUMENT;
  if (p->owns_gemm) cls_gemm_destroy(p->gemm);
  p->gemm = gemm;
  p->owns_gemm = false;
  return CLS_OK;
}

size_t cls_dense_workspace_bytes(const cls_dense_plan *p, int rows) {
  return (size_t)(rows > 0 ? rows : 0) * (size_t)p->out * sizeof(float);
}

cls_status cls_dense_forward(cls_dense_plan *p, cl_command_queue q, int rows, cls_buf x, cls_buf w, cls_buf b, cls_buf y,
                             const cls_dense_act *act, cl_event *event) {
  cls_error *e = p->err;
  if (rows <= 0) return CLS_OK;
  if (act->relu && act->dropout_rate > 0 && act->batch <= 0)
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "dense: dropout needs the batch size (got %d)", act->batch);
  if (act->dropout_rate < 0 || act->dropout_rate >= 1)
    return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "dense: dropout rate %g is not in [0, 1)",
                         (double)act->dropout_rate);
  cls_status st = cls_gemm(p->gemm, q, false, false, (size_t)rows, (size_t)p->out, (size_t)p->in, 1.0f, x,
                           (size_t)p->in, w, (size_t)p->out, 0.0f, y, (size_t)p->out, NULL);
  if (st != CLS_OK) return st;
  int yo = (int)y.offset, bo = (int)b.offset, relu = act->relu, batch = act->batch > 0 ? act->batch : 1;
  float rate = act->relu ? act->dropout_rate : 0.0f, scale = 1.0f / (1.0f - rate);
  cls_kargs ka = cls_kargs_begin(e, p->bias_act, "dense_bias_act");
  cls_kargs_int(&ka, rows);
  cls_kargs_int(&ka, p->out);
  cls_kargs_mem(&ka, y.mem);
  cls_kargs_int(&ka, yo);
  cls_kargs_mem(&ka, b.mem);
  cls_kargs_int(&ka, bo);
  cls_kargs_int(&ka, relu);
  cls_kargs_float(&ka, act->relu_clip);
  cls_kargs_float(&ka, rate);
  cls_kargs_float(&ka, scale);
  cls_kargs_uint(&ka, act->seed);
  cls_kargs_uint(&ka, act->step);
  cls_kargs_uint(&ka, act->layer);
  cls_kargs_int(&ka, batch);
  cls_kargs_int(&ka, act->utterance_offset);
  st = cls_kargs_end(&ka);
  /* a work-item per run of 32 units of a row (kernels/dense.cl) */
  size_t global = ((size_t)p->out + CLS_DENSE_RUN - 1) / CLS_DENSE_RUN * (size_t)rows, local = DENSE_LOCAL;
  if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->bias_act, "dense_bias_act", 1, &global, &local, event);
  return st;
}

cls_status cls_dense_backward(cls_dense_plan *p, cl_command_queue q, int rows, cls_buf x, cls_buf w, cls_buf y,
                              cls_buf dy, cls_buf dx, cls_buf dw, cls_buf db, const cls_dense_act *act,
                              cls_write_mode mode, cls_buf workspace, cl_event *event) {
  cls_error *e = p->err;
  if (rows <= 0) return CLS_OK;
  float beta = mode == CLS_ACCUMULATE ? 1.0f : 0.0f;
  cls_buf dz = dy;
  cls_status st = CLS_OK;
  if (act->relu) {
    if (!workspace.mem)
      return cls_error_set(e, CLS_ERR_INVALID_ARGUMENT, "dense backward: the activation needs a workspace");
    dz = workspace;
    int n = rows * p->out, yo = (int)y.offset, dyo = (int)dy.offset, dzo = (int)dz.offset;
    float scale = 1.0f / (1.0f - act->dropout_rate);
    cls_kargs ka = cls_kargs_begin(e, p->act_bwd, "dense_act_bwd");
    cls_kargs_int(&ka, n);
    cls_kargs_mem(&ka, y.mem);
    cls_kargs_int(&ka, yo);
    cls_kargs_mem(&ka, dy.mem);
    cls_kargs_int(&ka, dyo);
    cls_kargs_mem(&ka, dz.mem);
    cls_kargs_int(&ka, dzo);
    cls_kargs_float(&ka, act->relu_clip);
    cls_kargs_float(&ka, scale);
    st = cls_kargs_end(&ka);
    size_t global = ((size_t)n + CLS_DENSE_RUN - 1) / CLS_DENSE_RUN, local = DENSE_LOCAL;
    if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->act_bwd, "dense_act_bwd", 1, &global, &local, NULL);
    if (st != CLS_OK) return st;
  }
  /* dW [in, out] = X^T [in, rows] · dZ [rows, out] */
  st = cls_gemm(p->gemm, q, true, false, (size_t)p->in, (size_t)p->out, (size_t)rows, 1.0f, x, (size_t)p->in, dz,
                (size_t)p->out, beta, dw, (size_t)p->out, NULL);
  if (st != CLS_OK) return st;
  int dzo = (int)dz.offset, dbo = (int)db.offset, acc = mode == CLS_ACCUMULATE;
  cls_kargs ka = cls_kargs_begin(e, p->bias_grad, "dense_bias_grad");
  cls_kargs_int(&ka, rows);
  cls_kargs_int(&ka, p->out);
  cls_kargs_mem(&ka, dz.mem);
  cls_kargs_int(&ka, dzo);
  cls_kargs_mem(&ka, db.mem);
  cls_kargs_int(&ka, dbo);
  cls_kargs_int(&ka, acc);
  st = cls_kargs_end(&ka);
  size_t global = ((size_t)p->out + CLS_COLSUM_W - 1) / CLS_COLSUM_W, local = CLS_COLSUM_LOCAL;
  cl_event *last = dx.mem ? NULL : event;
  if (st == CLS_OK) st = cls_ops_launch_to(e, q, p->bias_grad, "dense_bias_grad", 1, &global, &local, last);
  if (st != CLS_OK || !dx.mem) return st;
  /* dX [rows, in] = dZ [rows, out] · W^T [out, in] */
  return cls_gemm(p->gemm, q, false, true, (size_t)rows, (size_t)p->in, (size_t)p->out, 1.0f, dz, (size_t)p->out, w,
                  (size_t)p->out, beta, dx, (size_t)p->in, event);
}

void cls_dense_destroy(cls_dense_plan *p) {
  if (!p) return;
  if (p->bias_act) clReleaseKernel(p->bias_act);
  if (p->act_bwd) clReleaseKernel(p->act_bwd);
  if (p->bias_grad) clReleaseKernel(p->bias_grad);
  if (p->owns_gemm) cls_gemm_destroy(p->gemm);
  free(p);
}

/* A GEMM plan of its own reports there too (a shared one is its owner's to point). */
void cls_dense_set_error(cls_dense_plan *p, cls_error *err) {
  p->err = err;
  if (p->owns_gemm) cls_gemm_set_error(p->gemm, err);
}
