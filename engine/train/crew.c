/* The crew of towers (see crew.h): creating and dropping towers, the lead, fault injection, the
 * warm-up step, the placement log, the replica check, the state's way to and from the towers and
 * checkpoint files, and the helpers the strategies' epochs share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/tfrecord.h"
#include "clspeech/base.h"
#include "clspeech/internal/ops.h"
#include "device/kernel_sources.h"
#include "device/log.h"
#include "train/crew.h"

static void log_placement(cls_crew *c);
static cls_status warm_up(cls_crew *c);

/* Several ranks: every rank must train the same model (one buffer size for the step's reduction). */
static cls_status agree(cls_crew *c) {
  const int ranks = cls_world_size(c->world);
  uint64_t mine = c->n_params, *all = calloc((size_t)ranks, sizeof *all);
  if (!all) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = cls_world_gather(c->world, &mine, sizeof mine, all);
  for (int r = 0; st == CLS_OK && r < ranks; r++)
    if (all[r] != all[0])
      st = cls_fail(c->e, CLS_ERR_INVALID_ARGUMENT,
                    "rank %d (host %s) has a model of %llu parameters and rank 0 (host %s) one of %llu: every rank "
                    "needs the same --n_hidden and alphabet",
                    r, cls_world_host(c->world, r), (unsigned long long)all[r], cls_world_host(c->world, 0),
                    (unsigned long long)all[0]);
  free(all);
  return st;
}

/* Whether the towers take host-featurised batches only (no device MFCC plan). An augmented training set
   is featurised on the device whatever the other sets use, so its towers take both (batch_input.h). */
static int towers_host_only(const cls_train_options *o) { return o->host_features && o->n_augment == 0; }

