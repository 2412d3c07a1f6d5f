/* GEMM plan (see clspeech/ops.h): the backend per device and shape class, the own backend's packing and
 * launches (kernels/gemm.cl), the CLBlast calls, the argument and buffer checks both share, and the
 * packing scratch. Nothing here waits on the host. */
#include "ops/gemm.h"

#include <clblast_c.h>
#include <limits.h>
#include <stdlib.h>

#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "work_items.h"


/* Largest packed B chunk by default: 1 Mi floats (4 MiB), a few L2s' worth, so that a panel is still
 * in cache when the tile kernel reads it and the scratch stays small beside the model. */
#define DEFAULT_CHUNK_FLOATS ((size_t)1 << 20)

/* Steps of k per work-item of gemm_pack_b: 256 x NR floats of B (16 KiB with NR = 16) written in one run
   (64 to 512 measured alike at the weight-gradient shapes, H = 512, 2 Zen 3 cores), and of gemm_pack_a for an
   A not transposed (256 x MR). A transposed A is packed PACK_A_ROWS of its rows per work-item, every tile of
   each, on a grid of 1 x ceil(k / PACK_A_ROWS) (kernels/gemm.cl). */
#define PACK_KB 256
#define PACK_A_ROWS 16

/* The walk of gemm_tile (kernels/gemm.cl). Along rows, SPAN_TILES n tiles per work-group, when an M tile's
   rows of A (MR x k floats) fit in the plan's row_walk_bytes (DEFAULT_ROW_WALK_BYTES, within L1) and A has
   more than MAX_PER_TILES tiles. Measured on 2 Zen 3 cores (H = 512: k = 512; medians of 7 runs taking
   turns, bench_gemm at 1d674ff with the walk switched per run) against the column walk as it was then (2
   tiles per group): the input projection 77 against 64 % of the FMA peak, dense_dx 75 against 66 %, the
   output layer's dx (k = 29) at H = 2048 58-60 against 22-24 % (the column walk wrote C a column strip
   at a time); spans of 8 to 128 measured alike; at k = 2048 and 2400 the two walks measured alike.
   Otherwise down columns: all the M tiles of an A of at most MAX_PER_TILES (the recurrent products' 16
   rows: 3 tiles) in one work-group when a B panel (k x NR floats) fits in L1 (PANEL_L1_BYTES), so that
   the group's further tiles read it from there, else one tile per work-group (the recurrent products at
   H = 2048: 5.3 against 6.3 ms; the row walk was 1.4-1.8 times slower for them). */
#define SPAN_TILES 32
#define DEFAULT_ROW_WALK_BYTES ((size_t)24 << 10)
#define MAX_PER_TILES 4
#define PANEL_L1_BYTES ((size_t)32 << 10)

/* A band of m tiles holds about this much of A (256 KiB: half a Zen 3 or Skylake-SP L2). */
#define DEFAULT_BAND_BYTES ((size_t)256 << 10)

/* One tile geometry of the packed-panel kernels (kernels/gemm_tile.h): MR x NR tiles of C. */
typedef struct tile_geometry {
  cl_kernel pack_b, tile;
  const char *pack_b_name, *tile_name;
  int mr, nr;
} tile_geometry;

struct cls_gemm_plan {
  cls_engine *engine;
  cls_error *err; /* where enqueue-time failures go: the engine's own, or its owner's (a tower's) */
  int device;
  cl_context context;
  cls_device_kind kind;
  cls_gemm_backend forced;  /* AUTO: by shape class, as cls_gemm_backend_of says */
  cls_gemm_backend by_class[CLS_GEMM_N_CLASSES]; /* cls_gemm_backend_of the device, at create */
  cl_kernel pack_a, narrow; /* gemm_pack_a (the wide tile's MR), gemm_tn_narrow */
  cl_kernel few_chunks;     /* gemm_few_chunks, when its geometry kernel says it is on (few_chunk > 0) */
  int few_chunk;            /* its steps of k per chunk (CLS_GEMM_FEW_CHUNK); 0: gemm_tile_few only */
  int few_chunk_tiles;      /* the most m tiles it takes (FEW_CHUNK_TILES) */
  size_t few_chunks_bytes;  /* ... for a packed B of more than this many bytes (a quarter of the device's cache) */
  tile_geometry wide;       /* the device's tile (gemm_tile): the own backend's MR x NR */
  tile_geometry thin;       /* half the columns (gemm_tile_narrow), for n <= thin.nr */
  tile_geometry few;        /* for products of few rows on a packed B (gemm_tile_few; see packed_geometry) */
  cls_gemm_pack_a pack_a_mode;
  size_t chunk_floats;
  size_t band_bytes;        /* rows of A per band of m groups (the column walk): about this many bytes */
  size_t row_walk_bytes;    /* the row walk when an M tile's rows of A hold at most this many bytes */
  cl_mem scratch;
  size_t scratch_floats;
  bool own_loaded;          /* the own backend's kernels above are created (load_own) */
};

const char *cls_gemm_backend_name(cls_gemm_backend b) {
  switch (b) {
    case CLS_GEMM_BACKEND_OWN: return "own";
    case CLS_GEMM_BACKEND_CLBLAST: return "clblast";
    default: return "auto";
  }
}

/* The required work-group size of the never-launched kernel `name`, through which gemm.cl tells the host a
   kernel's compile-time geometry (its first two sizes, each at least 1). */
