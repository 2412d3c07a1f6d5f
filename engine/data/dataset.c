/* DeepSpeech CSV sets (see clspeech/data.h): the header's columns (records from data/csv.h), path
 * resolution, DeepSpeech's size order with reverse and limit, per-sample validation (alphabet,
 * audio header through cls_audio_probe, frames for CTC) with the skip report, and batch ranges. */
#include "clspeech/data.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file_util.h"
#include "clspeech/features.h"
#include "data/audio_problem.h"
#include "data/csv.h"
#include "data/dataset_paths.h"

typedef struct item {
  cls_sample s;
  int seq;  /* position over all the files, for the stable order */
  int skip; /* -1, or the cls_skip_reason */
} item;

struct cls_dataset {
  cls_sample *samples;
  int n;
  char **sources;
  int n_sources;
  cls_dataset_report report;
  int32_t *missing; /* the report's missing_chars */
  int missing_cap;
  int rate, window, step; /* the options' frame geometry */
};

typedef struct item_list {
  item *v;
  int n, cap;
} item_list;

static void free_sample(cls_sample *s) {
  free((void *)s->path);
  free((void *)s->transcript);
  free((void *)s->labels);
}

void cls_dataset_destroy(cls_dataset *ds) {
  if (!ds) return;
  for (int i = 0; i < ds->n; i++) free_sample(&ds->samples[i]);
  free(ds->samples);
  for (int i = 0; i < ds->n_sources; i++) free(ds->sources[i]);
  free(ds->sources);
  for (int r = 0; r < CLS_SKIP_REASONS; r++)
    for (int e = 0; e < ds->report.n_examples[r]; e++) free((void *)ds->report.examples[r][e].path);
  free(ds->missing);
  free(ds);
}

const char *cls_skip_reason_name(cls_skip_reason reason) {
  switch (reason) {
    case CLS_SKIP_EMPTY_TRANSCRIPT: return "empty transcript";
    case CLS_SKIP_MISSING_CHARACTERS: return "characters not in the alphabet";
    case CLS_SKIP_AUDIO_MISSING: return "audio file missing";
    case CLS_SKIP_AUDIO_UNREADABLE: return "audio file unreadable";
    case CLS_SKIP_TOO_LONG: return "transcript too long for its audio";
    case CLS_SKIP_DEVICE_MEMORY: return "audio too long for the device's memory";
    default: return "unknown reason";
  }
}

/* ---- one CSV file ---- */

/* Parses an integer with optional spaces around and an optional sign, as Python's int(). */
static int parse_int64(const char *t, int64_t *out) {
  while (*t == ' ' || *t == '\t') t++;
  int neg = *t == '-';
  if (*t == '-' || *t == '+') t++;
  if (*t < '0' || *t > '9') return 0;
  uint64_t v = 0;
  while (*t >= '0' && *t <= '9') {
    uint64_t d = (uint64_t)(*t++ - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10) return 0;
    v = v * 10 + d;
  }
  while (*t == ' ' || *t == '\t') t++;
  if (*t) return 0;
  *out = neg ? -(int64_t)v : (int64_t)v;
  return 1;
}

static char *dup_str(const char *s) {
  size_t l = strlen(s) + 1;
  char *d = malloc(l);
  if (d) memcpy(d, s, l);
  return d;
}

/* `rel` against the folder of `csv_path` (nothing to do for an absolute path or a CSV without a folder). */
static char *resolve(const char *csv_path, const char *rel) {
  const char *slash = strrchr(csv_path, '/');
  if (rel[0] == '/' || !slash) return dup_str(rel);
  size_t dl = (size_t)(slash - csv_path) + 1, rl = strlen(rel);
  char *p = malloc(dl + rl + 1);
  if (!p) return NULL;
  memcpy(p, csv_path, dl);
  memcpy(p + dl, rel, rl + 1);
  return p;
}

static const char *const column_names[3] = {"wav_filename", "wav_filesize", "transcript"};

