/* The ops' profiling hook (engine/ops/ops_util.h), behind `clspeech bench`'s step profile: a recorder
 * attached to a queue sees every launch and fill on that queue with a usable profiling event, commands
 * inside cls_ops_profile_gemm_begin/_end carry the GEMM's shape and call number, other queues and a
 * detached queue report nothing, and the slots are limited. On every device. */
#include <pthread.h>

#include "check.h"
#include "device/device_select.h"
#include "device/log.h"
#include "ops/ops_util.h"
#include "ops_test.h"

#define MAX_CMDS 16

typedef struct rec {
  int n;
  cls_ops_profile_cmd cmd[MAX_CMDS];
  char names[MAX_CMDS][32];
  cl_event ev[MAX_CMDS];
  int bad_events;
} rec;

static void on_cmd(void *user, const cls_ops_profile_cmd *cmd, cl_event ev) {
  rec *r = user;
  if (r->n == MAX_CMDS) return;
  r->cmd[r->n] = *cmd;
  snprintf(r->names[r->n], sizeof r->names[0], "%s", cmd->name);
  r->cmd[r->n].name = r->names[r->n];
  clRetainEvent(ev);
  r->ev[r->n++] = ev;
}

/* Once the queue is finished: every kept event has its profiling times (END >= START); releases them. */
static void rec_events(rec *r) {
  for (int i = 0; i < r->n; i++) {
    cl_ulong t0 = 0, t1 = 0;
    cl_int err = clGetEventProfilingInfo(r->ev[i], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
    if (err == CL_SUCCESS) err = clGetEventProfilingInfo(r->ev[i], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
    if (err != CL_SUCCESS || t1 < t0) r->bad_events++;
    clReleaseEvent(r->ev[i]);
  }
}

static cl_command_queue profiling_queue(tst_env *env, int dev) {
  /* The public handles (context and device, no queue) are the device's own, as the op plans use them. */
  cl_context ctx = NULL, own_ctx = NULL;
  cl_device_id id = NULL, own_id = NULL;
  CHECK_INT(cls_engine_device_context(env->engine, dev, &ctx, &id), CLS_OK);
  CHECK_INT(cls_engine_device_cl(env->engine, dev, &own_ctx, &own_id, NULL), CLS_OK);
  CHECK(ctx == own_ctx && id == own_id && ctx != NULL, "cls_engine_device_context gave other handles than the device's");
  cl_int err = CL_SUCCESS;
  cl_command_queue q = clCreateCommandQueue(ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
  CHECK(q != NULL, "clCreateCommandQueue(profiling): %d", err);
  return q;
}

static void run_device(tst_env *env, int dev) {
  const size_t n = 1000;
  cls_engine *e = env->engine;
  cl_command_queue q = profiling_queue(env, dev), other = profiling_queue(env, dev);
  cl_mem p = tst_buffer(env, dev, NULL, n * 4), m = tst_buffer(env, dev, NULL, n * 4), v = tst_buffer(env, dev, NULL, n * 4),
         g = tst_buffer(env, dev, NULL, n * 4);
  cls_adam_plan *adam = NULL;
  CHECK(cls_adam_create(e, dev, &adam) == CLS_OK, "adam: %s", cls_engine_error(e));
  if (!q || !other || !adam) return;
  cls_adam_state state = cls_adam_state_init(0.9f, 0.999f);
#define ADAM(queue) \
  cls_adam_update(adam, queue, n, cls_buf_of(p), cls_buf_of(m), cls_buf_of(v), cls_buf_of(g), 1e-3f, 0.9f, 0.999f, 1e-8f, \
                  &state, NULL)
  rec r;
  memset(&r, 0, sizeof r);
  CHECK(!cls_ops_profiling(q), "a queue without a recorder is not profiled");
  CHECK(ADAM(q) == CLS_OK, "adam before attaching: %s", cls_engine_error(e));
  CHECK(cls_ops_profile_attach(q, on_cmd, &r) == CLS_OK, "attach");
  CHECK(cls_ops_profiling(q) && !cls_ops_profiling(other), "only the attached queue is profiled");
  CHECK(ADAM(q) == CLS_OK, "adam: %s", cls_engine_error(e));
  CHECK(cls_ops_fill_to(cls_engine_errors(e), q, cls_buf_of(g), n, 0.5f) == CLS_OK, "fill: %s", cls_engine_error(e));
  CHECK(ADAM(other) == CLS_OK, "adam on the other queue: %s", cls_engine_error(e));
  cls_ops_profile_gemm_begin(q, 16, 2048, 512, false, true);
  CHECK(ADAM(q) == CLS_OK, "adam inside a GEMM: %s", cls_engine_error(e));
  CHECK(cls_ops_fill_to(cls_engine_errors(e), q, cls_buf_of(g), n, 0.25f) == CLS_OK, "fill inside a GEMM: %s", cls_engine_error(e));
  cls_ops_profile_gemm_end(q);
  cls_ops_profile_gemm_begin(q, 5, 6, 7, true, false);
  cls_ops_profile_cmd lib = {.name = "gemm"};
  cl_event marker = NULL;
  clEnqueueMarkerWithWaitList(q, 0, NULL, &marker);
  cls_ops_profile_note(q, &lib, marker); /* as a library call's event is reported */
  cls_ops_profile_note(q, &lib, NULL);   /* no event: nothing */
  cls_ops_profile_gemm_end(q);
  if (marker) clReleaseEvent(marker);
  CHECK(ADAM(q) == CLS_OK, "adam after the GEMM: %s", cls_engine_error(e));
  cls_ops_profile_detach(q);
  CHECK(!cls_ops_profiling(q), "detached");
  CHECK(ADAM(q) == CLS_OK, "adam after detaching: %s", cls_engine_error(e));
  clFinish(q);
  clFinish(other);
  rec_events(&r);
  CHECK_INT(r.n, 6);
  CHECK_INT(r.bad_events, 0);
  static const char *names[] = {"adam_update", "fill", "adam_update", "fill", "gemm", "adam_update"};
  static const int calls[] = {0, 0, 1, 1, 2, 0}, ms[] = {0, 0, 16, 16, 5, 0};
  for (int i = 0; i < r.n && i < 6; i++) {
    CHECK(!strcmp(r.cmd[i].name, names[i]), "command %d: %s, expected %s", i, r.cmd[i].name, names[i]);
    CHECK(r.cmd[i].gemm_call == calls[i], "command %d: gemm_call %d, expected %d", i, r.cmd[i].gemm_call, calls[i]);
    CHECK(r.cmd[i].m == ms[i], "command %d: m %d, expected %d", i, r.cmd[i].m, ms[i]);
  }
  CHECK(r.cmd[2].n == 2048 && r.cmd[2].k == 512 && !r.cmd[2].trans_a && r.cmd[2].trans_b, "the first GEMM's shape");
  CHECK(r.cmd[4].n == 6 && r.cmd[4].k == 7 && r.cmd[4].trans_a && !r.cmd[4].trans_b, "the second GEMM's shape");
#undef ADAM
  cls_adam_destroy(adam);
  clReleaseCommandQueue(q);
  clReleaseCommandQueue(other);
}

/* CLS_OPS_PROFILE_QUEUES queues at once, not one more; a detached slot is free again. */
static void slots(tst_env *env, int dev) {
  cl_command_queue qs[CLS_OPS_PROFILE_QUEUES + 1];
  rec r;
  for (int i = 0; i <= CLS_OPS_PROFILE_QUEUES; i++) qs[i] = profiling_queue(env, dev);
  for (int i = 0; i < CLS_OPS_PROFILE_QUEUES; i++) CHECK(cls_ops_profile_attach(qs[i], on_cmd, &r) == CLS_OK, "slot %d", i);
  CHECK(cls_ops_profile_attach(qs[0], on_cmd, &r) == CLS_OK, "re-attaching a queue takes no new slot");
  CHECK(cls_ops_profile_attach(qs[CLS_OPS_PROFILE_QUEUES], on_cmd, &r) == CLS_ERR_INVALID_ARGUMENT, "one slot too many");
  cls_ops_profile_detach(qs[3]);
  CHECK(cls_ops_profile_attach(qs[CLS_OPS_PROFILE_QUEUES], on_cmd, &r) == CLS_OK, "a freed slot");
  for (int i = 0; i <= CLS_OPS_PROFILE_QUEUES; i++) {
    cls_ops_profile_detach(qs[i]);
    clReleaseCommandQueue(qs[i]);
  }
}

/* Two threads, each recording its own queue at the same time, see exactly their own commands. */
typedef struct worker {
  tst_env *env;
  int dev, launches;
  rec r;
  cls_status st;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  cl_command_queue q = profiling_queue(w->env, w->dev);
  cl_context ctx = NULL;
  size_t total = 0;
  w->st = cls_engine_device_context(w->env->engine, w->dev, &ctx, NULL);
  /* the thread's own buffer and queue only (tst_buffer would fill it on the engine's queue, shared) */
  cl_mem b = cls_ops_buffer(w->env->engine, w->dev, ctx, 4096, &total, &w->st);
  if (!q || !b) {
    if (w->st == CLS_OK) w->st = CLS_ERR_OPENCL;
    if (b) clReleaseMemObject(b);
    if (q) clReleaseCommandQueue(q);
    return NULL;
  }
  w->st = cls_ops_profile_attach(q, on_cmd, &w->r);
  for (int i = 0; i < w->launches && w->st == CLS_OK; i++) w->st = cls_ops_fill_to(cls_engine_errors(w->env->engine), q, cls_buf_of(b), 1024, 1.0f);
  clFinish(q);
  cls_ops_profile_detach(q);
  rec_events(&w->r);
  clReleaseMemObject(b);
  clReleaseCommandQueue(q);
  return NULL;
}

static void threads(tst_env *env, int dev) {
  worker w[2] = {{env, dev, 5, {0}, CLS_OK}, {env, dev, 9, {0}, CLS_OK}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, &w[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK(w[i].st == CLS_OK, "thread %d", i);
    CHECK_INT(w[i].r.n, w[i].launches);
    CHECK_INT(w[i].r.bad_events, 0);
  }
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_ops_profile");
  for (int i = 0; i < env.n_devices; i++) {
    printf("device %s\n", tst_device_name(&env, env.devices[i]));
    run_device(&env, env.devices[i]);
  }
  slots(&env, env.devices[0]);
  /* The threads on a device whose driver runs commands on threads of its own: PoCL 3.1's `basic` driver runs
     them in the calling host thread, and two host threads driving one `basic` device at once deadlocked inside
     PoCL (once in a CI run: two threads waiting on one event's mutex, from clReleaseEvent and from the driver's
     command loop). Two host threads on one device is this test's case only: the engine gives each device one
     host thread (a tower). */
  int threaded = env.devices[0];
  for (int i = 0; i < env.n_devices; i++)
    if (!cls_select_item_matches(cls_engine_device(env.engine, env.devices[i]), "basic")) {
      threaded = env.devices[i];
      break;
    }
  printf("threads on %s\n", tst_device_name(&env, threaded));
  threads(&env, threaded);
  tst_close_env(&env);
  return check_finish("test_ops_profile");
}