static cls_status reqd_size(cls_engine *e, cls_device *d, const char *name, size_t wg[3]) {
  cl_kernel geometry = NULL;
  wg[0] = wg[1] = wg[2] = 0;
  cls_status st = cls_device_kernel(e, d, "gemm", name, &geometry);
  if (st == CLS_OK) {
    cl_int err = clGetKernelWorkGroupInfo(geometry, d->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, 3 * sizeof *wg, wg, NULL);
    if (err != CL_SUCCESS || wg[0] < 1 || wg[1] < 1)
      st = cls_fail(e, CLS_ERR_OPENCL, "gemm: reading %s's reqd_work_group_size failed: %s", name,
                    cls_cl_error_name(err));
  }
  if (geometry) clReleaseKernel(geometry);
  return st;
}

/* A geometry's kernels, and its MR and NR from the never-launched kernel `name`. */
static cls_status load_geometry(cls_engine *e, cls_device *d, const char *name, tile_geometry *g) {
  size_t wg[3];
  cls_status st = cls_device_kernel(e, d, "gemm", g->pack_b_name, &g->pack_b);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "gemm", g->tile_name, &g->tile);
  if (st == CLS_OK) st = reqd_size(e, d, name, wg);
  g->mr = st == CLS_OK ? (int)wg[0] : 0;
  g->nr = st == CLS_OK ? (int)wg[1] : 0;
  return st;
}

/* The device's global memory cache when it does not say (PoCL reports the last-level cache: 32 MiB on the
   2-core Zen 3 machines). */
#define DEFAULT_CACHE_BYTES ((uint64_t)32 << 20)

/* gemm_few_chunks on CPU devices, its chunk length and most m tiles (gemm_few_chunks_geometry's
   reqd_work_group_size: the length plus one, the tiles), and the size of packed B from which it is taken. */
static cls_status load_few_chunks(cls_engine *e, cls_device *d, cls_gemm_plan *p) {
  size_t wg[3];
  cls_status st = reqd_size(e, d, "gemm_few_chunks_geometry", wg);
  if (st != CLS_OK) return st;
  p->few_chunk = (int)wg[0] - 1;
  p->few_chunk_tiles = (int)wg[1];
  /* only CPU devices take it (measured there; its accumulators in private memory would spill on a GPU) */
  if (p->few_chunk > 0 && d->info.kind == CLS_DEVICE_CPU)
    st = cls_device_kernel(e, d, "gemm", "gemm_few_chunks", &p->few_chunks);
  const uint64_t cache = d->info.global_mem_cache_bytes ? d->info.global_mem_cache_bytes : DEFAULT_CACHE_BYTES;
  p->few_chunks_bytes = (size_t)(cache / 4);
  return st;
}

/* The own backend's kernels, created only for a plan whose device takes it for some shape class (or
   that is forced to it): a device whose every GEMM goes to CLBlast never creates them, so a driver
   that builds kernels/gemm.cl but cannot run one of its kernels trains all the same. */
static cls_status load_own(cls_gemm_plan *p) {
  if (p->own_loaded) return CLS_OK;
  cls_device *d = NULL;
  cls_engine *e = p->engine;
  cls_status st = cls_ops_device(e, p->device, &d);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "gemm", "gemm_pack_a", &p->pack_a);
  if (st == CLS_OK) st = cls_device_kernel(e, d, "gemm", "gemm_tn_narrow", &p->narrow);
  if (st == CLS_OK) st = load_geometry(e, d, "gemm_geometry", &p->wide);
  if (st == CLS_OK) st = load_geometry(e, d, "gemm_geometry_narrow", &p->thin);
  if (st == CLS_OK) st = load_geometry(e, d, "gemm_geometry_few", &p->few);
  if (st == CLS_OK) st = load_few_chunks(e, d, p);
  p->own_loaded = st == CLS_OK;
  return st;
}

cls_status cls_gemm_create(cls_engine *e, int device, cls_gemm_plan **out) {
  if (!out) return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "gemm: no plan pointer given");
  *out = NULL;
  cls_device *d = NULL;
  cls_status st = cls_ops_device(e, device, &d);
  if (st != CLS_OK) return st;
  cls_gemm_plan *p = calloc(1, sizeof *p);
  if (!p) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  p->engine = e;
  p->err = cls_engine_errors(e);
  p->device = device;
  p->context = d->context;
  p->kind = d->info.kind;
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) p->by_class[c] = cls_gemm_backend_of(e, device, (cls_gemm_class)c);
  p->pack_a_mode = CLS_GEMM_PACK_A_TRANSPOSED;
  p->chunk_floats = DEFAULT_CHUNK_FLOATS;
  p->band_bytes = DEFAULT_BAND_BYTES;
  p->row_walk_bytes = DEFAULT_ROW_WALK_BYTES;
  p->wide = (tile_geometry){NULL, NULL, "gemm_pack_b", "gemm_tile", 0, 0};
  p->thin = (tile_geometry){NULL, NULL, "gemm_pack_b_narrow", "gemm_tile_narrow", 0, 0};
  p->few = (tile_geometry){NULL, NULL, "gemm_pack_b_few", "gemm_tile_few", 0, 0};
  bool uses_own = false;
  for (int c = 0; c < CLS_GEMM_N_CLASSES; c++) uses_own |= p->by_class[c] == CLS_GEMM_BACKEND_OWN;
  if (uses_own) st = load_own(p);
  if (st != CLS_OK) {
    cls_gemm_destroy(p);
    return st;
  }
  *out = p;
  return CLS_OK;
}