cls_status cls_crew_create(cls_engine *e, const int *devices, int n_devices, const cls_train_options *o, int max_batch,
                           int max_frames, int max_label, cls_crew **out) {
  *out = NULL;
  const int per_device = o->towers_per_device > 1 ? o->towers_per_device : 1;
  if (n_devices <= 0 || n_devices * per_device > CLS_MAX_TOWERS)
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "between 1 and %d towers are supported (asked for %d)", CLS_MAX_TOWERS,
                    n_devices * per_device);
  for (int i = 0; per_device > 1 && i < n_devices; i++) {
    const cls_device_info *d = cls_engine_device(e, devices[i]);
    /* PoCL's basic device runs kernels on the thread that waits for them, and two such threads on
       one device trip an assertion in its kernel-handle cache (pocl_release_dlhandle_cache). */
    if (d && !strncmp(d->name, "basic", 5) && strstr(d->platform_name, "Portable Computing Language"))
      return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                      "device %d:%d (%s) cannot hold %d towers: PoCL's basic device is not safe for several threads "
                      "at once; use --towers_per_device 1 or PoCL's pthread device",
                      d->platform_index, d->device_index, d->name, per_device);
  }
  cls_crew *c = calloc(1, sizeof *c);
  if (!c) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  c->e = e;
  c->o = *o;
  c->max_batch = max_batch;
  c->max_frames = max_frames;
  c->max_label = max_label > 0 ? max_label : 1;
  pthread_mutex_init(&c->fault_lock, NULL);
  cls_status wst = cls_world_open(e, o->horovod, &c->world);
  if (wst != CLS_OK) {
    pthread_mutex_destroy(&c->fault_lock);
    free(c);
    return wst;
  }
  cls_param_view views[CLS_MODEL_N_TENSORS];
  c->n_params = cls_model_layout(&o->model, views);
  cls_error err;
  cls_status st = cls_fail_wrap(e, cls_mfcc_tables_create(&o->features, &c->tables, &err), &err, NULL);
  if (st == CLS_OK) st = cls_augment_sources_load(e, o->augment, o->n_augment, o->features.sample_rate, &c->sources);
  c->n_towers = n_devices * per_device;
  c->towers = calloc((size_t)c->n_towers, sizeof *c->towers);
  /* A tower takes its share of the global batch in chunks of at most `capacity` utterances; room
     for twice the per-tower batch lets the balancer shift work without chunking. */
  c->capacity = max_batch;
  if (c->n_towers > 1 && 2 * o->train_batch_size > c->capacity) c->capacity = 2 * o->train_batch_size;
  const size_t pb = c->n_params * sizeof(float);
  c->params = malloc(pb);
  c->m = malloc(pb);
  c->v = malloc(pb);
  int checks = c->n_towers > 1 && o->replica_check_steps > 0;
  if (checks) {
    c->check_lead = malloc(pb);
    c->check_other = malloc(pb);
  }
  if (st == CLS_OK &&
      (!c->towers || !c->params || !c->m || !c->v || (checks && (!c->check_lead || !c->check_other))))
    st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for %zu parameters", c->n_params);
  cls_tower_config tc = {o->model,    c->tables, towers_host_only(o), c->capacity, max_frames, c->max_label,
                         o->augment,  o->n_augment, o->random_seed};
  bool left_out[CLS_MAX_TOWERS] = {false}; /* by position in devices[] */
  char last[1024] = ""; /* the reason the last device was left out */
  for (int i = 0; st == CLS_OK && i < c->n_towers; i++) {
    cls_crew_slot *s = &c->towers[i];
    s->index = i;
    s->grad = malloc(pb);
    s->losses = malloc((size_t)c->capacity * sizeof(float));
    if (!s->grad || !s->losses) st = cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory for tower %d", i);
    if (st != CLS_OK || left_out[i / per_device]) continue;
    cls_status ts = cls_tower_create(e, devices[i / per_device], &tc, &s->tower);
    if (ts == CLS_OK) continue;
    const cls_device_info *d = cls_engine_device(e, devices[i / per_device]);
    cls_error_append(e, " (creating tower %d on device %d:%d %s)", i, d ? d->platform_index : -1,
                     d ? d->device_index : -1, d ? d->name : "?");
    if (!cls_crew_is_device_fault(ts)) {
      st = ts;
      continue;
    }
    /* A device that cannot hold a tower (a kernel its driver cannot create, its memory too small) is left
       out with the reason, and its towers made so far go with it; the others train. */
    snprintf(last, sizeof last, "%s", cls_engine_error(e));
    left_out[i / per_device] = true;
    for (int j = i / per_device * per_device; j < i; j++) {
      cls_tower_destroy(c->towers[j].tower);
      c->towers[j].tower = NULL;
    }
    cls_log(e, CLS_LOG_WARNING, "device %d:%d (%s) cannot hold a tower and is left out: %s", d ? d->platform_index : -1,
            d ? d->device_index : -1, d ? d->name : "?", last);
  }
  if (st == CLS_OK && cls_crew_count(c) == 0)
    st = cls_fail(e, CLS_ERR_NO_DEVICE, "no selected device could hold a tower; the last error was: %s", last);
  if (st == CLS_OK && cls_world_size(c->world) > 1) st = agree(c);
  if (st == CLS_OK && o->log_placement) log_placement(c);
  if (st == CLS_OK && cls_crew_count(c) > 1) st = warm_up(c);
  if (st != CLS_OK) {
    cls_crew_destroy(c);
    return st;
  }
  *out = c;
  return CLS_OK;
}

void cls_crew_destroy(cls_crew *c) {
  if (!c) return;
  for (int i = 0; c->towers && i < c->n_towers; i++) {
    cls_tower_destroy(c->towers[i].tower);
    free(c->towers[i].grad);
    free(c->towers[i].losses);
  }
  free(c->towers);
  cls_mfcc_tables_destroy(c->tables);
  cls_augment_sources_free(&c->sources);
  free(c->params);
  free(c->m);
  free(c->v);
  free(c->check_lead);
  free(c->check_other);
  pthread_mutex_destroy(&c->fault_lock);
  cls_world_close(c->world);
  free(c);
}

