/* The longest utterance a training tower can hold on a device (see clspeech/train.h): the device's
 * memory less what does not grow with the utterances (parameters, gradient, Adam slots), over what
 * a frame of every utterance of a batch adds (cls_model_frame_bytes), and the largest buffer within
 * the device's largest allocation and the kernels' 32-bit indices. The data sets skip what exceeds it. */
#include <stdint.h>

#include "clspeech/clspeech.h"
#include "clspeech/model.h"
#include "clspeech/train.h"

int64_t cls_train_frame_limit(const cls_engine *e, int device, const cls_train_options *o, int max_batch, int max_label,
                              uint64_t memory_cap, cls_error *why) {
  cls_error_clear(why);
  const cls_device_info *d = cls_engine_device(e, device);
  if (!d || !o || max_batch < 1 || o->model.n_hidden < 1) return 0;
  uint64_t mem = d->global_mem_bytes, max_alloc = d->max_alloc_bytes;
  if (memory_cap > 0 && memory_cap < mem) mem = memory_cap;
  if (memory_cap > 0 && memory_cap < max_alloc) max_alloc = memory_cap;
  const int towers = o->towers_per_device > 1 ? o->towers_per_device : 1;
  mem /= (uint64_t)towers;
  cls_param_view views[CLS_MODEL_N_TENSORS];
  /* parameters, gradient, Adam m and v, and about as much again for the reduction and packed weights */
  const uint64_t fixed = 6 * (uint64_t)cls_model_layout(&o->model, views) * sizeof(float);
  size_t lstm = 0;
  uint64_t frame = cls_model_frame_bytes(&o->model, max_label, &lstm);
  if (!o->host_features || o->n_augment > 0) frame += (uint64_t)o->features.sample_rate * (uint64_t)o->features.win_step_ms / 1000 * 4;
  const uint64_t B = (uint64_t)max_batch;
  /* A device that reports no memory size is not limited by it. */
  int64_t limit = mem == 0 ? INT64_MAX : mem > fixed ? (int64_t)((mem - fixed) / (frame * B)) : 0;
  if (max_alloc > 0 && (int64_t)(max_alloc / (lstm * B)) < limit) limit = (int64_t)(max_alloc / (lstm * B));
  /* lstm.c: 2^31 floats a buffer */
  const int64_t indices = (int64_t)(INT32_MAX / (lstm / sizeof(float) * B));
  if (indices < limit) limit = indices;
  cls_error_set(why, limit > 0 ? CLS_OK : CLS_ERR_DEVICE_OUT_OF_MEMORY,
                "device %d:%d (%s) with batches of %d%s: %.1f MiB of memory%s, %.1f MiB fixed, %.1f KiB a frame",
                d->platform_index, d->device_index, d->name, max_batch, towers > 1 ? " on each of its towers" : "",
                (double)mem / 1048576.0, memory_cap > 0 && memory_cap <= d->global_mem_bytes ? " (capped)" : "",
                (double)fixed / 1048576.0, (double)frame / 1024.0);
  return limit;
}