void cls_gemm_destroy(cls_gemm_plan *p) {
  if (!p) return;
  if (p->pack_a) clReleaseKernel(p->pack_a);
  const tile_geometry *gs[3] = {&p->wide, &p->thin, &p->few};
  for (int i = 0; i < 3; i++) {
    if (gs[i]->pack_b) clReleaseKernel(gs[i]->pack_b);
    if (gs[i]->tile) clReleaseKernel(gs[i]->tile);
  }
  if (p->narrow) clReleaseKernel(p->narrow);
  if (p->few_chunks) clReleaseKernel(p->few_chunks);
  if (p->scratch) clReleaseMemObject(p->scratch);
  free(p);
}

cls_status cls_gemm_set_backend(cls_gemm_plan *p, cls_gemm_backend b) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  if (b != CLS_GEMM_BACKEND_AUTO && b != CLS_GEMM_BACKEND_OWN && b != CLS_GEMM_BACKEND_CLBLAST)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "gemm: unknown backend %d", (int)b);
  cls_status st = b == CLS_GEMM_BACKEND_OWN ? load_own(p) : CLS_OK;
  if (st == CLS_OK) p->forced = b;
  return st;
}

cls_gemm_backend cls_gemm_get_backend(const cls_gemm_plan *p) {
  return cls_gemm_get_class_backend(p, CLS_GEMM_CLASS_BIG);
}

cls_gemm_backend cls_gemm_get_class_backend(const cls_gemm_plan *p, cls_gemm_class c) {
  if (p->forced != CLS_GEMM_BACKEND_AUTO) return p->forced;
  return c >= 0 && c < CLS_GEMM_N_CLASSES ? p->by_class[c] : cls_gemm_backend_for(p->kind);
}

cls_gemm_backend cls_gemm_backend_for(cls_device_kind kind) {
  return kind == CLS_DEVICE_CPU ? CLS_GEMM_BACKEND_OWN : CLS_GEMM_BACKEND_CLBLAST;
}

cls_gemm_backend cls_gemm_backend_of(cls_engine *e, int device, cls_gemm_class c) {
  if (!e || device < 0 || device >= cls_engine_device_count(e)) return CLS_GEMM_BACKEND_CLBLAST;
  const cls_device *d = &e->devices[device];
  const int stored = c >= 0 && c < CLS_GEMM_N_CLASSES ? d->gemm_backend[c] : 0;
  if (stored == CLS_GEMM_BACKEND_OWN || stored == CLS_GEMM_BACKEND_CLBLAST) return (cls_gemm_backend)stored;
  return cls_gemm_backend_for(d->info.kind);
}

void cls_gemm_geometry(const cls_gemm_plan *p, int *mr, int *nr) {
  if (mr) *mr = p->wide.mr;
  if (nr) *nr = p->wide.nr;
}

void cls_gemm_set_pack_a(cls_gemm_plan *p, cls_gemm_pack_a mode) { p->pack_a_mode = mode; }
void cls_gemm_set_chunk_floats(cls_gemm_plan *p, size_t floats) { p->chunk_floats = floats ? floats : 1; }
void cls_gemm_set_band_bytes(cls_gemm_plan *p, size_t bytes) { p->band_bytes = bytes; }
void cls_gemm_set_row_walk_bytes(cls_gemm_plan *p, size_t bytes) { p->row_walk_bytes = bytes; }
size_t cls_gemm_set_few_chunks_bytes(cls_gemm_plan *p, size_t bytes) {
  const size_t was = p->few_chunks_bytes;
  p->few_chunks_bytes = bytes;
  return was;
}
bool cls_gemm_has_few_chunks(const cls_gemm_plan *p) { return p->few_chunks != NULL; }

/* ---- checks ---- */

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* A matrix stored row-major as rows x cols with leading dimension ld, from view v: the leading
 * dimension covers a row, the buffer holds the last element, and (own backend) every index fits the
 * kernels' 32-bit arguments. */
static cls_status check_matrix(cls_gemm_plan *p, const char *op, const char *name, cls_buf v, size_t rows, size_t cols,
                               size_t ld, bool own) {
  if (rows == 0 || cols == 0) return CLS_OK;
  if (!v.mem) return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: no buffer given for %s", op, name);
  if (ld < cols)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: %s: leading dimension %zu is below its %zu columns", op,
                         name, ld, cols);
  size_t end = v.offset + (rows - 1) * ld + cols;
  if (own && (end > (size_t)INT_MAX || ld > (size_t)INT_MAX))
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: %s reaches element %zu; the limit is 2^31-1", op, name,
                         end);
  size_t bytes = 0;
  cl_int err = clGetMemObjectInfo(v.mem, CL_MEM_SIZE, sizeof bytes, &bytes, NULL);
  if (err != CL_SUCCESS)
    return cls_error_set(p->err, CLS_ERR_OPENCL, "%s: %s: clGetMemObjectInfo(CL_MEM_SIZE) failed: %s", op, name,
                         cls_cl_error_name(err));
  if (end * sizeof(float) > bytes)
    return cls_error_set(
        p->err, CLS_ERR_INVALID_ARGUMENT,
        "%s: %s [%zu x %zu, leading dimension %zu] at offset %zu needs %zu bytes, but its buffer holds %zu", op, name,
        rows, cols, ld, v.offset, end * sizeof(float), bytes);
  return CLS_OK;
}

static cls_status check_sizes(cls_gemm_plan *p, const char *op, size_t m, size_t n, size_t k) {
  if (m > (size_t)INT_MAX || n > (size_t)INT_MAX || k > (size_t)INT_MAX)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "%s: sizes %zu x %zu x %zu exceed 2^31-1", op, m, n, k);
  return CLS_OK;
}