/* The header row: the column of each of column_names in col[] (-1 for an absent wav_filesize). */
static cls_status read_header(cls_csv *c, const char *name, int *line, int col[3], int *n_header, cls_error *err) {
  bool have = false;
  cls_status st = cls_csv_record(c, &have, line, err);
  if (st != CLS_OK) return st;
  if (!have) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "%s: empty file; a CSV needs a header row naming wav_filename, wav_filesize and transcript",
                         name);
  }
  *n_header = cls_csv_fields(c);
  for (int i = 0; i < *n_header; i++) {
    for (int k = 0; k < 3; k++) {
      if (strcmp(cls_csv_field(c, i), column_names[k]) != 0) continue;
      if (col[k] >= 0) {
        return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the header names the column %s twice", name,
                             *line, column_names[k]);
      }
      col[k] = i;
    }
  }
  for (int k = 0; k < 3; k += 2) {
    if (col[k] >= 0) continue;
    char names[256] = "";
    size_t used = 0;
    for (int i = 0; i < *n_header && used + 1 < sizeof names; i++) {
      int w = snprintf(names + used, sizeof names - used, "%s\"%s\"", i ? ", " : "", cls_csv_field(c, i));
      if (w < 0) break;
      used += (size_t)w;
    }
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "%s:%d: the header has no %s column (its columns: %s); DeepSpeech CSVs have the header "
                         CLS_DEEPSPEECH_CSV_HEADER, name, *line, column_names[k], names);
  }
  return CLS_OK;
}

/* The current row (CSV line `line`) as the next item. */
static cls_status add_row(const cls_csv *c, const char *name, int line, const int col[3], int n_header,
                          item_list *items, int *seq, cls_error *err) {
  if (cls_csv_fields(c) != n_header) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the row has %d field%s, the header %d", name, line,
                         cls_csv_fields(c), cls_csv_fields(c) == 1 ? "" : "s", n_header);
  }
  const char *wav = cls_csv_field(c, col[0]);
  if (!wav[0])
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: the wav_filename field is empty", name, line);
  int64_t size = 0;
  if (col[1] >= 0 && !parse_int64(cls_csv_field(c, col[1]), &size)) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: wav_filesize \"%.64s\" is not an integer", name,
                         line, cls_csv_field(c, col[1]));
  }
  if (items->n == items->cap) {
    int cap = items->cap ? items->cap * 2 : 64;
    item *v = realloc(items->v, (size_t)cap * sizeof *v);
    if (!v) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    items->v = v;
    items->cap = cap;
  }
  item *it = &items->v[items->n];
  memset(it, 0, sizeof *it);
  it->seq = (*seq)++;
  it->skip = -1;
  it->s.filesize = size;
  it->s.source = name;
  it->s.line = line;
  it->s.path = resolve(name, wav);
  it->s.transcript = dup_str(cls_csv_field(c, col[2]));
  items->n++;
  if (!it->s.path || !it->s.transcript) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
  return CLS_OK;
}

static cls_status load_csv(const char *name, item_list *items, int *seq, cls_error *err) {
  char *text = NULL;
  size_t len = 0;
  cls_status st = cls_read_file_max(name, CLS_CSV_MAX_BYTES, true, &text, &len, err);
  if (st != CLS_OK) return st;
  cls_csv c;
  st = cls_csv_open(&c, name, text, len, err);
  if (st != CLS_OK) {
    free(text);
    return st;
  }
  int line = 0, col[3] = {-1, -1, -1}, n_header = 0;
  bool have = false;
  st = read_header(&c, name, &line, col, &n_header, err);
  while (st == CLS_OK && (st = cls_csv_record(&c, &have, &line, err)) == CLS_OK && have)
    st = add_row(&c, name, line, col, n_header, items, seq, err);
  cls_csv_close(&c);
  free(text);
  return st;
}

/* ---- order ---- */

static int cmp_ascending(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->s.filesize != y->s.filesize) return x->s.filesize < y->s.filesize ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_descending(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->s.filesize != y->s.filesize) return x->s.filesize > y->s.filesize ? -1 : 1;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_seq(const void *a, const void *b) {
  const item *x = *(const item *const *)a, *y = *(const item *const *)b;
  return (x->seq > y->seq) - (x->seq < y->seq);
}

/* ---- validation ---- */

int cls_ctc_min_frames(const int32_t *labels, int n) {
  int need = n > 0 ? n : 0;
  for (int i = 1; i < n; i++) need += labels[i] == labels[i - 1];
  return need;
}