/* ---- the towers ---- */

int cls_crew_count(const cls_crew *c) {
  int n = 0;
  for (int i = 0; i < c->n_towers; i++) n += c->towers[i].tower != NULL;
  return n;
}

cls_crew_slot *cls_crew_lead(cls_crew *c) {
  for (int i = 0; i < c->n_towers; i++)
    if (c->towers[i].tower && !c->towers[i].stale) return &c->towers[i];
  return NULL;
}

cls_status cls_crew_no_tower(cls_crew *c) { return cls_fail(c->e, CLS_ERR_NO_DEVICE, "no tower is left to train on"); }

cls_status cls_crew_all_failed(cls_crew *c, const char *last) {
  char text[CLS_ERROR_CAP];
  snprintf(text, sizeof text, "%s", last ? last : cls_engine_error(c->e));
  return cls_fail(c->e, CLS_ERR_NO_DEVICE, "every tower has failed; the last error was: %s", text);
}

int cls_crew_is_device_fault(cls_status st) {
  return st == CLS_ERR_OPENCL || st == CLS_ERR_DEVICE_OUT_OF_MEMORY || st == CLS_ERR_BLAS || st == CLS_ERR_BUILD ||
         st == CLS_ERR_SELFTEST;
}

void cls_crew_drop(cls_crew *c, cls_crew_slot *s, const char *what) {
  const cls_device_info *d = cls_engine_device(c->e, cls_tower_device(s->tower));
  const int left = cls_crew_count(c) - 1;
  /* Told before the tower goes: `what` may be the tower's own error text. */
  cls_log(c->e, CLS_LOG_WARNING,
          "tower %d on device %d:%d (%s) failed at step %lld and is dropped; %d tower%s left: %s", s->index,
          d->platform_index, d->device_index, d->name, (long long)c->state.global_step, left, left == 1 ? "" : "s",
          what);
  cls_tower_destroy(s->tower);
  s->tower = NULL;
}

cls_status cls_crew_tower_status(cls_crew *c, cls_crew_slot *s, cls_status st) {
  if (st != CLS_OK) cls_fail(c->e, st, "%s", cls_tower_error(s->tower)->text);
  return st;
}

/* ---- faults and checks ---- */

cls_status cls_crew_injected_failure(cls_crew *c, cls_crew_slot *s, int64_t step) {
  const cls_train_fault *f = &c->fault;
  if (f->kind != CLS_FAULT_FAIL || s->index != f->tower || step < f->step) return CLS_OK;
  pthread_mutex_lock(&c->fault_lock);
  int fire = !c->fault_fired;
  c->fault_fired = 1;
  pthread_mutex_unlock(&c->fault_lock);
  if (!fire) return CLS_OK;
  const cls_device_info *d = cls_engine_device(c->e, cls_tower_device(s->tower));
  const cls_status st = f->status != CLS_OK ? f->status : CLS_ERR_OPENCL;
  if (st == CLS_ERR_OPENCL)
    return cls_error_set(cls_tower_error(s->tower), st,
                         "device %d:%d (%s): clFinish failed: CL_OUT_OF_RESOURCES (injected fault)", d->platform_index,
                         d->device_index, d->name);
  return cls_error_set(cls_tower_error(s->tower), st, "device %d:%d (%s): %s (injected fault)", d->platform_index,
                       d->device_index, d->name, cls_status_string(st));
}

cls_status cls_crew_perturb_if_due(cls_crew *c) {
  const cls_train_fault *f = &c->fault;
  if (f->kind != CLS_FAULT_PERTURB || c->fault_fired || c->state.global_step < f->step || f->tower >= c->n_towers ||
      !c->towers[f->tower].tower)
    return CLS_OK;
  c->fault_fired = 1;
  cls_log(c->e, CLS_LOG_WARNING, "fault injection: perturbing tower %d's replica after step %lld", f->tower,
          (long long)c->state.global_step);
  cls_crew_slot *s = &c->towers[f->tower];
  return cls_crew_tower_status(c, s, cls_tower_perturb(s->tower, c->n_params / 2, 1e-3f));
}

