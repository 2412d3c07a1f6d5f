/* TensorBoard's event files as clspeech writes them (engine/base): CRC-32C against RFC 3720's test
 * vectors (B.4) and the check value of "123456789"; TFRecord framing round trips, a truncated last
 * record is ignored at every cut, a flipped bit is reported; TF's default histogram limits (1551,
 * TF's loop, the float limits decide as the double ones); an event file decoded back with protobuf-c:
 * the file_version first, steps, tags, scalar values, a histogram whose counts sum to the tensor's
 * size and whose empty runs are collapsed as TF does, and an event of 90 values; the flush thread
 * puts an event on disk before close; a folder that cannot be made is an error naming it.
 * TensorBoard's own reader is tests/summaries/check_tensorboard.py's. */
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tf_event.pb-c.h>

#include "base/event_file.h"
#include "base/file_util.h"
#include "base/histogram.h"
#include "base/tfrecord.h"
#include "check.h"

static void test_crc32c(void) {
  unsigned char buf[48];
  memset(buf, 0, 32);
  CHECK_INT(cls_crc32c(buf, 32), 0x8a9136aa);
  memset(buf, 0xff, 32);
  CHECK_INT(cls_crc32c(buf, 32), 0x62a8ab43);
  for (int i = 0; i < 32; i++) buf[i] = (unsigned char)i;
  CHECK_INT(cls_crc32c(buf, 32), 0x46dd794e);
  for (int i = 0; i < 32; i++) buf[i] = (unsigned char)(31 - i);
  CHECK_INT(cls_crc32c(buf, 32), 0x113fdb5c);
  /* An iSCSI SCSI Read (10) command PDU. */
  static const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                        0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                        0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  CHECK_INT(cls_crc32c(pdu, 48), 0xd9963a56);
  CHECK_INT(cls_crc32c("123456789", 9), 0xe3069283);
  CHECK_INT(cls_crc32c("", 0), 0);
  /* TF's mask: a rotation by 15 bits plus a constant. */
  CHECK_INT(cls_crc32c_mask(0), 0xa282ead8);
  CHECK_INT(cls_crc32c_mask(0x8000u), (0x1u + 0xa282ead8u) & 0xffffffffu);
}

static unsigned char *slurp(const char *path, size_t *n) {
  char *data = NULL;
  cls_error err;
  *n = 0;
  if (cls_read_file(path, &data, n, &err) != CLS_OK) return NULL;
  return (unsigned char *)data;
}

static void test_framing(const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/records", dir);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL, "cannot create %s", path);
  if (!f) return;
  const char *records[3] = {"first", "", "the third record, a little longer than the others"};
  for (int i = 0; i < 3; i++) CHECK_INT(cls_tfrecord_write(f, records[i], strlen(records[i])), CLS_OK);
  fclose(f);
  size_t len = 0;
  unsigned char *buf = slurp(path, &len);
  size_t whole = 0;
  for (int i = 0; i < 3; i++) whole += CLS_TFRECORD_HEADER + strlen(records[i]) + CLS_TFRECORD_FOOTER;
  CHECK_INT(len, whole);
  /* The header: the length little-endian, then the masked CRC of those 8 bytes. */
  CHECK_INT(cls_get_le(buf, 8), 5);
  CHECK_INT(cls_get_le(buf + 8, 4), cls_crc32c_mask(cls_crc32c(buf, 8)));
  size_t pos = 0, n = 0;
  const unsigned char *data = NULL;
  for (int i = 0; i < 3; i++) {
    CHECK_INT(cls_tfrecord_next(buf, len, &pos, &data, &n), CLS_TFRECORD_RECORD);
    CHECK(n == strlen(records[i]) && !memcmp(data, records[i], n), "record %d differs", i);
  }
  CHECK_INT(cls_tfrecord_next(buf, len, &pos, &data, &n), CLS_TFRECORD_END);
  /* Every cut inside the last record leaves the first two and then the end, never damage. */
  size_t last = len - (CLS_TFRECORD_HEADER + strlen(records[2]) + CLS_TFRECORD_FOOTER);
  int bad_cuts = 0;
  for (size_t cut = last; cut < len; cut++) {
    size_t p = 0;
    int got = 0;
    cls_tfrecord_read r;
    while ((r = cls_tfrecord_next(buf, cut, &p, &data, &n)) == CLS_TFRECORD_RECORD) got++;
    if (got != 2 || r != CLS_TFRECORD_END) bad_cuts++;
  }
  CHECK(bad_cuts == 0, "%d cuts of the last record were not read as two records and the end", bad_cuts);
  /* A flipped bit in the second record's length, then in the first record's data. */
  size_t second = CLS_TFRECORD_HEADER + 5 + CLS_TFRECORD_FOOTER;
  buf[second] ^= 0x04;
  pos = 0;
  CHECK_INT(cls_tfrecord_next(buf, len, &pos, &data, &n), CLS_TFRECORD_RECORD);
  CHECK_INT(cls_tfrecord_next(buf, len, &pos, &data, &n), CLS_TFRECORD_DAMAGED);
  buf[second] ^= 0x04;
  buf[CLS_TFRECORD_HEADER + 2] ^= 0x80;
  pos = 0;
  CHECK_INT(cls_tfrecord_next(buf, len, &pos, &data, &n), CLS_TFRECORD_DAMAGED);
  CHECK_INT(pos, 0);
  free(buf);
  unlink(path);
}