/* Reads the audio header only (cls_audio_probe). -1 when readable, else the skip reason with
   `detail` set. */
static int probe_audio(const char *path, cls_audio_header *h, char *detail, size_t cap) {
  cls_error why = {CLS_OK, ""};
  const cls_audio_problem p = cls_audio_probe(path, h, &why);
  if (p == CLS_AUDIO_FINE) return -1;
  cls_audio_problem_describe(p, why.text, detail, cap);
  return p == CLS_AUDIO_MISSING ? CLS_SKIP_AUDIO_MISSING : CLS_SKIP_AUDIO_UNREADABLE;
}

typedef struct checker {
  const cls_dataset_options *o;
  int rate, window, step;
  cls_dataset *ds;
} checker;

static int add_missing(cls_dataset *ds, int32_t v) {
  for (int i = 0; i < ds->report.n_missing_chars; i++)
    if (ds->missing[i] == v) return 1;
  if (ds->report.n_missing_chars == ds->missing_cap) {
    int cap = ds->missing_cap ? ds->missing_cap * 2 : 16;
    int32_t *m = realloc(ds->missing, (size_t)cap * sizeof *m);
    if (!m) return 0;
    ds->missing = m;
    ds->missing_cap = cap;
  }
  ds->missing[ds->report.n_missing_chars++] = v;
  return 1;
}

/* Checks one sample, filling its labels and audio facts; it->skip gets the reason (detail set) when
 * it is unusable. Fails only for memory. */
static cls_status check_sample(checker *ck, item *it, char *detail, size_t cap) {
  cls_sample *s = &it->s;
  const size_t tl = strlen(s->transcript);
  if (tl == 0) {
    snprintf(detail, cap, "empty transcript");
    it->skip = CLS_SKIP_EMPTY_TRANSCRIPT;
    return CLS_OK;
  }
  int32_t *labels = malloc(tl * sizeof *labels), *missing = malloc(tl * sizeof *missing);
  if (!labels || !missing) {
    free(labels);
    free(missing);
    return CLS_ERR_OUT_OF_MEMORY;
  }
  int n = 0, n_missing = 0;
  cls_status st = cls_alphabet_encode(ck->o->alphabet, s->transcript, labels, (int)tl, &n, missing, (int)tl, &n_missing);
  if (st == CLS_ERR_OUT_OF_MEMORY) {
    free(labels);
    free(missing);
    return st;
  }
  s->labels = labels;
  s->n_labels = n;
  if (n_missing > 0) {
    int w = snprintf(detail, cap, "transcript has characters not in the alphabet: ");
    if (w > 0 && (size_t)w < cap) cls_alphabet_describe_chars(missing, n_missing, detail + w, cap - (size_t)w);
    for (int i = 0; i < n_missing; i++) {
      if (!add_missing(ck->ds, missing[i])) {
        free(missing);
        return CLS_ERR_OUT_OF_MEMORY;
      }
    }
    free(missing);
    it->skip = CLS_SKIP_MISSING_CHARACTERS;
    return CLS_OK;
  }
  free(missing);
  s->repeats = cls_ctc_min_frames(labels, n) - n;
  cls_audio_header info;
  int reason = probe_audio(s->path, &info, detail, cap);
  if (reason >= 0) {
    it->skip = reason;
    return CLS_OK;
  }
  s->source_rate = info.sample_rate;
  s->source_channels = info.channels;
  s->seconds = (double)info.frames / info.sample_rate;
  const cls_frame_count count = cls_audio_frame_count(&info, ck->rate, ck->window, ck->step);
  s->n_samples = count.n_samples;
  const int64_t frames = count.frames;
  s->frames = frames > INT_MAX ? INT_MAX : (int)frames;
  const int64_t need = (int64_t)s->n_labels + s->repeats;
  if (frames < need) {
    char repeats[48] = "";
    if (s->repeats) snprintf(repeats, sizeof repeats, " and %d adjacent repeat%s", s->repeats, s->repeats > 1 ? "s" : "");
    snprintf(detail, cap, "transcript too long for its audio: %d labels%s need %lld frames, the audio gives %d (%.2f s)",
             s->n_labels, repeats, (long long)need, s->frames, s->seconds);
    it->skip = CLS_SKIP_TOO_LONG;
  }
  return CLS_OK;
}