cls_status cls_crew_check_replicas(cls_crew *c) {
  cls_crew_slot *lead = cls_crew_lead(c);
  if (!lead || !c->check_lead) return CLS_OK;
  float *a = c->check_lead, *b = c->check_other;
  cls_status st = cls_crew_tower_status(c, lead, cls_tower_read_state(lead->tower, a, NULL, NULL));
  int same = 1;
  for (int i = lead->index + 1; st == CLS_OK && i < c->n_towers; i++) {
    cls_crew_slot *s = &c->towers[i];
    if (!s->tower || s->stale) continue;
    st = cls_crew_tower_status(c, s, cls_tower_read_state(s->tower, b, NULL, NULL));
    if (st != CLS_OK) continue;
    if (!memcmp(a, b, c->n_params * sizeof(float))) {
      same++;
      continue;
    }
    size_t first = 0, differ = 0;
    for (size_t p = c->n_params; p-- > 0;)
      if (memcmp(&a[p], &b[p], sizeof(float))) {
        first = p;
        differ++;
      }
    cls_param_view v[CLS_MODEL_MAX_TENSORS];
    const int n_tensors = cls_model_layout_all(&c->o.model, v, NULL);
    int tensor = 0;
    while (tensor + 1 < n_tensors && v[tensor + 1].offset <= first) tensor++;
    const cls_device_info *dl = cls_engine_device(c->e, cls_tower_device(lead->tower));
    const cls_device_info *ds = cls_engine_device(c->e, cls_tower_device(s->tower));
    return cls_fail(c->e, CLS_ERR_DIVERGED,
                    "replica check at step %lld: tower %d on device %d:%d (%s) no longer holds tower %d's parameters "
                    "(device %d:%d %s): %zu of %zu differ, the first %s[%zu] = %.9g against %.9g",
                    (long long)c->state.global_step, s->index, ds->platform_index, ds->device_index, ds->name,
                    lead->index, dl->platform_index, dl->device_index, dl->name, differ, c->n_params, v[tensor].name,
                    first - v[tensor].offset, (double)b[first], (double)a[first]);
  }
  /* With --log_placement, each passed check is said (the tests assert that the check ran). */
  if (st == CLS_OK && c->o.log_placement)
    cls_log(c->e, CLS_LOG_NOTICE, "replica check at step %lld: %d towers hold the same %zu parameters",
            (long long)c->state.global_step, same, c->n_params);
  return st;
}

cls_status cls_crew_check_ranks(cls_crew *c) {
  const int ranks = cls_world_size(c->world);
  if (ranks == 1) return CLS_OK;
  uint64_t *sums = calloc((size_t)ranks, sizeof *sums);
  if (!sums) return cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_status st = cls_crew_read_state(c, c->params, NULL, NULL);
  /* A rank that cannot read its parameters still takes part (checksum 0), so that no rank waits alone. */
  uint64_t mine = st == CLS_OK ? cls_crc32c(c->params, c->n_params * sizeof *c->params) : 0;
  cls_status gst = cls_world_gather(c->world, &mine, sizeof mine, sums);
  if (st == CLS_OK) st = gst;
  char differ[512] = "";
  int n_differ = 0;
  const uint64_t lead = sums[0];
  for (int r = 1; st == CLS_OK && r < ranks; r++)
    if (sums[r] != lead && ++n_differ && strlen(differ) < 400)
      snprintf(differ + strlen(differ), sizeof differ - strlen(differ), "%srank %d (host %s, checksum %016llx)",
               *differ ? "; " : "", r, cls_world_host(c->world, r), (unsigned long long)sums[r]);
  free(sums);
  if (st == CLS_OK && n_differ)
    st = cls_fail(c->e, CLS_ERR_DIVERGED,
                  "replica check across ranks at step %lld: %s no longer hold%s rank 0's parameters (host %s, checksum "
                  "%016llx)",
                  (long long)c->state.global_step, differ, n_differ > 1 ? "" : "s", cls_world_host(c->world, 0),
                  (unsigned long long)lead);
  return st;
}