static void test_limits(void) {
  const double *l = cls_histo_limits();
  const int mid = (CLS_HISTO_BUCKETS - 1) / 2;
  CHECK(l[0] == -DBL_MAX && l[CLS_HISTO_BUCKETS - 1] == DBL_MAX && l[mid] == 0.0, "ends %g %g middle %g", l[0],
        l[CLS_HISTO_BUCKETS - 1], l[mid]);
  CHECK(l[mid + 1] == 1e-12 && l[mid + 2] == 1e-12 * 1.1, "first positive limits %.17g %.17g", l[mid + 1], l[mid + 2]);
  /* TF's loop stops at the first value not below 1e20: the last grown limit is below, the next is not. */
  CHECK(l[CLS_HISTO_BUCKETS - 2] < 1e20 && l[CLS_HISTO_BUCKETS - 2] * 1.1 >= 1e20, "last grown limit %.17g",
        l[CLS_HISTO_BUCKETS - 2]);
  int ascending = 1, symmetric = 1;
  for (int i = 1; i < CLS_HISTO_BUCKETS; i++) ascending &= l[i] > l[i - 1];
  for (int i = 0; i < CLS_HISTO_BUCKETS; i++) symmetric &= l[i] == -l[CLS_HISTO_BUCKETS - 1 - i];
  CHECK(ascending && symmetric, "limits ascending %d symmetric %d", ascending, symmetric);
  /* upper_bound: a value equal to a limit goes to the next bucket. */
  CHECK_INT(cls_histo_bucket(0.0), mid + 1);
  CHECK_INT(cls_histo_bucket(-1e-30), mid);
  CHECK_INT(cls_histo_bucket(1e-12), mid + 2);
  CHECK_INT(cls_histo_bucket(-DBL_MAX), 1);
  CHECK_INT(cls_histo_bucket(INFINITY), CLS_HISTO_BUCKETS - 1);
  CHECK_INT(cls_histo_bucket(NAN), CLS_HISTO_BUCKETS - 1);
  CHECK_INT(cls_histo_bucket(-INFINITY), 0);
  /* The float limits decide as the double ones for floats: on each limit's neighbours, and at random. */
  const float *lf = cls_histo_limits_float();
  int wrong = 0;
  for (int i = 1; i < CLS_HISTO_BUCKETS - 1; i++) {
    float around[3] = {nextafterf((float)l[i], -INFINITY), (float)l[i], nextafterf((float)l[i], INFINITY)};
    for (int k = 0; k < 3; k++) {
      int by_float = 0;
      while (by_float < CLS_HISTO_BUCKETS && !(lf[by_float] > around[k])) by_float++;
      wrong += by_float != cls_histo_bucket(around[k]);
    }
  }
  uint32_t seed = 12345;
  for (int i = 0; i < 100000; i++) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t bits = seed;
    float v;
    memcpy(&v, &bits, sizeof v);
    if (!isfinite(v)) continue;
    int lo = 0, hi = CLS_HISTO_BUCKETS;
    while (lo < hi) {
      int m = (lo + hi) / 2;
      if (lf[m] > v) hi = m;
      else lo = m + 1;
    }
    wrong += lo != cls_histo_bucket(v);
  }
  CHECK(wrong == 0, "%d values bucketed differently by the float limits", wrong);
}