static cls_status marker(cls_gemm_plan *p, cl_command_queue q, cl_event *event) {
  if (!event) return CLS_OK;
  cl_int err = clEnqueueMarkerWithWaitList(q, 0, NULL, event);
  if (err != CL_SUCCESS)
    return cls_error_set(p->err, CLS_ERR_OPENCL, "gemm: clEnqueueMarkerWithWaitList failed: %s",
                         cls_cl_error_name(err));
  return CLS_OK;
}

/* ---- the own backend ---- */

static cls_status ensure_scratch(cls_gemm_plan *p, size_t floats) {
  if (floats < 64) floats = 64;
  if (p->scratch && p->scratch_floats >= floats) return CLS_OK;
  /* Commands already enqueued keep the old buffer alive until they finish (OpenCL's reference
     counting), so it can be released without waiting. */
  if (p->scratch) clReleaseMemObject(p->scratch);
  p->scratch = NULL;
  p->scratch_floats = 0;
  size_t total = 0;
  cls_status st = CLS_OK;
  p->scratch = cls_ops_buffer_to(p->engine, p->err, p->device, p->context, floats * sizeof(float), &total, &st);
  if (st == CLS_OK) p->scratch_floats = floats;
  return st;
}

/* pad: the last panel padded with zeros to NR columns (else exactly as wide as what is left of n). */
static cls_status launch_pack_b(cls_gemm_plan *p, const tile_geometry *g, cl_command_queue q, bool tb, int k, int n,
                                int t0, int tiles, cls_buf b, int ldb, cl_mem dst, int dst_off, int pad) {
  if (k == 0 || tiles == 0) return CLS_OK;
  int b_off = (int)b.offset, trans = tb ? 1 : 0, kb = PACK_KB;
  cls_kargs ka = cls_kargs_begin(p->err, g->pack_b, g->pack_b_name);
  cls_kargs_int(&ka, k);
  cls_kargs_int(&ka, n);
  cls_kargs_int(&ka, t0);
  cls_kargs_int(&ka, tiles);
  cls_kargs_mem(&ka, b.mem);
  cls_kargs_int(&ka, b_off);
  cls_kargs_int(&ka, ldb);
  cls_kargs_int(&ka, trans);
  cls_kargs_mem(&ka, dst);
  cls_kargs_int(&ka, dst_off);
  cls_kargs_int(&ka, pad);
  cls_kargs_int(&ka, kb);
  cls_status st = cls_kargs_end(&ka);
  size_t global[2] = {(size_t)tiles, ceil_div((size_t)k, PACK_KB)}, local[2] = {1, 1};
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, g->pack_b, g->pack_b_name, 2, global, local, NULL);
  return st;
}

/* The A operand as the tile kernel reads it: a buffer, offset and the tile, row and k strides. */
typedef struct a_view {
  cl_mem mem;
  int off, ts, rs, ks;
} a_view;

/* Whether A is packed before the product: always or never as forced; by default when it is stored
 * transposed (in place, each k step of a tile would touch a new cache line) and read by at least 2
 * panels of B (one panel reads A once whatever its layout). The output layer's weight gradient (n = 29:
 * 2 panels) measured 24 against 29 % of the FMA peak at H = 512 and 14 against 27 % at H = 2048 without
 * and with the pass over A. */
static bool packs_a(const cls_gemm_plan *p, bool ta, size_t n, size_t k) {
  if (k == 0 || p->pack_a_mode == CLS_GEMM_PACK_A_NEVER) return false;
  return p->pack_a_mode == CLS_GEMM_PACK_A_ALWAYS || (ta && ceil_div(n, (size_t)p->wide.nr) >= 2);
}

static size_t packed_a_floats(const cls_gemm_plan *p, bool ta, size_t m, size_t n, size_t k) {
  return packs_a(p, ta, n, k) ? ceil_div(m, (size_t)p->wide.mr) * (size_t)p->wide.mr * k : 0;
}

/* A read in place by tiles of mr rows. */
static a_view in_place_a(bool ta, int m, cls_buf a, int lda, int mr) {
  a_view v = {a.mem, (int)a.offset, 0, ta ? 1 : lda, ta ? lda : 1};
  v.ts = m > mr ? mr * v.rs : 0; /* (m > MR: within A, so within int) */
  return v;
}

static cls_status prepare_a(cls_gemm_plan *p, cl_command_queue q, bool ta, int m, int n, int k, cls_buf a, int lda,
                            size_t scratch_off, a_view *out) {
  if (!packs_a(p, ta, (size_t)n, (size_t)k)) {
    *out = in_place_a(ta, m, a, lda, p->wide.mr);
    return CLS_OK;
  }
  int a_off = (int)a.offset, trans = ta ? 1 : 0, p_off = (int)scratch_off, kb = ta ? PACK_A_ROWS : PACK_KB;
  cls_kargs ka = cls_kargs_begin(p->err, p->pack_a, "gemm_pack_a");
  cls_kargs_int(&ka, m);
  cls_kargs_int(&ka, k);
  cls_kargs_mem(&ka, a.mem);
  cls_kargs_int(&ka, a_off);
  cls_kargs_int(&ka, lda);
  cls_kargs_int(&ka, trans);
  cls_kargs_mem(&ka, p->scratch);
  cls_kargs_int(&ka, p_off);
  cls_kargs_int(&ka, kb);
  cls_status st = cls_kargs_end(&ka);
  size_t global[2] = {ta ? 1 : ceil_div((size_t)m, (size_t)p->wide.mr), ceil_div((size_t)k, (size_t)kb)};
  size_t local[2] = {1, 1};
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->pack_a, "gemm_pack_a", 2, global, local, NULL);
  out->mem = p->scratch;
  out->off = p_off;
  out->rs = 1;
  out->ks = p->wide.mr;
  out->ts = p->wide.mr * k;
  return st;
}

