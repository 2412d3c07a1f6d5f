/* Conventions shared by the op plans (dense.h, lstm.h, ctc.h, adam.h): device buffer views, the
 * overwrite/accumulate switch of backward ops, and access to a device's OpenCL handles.
 *
 * Every op family is a small plan object: cls_<op>_create() picks kernels and sizes once for a
 * device and maximum shapes; cls_<op>_<step>() enqueues on a caller-given in-order cl_command_queue
 * and may return the event of its last command; cls_<op>_destroy() frees it. Workspace sizes are
 * queryable; the caller owns every buffer. Buffers are passed as cls_buf views (a cl_mem and an
 * offset in elements), so that one flat parameter buffer can hold every tensor. */
#ifndef CLSPEECH_OPS_H
#define CLSPEECH_OPS_H

#include <CL/cl.h>

#include "clspeech.h"

typedef struct cls_buf {
  cl_mem mem;
  size_t offset; /* in elements (floats or ints) from the start of mem */
} cls_buf;

static inline cls_buf cls_buf_of(cl_mem mem) {
  cls_buf b = {mem, 0};
  return b;
}
static inline cls_buf cls_buf_at(cl_mem mem, size_t offset) {
  cls_buf b = {mem, offset};
  return b;
}

/* How a backward op writes a gradient: replace what the output holds, or add to it. */
typedef enum cls_write_mode { CLS_OVERWRITE = 0, CLS_ACCUMULATE = 1 } cls_write_mode;

/* Opens the device (building its kernels if needed) and gives its OpenCL handles; every op plan of
 * the device uses this context, and the queue is the device's own in-order queue. */
cls_status cls_engine_device_cl(cls_engine *engine, int index, cl_context *context, cl_device_id *device,
                                cl_command_queue *queue);

#endif
