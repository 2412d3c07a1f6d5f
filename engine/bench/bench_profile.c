/* The step profile's recorder (see bench_profile.h): the events of every command reported on the
 * profiled queue, and their sum by op. Prints nothing. */
#include "bench/bench_profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/log.h"
#include "ops/ops_util.h"

typedef struct recorded {
  char name[40];
  int m, n, k, trans_a, trans_b, gemm_call;
  cl_event event;
} recorded;

struct cls_bench_recorder {
  cls_engine *e;
  cl_command_queue q;
  recorded *cmds;
  int n, cap;
  bool out_of_memory;
};

const char *cls_profile_group_name(cls_profile_group g) {
  static const char *names[] = {"gemm", "lstm", "dense", "ctc", "adam", "mfcc", "copy", "other", "wait"};
  return (unsigned)g < sizeof names / sizeof *names ? names[g] : "?";
}

static void on_command(void *user, const cls_ops_profile_cmd *cmd, cl_event event) {
  cls_bench_recorder *r = user;
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 1024;
    recorded *c = realloc(r->cmds, (size_t)cap * sizeof *c);
    if (!c) {
      r->out_of_memory = true;
      return;
    }
    r->cmds = c;
    r->cap = cap;
  }
  recorded *c = &r->cmds[r->n++];
  snprintf(c->name, sizeof c->name, "%s", cmd->name ? cmd->name : "?");
  c->m = cmd->m;
  c->n = cmd->n;
  c->k = cmd->k;
  c->trans_a = cmd->trans_a;
  c->trans_b = cmd->trans_b;
  c->gemm_call = cmd->gemm_call;
  c->event = event;
  clRetainEvent(event);
}

cls_status cls_bench_recorder_open(cls_engine *e, cl_command_queue q, cls_bench_recorder **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  (*out)->e = e;
  (*out)->q = q;
  if (cls_ops_profile_attach(q, on_command, *out) != CLS_OK) {
    free(*out);
    *out = NULL;
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "bench: %d queues are profiled already", CLS_OPS_PROFILE_QUEUES);
  }
  return CLS_OK;
}

void cls_bench_recorder_close(cls_bench_recorder *r) {
  if (!r) return;
  cls_ops_profile_detach(r->q);
  for (int i = 0; i < r->n; i++) clReleaseEvent(r->cmds[i].event);
  free(r->cmds);
  free(r);
}

static cls_profile_group group_of(const char *name) {
  static const struct {
    const char *prefix;
    cls_profile_group group;
  } map[] = {/* packing a GEMM operand once for several GEMMs (the LSTM's weight) moves data */
             {"gemm_pack", CLS_PROFILE_COPY},
             {"gemm", CLS_PROFILE_GEMM}, {"lstm_", CLS_PROFILE_LSTM}, {"dense_", CLS_PROFILE_DENSE},
             {"ctc_", CLS_PROFILE_CTC},  {"adam", CLS_PROFILE_ADAM},  {"mfcc", CLS_PROFILE_MFCC},
             {"fill", CLS_PROFILE_COPY}, {"copy", CLS_PROFILE_COPY},  {"read", CLS_PROFILE_COPY},
             {"write", CLS_PROFILE_COPY}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strncmp(name, map[i].prefix, strlen(map[i].prefix))) return map[i].group;
  return CLS_PROFILE_OTHER;
}

cls_status cls_bench_recorder_group_end(cls_bench_recorder *r, cls_profile_group group, cl_ulong *end) {
  *end = 0;
  for (int i = 0; i < r->n; i++) {
    const recorded *c = &r->cmds[i];
    if ((c->gemm_call ? CLS_PROFILE_GEMM : group_of(c->name)) != group) continue;
    cl_ulong t = 0;
    cl_int err = clGetEventProfilingInfo(c->event, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL);
    if (err != CL_SUCCESS)
      return cls_fail(r->e, CLS_ERR_OPENCL, "bench: reading the profiling event of %s failed: %s", c->name,
                      cls_cl_error_name(err));
    if (t > *end) *end = t;
  }
  return CLS_OK;
}

/* The row named `name`, added when new (NULL when the table is full). */
static cls_bench_profile_row *row_for(cls_bench_profile *out, const char *name, cls_profile_group g) {
  for (int i = 0; i < out->n_rows; i++)
    if (out->rows[i].group == g && !strcmp(out->rows[i].name, name)) return &out->rows[i];
  if (out->n_rows == CLS_BENCH_MAX_PROFILE_ROWS - 1) return NULL; /* the last is the wait row's */
  cls_bench_profile_row *row = &out->rows[out->n_rows++];
  memset(row, 0, sizeof *row);
  snprintf(row->name, sizeof row->name, "%s", name);
  row->group = g;
  return row;
}