static void test_host_stats(void) {
  float x[5] = {1000.5f, 1000.25f, 1000.75f, 1000.5f, 1000.0f};
  cls_tensor_stats s;
  cls_tensor_stats_host(x, 5, &s);
  CHECK(fabs(cls_tensor_stats_mean(&s) - 1000.4) < 1e-12, "mean %.17g", cls_tensor_stats_mean(&s));
  /* population variance of {.5,.25,.75,.5,0} - .4 -> (0.01+0.0225+0.1225+0.01+0.16)/5 = 0.065 */
  CHECK(fabs(cls_tensor_stats_stddev(&s) - sqrt(0.065)) < 1e-12, "stddev %.17g", cls_tensor_stats_stddev(&s));
  CHECK(s.min == 1000.0 && s.max == 1000.75, "min %g max %g", s.min, s.max);
  CHECK(fabs(cls_tensor_stats_sum(&s) - 5002.0) < 1e-9, "sum %.17g", cls_tensor_stats_sum(&s));
  double sq = 0;
  for (int i = 0; i < 5; i++) sq += (double)x[i] * x[i];
  CHECK(fabs(cls_tensor_stats_sum_squares(&s) - sq) < 1e-6, "sum of squares %.17g, expected %.17g",
        cls_tensor_stats_sum_squares(&s), sq);
  uint64_t total = 0;
  for (int b = 0; b < CLS_HISTO_BUCKETS; b++) total += s.buckets[b];
  CHECK_INT(total, 5);
  CHECK_INT(s.buckets[cls_histo_bucket(1000.5)], 5); /* 1000 .. 1000.75 share one 10% bucket */
}

/* The one event file in dir, or "" */
static void find_events(const char *dir, char *path, size_t cap) {
  path[0] = '\0';
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));)
    if (!strncmp(e->d_name, "events.out.tfevents.", 20)) snprintf(path, cap, "%s/%s", dir, e->d_name);
  if (d) closedir(d);
}