static cls_status launch_tile(cls_gemm_plan *p, const tile_geometry *g, cl_command_queue q, int m, int n, int k, int t0,
                              int tiles, float alpha, const a_view *a, cl_mem bp, int bp_off, int padded, float beta,
                              cls_buf c, int ldc, cl_event *event) {
  const size_t m_tiles = ceil_div((size_t)m, (size_t)g->mr);
  const bool rows = m_tiles > MAX_PER_TILES && (size_t)g->mr * (size_t)k * sizeof(float) <= p->row_walk_bytes;
  const size_t span = rows ? SPAN_TILES : 0;
  /* The column walk: an A of at most MAX_PER_TILES tiles is one group when a B panel fits in L1, else a
     tile per group, in bands that keep A in L2 while B streams band after band (an A of at most 4 bands
     is one band, so that B streams from memory once). */
  const bool l1_panel = (size_t)k * (size_t)g->nr * sizeof(float) <= PANEL_L1_BYTES;
  const size_t per = l1_panel && m_tiles <= MAX_PER_TILES ? m_tiles : 1;
  const size_t m_groups = ceil_div(m_tiles, per), group_bytes = per * (size_t)g->mr * (size_t)k * sizeof(float);
  size_t band = p->band_bytes && group_bytes ? p->band_bytes / group_bytes : m_groups;
  if (band < 1) band = 1;
  if (band > m_groups || (p->band_bytes && m_groups * group_bytes <= 4 * p->band_bytes)) band = m_groups;
  int c_off = (int)c.offset, span_i = (int)span, band_i = (int)band, per_i = (int)per;
  cls_kargs ka = cls_kargs_begin(p->err, g->tile, g->tile_name);
  cls_kargs_int(&ka, m);
  cls_kargs_int(&ka, n);
  cls_kargs_int(&ka, k);
  cls_kargs_int(&ka, t0);
  cls_kargs_int(&ka, tiles);
  cls_kargs_int(&ka, span_i);
  cls_kargs_int(&ka, band_i);
  cls_kargs_int(&ka, per_i);
  cls_kargs_float(&ka, alpha);
  cls_kargs_mem(&ka, a->mem);
  cls_kargs_int(&ka, a->off);
  cls_kargs_int(&ka, a->ts);
  cls_kargs_int(&ka, a->rs);
  cls_kargs_int(&ka, a->ks);
  cls_kargs_mem(&ka, bp);
  cls_kargs_int(&ka, bp_off);
  cls_kargs_int(&ka, padded);
  cls_kargs_float(&ka, beta);
  cls_kargs_mem(&ka, c.mem);
  cls_kargs_int(&ka, c_off);
  cls_kargs_int(&ka, ldc);
  cls_status st = cls_kargs_end(&ka);
  size_t global = rows ? m_tiles * ceil_div((size_t)tiles, span) : m_groups * (size_t)tiles, local = 1;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, g->tile, g->tile_name, 1, &global, &local, event);
  return st;
}

/* The narrow TN product (gemm_tn_narrow): CLS_GEMM_NARROW_STRIPS(NR) strips of NR rows of C per work-item
   (a work-item's block of A is then 256 bytes of each row with NR = 16, 4 cache lines, or 512 with NR = 64, so
   that each page of A it touches serves more work; on AVX-512 at H = 2048 two strips of 64 measured 5-9 %
   faster than one, the best and the median of 61 turns in one process), fewer when that would leave under
   NARROW_MIN_ITEMS work-items. */
#define NARROW_MIN_ITEMS 8

static bool narrow_tn(const cls_gemm_plan *p, bool ta, bool tb, int n, int k) {
  return ta && !tb && k > 0 && n <= p->wide.mr * CLS_GEMM_NARROW_TILES;
}

static cls_status launch_narrow(cls_gemm_plan *p, cl_command_queue q, int m, int n, int k, float alpha, cls_buf a,
                                int lda, cls_buf b, int ldb, float beta, cls_buf c, int ldc, cl_event *event) {
  const size_t all = ceil_div((size_t)m, (size_t)p->wide.nr);
  size_t per = all / NARROW_MIN_ITEMS;
  if (per < 1) per = 1;
  if (per > (size_t)CLS_GEMM_NARROW_STRIPS(p->wide.nr)) per = (size_t)CLS_GEMM_NARROW_STRIPS(p->wide.nr);
  int strips = (int)per, a_off = (int)a.offset, b_off = (int)b.offset, c_off = (int)c.offset;
  cls_kargs ka = cls_kargs_begin(p->err, p->narrow, "gemm_tn_narrow");
  cls_kargs_int(&ka, m);
  cls_kargs_int(&ka, n);
  cls_kargs_int(&ka, k);
  cls_kargs_int(&ka, strips);
  cls_kargs_float(&ka, alpha);
  cls_kargs_mem(&ka, a.mem);
  cls_kargs_int(&ka, a_off);
  cls_kargs_int(&ka, lda);
  cls_kargs_mem(&ka, b.mem);
  cls_kargs_int(&ka, b_off);
  cls_kargs_int(&ka, ldb);
  cls_kargs_float(&ka, beta);
  cls_kargs_mem(&ka, c.mem);
  cls_kargs_int(&ka, c_off);
  cls_kargs_int(&ka, ldc);
  cls_status st = cls_kargs_end(&ka);
  size_t global = ceil_div(all, per), local = 1;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->narrow, "gemm_tn_narrow", 1, &global, &local, event);
  return st;
}