cls_status cls_crew_share_state(cls_crew *c, cls_status status, int with_state) {
  if (cls_world_size(c->world) == 1) return status;
  int code = (int)status;
  cls_status st = cls_world_broadcast(c->world, &code, sizeof code);
  if (st != CLS_OK) return st;
  if (code != CLS_OK)
    return cls_world_rank(c->world) == 0
               ? status
               : cls_fail(c->e, CLS_ERR_WORLD, "rank 0 (host %s) could not make the initial state: %s",
                          cls_world_host(c->world, 0), cls_status_string((cls_status)code));
  if (!with_state) return CLS_OK;
  /* Rank 0's staging buffers hold what it just loaded or initialised. */
  const size_t pb = c->n_params * sizeof(float);
  st = cls_world_broadcast(c->world, c->params, pb);
  if (st == CLS_OK) st = cls_world_broadcast(c->world, c->m, pb);
  if (st == CLS_OK) st = cls_world_broadcast(c->world, c->v, pb);
  if (st == CLS_OK) st = cls_world_broadcast(c->world, &c->state, sizeof c->state);
  if (st == CLS_OK && cls_world_rank(c->world) != 0) st = cls_crew_write_state(c, c->params, c->m, c->v);
  return st;
}

/* ---- placement and warm-up ---- */

/* Logs where each tower lives. */
static void log_placement(cls_crew *c) {
  const cls_train_options *o = &c->o;
  const int live = cls_crew_count(c), hybrid = o->strategy == CLS_STRATEGY_HYBRID;
  const int balance_auto = o->balance == CLS_BALANCE_AUTO;
  const int ranks = cls_world_size(c->world);
  if (ranks > 1)
    cls_log(c->e, CLS_LOG_NOTICE,
            "placement: rank %d of %d on host %s: %d local tower%s, this rank's part of each global batch %d; "
            "gradients summed across ranks by MPI_Allreduce on the host buffer",
            cls_world_rank(c->world), ranks, cls_world_host(c->world, -1), live, live == 1 ? "" : "s",
            hybrid ? o->train_batch_size * live : o->train_batch_size);
  cls_log(c->e, CLS_LOG_NOTICE,
          "placement: %d tower%s, strategy %s, balance %s, gradient read-back %s, global batch %d", live,
          live == 1 ? "" : "s", cls_strategy_name(o->strategy), cls_balance_name(o->balance),
          live == 1 && ranks == 1 ? "none (one tower: the gradient stays on its device)"
          : o->overlap_reduction  ? "overlapped per layer"
                                  : "after the backward pass",
          hybrid ? o->train_batch_size * live : o->train_batch_size);
  char programs[512] = "";
  for (int i = 0; i < cls_kernel_source_count; i++)
    snprintf(programs + strlen(programs), sizeof programs - strlen(programs), "%s%s", i ? " " : "",
             cls_kernel_sources[i].family);
  const size_t pb = c->n_params * sizeof(float);
  for (int i = 0; i < c->n_towers; i++) {
    cls_crew_slot *s = &c->towers[i];
    if (!s->tower) continue;
    const cls_device_info *d = cls_engine_device(c->e, cls_tower_device(s->tower));
    size_t bytes = cls_tower_device_bytes(s->tower);
    /* the GEMM backend per shape class: the stored winner of `bench --tune`, else the class default */
    char gemm[160] = "";
    cls_gemm_backend first = cls_gemm_backend_of(c->e, cls_tower_device(s->tower), (cls_gemm_class)0);
    bool one = true;
    for (int k = 0; k < CLS_GEMM_N_CLASSES; k++) {
      cls_gemm_backend b = cls_gemm_backend_of(c->e, cls_tower_device(s->tower), (cls_gemm_class)k);
      one = one && b == first;
      snprintf(gemm + strlen(gemm), sizeof gemm - strlen(gemm), "%s%s %s", k ? ", " : "",
               cls_gemm_class_name((cls_gemm_class)k), b == CLS_GEMM_BACKEND_OWN ? "own kernels (gemm)" : "CLBlast");
    }
    if (one) snprintf(gemm, sizeof gemm, "%s", first == CLS_GEMM_BACKEND_OWN ? "own kernels (gemm)" : "CLBlast");
    cls_log(c->e, CLS_LOG_NOTICE,
            "placement: tower %d on device %d:%d (%s, %s): own compute and transfer queues (in-order); programs: %s; "
            "GEMM: %s; batch share %s%d; capacity %d utterances x %d frames; device memory %.1f MiB (parameters, "
            "gradient, Adam m and v %.1f MiB; activations, batch and workspaces %.1f MiB)",
            i, d->platform_index, d->device_index, d->name, d->driver_version, programs,
            gemm, hybrid && balance_auto && live > 1 ? "measured each step, starting at " : "", o->train_batch_size,
            cls_tower_capacity(s->tower), c->max_frames, (double)bytes / 1048576.0, 4.0 * (double)pb / 1048576.0,
            (double)(bytes - 4 * pb) / 1048576.0);
  }
}

