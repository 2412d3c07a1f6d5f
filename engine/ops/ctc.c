/* CTC op plan (see clspeech/ops.h): owns the ctc_loss_grad_{local,global,item} and ctc_greedy_decode kernels of
 * one device, the choice between them (one work-item per utterance on CPU devices; on others local memory,
 * else the global workspace, for the forward-backward tables), and the argument checks (shapes against the
 * plan, buffer sizes against their views). */
#include "clspeech/ops.h"

#include <limits.h>
#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"

struct cls_ctc_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int max_time, max_batch, num_classes, max_label;
  cl_kernel loss_local, loss_global, loss_item, decode;
  size_t wg;          /* work-group size the kernels were built for (CLS_WG_1D) */
  size_t local_bytes; /* local memory left for the tables of ctc_loss_grad_local */
  int item_first;     /* AUTO takes ctc_loss_grad_item (a CPU device) */
  cls_ctc_path path;
};

/* Words (floats or int32) of one utterance's tables; kernels/ctc.cl lays them out the same way:
 * alpha [rows][S], beta [2][S], lse [time], then int lab [L], next [L], first [C]. */
static size_t table_floats(const cls_ctc_plan *p, int time, int with_grad) {
  size_t smax = 2 * (size_t)p->max_label + 1;
  size_t rows = with_grad ? (size_t)time : 2;
  return (rows + 2) * smax + (size_t)time;
}

static size_t words_per_utterance(const cls_ctc_plan *p, int time, int with_grad) {
  return table_floats(p, time, with_grad) + 2 * (size_t)p->max_label + (size_t)p->num_classes;
}

/* Words of one utterance's tables for ctc_loss_grad_item, laid out as kernels/ctc.cl describes: alpha
 * [rows][Rmax], beta [2][Rmax], gam [Rmax], prob [time][C] with the gradient, lse [time], occ [C],
 * pen [Rmax + 8], int ext [Rmax]; rounded up to 64 bytes, so that utterances on different cores do
 * not share a cache line. */
static size_t item_words(const cls_ctc_plan *p, int time, int with_grad) {
  size_t rmax = ((2 * (size_t)p->max_label + 1 + 7) & ~(size_t)7) + 8, T = (size_t)time, C = (size_t)p->num_classes;
  size_t rows = with_grad ? T : 2;
  size_t w = rows * rmax + 3 * rmax + (with_grad ? T * C : 0) + T + C + rmax + 8 + rmax;
  return (w + 15) & ~(size_t)15;
}

cls_ctc_path cls_ctc_path_for(const cls_ctc_plan *p, int time, int with_grad) {
  if (p->path != CLS_CTC_PATH_AUTO) return p->path;
  if (p->item_first) return CLS_CTC_PATH_ITEM;
  return words_per_utterance(p, time, with_grad) * sizeof(float) <= p->local_bytes ? CLS_CTC_PATH_LOCAL
                                                                                    : CLS_CTC_PATH_GLOBAL;
}

size_t cls_ctc_workspace_bytes(const cls_ctc_plan *p, int time, int batch) {
  if (!p || time < 1 || batch < 1) return 0;
  size_t bytes = 0; /* the larger of the calls with and without the gradient (time 1: without) */
  for (int with_grad = 0; with_grad <= 1; with_grad++) {
    const cls_ctc_path path = cls_ctc_path_for(p, time, with_grad);
    size_t words = path == CLS_CTC_PATH_GLOBAL ? words_per_utterance(p, time, with_grad)
                   : path == CLS_CTC_PATH_ITEM ? item_words(p, time, with_grad)
                                               : 0;
    size_t b = (size_t)batch * words * sizeof(float);
    if (b > bytes) bytes = b;
  }
  return bytes;
}