/* The thin tile (gemm_tile_narrow) for a C of one thin panel's columns where that panel is narrower than the
   wide one, A read in place (never transposed: a transposed A in place would touch a new cache line every
   step of k). The output layer's forward product (n = 29) on AVX-512 (MR x NR 6 x 64, thin 8 x 32). */
static bool thin_c(const cls_gemm_plan *p, bool ta, int n, int k) {
  return !ta && k > 0 && n <= p->thin.nr && p->thin.nr < p->wide.nr;
}

static cls_status own_gemm(cls_gemm_plan *p, cl_command_queue q, bool ta, bool tb, int m, int n, int k, float alpha,
                           cls_buf a, int lda, cls_buf b, int ldb, float beta, cls_buf c, int ldc, cl_event *event) {
  if (narrow_tn(p, ta, tb, n, k)) /* no packing: A^T and B read in place */
    return launch_narrow(p, q, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, event);
  if (thin_c(p, ta, n, k)) { /* one panel of B, A read in place */
    cls_status st = ensure_scratch(p, (size_t)k * (size_t)p->thin.nr);
    a_view av = in_place_a(false, m, a, lda, p->thin.mr);
    if (st == CLS_OK) st = launch_pack_b(p, &p->thin, q, tb, k, n, 0, 1, b, ldb, p->scratch, 0, 1);
    if (st == CLS_OK) st = launch_tile(p, &p->thin, q, m, n, k, 0, 1, alpha, &av, p->scratch, 0, 1, beta, c, ldc, event);
    return st;
  }
  const size_t panel = (size_t)k * (size_t)p->wide.nr, n_tiles = ceil_div((size_t)n, (size_t)p->wide.nr);
  size_t per_chunk = panel ? p->chunk_floats / panel : n_tiles;
  if (per_chunk < 1) per_chunk = 1;
  if (per_chunk > n_tiles) per_chunk = n_tiles;
  const size_t b_floats = per_chunk * panel, a_floats = packed_a_floats(p, ta, (size_t)m, (size_t)n, (size_t)k);
  if (b_floats + a_floats > (size_t)INT_MAX)
    return cls_error_set(p->err, CLS_ERR_INVALID_ARGUMENT, "gemm: packing %zu floats exceeds 2^31-1",
                         b_floats + a_floats);
  cls_status st = ensure_scratch(p, b_floats + a_floats);
  if (st == CLS_OK && k == 0) a.mem = b.mem = p->scratch; /* C = beta * C: nothing is read (A, B may be NULL) */
  a_view av;
  if (st == CLS_OK) st = prepare_a(p, q, ta, m, n, k, a, lda, b_floats, &av);
  for (size_t t0 = 0; t0 < n_tiles && st == CLS_OK; t0 += per_chunk) {
    int tiles = (int)(n_tiles - t0 < per_chunk ? n_tiles - t0 : per_chunk);
    st = launch_pack_b(p, &p->wide, q, tb, k, n, (int)t0, tiles, b, ldb, p->scratch, 0, 1);
    if (st == CLS_OK)
      st = launch_tile(p, &p->wide, q, m, n, k, (int)t0, tiles, alpha, &av, p->scratch, 0, 1, beta, c, ldc,
                       t0 + per_chunk >= n_tiles ? event : NULL);
  }
  return st;
}

/* ---- CLBlast ---- */

static CLBlastTranspose tr(bool t) { return t ? CLBlastTransposeYes : CLBlastTransposeNo; }

static cls_status clblast_gemm(cls_gemm_plan *p, cl_command_queue q, bool ta, bool tb, size_t m, size_t n, size_t k,
                               float alpha, cls_buf a, size_t lda, cls_buf b, size_t ldb, float beta, cls_buf c,
                               size_t ldc, cl_event *event) {
  cl_event own; /* the call's event for a profiling recorder when the caller wants none */
  CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor, tr(ta), tr(tb), m, n, k, alpha, a.mem, a.offset, lda, b.mem,
                                     b.offset, ldb, beta, c.mem, c.offset, ldc, &q,
                                     cls_ops_profile_event(q, event, &own));
  cls_ops_profile_enqueued(q, "gemm", s == CLBlastSuccess, event, own);
  if (s != CLBlastSuccess)
    return cls_error_set(p->err, CLS_ERR_BLAS, "gemm: CLBlastSgemm (%c%c, m %zu, n %zu, k %zu) failed with status %d",
                         ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, (int)s);
  return CLS_OK;
}

/* C = beta * C for k = 0 on a plan without the own kernels (CLBlast refuses k = 0): zeros filled for
   beta = 0 (C is not read: it may hold NaN), else CLBlast's scal, a run of C at a time. */
static cls_status scale_c(cls_gemm_plan *p, cl_command_queue q, size_t m, size_t n, float beta, cls_buf c, size_t ldc,
                          cl_event *event) {
  const size_t runs = ldc == n ? 1 : m, len = ldc == n ? m * n : n;
  const float zero = 0.0f;
  for (size_t r = 0; r < runs && beta != 1.0f; r++) {
    const size_t off = c.offset + r * ldc;
    if (beta == 0.0f) {
      cl_int err = clEnqueueFillBuffer(q, c.mem, &zero, sizeof zero, off * sizeof(float), len * sizeof(float), 0, NULL,
                                       NULL);
      if (err != CL_SUCCESS)
        return cls_error_set(p->err, CLS_ERR_OPENCL, "gemm (k = 0): clEnqueueFillBuffer failed: %s",
                             cls_cl_error_name(err));
    } else {
      CLBlastStatusCode s = CLBlastSscal(len, beta, c.mem, off, 1, &q, NULL);
      if (s != CLBlastSuccess)
        return cls_error_set(p->err, CLS_ERR_BLAS, "gemm (k = 0): CLBlastSscal of %zu values failed with status %d",
                             len, (int)s);
    }
  }
  return marker(p, q, event);
}