/* ---- loading ---- */

static cls_status add_source(cls_dataset *ds, const char *name, size_t len) {
  char **v = realloc(ds->sources, (size_t)(ds->n_sources + 1) * sizeof *v);
  if (!v) return CLS_ERR_OUT_OF_MEMORY;
  ds->sources = v;
  char *s = malloc(len + 1);
  if (!s) return CLS_ERR_OUT_OF_MEMORY;
  memcpy(s, name, len);
  s[len] = '\0';
  ds->sources[ds->n_sources++] = s;
  return CLS_OK;
}

/* The CSV files of the comma-separated list `csv_files`, in order, as items (their names in ds->sources). */
static cls_status load_sources(cls_dataset *ds, const char *csv_files, item_list *items, cls_error *err) {
  cls_status st = CLS_OK;
  int seq = 0, n_item = 0;
  for (const char *p = csv_files;; n_item++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0) {
      return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "the CSV list \"%s\" has an empty item (item %d)",
                           csv_files, n_item + 1);
    }
    if ((st = add_source(ds, p, len)) != CLS_OK) return cls_error_set(err, st, "out of memory");
    if ((st = load_csv(ds->sources[ds->n_sources - 1], items, &seq, err)) != CLS_OK) return st;
    if (!comma) return CLS_OK;
    p = comma + 1;
  }
}

/* Checks one item and counts it in the report when it is skipped (an error when the options are strict).
 * *oom: the failure is a lack of memory, for which the caller writes the text. */
static cls_status check_item(checker *ck, item *it, bool *oom, cls_error *err) {
  cls_dataset_report *rep = &ck->ds->report;
  char detail[sizeof rep->examples[0][0].detail];
  cls_status st = check_sample(ck, it, detail, sizeof detail);
  if (st != CLS_OK) {
    *oom = true;
    return st;
  }
  if (it->skip < 0 && ck->o->exact_rate && it->s.source_rate != ck->rate) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s:%d: %s: the audio is at %d Hz, not %d Hz, and resampling is off",
                         it->s.source, it->s.line, it->s.path, it->s.source_rate, ck->rate);
  }
  if (it->skip < 0) return CLS_OK;
  if (ck->o->strict) {
    st = it->skip == CLS_SKIP_AUDIO_MISSING || it->skip == CLS_SKIP_AUDIO_UNREADABLE ? CLS_ERR_IO
                                                                                     : CLS_ERR_INVALID_ARGUMENT;
    return cls_error_set(err, st, "%s:%d: %s: %s", it->s.source, it->s.line, it->s.path, detail);
  }
  rep->count[it->skip]++;
  rep->skipped++;
  int e = rep->n_examples[it->skip];
  if (e < CLS_SKIP_EXAMPLES) {
    cls_skip_example *ex = &rep->examples[it->skip][e];
    if (!(ex->path = dup_str(it->s.path))) {
      *oom = true;
      return CLS_ERR_OUT_OF_MEMORY;
    }
    rep->n_examples[it->skip]++;
    ex->source = it->s.source;
    ex->line = it->s.line;
    memcpy(ex->detail, detail, sizeof detail);
  }
  return CLS_OK;
}