/* "gemm lstm_rec_fwd" when a shape of the step matches, else "gemm 16x2048x512 NT". */
static void gemm_name(const recorded *c, const cls_gemm_shape *shapes, int n_shapes, char *out, size_t cap) {
  for (int i = 0; i < n_shapes; i++) {
    const cls_gemm_shape *s = &shapes[i];
    if (s->m == c->m && s->n == c->n && s->k == c->k && !s->trans_a == !c->trans_a && !s->trans_b == !c->trans_b) {
      snprintf(out, cap, "gemm %s", s->name);
      return;
    }
  }
  snprintf(out, cap, "gemm %dx%dx%d %c%c", c->m, c->n, c->k, c->trans_a ? 'T' : 'N', c->trans_b ? 'T' : 'N');
}

static int by_group_then_ms(const void *a_, const void *b_) {
  const cls_bench_profile_row *a = a_, *b = b_;
  if (a->group != b->group) return a->group < b->group ? -1 : 1;
  return a->ms > b->ms ? -1 : a->ms < b->ms;
}

cls_status cls_bench_recorder_rows(cls_bench_recorder *r, double mfcc_ms, const cls_gemm_shape *shapes,
                                   const double *gemm_ms, int n_shapes, cls_bench_profile *out) {
  if (r->out_of_memory) return cls_fail(r->e, CLS_ERR_OUT_OF_MEMORY, "bench: out of host memory recording the step");
  out->n_rows = 0;
  out->commands = r->n;
  out->gemm_events = false;
  int last_call[CLS_BENCH_MAX_PROFILE_ROWS] = {0}; /* per row: the GEMM call its last command belonged to */
  for (int i = 0; i < r->n; i++) {
    const recorded *c = &r->cmds[i];
    cls_profile_group g = c->gemm_call ? CLS_PROFILE_GEMM : group_of(c->name);
    double ms = 0;
    const cl_int err = cls_bench_event_ms(c->event, &ms);
    if (err != CL_SUCCESS)
      return cls_fail(r->e, CLS_ERR_OPENCL, "bench: reading the profiling event of %s failed: %s", c->name,
                      cls_cl_error_name(err));
    char name[48];
    snprintf(name, sizeof name, "%s", c->name);
    if (c->gemm_call) {
      gemm_name(c, shapes, n_shapes, name, sizeof name);
      out->gemm_events = true;
    }
    cls_bench_profile_row *row = row_for(out, name, g);
    if (!row) row = row_for(out, "other", CLS_PROFILE_OTHER);
    if (!row) row = &out->rows[out->n_rows - 1];
    const size_t at = (size_t)(row - out->rows);
    /* a GEMM's packing and inner kernels count as one call */
    if (!c->gemm_call || c->gemm_call != last_call[at]) {
      row->calls++;
      if (c->gemm_call) row->flops += 2.0 * c->m * (double)c->n * c->k;
    }
    last_call[at] = c->gemm_call;
    row->ms += ms;
  }
  out->n_gemm_estimates = 0;
  for (int i = 0; !out->gemm_events && gemm_ms && i < n_shapes && i < CLS_BENCH_MAX_SHAPES; i++) {
    cls_bench_profile_row *row = &out->gemm_estimates[out->n_gemm_estimates++];
    memset(row, 0, sizeof *row);
    snprintf(row->name, sizeof row->name, "gemm %s", shapes[i].name);
    row->group = CLS_PROFILE_GEMM;
    row->calls = shapes[i].calls;
    row->ms = shapes[i].calls * gemm_ms[i];
    row->flops = shapes[i].calls * cls_gemm_flops(&shapes[i]);
    row->estimated = true;
  }
  qsort(out->gemm_estimates, (size_t)out->n_gemm_estimates, sizeof *out->gemm_estimates, by_group_then_ms);
  /* The MFCC's kernels have rows of their own (above, clFFT's as mfcc_fft: the event of its transform's
     last kernel); the span's rest is what they do not show: the uploads, the host's start of the step, and
     clFFT's earlier kernels when a transform takes several. */
  double mfcc_kernels = 0;
  for (int i = 0; i < out->n_rows; i++)
    if (out->rows[i].group == CLS_PROFILE_MFCC) mfcc_kernels += out->rows[i].ms;
  cls_bench_profile_row *mfcc = row_for(out, "mfcc rest of the span", CLS_PROFILE_MFCC);
  if (mfcc) {
    mfcc->calls = 1;
    mfcc->ms = mfcc_ms > mfcc_kernels ? mfcc_ms - mfcc_kernels : 0.0;
  }
  qsort(out->rows, (size_t)out->n_rows, sizeof *out->rows, by_group_then_ms);
  double sum = 0;
  for (int i = 0; i < out->n_rows; i++) sum += out->rows[i].ms;
  cls_bench_profile_row *wait = &out->rows[out->n_rows++];
  memset(wait, 0, sizeof *wait);
  snprintf(wait->name, sizeof wait->name, "%s",
           out->gemm_events ? "host waits + unrecorded" : "GEMMs + host waits + unrecorded");
  wait->group = CLS_PROFILE_WAIT;
  wait->ms = out->wall_ms - sum;
  return CLS_OK;
}