/* ---- the entry points ---- */

cls_status cls_gemm(cls_gemm_plan *p, cl_command_queue q, bool ta, bool tb, size_t m, size_t n, size_t k, float alpha,
                    cls_buf a, size_t lda, cls_buf b, size_t ldb, float beta, cls_buf c, size_t ldc, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "gemm";
  const bool own = /* CLBlast refuses k = 0 */
      cls_gemm_get_class_backend(p, cls_gemm_class_of(m, n, k, false)) == CLS_GEMM_BACKEND_OWN || k == 0;
  cls_status st = check_sizes(p, op, m, n, k);
  if (st == CLS_OK) st = check_matrix(p, op, ta ? "A^T" : "A", a, ta ? k : m, ta ? m : k, lda, own);
  if (st == CLS_OK) st = check_matrix(p, op, tb ? "B^T" : "B", b, tb ? n : k, tb ? k : n, ldb, own);
  if (st == CLS_OK) st = check_matrix(p, op, "C", c, m, n, ldc, own);
  if (st != CLS_OK) return st;
  if (m == 0 || n == 0) return marker(p, q, event);
  /* A profiling recorder on the queue sums every command of this call (packing included) as one GEMM. */
  cls_ops_profile_gemm_begin(q, m, n, k, ta, tb);
  if (!own) st = clblast_gemm(p, q, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, event);
  else if (!p->own_loaded) st = scale_c(p, q, m, n, beta, c, ldc, event); /* k = 0 */
  else st = own_gemm(p, q, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc, event);
  cls_ops_profile_gemm_end(q);
  return st;
}

size_t cls_gemm_packed_b_floats(const cls_gemm_plan *p, size_t k, size_t n) {
  (void)p; /* both backends: exactly op(B)'s k x n (the own backend's last panel is narrower) */
  return k * n;
}

/* Products of at most FEW_MAX_ROWS rows on a packed B take the few-rows tile where it pads m less than the
   device's tile (16 rows: two tiles of 8 against three of 6), the device's otherwise; cls_gemm_pack_b and
   cls_gemm_packed choose by the same m, so the panels always match the tile that reads them. */
#define FEW_MAX_ROWS 32

static const tile_geometry *packed_geometry(const cls_gemm_plan *p, size_t m) {
  const tile_geometry *w = &p->wide, *f = &p->few; /* (the same geometry pads alike: the device's) */
  if (m > FEW_MAX_ROWS) return w;
  return ceil_div(m, (size_t)f->mr) * (size_t)f->mr < ceil_div(m, (size_t)w->mr) * (size_t)w->mr ? f : w;
}

cls_status cls_gemm_pack_b(cls_gemm_plan *p, cl_command_queue q, bool tb, size_t m, size_t k, size_t n, cls_buf b,
                           size_t ldb, cls_buf packed) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "gemm pack B";
  const bool own = cls_gemm_get_class_backend(p, CLS_GEMM_CLASS_PACKED) == CLS_GEMM_BACKEND_OWN;
  const size_t pf = cls_gemm_packed_b_floats(p, k, n);
  cls_status st = check_sizes(p, op, 1, n, k);
  if (st == CLS_OK) st = check_matrix(p, op, tb ? "B^T" : "B", b, tb ? n : k, tb ? k : n, ldb, own);
  if (st == CLS_OK) st = check_matrix(p, op, "packed B", packed, 1, pf, pf, own);
  if (st != CLS_OK || k == 0 || n == 0) return st;
  if (own) {
    const tile_geometry *g = packed_geometry(p, m);
    size_t tiles = ceil_div(n, (size_t)g->nr);
    return launch_pack_b(p, g, q, tb, (int)k, (int)n, 0, (int)tiles, b, (int)ldb, packed.mem, (int)packed.offset, 0);
  }
  if (tb) {
    CLBlastStatusCode s = CLBlastSomatcopy(CLBlastLayoutRowMajor, CLBlastTransposeYes, n, k, 1.0f, b.mem, b.offset, ldb,
                                           packed.mem, packed.offset, n, &q, NULL);
    if (s != CLBlastSuccess)
      return cls_error_set(p->err, CLS_ERR_BLAS, "%s: CLBlastSomatcopy (%zu x %zu) failed with status %d", op, n, k,
                           (int)s);
    return CLS_OK;
  }
  size_t src_origin[3] = {b.offset * sizeof(float), 0, 0}, dst_origin[3] = {packed.offset * sizeof(float), 0, 0};
  size_t region[3] = {n * sizeof(float), k, 1};
  cl_int err = clEnqueueCopyBufferRect(q, b.mem, packed.mem, src_origin, dst_origin, region, ldb * sizeof(float), 0,
                                       n * sizeof(float), 0, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    return cls_error_set(p->err, CLS_ERR_OPENCL, "%s: clEnqueueCopyBufferRect failed: %s", op, cls_cl_error_name(err));
  return CLS_OK;
}

/* gemm_few_chunks (kernels/gemm_few_chunks.h) takes the whole panels of a product on the few-rows tile, A in place
   and not transposed, when its m tiles fit one work-item and the packed B is more than a quarter of the device's
   cache, so that it comes from memory at every call (the recurrent products' W_h at every time step). Measured on 2
   Zen 3 cores (bench_gemm --shapes lstm_rec_fwd,lstm_rec_bwd --versus "cpu=-DCLS_GEMM_FEW_CHUNK=0"): 1.23-1.39x at
   H = 2048 (64 MiB) and 1.23-1.30x at H = 1024 (16 MiB), but 0.94-1.03x at H = 512 (4 MiB, within the cache). */
