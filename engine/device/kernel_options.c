/* Per-device kernel build options (see kernel_options.h). The table is deliberately small: a row
 * per device class whose tunables differ, and a default row. Benchmarks (`clspeech bench`) are where
 * new rows come from; a row is only worth adding with a measurement behind it. */
#include "device/kernel_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device_select.h"

typedef struct options_row {
  int kind;              /* cls_device_kind, or -1 for any */
  const char *match;     /* selection item matched against the device (NULL: any) */
  const char *options;
} options_row;

/* CLS_WG_1D: work-group size of the 1-D elementwise and reduction kernels (a power of two).
 * CLS_MFCC_FILTERBANK_WG: frames per work-group of the MFCC filterbank (kernels/mfcc.cl; 64 unless set). On
 * a CPU device 1, which PoCL runs as a plain loop: its work-groups of 64 frames in vector lanes read the
 * spectrum across frames (4 KiB apart) and update each lane's channel sums at run-time indices: 3.0-4.1
 * against 4.1-5.0 ms for 16 x 2.9 s (2320 frames; POCL_DEBUG=timing, 6 runs each, 2 Zen 3 cores). */
static const options_row table[] = {
    {CLS_DEVICE_GPU, NULL, "-DCLS_WG_1D=256"},
    {CLS_DEVICE_CPU, NULL, "-DCLS_WG_1D=64 -DCLS_MFCC_FILTERBANK_WG=1"},
    {-1, NULL, "-DCLS_WG_1D=64"}, /* default row */
};

/* The CPU GEMM's tile (kernels/gemm.cl) by the device's preferred float vector width W (or the width a
 * -DCLS_GEMM_W=N override gives: gemm_width, below): MR rows by NV vectors of W floats, MR x NV
 * accumulators held in registers. 16 (AVX-512, 32 registers): 6 x 4 float16;
 * 8 (AVX2, 16 registers): 6 x 2 float8, 12 accumulators, 2 loads and a broadcast; narrower (SSE,
 * NEON): 6 x 2 float4. Only CPU devices run it by default (GPUs use CLBlast); a device that reports no
 * width gets the kernel's own defaults. The tile for few rows on a packed B (the LSTM's recurrent
 * products, 16 rows at B = 16): 8 x 2 float16 on AVX-512, the median run 1.04-1.07x the 6 x 4 tile at
 * H = 2048 and 0.99-1.07x at H = 512 (bench_gemm --versus on 2 EPYC cores, docs/lab-notes/gemm-kernels.md);
 * 4 x 3 float8 on AVX2 (16 rows: four whole tiles, where 6-row tiles compute 18; 12 accumulators, 3 loads and a
 * broadcast), the forward product 1.11-1.25x and the backward 1.00-1.05x the 6 x 2 tile at H = 512 and
 * 1.03-1.11x / 1.03-1.09x at H = 2048 (median run-by-run ratios of bench_gemm --versus, 3 rounds at
 * H = 512 and 2 at 2048, 15-21 turns, 2 Zen 3 cores); elsewhere the device's own tile. On AVX2 the tile's k
 * loop is unrolled by 4 (CLS_GEMM_K_UNROLL): 21 instructions per step instead of 23-24, the loop's counter
 * and bound no longer read from the stack; against no unrolling (bench_gemm --versus
 * "cpu=-DCLS_GEMM_K_UNROLL=1", one round at each H, 2 Zen 3 cores) the step's GEMMs took 0.95x the time
 * at H = 256, 0.98x at 512 and 0.97x at 2048; unrolled by 2, 1.02x the time of by 4. Not measured on
 * AVX-512, which keeps the loop as written. Also on AVX2, the output layer's weight gradient
 * (gemm_tn_narrow) copies each block of 32 rows of x (32 steps of k) into private memory before its tiles
 * run (CLS_GEMM_NARROW_COPY): 0.86-0.87x the time at H = 512 and 0.55x at 2048 (kernels/gemm_tn_narrow.h).
 * Tuning runs (`clspeech bench --tune --tune_kernels own`, docs/lab-notes/own-tuning.md): the AVX-512 row held
 * on 2 Zen 4 cores at H = 256 and 512 (2026-12-07, 21 builds, every candidate timed shape by shape beside
 * it at 1.005x its time or more). The AVX2 and narrower rows have had no tuning run yet. The LSTM's
 * one-kernel recurrence (kernels/lstm_seq.cl) has a tile of its own (CLS_LSTM_SEQ_MR x _NV), which the
 * tuning searches as its own group: on AVX-512, 8 x 2 float16, 1.39x the per-step path at H = 256
 * (docs/lab-notes/lstm-sequence.md), held in a tuning run on 2 Zen 4 cores at H = 256 and 512 (2026-12-07:
 * the six other tiles took 1.09-1.78x its time, docs/lab-notes/own-tuning.md); on AVX2 4 x 3 float8, not
 * measured against others. */