cls_status cls_ctc_create(cls_engine *e, int device, int max_time, int max_batch, int num_classes, int max_label,
                          cls_ctc_plan **out) {
  if (!out) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "ctc: out is NULL");
  *out = NULL;
  if (max_time < 1 || max_batch < 1 || num_classes < 2 || max_label < 1)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "ctc: bad plan shape: max_time %d, max_batch %d, num_classes %d, max_label_length %d (need "
                    "max_time, max_batch, max_label_length >= 1 and num_classes >= 2: the labels and the blank)",
                    max_time, max_batch, num_classes, max_label);
  if ((double)max_time * max_batch * num_classes > INT_MAX || (double)max_batch * max_label > INT_MAX ||
      (double)max_label * 2 + 1 > INT_MAX / 4)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "ctc: plan shape max_time %d x max_batch %d x num_classes %d (max_label_length %d) exceeds 2^31 "
                    "elements",
                    max_time, max_batch, num_classes, max_label);
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_ctc_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->max_time = max_time;
  p->max_batch = max_batch;
  p->num_classes = num_classes;
  p->max_label = max_label;
  p->path = CLS_CTC_PATH_AUTO;
  if ((double)max_batch * (double)words_per_utterance(p, max_time, 1) > INT_MAX) {
    cls_ctc_destroy(p);
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "ctc: the workspace of max_batch %d utterances of %d frames with labels up to %d exceeds 2^31 "
                    "words",
                    max_batch, max_time, max_label);
  }
  st = cls_device_kernel(e, d, "ctc", "ctc_loss_grad_local", &p->loss_local);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "ctc", "ctc_loss_grad_global", &p->loss_global);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "ctc", "ctc_loss_grad_item", &p->loss_item);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "ctc", "ctc_greedy_decode", &p->decode);
  if (st != CLS_OK) {
    cls_ctc_destroy(p);
    return st;
  }
  size_t wg[3] = {0, 0, 0}, max_wg = 0;
  cl_ulong static_local = 0;
  cl_int err = clGetKernelWorkGroupInfo(p->loss_local, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL);
  if (err == CL_SUCCESS)
    err = clGetKernelWorkGroupInfo(p->loss_local, d->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL);
  if (err == CL_SUCCESS)
    err = clGetKernelWorkGroupInfo(p->loss_local, d->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof static_local,
                                   &static_local, NULL);
  if (err != CL_SUCCESS) {
    cls_ctc_destroy(p);
    return cls_fail(e, CLS_ERR_OPENCL, "ctc: clGetKernelWorkGroupInfo(ctc_loss_grad_local) failed on %s: %s",
                    d->info.name, cls_cl_error_name(err));
  }
  p->wg = wg[0] ? wg[0] : 64;
  if (max_wg < p->wg) {
    cls_ctc_destroy(p);
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "ctc: %s runs the CTC kernel with work-groups of at most %zu items, but it was built for %zu "
                    "(CLS_WG_1D); lower CLS_WG_1D for this device through CLSPEECH_KERNEL_OPTIONS",
                    d->info.name, max_wg, p->wg);
  }
  uint64_t local_mem = d->info.local_mem_bytes;
  p->local_bytes = local_mem > static_local ? (size_t)(local_mem - static_local) : 0;
  /* Measured with bench_ops (B=16, T=150, 40 labels) on PoCL's CPU devices: the work-group kernels spend
     most of their time in barriers there, one work-item per utterance is many times faster. GPUs keep
     the work-group kernels. */
  p->item_first = d->info.kind == CLS_DEVICE_CPU && item_words(p, max_time, 1) <= INT_MAX;
  *out = p;
  return CLS_OK;
}

cls_status cls_ctc_set_path(cls_ctc_plan *p, cls_ctc_path path) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  if (path != CLS_CTC_PATH_AUTO && path != CLS_CTC_PATH_LOCAL && path != CLS_CTC_PATH_GLOBAL &&
      path != CLS_CTC_PATH_ITEM)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "ctc: unknown path %d", (int)path);
  p->path = path;
  return CLS_OK;
}

/* The view must hold `count` elements of `elem` bytes from its offset, and the offset must fit the
 * kernels' int arguments. */
static cls_status check_view(cls_ctc_plan *p, const char *what, const char *name, cls_buf buf, size_t count,
                             size_t elem) {
  if (!buf.mem) return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: the %s buffer is NULL", what, name);
  if (buf.offset > INT_MAX)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: %s offset %zu exceeds 2^31-1 elements", what, name,
                         buf.offset);
  size_t size = 0;
  cl_int err = clGetMemObjectInfo(buf.mem, CL_MEM_SIZE, sizeof size, &size, NULL);
  if (err != CL_SUCCESS)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: the %s buffer is not a valid cl_mem (%s)", what, name,
                         cls_cl_error_name(err));
  if ((buf.offset + count) * elem > size)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: %s needs %zu elements from offset %zu (%zu bytes), but its buffer holds %zu bytes", what,
                         name, count, buf.offset, (buf.offset + count) * elem, size);
  return CLS_OK;
}

static cls_status check_shape(cls_ctc_plan *p, const char *what, int time, int batch) {
  if (time < 1 || time > p->max_time || batch < 1 || batch > p->max_batch)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: time %d and batch %d must lie in 1..%d and 1..%d (the plan's max_time and max_batch)",
                         what, time, batch, p->max_time, p->max_batch);
  return CLS_OK;
}