static void test_event_file(const char *dir) {
  char sub[512], path[1024];
  cls_error err;
  snprintf(sub, sizeof sub, "%s/run/train", dir);
  cls_event_file *f = NULL;
  cls_status st = cls_event_file_open(sub, 3600, &f, &err);
  CHECK(st == CLS_OK, "open: %s", err.text);
  if (st != CLS_OK) return;
  /* The name: events.out.tfevents.<10-digit time>.<host>.<pid>.<n>, in the folder made for it. */
  const char *name = strrchr(cls_event_file_path(f), '/') + 1;
  long long when = 0;
  int used = 0;
  CHECK(sscanf(name, "events.out.tfevents.%10lld.%n", &when, &used) == 1 && used == 31 &&
            llabs(when - (long long)time(NULL)) < 3600,
        "file name %s", name);
  /* The file_version event is on disk at once. */
  size_t len = 0;
  unsigned char *buf = slurp(cls_event_file_path(f), &len);
  size_t pos = 0, n = 0;
  const unsigned char *data = NULL;
  CHECK(buf && cls_tfrecord_next(buf, len, &pos, &data, &n) == CLS_TFRECORD_RECORD, "no first record before close");
  free(buf);
  cls_summary *s = cls_summary_create();
  float values[1000];
  for (int i = 0; i < 1000; i++) values[i] = (float)(i - 500) * 1e-3f;
  cls_tensor_stats stats;
  cls_tensor_stats_host(values, 1000, &stats);
  CHECK_INT(cls_summary_scalar(s, "step_loss", 12.5), CLS_OK);
  CHECK_INT(cls_summary_scalar(s, "learning_rate", 0.001), CLS_OK);
  CHECK_INT(cls_summary_histogram(s, "layer_1/weights", &stats), CLS_OK);
  CHECK_INT(cls_summary_scalar(s, "", 1.0), CLS_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_summary_count(s), 3);
  CHECK_INT(cls_event_file_write(f, 7, s, &err), CLS_OK);
  cls_summary_clear(s);
  CHECK_INT(cls_summary_scalar(s, "step_loss", 11.0), CLS_OK);
  CHECK_INT(cls_event_file_write(f, 8, s, &err), CLS_OK);
  cls_summary_destroy(s);
  CHECK_INT(cls_event_file_close(f, &err), CLS_OK);
  find_events(sub, path, sizeof path);
  buf = slurp(path, &len);
  CHECK(buf != NULL, "cannot read the event file in %s", sub);
  if (!buf) return;
  pos = 0;
  int events = 0, histograms = 0;
  while (cls_tfrecord_next(buf, len, &pos, &data, &n) == CLS_TFRECORD_RECORD) {
    Tensorflow__Event *ev = tensorflow__event__unpack(NULL, n, data);
    CHECK(ev != NULL, "record %d is no Event", events);
    if (!ev) break;
    CHECK(ev->wall_time > 1.6e9, "wall_time %f", ev->wall_time);
    if (events == 0) {
      CHECK(ev->what_case == TENSORFLOW__EVENT__WHAT_FILE_VERSION && !strcmp(ev->file_version, "brain.Event:2"),
            "the first event is not file_version brain.Event:2");
    } else if (events == 1) {
      CHECK(ev->step == 7 && ev->what_case == TENSORFLOW__EVENT__WHAT_SUMMARY && ev->summary->n_value == 3,
            "event 1: step %lld", (long long)ev->step);
      Tensorflow__Summary__Value **v = ev->summary->value;
      CHECK(!strcmp(v[0]->tag, "step_loss") && v[0]->simple_value == 12.5f, "step_loss %s %g", v[0]->tag,
            (double)v[0]->simple_value);
      CHECK(!strcmp(v[1]->tag, "learning_rate") && v[1]->simple_value == 0.001f, "learning_rate");
      Tensorflow__HistogramProto *h = v[2]->histo;
      CHECK(!strcmp(v[2]->tag, "layer_1/weights") && v[2]->value_case == TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO,
            "histogram tag %s", v[2]->tag);
      if (h) {
        histograms++;
        double total = 0;
        int empty_runs_collapsed = 1;
        for (size_t k = 0; k < h->n_bucket; k++) {
          total += h->bucket[k];
          if (k && h->bucket[k] == 0 && h->bucket[k - 1] == 0) empty_runs_collapsed = 0;
        }
        CHECK(total == 1000 && h->num == 1000, "counts sum to %g, num %g", total, h->num);
        CHECK(empty_runs_collapsed && h->n_bucket == h->n_bucket_limit && h->n_bucket < 600,
              "%zu buckets, empty runs collapsed %d", h->n_bucket, empty_runs_collapsed);
        CHECK(h->bucket_limit[h->n_bucket - 1] == DBL_MAX, "last limit %g", h->bucket_limit[h->n_bucket - 1]);
        CHECK(h->min == (double)values[0] && h->max == (double)values[999], "min %g max %g", h->min, h->max);
        CHECK(fabs(h->sum - cls_tensor_stats_sum(&stats)) < 1e-9, "sum %g", h->sum);
      }
    } else if (events == 2) {
      CHECK(ev->step == 8 && ev->summary->n_value == 1 && ev->summary->value[0]->simple_value == 11.0f,
            "event 2: step %lld", (long long)ev->step);
    }
    tensorflow__event__free_unpacked(ev, NULL);
    events++;
  }
  CHECK_INT(events, 3);
  CHECK_INT(histograms, 1);
  CHECK_INT(pos, len);
  free(buf);
  unlink(path);
  rmdir(sub);
  snprintf(sub, sizeof sub, "%s/run", dir);
  rmdir(sub);
}

