/* TensorFlow event files, which TensorBoard reads: summaries (tagged scalars and histograms) built
 * in memory, then written as one `Event` protobuf message (tf_event.proto, through protobuf-c) per
 * step, framed as TFRecords (tfrecord.h). A file is named as TensorFlow 2's writer names them,
 * events.out.tfevents.<10-digit Unix time>.<host>.<pid>.<n>, and starts with the file_version event
 * "brain.Event:2". Written through stdio and flushed by a thread of the file's own at least every
 * flush_secs and on close, so that a crash loses at most that window (a record cut short by a crash
 * is skipped by readers, TensorBoard's and cls_tfrecord_next alike). Host only; thread-safe. */
#ifndef CLS_EVENT_FILE_H
#define CLS_EVENT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"
#include "clspeech/base.h"

/* The summary of one step being built: a list of tagged values. */
typedef struct cls_summary cls_summary;

cls_summary *cls_summary_create(void); /* NULL when out of memory */
void cls_summary_destroy(cls_summary *summary);
/* Empties it for the next step (keeps its memory). */
void cls_summary_clear(cls_summary *summary);
int cls_summary_count(const cls_summary *summary);
/* Adds a scalar (TensorBoard's Scalars) or a histogram of a tensor's statistics (its Histograms and
 * Distributions: TF's default buckets, runs of empty buckets collapsed as TF's EncodeToProto does).
 * The tag is copied. CLS_ERR_OUT_OF_MEMORY, or CLS_ERR_INVALID_ARGUMENT for a NULL or empty tag. */
cls_status cls_summary_scalar(cls_summary *summary, const char *tag, double value);
cls_status cls_summary_histogram(cls_summary *summary, const char *tag, const cls_tensor_stats *stats);

typedef struct cls_event_file cls_event_file;

/* Makes `dir` (with its parents) and a new event file in it; writes and flushes the file_version
 * event. flush_secs > 0: the longest a written event stays in memory. CLS_ERR_IO with `err` naming
 * the folder or file and why. */
cls_status cls_event_file_open(const char *dir, double flush_secs, cls_event_file **out, cls_error *err);
/* Appends an event of the summary at `step`, stamped with the current wall time. After a write or
 * flush has failed, every call fails with that first error (CLS_ERR_IO, text in err). */
cls_status cls_event_file_write(cls_event_file *file, int64_t step, const cls_summary *summary, cls_error *err);
/* Flushes, stops the flush thread and closes; the status of the file's writes (NULL: CLS_OK). */
cls_status cls_event_file_close(cls_event_file *file, cls_error *err);
const char *cls_event_file_path(const cls_event_file *file);

#endif