/* cls_ctc_loss's sizes and write mode, and the views it reads and writes, each large enough for `time`
 * x `batch` (grad only when given). */
static cls_status check_loss_args(cls_ctc_plan *p, const char *what, int time, int batch, cls_write_mode mode,
                                  cls_buf logits, cls_buf labels, cls_buf label_lengths, cls_buf input_lengths,
                                  cls_buf loss, cls_buf grad) {
  cls_status st = check_shape(p, what, time, batch);
  if (st != CLS_OK) return st;
  if (mode != CLS_OVERWRITE && mode != CLS_ACCUMULATE)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: unknown write mode %d", what, (int)mode);
  const size_t rows = (size_t)time * (size_t)batch, C = (size_t)p->num_classes;
  st = check_view(p, what, "logits [time*batch, num_classes]", logits, rows * C, sizeof(float));
  if (st == CLS_OK)
    st = check_view(p, what, "labels [batch, max_label_length]", labels, (size_t)batch * (size_t)p->max_label,
                    sizeof(cl_int));
  if (st == CLS_OK) st = check_view(p, what, "label_lengths [batch]", label_lengths, (size_t)batch, sizeof(cl_int));
  if (st == CLS_OK) st = check_view(p, what, "input_lengths [batch]", input_lengths, (size_t)batch, sizeof(cl_int));
  if (st == CLS_OK) st = check_view(p, what, "loss [batch]", loss, (size_t)batch, sizeof(float));
  if (st == CLS_OK && grad.mem)
    st = check_view(p, what, "grad [time*batch, num_classes]", grad, rows * C, sizeof(float));
  return st;
}

cls_status cls_ctc_loss(cls_ctc_plan *p, cl_command_queue q, int time, int batch, cls_buf logits, cls_buf labels,
                        cls_buf label_lengths, cls_buf input_lengths, cls_buf loss, cls_buf grad, float scale,
                        cls_write_mode mode, cls_buf workspace, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *what = "ctc_loss";
  cls_status st = check_loss_args(p, what, time, batch, mode, logits, labels, label_lengths, input_lengths, loss, grad);
  if (st != CLS_OK) return st;
  const int want_grad = grad.mem != NULL;

  const cls_ctc_path path = cls_ctc_path_for(p, time, want_grad);
  const int item = path == CLS_CTC_PATH_ITEM;
  const size_t words = item ? item_words(p, time, want_grad) : words_per_utterance(p, time, want_grad);
  const int floats = (int)table_floats(p, time, want_grad);
  cl_kernel k = path == CLS_CTC_PATH_LOCAL ? p->loss_local : item ? p->loss_item : p->loss_global;
  const char *kname = path == CLS_CTC_PATH_LOCAL ? "ctc_loss_grad_local"
                      : item                     ? "ctc_loss_grad_item"
                                                 : "ctc_loss_grad_global";
  if (path == CLS_CTC_PATH_LOCAL && words * sizeof(float) > p->local_bytes)
    return cls_error_set(
        p->err, CLS_ERR_INVALID_ARGUMENT,
        "%s: the local-memory path needs %zu bytes per utterance (time %d, max_label_length %d) but the "
        "device has %zu bytes of local memory left for it; use CLS_CTC_PATH_AUTO or _GLOBAL",
        what, words * sizeof(float), time, p->max_label, p->local_bytes);
  if (item && words > INT_MAX)
    return cls_error_set(
        p->err, CLS_ERR_INVALID_ARGUMENT,
        "%s: the per-utterance path needs %zu words per utterance (time %d, max_label_length %d), more "
        "than 2^31-1; use CLS_CTC_PATH_GLOBAL",
        what, words, time, p->max_label);
  if (path != CLS_CTC_PATH_LOCAL) {
    st = check_view(p, what, "workspace (cls_ctc_workspace_bytes)", workspace, (size_t)batch * words, sizeof(float));
    if (st != CLS_OK) return st;
  }

  int ti = time, bi = batch, ci = p->num_classes, li = p->max_label, wgrad = want_grad, acc = mode == CLS_ACCUMULATE;
  int lo = (int)logits.offset, lbo = (int)labels.offset, llo = (int)label_lengths.offset,
      ilo = (int)input_lengths.offset, loo = (int)loss.offset, go = want_grad ? (int)grad.offset : 0;
  /* Without a gradient the kernel still needs a valid buffer argument; it never touches it. */
  cl_mem grad_mem = want_grad ? grad.mem : loss.mem;
  cls_kargs ka = cls_kargs_begin(p->err, k, kname);
  cls_kargs_int(&ka, ti);
  cls_kargs_int(&ka, bi);
  cls_kargs_int(&ka, ci);
  cls_kargs_int(&ka, li);
  cls_kargs_mem(&ka, logits.mem);
  cls_kargs_int(&ka, lo);
  cls_kargs_mem(&ka, labels.mem);
  cls_kargs_int(&ka, lbo);
  cls_kargs_mem(&ka, label_lengths.mem);
  cls_kargs_int(&ka, llo);
  cls_kargs_mem(&ka, input_lengths.mem);
  cls_kargs_int(&ka, ilo);
  cls_kargs_mem(&ka, loss.mem);
  cls_kargs_int(&ka, loo);
  cls_kargs_mem(&ka, grad_mem);
  cls_kargs_int(&ka, go);
  cls_kargs_int(&ka, wgrad);
  cls_kargs_float(&ka, scale);
  cls_kargs_int(&ka, acc);
  if (path == CLS_CTC_PATH_LOCAL) { /* the tables in local memory */
    cls_kargs_local(&ka, words * sizeof(float));
    cls_kargs_int(&ka, floats);
  } else { /* the tables in the workspace: an utterance's every `stride` words */
    int wo = (int)workspace.offset, stride = (int)words;
    cls_kargs_mem(&ka, workspace.mem);
    cls_kargs_int(&ka, wo);
    cls_kargs_int(&ka, stride);
    if (!item) cls_kargs_int(&ka, floats);
  }
  st = cls_kargs_end(&ka);
  if (st != CLS_OK) return st;
  if (item) { /* one work-item, and work-group, per utterance */
    size_t global = (size_t)batch, one = 1;
    return cls_ops_launch_to(p->err, q, k, kname, 1, &global, &one, event);
  }
  size_t global = (size_t)batch * p->wg;
  return cls_ops_launch_to(p->err, q, k, kname, 1, &global, &p->wg, event);
}