cls_status cls_dataset_load(const char *csv_files, const cls_dataset_options *o, cls_dataset **out, cls_error *err) {
  *out = NULL;
  if (!o || !o->alphabet) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "loading a dataset needs an alphabet");
  if (!csv_files || !csv_files[0]) return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "no CSV file given");
  checker ck = {.o = o, .rate = o->sample_rate > 0 ? o->sample_rate : 16000};
  ck.window = o->window > 0 ? o->window : (int)((int64_t)ck.rate * 32 / 1000);
  ck.step = o->step > 0 ? o->step : (int)((int64_t)ck.rate * 20 / 1000);
  if (o->sample_rate < 0 || o->window < 0 || o->step < 0 || ck.window < 1 || ck.step < 1) {
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                         "bad dataset options: sample rate %d Hz, window %d and step %d samples", o->sample_rate,
                         o->window, o->step);
  }
  cls_dataset *ds = calloc(1, sizeof *ds);
  if (!ds) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of memory");
  ck.ds = ds;
  ds->rate = ck.rate;
  ds->window = ck.window;
  ds->step = ck.step;
  item_list items = {0};
  item **by_seq = NULL;
  cls_status st = CLS_OK;
  if ((st = load_sources(ds, csv_files, &items, err)) != CLS_OK) goto fail;
  cls_dataset_report *rep = &ds->report;
  rep->rows = items.n;
  if (items.n > 0) qsort(items.v, (size_t)items.n, sizeof *items.v, o->reverse ? cmp_descending : cmp_ascending);
  int considered = o->limit > 0 && o->limit < items.n ? o->limit : items.n;
  rep->considered = considered;
  /* Validate in CSV order, so that the examples and a strict error name the first bad rows. */
  by_seq = malloc((size_t)(considered ? considered : 1) * sizeof *by_seq);
  if (!by_seq) goto oom;
  for (int i = 0; i < considered; i++) by_seq[i] = &items.v[i];
  qsort(by_seq, (size_t)considered, sizeof *by_seq, cmp_seq);
  for (int i = 0; i < considered; i++) {
    bool oom = false;
    if ((st = check_item(&ck, by_seq[i], &oom, err)) != CLS_OK) {
      if (oom) goto oom;
      goto fail;
    }
  }
  ds->samples = malloc((size_t)(considered - rep->skipped > 0 ? considered - rep->skipped : 1) * sizeof *ds->samples);
  if (!ds->samples) goto oom;
  for (int i = 0; i < items.n; i++) {
    if (i < considered && items.v[i].skip < 0) {
      ds->samples[ds->n++] = items.v[i].s;
      rep->seconds += items.v[i].s.seconds;
    } else {
      free_sample(&items.v[i].s);
    }
  }
  rep->kept = ds->n;
  rep->missing_chars = ds->missing;
  free(items.v);
  free(by_seq);
  *out = ds;
  return CLS_OK;
oom:
  st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of memory while loading %s", csv_files);
fail:
  for (int i = 0; i < items.n; i++) free_sample(&items.v[i].s);
  free(items.v);
  free(by_seq);
  cls_dataset_destroy(ds);
  return st;
}

cls_status cls_dataset_paths(const char *csv, char ***paths, int *n, cls_error *err) {
  item_list items = {0};
  int seq = 0;
  *paths = NULL;
  *n = 0;
  cls_status st = load_csv(csv, &items, &seq, err);
  char **v = st == CLS_OK ? malloc((size_t)(items.n ? items.n : 1) * sizeof *v) : NULL;
  if (st == CLS_OK && !v) st = cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "%s: out of memory", csv);
  for (int i = 0; i < items.n; i++) {
    if (v) {
      v[i] = (char *)items.v[i].s.path; /* the rows stay in file order */
      items.v[i].s.path = NULL;
    }
    free_sample(&items.v[i].s);
  }
  free(items.v);
  if (v) {
    *paths = v;
    *n = items.n;
  }
  return st;
}

int cls_dataset_drop_longer(cls_dataset *ds, int max_frames) {
  cls_dataset_report *rep = &ds->report;
  const int r = CLS_SKIP_DEVICE_MEMORY;
  /* The examples' paths first, so that running out of memory leaves the set as it was. */
  char *paths[CLS_SKIP_EXAMPLES];
  int n_paths = 0;
  for (int i = 0; i < ds->n && rep->n_examples[r] + n_paths < CLS_SKIP_EXAMPLES; i++)
    if (ds->samples[i].frames > max_frames && !(paths[n_paths++] = dup_str(ds->samples[i].path))) {
      for (int k = 0; k < n_paths - 1; k++) free(paths[k]);
      return -1;
    }
  const double limit_s = cls_frames_seconds(max_frames, ds->rate, ds->window, ds->step);
  int n = 0, dropped = 0;
  for (int i = 0; i < ds->n; i++) {
    cls_sample *s = &ds->samples[i];
    if (s->frames <= max_frames) {
      ds->samples[n++] = *s;
      continue;
    }
    if (dropped < n_paths) {
      cls_skip_example *ex = &rep->examples[r][rep->n_examples[r]++];
      ex->path = paths[dropped];
      ex->source = s->source;
      ex->line = s->line;
      snprintf(ex->detail, sizeof ex->detail,
               "too long for the device's memory: %.1f s (%d frames), the limit is %d frames (%.1f s)", s->seconds,
               s->frames, max_frames, limit_s);
    }
    rep->count[r]++;
    rep->skipped++;
    rep->kept--;
    rep->seconds -= s->seconds;
    free_sample(s);
    dropped++;
  }
  ds->n = n;
  return dropped;
}