/* A summary of many values (its arrays grow while histograms are added), as a summary step's 72. */
static void test_many_values(const char *dir) {
  char path[1024];
  cls_error err;
  cls_event_file *f = NULL;
  CHECK_INT(cls_event_file_open(dir, 3600, &f, &err), CLS_OK);
  if (!f) return;
  snprintf(path, sizeof path, "%s", cls_event_file_path(f));
  cls_summary *s = cls_summary_create();
  float x[100];
  for (int k = 0; k < 100; k++) x[k] = (float)k;
  for (int i = 0; i < 90; i++) {
    char tag[32];
    snprintf(tag, sizeof tag, "v%d", i);
    cls_tensor_stats st;
    cls_tensor_stats_host(x, (size_t)(i % 3 ? 100 : 1 + i), &st);
    CHECK_INT(i % 2 ? cls_summary_histogram(s, tag, &st) : cls_summary_scalar(s, tag, i), CLS_OK);
  }
  CHECK_INT(cls_event_file_write(f, 3, s, &err), CLS_OK);
  cls_summary_destroy(s);
  CHECK_INT(cls_event_file_close(f, &err), CLS_OK);
  size_t len = 0, pos = 0, n = 0;
  unsigned char *buf = slurp(path, &len);
  const unsigned char *data = NULL;
  int right = 0;
  for (int r = 0; buf && cls_tfrecord_next(buf, len, &pos, &data, &n) == CLS_TFRECORD_RECORD; r++) {
    Tensorflow__Event *ev = tensorflow__event__unpack(NULL, n, data);
    if (ev && r == 1 && ev->summary && ev->summary->n_value == 90)
      for (int i = 0; i < 90; i++) {
        Tensorflow__Summary__Value *v = ev->summary->value[i];
        double want = i % 3 ? 100 : 1 + i;
        right += i % 2 ? v->value_case == TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO && v->histo->num == want
                       : v->simple_value == (float)i;
      }
    if (ev) tensorflow__event__free_unpacked(ev, NULL);
  }
  CHECK_INT(right, 90);
  free(buf);
  unlink(path);
}

/* The flush thread puts a written event on disk while the file is open (polled, up to 20 s). */
static void test_flush_thread(const char *dir) {
  cls_error err;
  cls_event_file *f = NULL;
  CHECK_INT(cls_event_file_open(dir, 0.05, &f, &err), CLS_OK);
  if (!f) return;
  struct stat before, now;
  stat(cls_event_file_path(f), &before);
  cls_summary *s = cls_summary_create();
  cls_summary_scalar(s, "x", 1.0);
  CHECK_INT(cls_event_file_write(f, 1, s, &err), CLS_OK);
  cls_summary_destroy(s);
  int grew = 0;
  for (int i = 0; i < 2000 && !grew; i++) {
    stat(cls_event_file_path(f), &now);
    grew = now.st_size > before.st_size;
    if (!grew) nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  CHECK(grew, "the event did not reach the file while it was open");
  char path[1024];
  snprintf(path, sizeof path, "%s", cls_event_file_path(f));
  CHECK_INT(cls_event_file_close(f, &err), CLS_OK);
  unlink(path);
}

static void test_errors(const char *dir) {
  char blocker[512], sub[600];
  cls_error err;
  snprintf(blocker, sizeof blocker, "%s/a-file", dir);
  FILE *f = fopen(blocker, "w");
  if (f) fclose(f);
  snprintf(sub, sizeof sub, "%s/train", blocker);
  cls_event_file *ef = NULL;
  CHECK_INT(cls_event_file_open(sub, 10, &ef, &err), CLS_ERR_IO);
  CHECK(ef == NULL, "a file was opened");
  CHECK_CONTAINS(err.text, "a-file/train: cannot make the folder");
  CHECK_INT(cls_event_file_open(dir, 0, &ef, &err), CLS_ERR_INVALID_ARGUMENT);
  unlink(blocker);
}

int main(void) {
  char dir[] = "/tmp/clspeech-event-file-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno));
  test_crc32c();
  test_framing(dir);
  test_limits();
  test_host_stats();
  test_event_file(dir);
  test_many_values(dir);
  test_flush_thread(dir);
  test_errors(dir);
  CHECK(rmdir(dir) == 0, "%s is not empty after the test: %s", dir, strerror(errno));
  return check_finish("test_event_file");
}
