/* Helpers the op plans share: the device record behind an engine index, 1-D/2-D launches rounded up
 * to the work-group size, and the profiling hook through which `clspeech bench` sees every command
 * of a training step. Internal to the engine. */
#ifndef CLS_OPS_UTIL_H
#define CLS_OPS_UTIL_H

#include <stdbool.h>

#include "clspeech/internal/ops.h"
#include "clspeech/ops.h"
#include "device/engine.h"

/* The built device behind an index (opens it and builds its kernels if needed). */
cls_status cls_ops_device(cls_engine *engine, int index, cls_device **out);

/* A `_to` helper reports a failure into the given sink (an op plan's, a model's, a tower's `cls_error *`:
 * objects that may run on a worker thread; engine-level callers such as the bench pass
 * cls_engine_errors(engine)). cls_ops_cl_check and cls_ops_buffer also have a plain form that reports
 * into the engine's own error, for plan creation, which reports there anyway. */

/* Enqueues `kernel` over `global` items (rounded up to a multiple of `local`, which kernels must
 * guard against); `local` 0 lets the driver choose. */
cls_status cls_ops_launch_to(cls_error *to, cl_command_queue queue, cl_kernel kernel, const char *name, int dims,
                             const size_t *global, const size_t *local, cl_event *event);

/* *m holds at least `need` bytes: a buffer of `flags` in `context`, regrown by doubling from 256 bytes
 * (its contents lost when it grows); *cap is its size, 0 after a failure (*m then NULL). The OpenCL
 * status, for the caller to name. */
cl_int cls_ops_grow_buffer(cl_context context, cl_mem_flags flags, cl_mem *m, size_t *cap, size_t need);

/* CLS_OK for CL_SUCCESS; otherwise the engine's error naming device `index` and `what`
 * ("device 0:1 (NAME): allocating device memory failed: CL_OUT_OF_RESOURCES"): CLS_ERR_DEVICE_OUT_OF_MEMORY
 * for CL_MEM_OBJECT_ALLOCATION_FAILURE or CL_OUT_OF_RESOURCES, CLS_ERR_OPENCL for anything else
 * (CL_OUT_OF_HOST_MEMORY included: the driver's own memory for the device, which goes with the device). */
cls_status cls_ops_cl_check(cls_engine *engine, int index, cl_int err, const char *what);
cls_status cls_ops_cl_check_to(const cls_engine *engine, cls_error *to, int index, cl_int err, const char *what);

/* A read-write buffer of `bytes` (4 when 0) on `context` of device `index`, counted into *total;
 * NULL and nothing done once *status is not CLS_OK, so that a run of allocations checks once. */
cl_mem cls_ops_buffer(cls_engine *engine, int index, cl_context context, size_t bytes, size_t *total,
                      cls_status *status);
cl_mem cls_ops_buffer_to(const cls_engine *engine, cls_error *to, int index, cl_context context, size_t bytes,
                         size_t *total, cls_status *status);

/* Fills n floats of a buffer view with a value. */
cls_status cls_ops_fill_to(cls_error *to, cl_command_queue queue, cls_buf buf, size_t n, float value);

/* ---- profiling hook ----
 * A recorder attached to a queue is told of every command the ops enqueue on that queue, with its event
 * (which it retains if it keeps it): cls_ops_launch_to and cls_ops_fill_to report themselves; any other
 * enqueue (a CLBlast call, a copy) reports itself with cls_ops_profile_note. Commands reported between
 * cls_ops_profile_gemm_begin and _end belong to that GEMM (its packing and inner kernels alike), so the
 * bench sums them by GEMM shape. With no recorder attached anywhere, the cost is one atomic load per
 * command. Thread-safe: recorders are kept per queue, at most CLS_OPS_PROFILE_QUEUES at once; a
 * recorder is called from the thread that enqueues, under a lock. */

#define CLS_OPS_PROFILE_QUEUES 8

typedef struct cls_ops_profile_cmd {
  const char *name;              /* kernel name ("lstm_gates_fwd", "gemm_pack_b"), "fill", "copy", "gemm" */
  int m, n, k, trans_a, trans_b; /* inside a GEMM: its row-major C[m,n] = op(A)[m,k] op(B)[k,n]; else 0 */
  int gemm_call;                 /* inside a GEMM: its number on this queue (1, 2, ...); else 0 */
} cls_ops_profile_cmd;

/* Called for each command on the queue it was attached to; `event` is valid for the call only (retain it
 * to keep it). */
typedef void (*cls_ops_profile_fn)(void *user, const cls_ops_profile_cmd *cmd, cl_event event);

/* Attaches fn to queue q (replacing a recorder it had); CLS_ERR_INVALID_ARGUMENT when
 * CLS_OPS_PROFILE_QUEUES queues already have one. Detach before releasing the queue. */
cls_status cls_ops_profile_attach(cl_command_queue q, cls_ops_profile_fn fn, void *user);
void cls_ops_profile_detach(cl_command_queue q);

/* True when a recorder is attached to q: then the caller enqueues with an event and reports it. */
bool cls_ops_profiling(cl_command_queue q);

/* Reports one enqueued command (no-op when q has no recorder or event is NULL). */
void cls_ops_profile_note(cl_command_queue q, const cls_ops_profile_cmd *cmd, cl_event event);

/* Around any other enqueue on q that takes an event pointer (a CLBlast call, a copy):
 *     cl_event own;
 *     cl_int err = clEnqueueX(..., cls_ops_profile_event(q, event, &own));
 *     cls_ops_profile_enqueued(q, "name", err == CL_SUCCESS, event, own);
 * The first returns the event to enqueue with: the caller's `event`, else `own` while q has a recorder,
 * else NULL (own is set to NULL). The second reports a successful enqueue's event (no-op without a
 * recorder) and releases own. */
cl_event *cls_ops_profile_event(cl_command_queue q, cl_event *event, cl_event *own);
void cls_ops_profile_enqueued(cl_command_queue q, const char *name, bool ok, const cl_event *event, cl_event own);

/* The GEMM entry point's brackets (no-ops when q has no recorder), in the one function every GEMM goes
 * through: cls_ops_profile_gemm_begin(q, m, n, k, trans_a, trans_b); the kernels through cls_ops_launch_to
 * or a library call wrapped as above; cls_ops_profile_gemm_end(q). */
void cls_ops_profile_gemm_begin(cl_command_queue q, size_t m, size_t n, size_t k, bool trans_a, bool trans_b);
void cls_ops_profile_gemm_end(cl_command_queue q);

#endif