/* ---- accessors ---- */

int cls_dataset_size(const cls_dataset *ds) { return ds ? ds->n : 0; }

const cls_sample *cls_dataset_sample(const cls_dataset *ds, int i) {
  return ds && i >= 0 && i < ds->n ? &ds->samples[i] : NULL;
}

const cls_dataset_report *cls_dataset_get_report(const cls_dataset *ds) { return &ds->report; }

double cls_dataset_seconds(const cls_dataset *ds) { return ds->report.seconds; }

typedef struct text_out {
  char *s;
  size_t cap, len; /* len: what the whole text needs */
} text_out;

static void put(text_out *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *dst = t->len < t->cap ? t->s + t->len : NULL;
  int w = vsnprintf(dst, dst ? t->cap - t->len : 0, fmt, ap);
  va_end(ap);
  if (w > 0) t->len += (size_t)w;
}

size_t cls_dataset_format_report(const cls_dataset *ds, char *out, size_t cap) {
  const cls_dataset_report *r = &ds->report;
  text_out t = {out, cap, 0};
  if (cap) out[0] = '\0';
  if (r->skipped == 0)
    put(&t, "%d sample%s (%.1f s of audio)", r->kept, r->kept == 1 ? "" : "s", r->seconds);
  else
    put(&t, "%d of %d samples skipped, %d kept (%.1f s of audio)", r->skipped, r->considered, r->kept, r->seconds);
  if (r->considered < r->rows) put(&t, "; limited to the first %d of %d rows", r->considered, r->rows);
  put(&t, "\n");
  for (int k = 0; k < CLS_SKIP_REASONS; k++) {
    if (!r->count[k]) continue;
    put(&t, "  %d %s", r->count[k], cls_skip_reason_name((cls_skip_reason)k));
    if (k == CLS_SKIP_MISSING_CHARACTERS) {
      char chars[1024];
      cls_alphabet_describe_chars(r->missing_chars, r->n_missing_chars, chars, sizeof chars);
      put(&t, ": %s", chars);
    }
    put(&t, "\n");
    for (int e = 0; e < r->n_examples[k]; e++) {
      const cls_skip_example *ex = &r->examples[k][e];
      put(&t, "    %s:%d: %s: %s\n", ex->source, ex->line, ex->path, ex->detail);
    }
    if (r->count[k] > r->n_examples[k]) put(&t, "    ... and %d more\n", r->count[k] - r->n_examples[k]);
  }
  return t.len;
}

/* ---- batches ---- */

int cls_dataset_batches(const cls_dataset *ds, int batch_size, int drop_remainder) {
  if (!ds || batch_size < 1) return 0;
  return ds->n / batch_size + (!drop_remainder && ds->n % batch_size ? 1 : 0);
}

int cls_dataset_batch(const cls_dataset *ds, int batch_size, int drop_remainder, int k, int *first) {
  *first = 0;
  if (k < 0 || k >= cls_dataset_batches(ds, batch_size, drop_remainder)) return 0;
  *first = k * batch_size;
  return ds->n - *first < batch_size ? ds->n - *first : batch_size;
}

void cls_dataset_batch_max(const cls_dataset *ds, int first, int count, int *max_frames, int *max_labels) {
  int mf = 0, ml = 0;
  for (int i = first; i < first + count && i < ds->n; i++) {
    if (i < 0) continue;
    if (ds->samples[i].frames > mf) mf = ds->samples[i].frames;
    if (ds->samples[i].n_labels > ml) ml = ds->samples[i].n_labels;
  }
  if (max_frames) *max_frames = mf;
  if (max_labels) *max_labels = ml;
}