typedef struct gemm_row {
  unsigned min_width;
  const char *options;
} gemm_row;

static const gemm_row gemm_table[] = {
    {16, "-DCLS_GEMM_W=16 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=4 -DCLS_GEMM_MR_FEW=8 -DCLS_GEMM_NV_FEW=2 -DCLS_LSTM_SEQ_MR=8 "
         "-DCLS_LSTM_SEQ_NV=2"},
    {8, "-DCLS_GEMM_W=8 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=2 -DCLS_GEMM_MR_FEW=4 -DCLS_GEMM_NV_FEW=3 -DCLS_GEMM_K_UNROLL=4 "
        "-DCLS_GEMM_NARROW_COPY=1 -DCLS_LSTM_SEQ_MR=4 -DCLS_LSTM_SEQ_NV=3"},
    {1, "-DCLS_GEMM_W=4 -DCLS_GEMM_MR=6 -DCLS_GEMM_NV=2"},
};

/* Options every build gets: the language version we write kernels in, and no relaxed math, so that
 * results match the float32 references. */
static const char base_options[] = "-cl-std=CL1.2";

static int append(char **buf, size_t *len, size_t *cap, const char *text, size_t n) {
  if (*len + n + 2 > *cap) {
    size_t grown = (*len + n + 2) * 2;
    char *p = realloc(*buf, grown);
    if (!p) return -1;
    *buf = p;
    *cap = grown;
  }
  if (*len > 0) (*buf)[(*len)++] = ' ';
  memcpy(*buf + *len, text, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

/* The override entry at `entry` ("SEL=OPTIONS", up to ';' or the end): sets *options and *n to its
 * options when its item matches the device (*n = 0 when not, or when the entry is empty), reports a
 * malformed one (no '=') in *bad_entry, and returns the next entry (NULL after the last). */
static const char *override_entry(const cls_device_info *d, const char *entry, const char **options, size_t *n,
                                  const char **bad_entry) {
  const char *end = strchr(entry, ';');
  size_t len = end ? (size_t)(end - entry) : strlen(entry);
  const char *eq = memchr(entry, '=', len);
  *options = NULL;
  *n = 0;
  if (len > 0 && !eq) {
    if (bad_entry && !*bad_entry) *bad_entry = entry;
  } else if (len > 0) {
    char item[256];
    size_t item_len = (size_t)(eq - entry);
    while (item_len > 0 && entry[item_len - 1] == ' ') item_len--;
    size_t skip = 0;
    while (skip < item_len && entry[skip] == ' ') skip++;
    if (item_len - skip < sizeof item) {
      memcpy(item, entry + skip, item_len - skip);
      item[item_len - skip] = '\0';
      if (item[0] && cls_select_item_matches(d, item)) {
        *options = eq + 1;
        *n = len - (size_t)(eq + 1 - entry);
      }
    }
  }
  return end ? end + 1 : NULL;
}

/* The float vector width the GEMM row is chosen by: the last -DCLS_GEMM_W=N among the overrides that
 * match the device, else the device's preferred width. So an override of the width takes that width's
 * whole row (its tiles, few-rows tile included), which it then overrides, rather than the device's row
 * with only W changed. */
static unsigned gemm_width(const cls_device_info *d, const char *overrides) {
  static const char key[] = "-DCLS_GEMM_W=";
  unsigned width = d->vector_width_float;
  const char *options;
  size_t n;
  for (const char *entry = overrides; entry && *entry;) {
    entry = override_entry(d, entry, &options, &n, NULL);
    for (const char *at = options; at && (at = strstr(at, key)) && at < options + n; at += sizeof key - 1)
      width = (unsigned)strtoul(at + sizeof key - 1, NULL, 10);
  }
  return width;
}

char *cls_kernel_options_for(const cls_device_info *d, const char *stored, const char *overrides,
                             const char **bad_entry) {
  if (bad_entry) *bad_entry = NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  if (append(&buf, &len, &cap, base_options, strlen(base_options))) return NULL;
  for (size_t r = 0; r < sizeof table / sizeof table[0]; r++) {
    const options_row *row = &table[r];
    if (row->kind >= 0 && row->kind != (int)d->kind) continue;
    if (row->match && !cls_select_item_matches(d, row->match)) continue;
    if (append(&buf, &len, &cap, row->options, strlen(row->options))) goto oom;
    break;
  }
  const unsigned width = d->kind == CLS_DEVICE_CPU ? gemm_width(d, overrides) : 0;
  for (size_t r = 0; d->kind == CLS_DEVICE_CPU && r < sizeof gemm_table / sizeof gemm_table[0]; r++) {
    if (width < gemm_table[r].min_width) continue;
    if (append(&buf, &len, &cap, gemm_table[r].options, strlen(gemm_table[r].options))) goto oom;
    break;
  }
  if (stored && stored[0] && append(&buf, &len, &cap, stored, strlen(stored))) goto oom;
  for (const char *entry = overrides; entry && *entry;) {
    const char *options;
    size_t n;
    entry = override_entry(d, entry, &options, &n, bad_entry);
    if (n > 0 && append(&buf, &len, &cap, options, n)) goto oom;
  }
  return buf;
oom:
  free(buf);
  return NULL;
}

/* Whether `item` starts with `prefix`. */
static bool item_is(const char *item, const char *prefix) { return !strncmp(item, prefix, strlen(prefix)); }

/* The length of the macro name of a -DNAME or -DNAME=VALUE item (of `n` bytes), 0 for any other item. */
static size_t defined_name(const char *item, size_t n) {
  if (n < 3 || strncmp(item, "-D", 2) != 0) return 0;
  const char *eq = memchr(item, '=', n);
  return (size_t)((eq ? eq : item + n) - item) - 2;
}

/* Whether the item (of `n` bytes) goes to the family: gemm.cl's and lstm_seq.cl's own items to them alone,
 * the GEMM's width to both (lstm_seq's vectors: gemm_shape.h), every other item to every family. */
static bool family_keeps(const char *item, size_t n, bool gemm, bool seq) {
  static const char width[] = "-DCLS_GEMM_W";
  if (defined_name(item, n) == sizeof width - 3 && !strncmp(item, width, sizeof width - 1)) return gemm || seq;
  if (item_is(item, "-DCLS_GEMM_")) return gemm;
  if (item_is(item, "-DCLS_LSTM_SEQ_")) return seq;
  return true;
}

/* Whether an item of `rest` that the family keeps defines the same macro as the -D item `item` (name of
 * `name` bytes) again: a later definition wins, as in the compiler, which warns of the redefinition. */
static bool defined_again(const char *item, size_t name, const char *rest, bool gemm, bool seq) {
  for (const char *s = rest; *s;) {
    while (*s == ' ') s++;
    const size_t n = strcspn(s, " ");
    if (n && defined_name(s, n) == name && !strncmp(s + 2, item + 2, name) && family_keeps(s, n, gemm, seq))
      return true;
    s += n;
  }
  return false;
}

char *cls_kernel_options_of_family(const char *options, const char *family) {
  const bool gemm = !strcmp(family, "gemm"), seq = !strcmp(family, "lstm_seq");
  char *out = malloc(strlen(options) + 1);
  if (!out) return NULL;
  size_t len = 0;
  for (const char *s = options; *s;) {
    while (*s == ' ') s++;
    const size_t item = strcspn(s, " "), name = defined_name(s, item);
    const bool kept = item && family_keeps(s, item, gemm, seq) && !(name && defined_again(s, name, s + item, gemm, seq));
    if (kept) {
      if (len) out[len++] = ' ';
      memcpy(out + len, s, item);
      len += item;
    }
    s += item;
  }
  out[len] = '\0';
  return out;
}