cls_status cls_ctc_greedy_decode(cls_ctc_plan *p, cl_command_queue q, int time, int batch, cls_buf logits,
                                 cls_buf input_lengths, cls_buf out_labels, cls_buf out_lengths, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *what = "ctc_greedy_decode";
  cls_status st = check_shape(p, what, time, batch);
  const size_t rows = (size_t)time * (size_t)batch;
  if (st == CLS_OK)
    st = check_view(p, what, "logits [time*batch, num_classes]", logits, rows * (size_t)p->num_classes,
                    sizeof(float));
  if (st == CLS_OK) st = check_view(p, what, "input_lengths [batch]", input_lengths, (size_t)batch, sizeof(cl_int));
  if (st == CLS_OK) st = check_view(p, what, "out_labels [batch, time]", out_labels, rows, sizeof(cl_int));
  if (st == CLS_OK) st = check_view(p, what, "out_lengths [batch]", out_lengths, (size_t)batch, sizeof(cl_int));
  if (st != CLS_OK) return st;
  int ti = time, bi = batch, ci = p->num_classes, lo = (int)logits.offset, ilo = (int)input_lengths.offset,
      olo = (int)out_labels.offset, oso = (int)out_lengths.offset;
  cls_kargs ka = cls_kargs_begin(p->err, p->decode, what);
  cls_kargs_int(&ka, ti);
  cls_kargs_int(&ka, bi);
  cls_kargs_int(&ka, ci);
  cls_kargs_mem(&ka, logits.mem);
  cls_kargs_int(&ka, lo);
  cls_kargs_mem(&ka, input_lengths.mem);
  cls_kargs_int(&ka, ilo);
  cls_kargs_mem(&ka, out_labels.mem);
  cls_kargs_int(&ka, olo);
  cls_kargs_mem(&ka, out_lengths.mem);
  cls_kargs_int(&ka, oso);
  st = cls_kargs_end(&ka);
  if (st != CLS_OK) return st;
  size_t global = (size_t)batch * p->wg;
  return cls_ops_launch_to(p->err, q, p->decode, what, 1, &global, &p->wg, event);
}

void cls_ctc_destroy(cls_ctc_plan *p) {
  if (!p) return;
  if (p->loss_local) clReleaseKernel(p->loss_local);
  if (p->loss_global) clReleaseKernel(p->loss_global);
  if (p->loss_item) clReleaseKernel(p->loss_item);
  if (p->decode) clReleaseKernel(p->decode);
  free(p);
}

void cls_ctc_set_error(cls_ctc_plan *p, cls_error *err) { p->err = err; }