static bool few_chunks_take(const cls_gemm_plan *p, const tile_geometry *g, bool ta, size_t m, size_t n, size_t k) {
  return p->few_chunks && g == &p->few && !ta && ceil_div(m, (size_t)g->mr) <= (size_t)p->few_chunk_tiles &&
         k * n * sizeof(float) > p->few_chunks_bytes;
}

static cls_status launch_few_chunks(cls_gemm_plan *p, cl_command_queue q, int m, int n, int k, int panels,
                                    float alpha, const a_view *a, cls_buf packed, float beta, cls_buf c, int ldc,
                                    cl_event *event) {
  if (panels == 0) return CLS_OK;
  int bp_off = (int)packed.offset, c_off = (int)c.offset, lda = a->rs;
  cls_kargs ka = cls_kargs_begin(p->err, p->few_chunks, "gemm_few_chunks");
  cls_kargs_int(&ka, m);
  cls_kargs_int(&ka, n);
  cls_kargs_int(&ka, k);
  cls_kargs_float(&ka, alpha);
  cls_kargs_mem(&ka, a->mem);
  cls_kargs_int(&ka, a->off);
  cls_kargs_int(&ka, lda);
  cls_kargs_mem(&ka, packed.mem);
  cls_kargs_int(&ka, bp_off);
  cls_kargs_float(&ka, beta);
  cls_kargs_mem(&ka, c.mem);
  cls_kargs_int(&ka, c_off);
  cls_kargs_int(&ka, ldc);
  cls_status st = cls_kargs_end(&ka);
  size_t global = (size_t)panels, local = 1;
  if (st == CLS_OK) st = cls_ops_launch_to(p->err, q, p->few_chunks, "gemm_few_chunks", 1, &global, &local, event);
  return st;
}

cls_status cls_gemm_packed(cls_gemm_plan *p, cl_command_queue q, bool ta, size_t m, size_t n, size_t k, float alpha,
                           cls_buf a, size_t lda, cls_buf packed, float beta, cls_buf c, size_t ldc, cl_event *event) {
  if (!p) return CLS_ERR_INVALID_ARGUMENT;
  const char *op = "gemm with packed B";
  const bool own = cls_gemm_get_class_backend(p, CLS_GEMM_CLASS_PACKED) == CLS_GEMM_BACKEND_OWN;
  const size_t pf = cls_gemm_packed_b_floats(p, k, n);
  cls_status st = check_sizes(p, op, m, n, k);
  if (st == CLS_OK) st = check_matrix(p, op, ta ? "A^T" : "A", a, ta ? k : m, ta ? m : k, lda, own);
  if (st == CLS_OK) st = check_matrix(p, op, "packed B", packed, 1, pf, pf, own);
  if (st == CLS_OK) st = check_matrix(p, op, "C", c, m, n, ldc, own);
  if (st != CLS_OK) return st;
  if (m == 0 || n == 0) return marker(p, q, event);
  cls_ops_profile_gemm_begin(q, m, n, k, ta, false);
  if (!own && k > 0) {
    st = clblast_gemm(p, q, ta, false, m, n, k, alpha, a, lda, packed, n, beta, c, ldc, event);
  } else if (!own && !p->own_loaded) { /* k = 0 on CLBlast: C = beta * C */
    st = scale_c(p, q, m, n, beta, c, ldc, event);
  } else if (!own) { /* k = 0 on CLBlast: C = beta * C through the own tile kernel (no B to read) */
    cls_buf none = {packed.mem, 0};
    st = own_gemm(p, q, ta, false, (int)m, (int)n, 0, alpha, a, 1, none, (int)n, beta, c, (int)ldc, event);
  } else {
    const tile_geometry *g = packed_geometry(p, m);
    a_view av;
    if (g == &p->wide) { /* A packed as cls_gemm would (gemm_pack_a packs for the wide tile only) */
      size_t a_floats = packed_a_floats(p, ta, m, n, k);
      st = a_floats ? ensure_scratch(p, a_floats) : CLS_OK;
      if (st == CLS_OK) st = prepare_a(p, q, ta, (int)m, (int)n, (int)k, a, (int)lda, 0, &av);
    } else {
      av = in_place_a(ta, (int)m, a, (int)lda, g->mr);
    }
    const size_t tiles = ceil_div(n, (size_t)g->nr);
    size_t t0 = 0; /* the panels gemm_few_chunks took */
    if (st == CLS_OK && few_chunks_take(p, g, ta, m, n, k)) {
      t0 = n / (size_t)g->nr;
      st = launch_few_chunks(p, q, (int)m, (int)n, (int)k, (int)t0, alpha, &av, packed, beta, c, (int)ldc,
                             t0 == tiles ? event : NULL);
    }
    if (st == CLS_OK && t0 < tiles) /* the narrower last panel, or every panel (panel t0 first) */
      st = launch_tile(p, g, q, (int)m, (int)n, (int)k, (int)t0, (int)(tiles - t0), alpha, &av, packed.mem,
                       (int)(packed.offset + t0 * k * (size_t)g->nr), 0, beta, c, (int)ldc, event);
  }
  cls_ops_profile_gemm_end(q);
  return st;
}

void cls_gemm_set_error(cls_gemm_plan *p, cls_error *err) { p->err = err; }
