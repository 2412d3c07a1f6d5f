/* Adam op plan (see clspeech/ops.h): owns the adam_update kernel of one device and the host-side beta
 * powers arithmetic. */
#include "clspeech/ops.h"

#include <math.h>
#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "work_items.h"

struct cls_adam_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  cl_kernel update;
  size_t local;
};

cls_adam_state cls_adam_state_init(float beta1, float beta2) {
  cls_adam_state s = {beta1, beta2, 0};
  return s;
}

float cls_adam_alpha(const cls_adam_state *s, float lr) {
  return lr * sqrtf(1.0f - s->beta2_power) / (1.0f - s->beta1_power);
}

cls_status cls_adam_create(cls_engine *e, int device, cls_adam_plan **out) {
  *out = NULL;
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_adam_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  st = cls_device_kernel(e, d, "adam", "adam_update", &p->update);
  if (st != CLS_OK) {
    free(p);
    return st;
  }
  p->local = 64;
  *out = p;
  return CLS_OK;
}

cls_status cls_adam_update(cls_adam_plan *p, cl_command_queue q, size_t n, cls_buf param, cls_buf m, cls_buf v,
                           cls_buf grad, float lr, float beta1, float beta2, float epsilon, cls_adam_state *state,
                           cl_event *event) {
  if (n > 0x7fffffff) return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "adam: %zu parameters exceed 2^31-1", n);
  int ni = (int)n, po = (int)param.offset, mo = (int)m.offset, vo = (int)v.offset, go = (int)grad.offset;
  float alpha = cls_adam_alpha(state, lr);
  cls_kargs ka = cls_kargs_begin(p->err, p->update, "adam_update");
  cls_kargs_int(&ka, ni);
  cls_kargs_mem(&ka, param.mem);
  cls_kargs_int(&ka, po);
  cls_kargs_mem(&ka, m.mem);
  cls_kargs_int(&ka, mo);
  cls_kargs_mem(&ka, v.mem);
  cls_kargs_int(&ka, vo);
  cls_kargs_mem(&ka, grad.mem);
  cls_kargs_int(&ka, go);
  cls_kargs_float(&ka, alpha);
  cls_kargs_float(&ka, beta1);
  cls_kargs_float(&ka, beta2);
  cls_kargs_float(&ka, epsilon);
  cls_status st = cls_kargs_end(&ka);
  size_t items = (n + CLS_ADAM_PER_ITEM - 1) / CLS_ADAM_PER_ITEM; /* kernels/adam.cl */
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->update, "adam_update", 1, &items, &p->local, event);
  if (st == CLS_OK) {
    state->beta1_power *= beta1;
    state->beta2_power *= beta2;
    state->step++;
  }
  return st;
}

void cls_adam_destroy(cls_adam_plan *p) {
  if (!p) return;
  if (p->update) clReleaseKernel(p->update);
  free(p);
}

void cls_adam_set_error(cls_adam_plan *p, cls_error *err) { p->err = err; }