/* Runs one tiny step on each tower in turn (one utterance of silence, 2 frames or 1, label 0), so
   that no two towers make CLBlast's first calls at once. */
static cls_status warm_up(cls_crew *c) {
  const cls_mfcc_tables *tab = c->tables;
  int frames = c->max_frames >= 2 ? 2 : 1;
  size_t n_audio = (size_t)tab->window + (size_t)(frames - 1) * (size_t)tab->step;
  const int width = cls_model_input_width(&c->o.model);
  float *audio = calloc(n_audio, sizeof(float));
  float *windows = calloc((size_t)frames * (size_t)width, sizeof(float));
  int frame_count = frames;
  int32_t label = 0, label_len = 1;
  cls_host_batch b;
  memset(&b, 0, sizeof b);
  b.batch = 1;
  b.time = frames;
  b.max_label = 1;
  b.frames = &frame_count;
  b.audio = &audio;
  b.n_audio = &n_audio;
  b.windows = windows;
  b.host_windows = towers_host_only(&c->o); /* as the towers were made */
  b.labels = &label;
  b.label_len = &label_len;
  cls_status st = audio && windows ? CLS_OK : cls_fail(c->e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_model_dropout drop;
  memset(&drop, 0, sizeof drop);
  float loss = 0;
  /* --balance auto, hybrid: two more, timed runs give the first step's speeds, the faster of the two (the
     first run holds each driver's first calls: CLBlast compiles its kernels there; a busy machine slows
     one run), so that a device far slower than the others takes no utterance even in the first step
     (cls_balance_idle). */
  const int probes = c->o.balance == CLS_BALANCE_AUTO && c->o.strategy == CLS_STRATEGY_HYBRID ? 2 : 0;
  for (int i = 0; st == CLS_OK && i < c->n_towers; i++) {
    double best = 0;
    for (int run = 0; st == CLS_OK && c->towers[i].tower && run < 1 + probes; run++) {
      const double t0 = cls_now_ms();
      st = cls_crew_tower_status(c, &c->towers[i],
                                 cls_tower_gradient(c->towers[i].tower, &b, 0, 1, &drop, 0, c->towers[i].grad, &loss));
      const double ms = cls_now_ms() - t0;
      if (run > 0 && (best == 0 || ms < best)) best = ms > 1e-3 ? ms : 1e-3;
    }
    if (best > 0) c->towers[i].probe_speed = (double)frames / (best / 1e3);
  }
  free(audio);
  free(windows);
  return st;
}

/* ---- the state ---- */

cls_status cls_crew_read_state(cls_crew *c, float *p, float *m, float *v) {
  cls_crew_slot *lead = cls_crew_lead(c);
  return lead ? cls_crew_tower_status(c, lead, cls_tower_read_state(lead->tower, p, m, v)) : cls_crew_no_tower(c);
}

cls_status cls_crew_write_state(cls_crew *c, const float *p, const float *m, const float *v) {
  cls_status st = CLS_OK;
  for (int i = 0; st == CLS_OK && i < c->n_towers; i++)
    if (c->towers[i].tower) {
      st = cls_crew_tower_status(c, &c->towers[i], cls_tower_write_state(c->towers[i].tower, p, m, v));
      if (st == CLS_OK) c->towers[i].stale = false;
    }
  return st;
}

cls_status cls_crew_refresh(cls_crew *c, cls_crew_slot *s) {
  if (!s->tower || !s->stale) return CLS_OK;
  cls_status st = cls_crew_read_state(c, c->params, c->m, c->v);
  if (st == CLS_OK) st = cls_crew_tower_status(c, s, cls_tower_write_state(s->tower, c->params, c->m, c->v));
  if (st == CLS_OK) s->stale = false;
  return st;
}

cls_status cls_crew_save_copy(cls_crew *c, const char *kind, const float *params, const float *m, const float *v,
                              const cls_train_state *state, cls_error *err) {
  const char *dir = c->o.save_checkpoint_dir;
  if (!dir || !*dir || cls_world_rank(c->world) != 0) return CLS_OK;
  char path[CLS_PATH_CAP];
  cls_error saved;
  cls_status st = cls_train_checkpoint_save_in(dir, kind, c->o.max_to_keep, &c->o.model, params, m, v, state, path,
                                               sizeof path, &saved);
  if (st != CLS_OK) return cls_error_wrap(err, st, &saved, NULL);
  cls_log(c->e, CLS_LOG_INFO, "Saved %s checkpoint %s", kind, path);
  return CLS_OK;
}

cls_status cls_crew_save(cls_crew *c, const char *kind) {
  const char *dir = c->o.save_checkpoint_dir;
  if (!dir || !*dir || cls_world_rank(c->world) != 0) return CLS_OK;
  cls_status st = cls_crew_read_state(c, c->params, c->m, c->v);
  if (st == CLS_OK) st = cls_crew_save_copy(c, kind, c->params, c->m, c->v, &c->state, cls_engine_errors(c->e));
  if (st == CLS_OK) c->last_save_ms = cls_now_ms();
  return st;
}

int cls_crew_checkpoint_due(const cls_crew *c) {
  return c->o.checkpoint_secs > 0 && cls_now_ms() - c->last_save_ms > c->o.checkpoint_secs * 1e3;
}

int cls_crew_deadline_passed(const cls_crew *c) { return c->deadline_ms > 0 && cls_now_ms() > c->deadline_ms; }

int cls_crew_out_of_time(cls_crew *c) {
  /* Several ranks: out_of_time follows the step's reduction of every rank's deadline (world_step), so
     that every rank stops after the same step. */
  if (!c->out_of_time && cls_world_size(c->world) == 1 && cls_crew_deadline_passed(c)) c->out_of_time = 1;
  return c->out_of_time;
}

/* ---- what every epoch uses ---- */

cls_status cls_crew_start_loader(cls_crew *c, const cls_utterance *u, int n, int batch, int depth, cls_loader **l) {
  cls_loader_options lo = {.tables = c->tables, .n_context = c->o.model.n_context,
                           .host_features = c->o.host_features, .feature_cache = c->o.feature_cache, .depth = depth,
                           .workers = 0 /* automatic */};
  cls_error err;
  return cls_fail_wrap(c->e, cls_loader_start(u, n, batch, &lo, l, &err), &err, NULL);
}

cls_status cls_crew_start_train_loader(cls_crew *c, int epoch, const cls_utterance *u, int n, int batch, int depth,
                                       int local, int global, int first, cls_loader **l) {
  cls_loader_options lo = {.tables = c->tables, .n_context = c->o.model.n_context,
                           .host_features = c->o.host_features, .feature_cache = c->o.feature_cache, .depth = depth,
                           .workers = 0 /* automatic */};
  if (c->o.n_augment > 0) {
    lo.host_features = 0; /* never through the feature cache: the features change every epoch */
    lo.augment = 1;
    lo.run_epoch = epoch;
    lo.epochs = c->o.epochs;
    lo.index_local = local;
    lo.index_global = global;
    lo.index_first = first;
    lo.epoch_size = local > 0 ? n / local * global : n;
    lo.epoch_key = (uint32_t)c->state.epoch; /* the run's epochs continue a loaded checkpoint's */
    lo.augs = c->o.augment;
    lo.n_augs = c->o.n_augment;
    lo.seed = (uint32_t)c->o.random_seed;
    lo.sources = c->sources.by_aug;
    lo.max_frames = c->max_frames;
  }
  cls_error err;
  return cls_fail_wrap(c->e, cls_loader_start(u, n, batch, &lo, l, &err), &err, NULL);
}

void cls_crew_report(cls_progress_fn fn, void *user, const char *phase, const char *set, int epoch, int64_t steps,
                     int64_t total, double loss_sum, double t0, double audio, int finished) {
  if (!fn) return;
  cls_progress p = {phase, set, epoch, steps, total, steps ? loss_sum / (double)steps : 0.0, (cls_now_ms() - t0) / 1e3,
                    audio, finished};
  fn(user, &p);
}

cls_status cls_crew_summarize_step(cls_crew *c, double loss, double audio_s, double wall_s,
                                   const cls_tower_summary *towers, int n_towers, const float *host_grad) {
  cls_summaries *s = c->summaries;
  const int64_t step = c->state.global_step;
  if (!s) return CLS_OK;
  cls_summaries_train_step(s, step, loss, c->state.learning_rate, audio_s, wall_s, towers, n_towers);
  if (!cls_summaries_variables_due(s, step)) return CLS_OK;
  cls_tensor_stats *stats = cls_summaries_scratch(s);
  if (host_grad) {
    cls_param_view v[CLS_MODEL_MAX_TENSORS];
    const int n = cls_model_layout_all(&c->o.model, v, NULL);
    for (int i = 0; i < n; i++) {
      cls_tensor_stats_host(c->params + v[i].offset, v[i].count, &stats[i]);
      cls_tensor_stats_host(host_grad + v[i].offset, v[i].count, &stats[n + i]);
    }
  } else {
    cls_crew_slot *lead = cls_crew_lead(c);
    if (!lead) return cls_crew_no_tower(c);
    cls_status st = cls_crew_tower_status(c, lead, cls_tower_stats(lead->tower, stats));
    if (st != CLS_OK) return st;
  }
  cls_summaries_variables(s, step, &c->o.model);
  return CLS_OK;
}

void cls_crew_warn_nonfinite(cls_crew *c, const cls_host_batch *b, const float *losses, const cls_utterance *u) {
  char names[1024] = "";
  c->steps_skipped++;
  for (int i = 0; i < b->batch; i++)
    if (!isfinite(losses[i]) && strlen(names) < 700)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", *names ? ", " : "", u[b->first + i].path);
  cls_log(c->e, CLS_LOG_WARNING, "the following files caused an infinite (or NaN) loss; the step was not applied: %s",
          names);
}
