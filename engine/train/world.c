/* The world of a training run (see world.h): MPI's MPI_COMM_WORLD under --horovod when the build
 * has MPI (CLSPEECH_HAVE_MPI), else this process alone; the process-wide start, stop and abort of MPI
 * that the frontend calls (clspeech/train.h); the guard of every collective (each rank's ticket
 * compared first, a departed rank's notice read while waiting) and the settings' agreement. The only
 * file of the engine that calls MPI. */
#include "train/world.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/sha256.h"
#include "device/log.h"

#ifdef CLSPEECH_HAVE_MPI
#include <mpi.h>
#endif

enum { HOST_CAP = 256 };

struct cls_world {
  cls_engine *e;
  int rank, size, mpi;
  char *hosts; /* [size][HOST_CAP] */
};

/* ---- the process: MPI's start, stop and abort, and the guard of every collective ----
 * A rank can leave the run while the others still wait for it in a collective (it finished, failed,
 * or took another path), and MPI would let them wait for ever. So every collective is guarded: the
 * ranks first exchange a ticket (which collective of the run, its kind and its size) in a
 * non-blocking gather, and while it is under way this rank reads the departure notices that a
 * leaving rank sends to every other (cls_world_leave, on a communicator of their own). A notice from
 * a rank that left before this collective, or tickets that differ, end the wait with an error naming
 * the ranks; only tickets that agree let the collective itself (blocking, MPI's fastest) run. */

#ifdef CLSPEECH_HAVE_MPI
/* A wait polls without sleeping (yielding the core to any other runnable thread, as Open MPI's own
 * blocking collectives poll) for its first SPIN_US, the time a step's reduction takes, then naps
 * NAP_NS between polls so that a long wait (a straggler, rank 0's checkpoint) costs no core. */
enum { TAG_LEAVE = 3701, SPIN_US = 20000, NAP_NS = 100000 };

/* What a rank holds up in each collective's exchange of tickets. */
typedef struct ticket {
  long long index; /* the run's collectives this rank has completed: every rank's must agree */
  long long kind;  /* a world_kind */
  long long count; /* elements (bytes for broadcasts and gathers) */
} ticket;

static struct {
  int rank, size, started;
  MPI_Comm side;          /* MPI_COMM_WORLD's twin: the departure notices alone */
  MPI_Request recv;       /* the posted receive of the next notice */
  long long notice[3];    /* its buffer: {collectives the sender completed, its exit status, its clock in us} */
  long long sent[3];      /* this rank's own notice (kept until sent) */
  long long *left_us;     /* [size] rank r's wall clock (us) when it left */
  long long *left_after;  /* [size]: -1 while rank r is in the run, else the collectives it completed */
  int *left_status;       /* [size] rank r's exit status when it left */
  int left;               /* this rank sent its notice */
  int together;           /* the last failure was seen by every rank at once */
  long long done;         /* collectives this rank completed */
  char *hosts;            /* [size][HOST_CAP] */
} g = {0, 1, 0, MPI_COMM_NULL, MPI_REQUEST_NULL, {0, 0, 0}, {0, 0, 0}, NULL, NULL, NULL, 0, 0, 0, NULL};

/* The wall clock in microseconds (comparable across the ranks of one host, and of hosts in step). */
static long long wall_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static const char *host_of(int r) { return g.hosts && r >= 0 && r < g.size ? g.hosts + (size_t)r * HOST_CAP : "?"; }

/* MPI's text for an error code. */
static const char *mpi_text(int code, char *text) {
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, MPI_MAX_ERROR_STRING, "error %d", code);
  return text;
}

/* Every departure notice that has arrived, recorded by rank; the receive posted again for the next. */
static void read_notices(void) {
  for (int flag = 1; flag && g.recv != MPI_REQUEST_NULL;) {
    MPI_Status status;
    flag = 0;
    if (MPI_Test(&g.recv, &flag, &status) != MPI_SUCCESS || !flag) return;
    const int r = status.MPI_SOURCE;
    if (r >= 0 && r < g.size) {
      g.left_after[r] = g.notice[0];
      g.left_status[r] = (int)g.notice[1];
      g.left_us[r] = g.notice[2];
    }
    if (MPI_Irecv(g.notice, 3, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_LEAVE, g.side, &g.recv) != MPI_SUCCESS)
      g.recv = MPI_REQUEST_NULL;
  }
}

enum { KIND_SUM_FLOAT, KIND_SUM_DOUBLE, KIND_BROADCAST, KIND_GATHER, KIND_AGREE };

/* A collective in words: "a sum of 11341 floats (the step's gradient)". */
static const char *kind_text(long long kind, long long count, char *out, size_t cap) {
  static const char *const what[] = {"a sum of %lld floats (the step's gradient)",
                                     "a sum of %lld doubles (a step's or an evaluation's counts)",
                                     "a broadcast of %lld bytes (rank 0's state)", "a gather of %lld bytes from each rank",
                                     "the settings' agreement (%lld bytes from each rank)"};
  if (kind < 0 || kind > KIND_AGREE) snprintf(out, cap, "an unknown collective (kind %lld, %lld)", kind, count);
  else snprintf(out, cap, what[kind], count);
  return out;
}

/* Waits for a started non-blocking collective (`what` names it), reading departure notices. 0 when it
 * completed; else CLS_ERR_WORLD with the cause in *err: -1 an MPI error, 1 a rank that left before joining it. */
static int wait_guarded(MPI_Request *req, const char *what, cls_error *err) {
  const long long index = g.done, start = wall_us();
  int late = 0;
  for (unsigned polls = 0;; polls++) {
    int flag = 0, rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      cls_error_set(err, CLS_ERR_WORLD, "%s failed on rank %d of %d (host %s): %s", what, g.rank, g.size,
                    host_of(g.rank), mpi_text(rc, text));
      return -1;
    }
    if (flag) return 0;
    read_notices();
    for (int r = 0; r < g.size; r++)
      if (r != g.rank && g.left_after[r] >= 0 && g.left_after[r] <= index) {
        cls_error_set(err, CLS_ERR_WORLD,
                      "rank %d (host %s) left the run (exit status %d) after %lld collective calls, and rank %d (host "
                      "%s) waited for it in call %lld, %s; noticed %.1f ms after it left: the ranks took different "
                      "paths (every rank must be given the same settings and data)",
                      r, host_of(r), g.left_status[r], g.left_after[r], g.rank, host_of(g.rank), index + 1, what,
                      (double)(wall_us() - g.left_us[r]) / 1000.0);
        return 1;
      }
    if (!late && (polls & 63) == 63) late = wall_us() - start >= SPIN_US;
    if (late) nanosleep(&(struct timespec){0, NAP_NS}, NULL);
    else sched_yield();
  }
}

/* The guard before a collective of `kind` over `count` elements: every rank's ticket gathered (a
 * departed rank noticed meanwhile) and compared. CLS_OK, or CLS_ERR_WORLD (CLS_ERR_OUT_OF_MEMORY) with the
 * cause in *err. */
static cls_status guard(int kind, long long count, cls_error *err) {
  if (!g.started) return CLS_OK;
  ticket mine = {g.done, kind, count}, *all = calloc((size_t)g.size, sizeof *all);
  if (!all) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  MPI_Request req = MPI_REQUEST_NULL;
  int rc = MPI_Iallgather(&mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, MPI_COMM_WORLD, &req);
  char what[160];
  int w = rc == MPI_SUCCESS ? wait_guarded(&req, kind_text(kind, count, what, sizeof what), err) : -1;
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    cls_error_set(err, CLS_ERR_WORLD, "MPI_Iallgather failed on rank %d of %d (host %s): %s", g.rank, g.size,
                  host_of(g.rank), mpi_text(rc, text));
  }
  cls_status st = w == 0 ? CLS_OK : CLS_ERR_WORLD;
  for (int r = 0; st == CLS_OK && r < g.size; r++) {
    if (all[r].index == mine.index && all[r].kind == mine.kind && all[r].count == mine.count) continue;
    const ticket *a = &all[0], *b = &all[r];
    if (!memcmp(a, b, sizeof *a)) a = &mine; /* the one that differs from rank 0 is this rank */
    const int ra = a == &mine ? g.rank : 0;
    char ta[160], tb[160];
    st = cls_error_set(err, CLS_ERR_WORLD,
                       "the ranks are at different points of the run: rank %d (host %s) is in collective call %lld, "
                       "%s, and rank %d (host %s) in call %lld, %s (every rank must be given the same settings and "
                       "data)",
                       ra, host_of(ra), a->index + 1, kind_text(a->kind, a->count, ta, sizeof ta), r, host_of(r),
                       b->index + 1, kind_text(b->kind, b->count, tb, sizeof tb));
    g.together = 1;
  }
  free(all);
  if (st == CLS_OK) g.done++;
  return st;
}
#endif

cls_status cls_world_start(int *rank, int *size, char *host, size_t host_cap, cls_error *err) {
  *rank = 0;
  *size = 1;
  if (host_cap) host[0] = '\0';
#ifdef CLSPEECH_HAVE_MPI
  int provided = 0, inited = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return cls_error_set(err, CLS_ERR_WORLD, "MPI_Init_thread failed");
  }
  /* Errors come back as codes (cls_status), never as an abort inside a call. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  snprintf(host, host_cap, "%.*s", len, name);
  if (g.started) {
    cls_error_clear(err);
    return CLS_OK;
  }
  g.rank = *rank;
  g.size = *size;
  g.left_after = malloc((size_t)g.size * sizeof *g.left_after);
  g.left_status = calloc((size_t)g.size, sizeof *g.left_status);
  g.left_us = calloc((size_t)g.size, sizeof *g.left_us);
  g.hosts = calloc((size_t)g.size, HOST_CAP);
  if (!g.left_after || !g.left_status || !g.left_us || !g.hosts) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  for (int r = 0; r < g.size; r++) g.left_after[r] = -1;
  char mine[HOST_CAP] = "";
  snprintf(mine, sizeof mine, "%s", host);
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &g.side);
  if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(g.side, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS)
    rc = MPI_Irecv(g.notice, 3, MPI_LONG_LONG, MPI_ANY_SOURCE, TAG_LEAVE, g.side, &g.recv);
  if (rc == MPI_SUCCESS) rc = MPI_Allgather(mine, HOST_CAP, MPI_BYTE, g.hosts, HOST_CAP, MPI_BYTE, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    return cls_error_set(err, CLS_ERR_WORLD, "starting the run's ranks failed on rank %d: %s", *rank, mpi_text(rc, text));
  }
  g.started = 1;
  cls_error_clear(err);
  return CLS_OK;
#else
  return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT,
                       "this clspeech was built without MPI; install Open MPI (apt-get install -y openmpi-bin "
                       "libopenmpi-dev) and build again");
#endif
}

#ifdef CLSPEECH_HAVE_MPI
/* MPI is initialised and not yet finalised. */
static int mpi_running(void) {
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  return inited && !finalized;
}
#endif

void cls_world_leave(int status) {
#ifdef CLSPEECH_HAVE_MPI
  if (!g.started || g.left || !mpi_running()) return;
  g.left = 1;
  g.sent[0] = g.done;
  g.sent[1] = status;
  g.sent[2] = wall_us();
  MPI_Request *reqs = calloc((size_t)g.size, sizeof *reqs);
  if (!reqs) return;
  for (int r = 0; r < g.size; r++) {
    reqs[r] = MPI_REQUEST_NULL;
    if (r != g.rank) MPI_Isend(g.sent, 3, MPI_LONG_LONG, r, TAG_LEAVE, g.side, &reqs[r]);
  }
  /* A notice is a few bytes (sent eagerly); a rank that cannot take it within a second is gone. */
  int all = 0;
  for (int i = 0; i < 10000 && !all; i++) {
    if (MPI_Testall(g.size, reqs, &all, MPI_STATUSES_IGNORE) != MPI_SUCCESS) break;
    if (!all) nanosleep(&(struct timespec){0, NAP_NS}, NULL);
  }
  for (int r = 0; !all && r < g.size; r++)
    if (reqs[r] != MPI_REQUEST_NULL) MPI_Request_free(&reqs[r]);
  free(reqs);
#else
  (void)status;
#endif
}

int cls_world_failed_together(void) {
#ifdef CLSPEECH_HAVE_MPI
  return g.together;
#else
  return 0;
#endif
}

void cls_world_stop(void) {
#ifdef CLSPEECH_HAVE_MPI
  if (!mpi_running()) return;
  cls_world_leave(0);
  if (g.recv != MPI_REQUEST_NULL) {
    MPI_Cancel(&g.recv);
    MPI_Wait(&g.recv, MPI_STATUS_IGNORE);
  }
  if (g.side != MPI_COMM_NULL) MPI_Comm_free(&g.side);
  free(g.left_after);
  free(g.left_status);
  free(g.left_us);
  free(g.hosts);
  g.left_after = NULL;
  g.left_status = NULL;
  g.left_us = NULL;
  g.hosts = NULL;
  g.started = 0;
  MPI_Finalize();
#endif
}

void cls_world_abort(int code) {
#ifdef CLSPEECH_HAVE_MPI
  if (mpi_running()) {
    cls_world_leave(code);
    MPI_Abort(MPI_COMM_WORLD, code);
  }
#else
  (void)code;
#endif
}

/* ---- the world of a trainer ---- */

#ifdef CLSPEECH_HAVE_MPI
/* CLS_ERR_WORLD naming the MPI call, this rank, its host and MPI's text for `code`. */
static cls_status mpi_fail(cls_world *w, const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  return cls_fail(w->e, CLS_ERR_WORLD, "%s failed on rank %d of %d (host %s): %s", call, w->rank, w->size,
                  cls_world_host(w, -1), mpi_text(code, text));
}

/* The guard before a collective (see above), its failure in the engine's error. */
static cls_status guard_here(cls_world *w, int kind, long long count) {
  cls_error why;
  cls_status st = guard(kind, count, &why);
  return st == CLS_OK ? CLS_OK : cls_fail_wrap(w->e, st, &why, NULL);
}
#endif

cls_status cls_world_open(cls_engine *e, int horovod, cls_world **out) {
  *out = NULL;
  cls_world *w = calloc(1, sizeof *w);
  if (!w) return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  w->e = e;
  w->size = 1;
  if (horovod) {
#ifdef CLSPEECH_HAVE_MPI
    if (!g.started) {
      free(w);
      return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--horovod needs MPI started in this process (cls_world_start)");
    }
    w->mpi = 1;
    w->rank = g.rank;
    w->size = g.size;
#else
    free(w);
    return cls_fail(e, CLS_ERR_INVALID_ARGUMENT,
                    "--horovod: this clspeech was built without MPI; install Open MPI (apt-get install -y openmpi-bin "
                    "libopenmpi-dev) and build again");
#endif
  }
  w->hosts = calloc((size_t)w->size, HOST_CAP);
  if (!w->hosts) {
    free(w);
    return cls_fail(e, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  }
#ifdef CLSPEECH_HAVE_MPI
  if (w->mpi) {
    memcpy(w->hosts, g.hosts, (size_t)w->size * HOST_CAP);
    *out = w;
    return CLS_OK;
  }
#endif
  if (gethostname(w->hosts, HOST_CAP - 1) != 0) snprintf(w->hosts, HOST_CAP, "?");
  *out = w;
  return CLS_OK;
}

void cls_world_close(cls_world *w) {
  if (!w) return;
  free(w->hosts);
  free(w);
}

int cls_world_rank(const cls_world *w) { return w ? w->rank : 0; }
int cls_world_size(const cls_world *w) { return w ? w->size : 1; }

const char *cls_world_host(const cls_world *w, int rank) {
  if (!w || !w->hosts) return "?";
  if (rank < 0 || rank >= w->size) rank = w->rank;
  return w->hosts + (size_t)rank * HOST_CAP;
}

/* MPI counts are ints: large buffers go in pieces of at most CHUNK elements. */
enum { CHUNK = 1 << 28 };

#ifdef CLSPEECH_HAVE_MPI
/* In-place MPI_SUM over every rank of n elements of `type` (`size` bytes each), in pieces, guarded. */
static cls_status sum_in_place(cls_world *w, int kind, void *buf, size_t n, MPI_Datatype type, size_t size) {
  cls_status st = guard_here(w, kind, (long long)n);
  if (st != CLS_OK) return st;
  for (size_t off = 0; off < n; off += CHUNK) {
    int count = (int)(n - off < CHUNK ? n - off : CHUNK);
    int rc = MPI_Allreduce(MPI_IN_PLACE, (char *)buf + off * size, count, type, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(w, "MPI_Allreduce", rc);
  }
  return CLS_OK;
}
#endif

cls_status cls_world_sum(cls_world *w, float *buf, size_t n) {
  if (!w->mpi) return CLS_OK;
#ifdef CLSPEECH_HAVE_MPI
  return sum_in_place(w, KIND_SUM_FLOAT, buf, n, MPI_FLOAT, sizeof *buf);
#else
  (void)buf;
  (void)n;
  return CLS_OK;
#endif
}

cls_status cls_world_sum_double(cls_world *w, double *buf, size_t n) {
  if (!w->mpi) return CLS_OK;
#ifdef CLSPEECH_HAVE_MPI
  return sum_in_place(w, KIND_SUM_DOUBLE, buf, n, MPI_DOUBLE, sizeof *buf);
#else
  (void)buf;
  (void)n;
  return CLS_OK;
#endif
}

cls_status cls_world_broadcast(cls_world *w, void *buf, size_t bytes) {
  if (!w->mpi) return CLS_OK;
#ifdef CLSPEECH_HAVE_MPI
  cls_status st = guard_here(w, KIND_BROADCAST, (long long)bytes);
  if (st != CLS_OK) return st;
  for (size_t off = 0; off < bytes; off += CHUNK) {
    int count = (int)(bytes - off < CHUNK ? bytes - off : CHUNK);
    int rc = MPI_Bcast((char *)buf + off, count, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_fail(w, "MPI_Bcast", rc);
  }
#else
  (void)buf;
  (void)bytes;
#endif
  return CLS_OK;
}

cls_status cls_world_gather(cls_world *w, const void *mine, size_t bytes, void *all) {
  if (!w->mpi) {
    memcpy(all, mine, bytes);
    return CLS_OK;
  }
#ifdef CLSPEECH_HAVE_MPI
  cls_status st = guard_here(w, KIND_GATHER, (long long)bytes);
  if (st != CLS_OK) return st;
  int rc = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_fail(w, "MPI_Allgather", rc);
#endif
  return CLS_OK;
}

/* ---- the settings' agreement ---- */

#ifdef CLSPEECH_HAVE_MPI
enum { VALUE_SHOWN = 112 };
/* One setting on the wire: the SHA-256 of its name and whole value (first 8 bytes), and the value's
   first VALUE_SHOWN - 1 bytes for the message. */
typedef struct wire_setting {
  uint8_t digest[8];
  char shown[VALUE_SHOWN];
} wire_setting;
#endif

cls_status cls_world_agree(const cls_world_setting *settings, int n, cls_error *err) {
  cls_error_clear(err);
#ifdef CLSPEECH_HAVE_MPI
  if (!g.started || g.size == 1) return CLS_OK;
  if (n < 0 || n > CLS_WORLD_MAX_SETTINGS)
    return cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "between 0 and %d settings, not %d", CLS_WORLD_MAX_SETTINGS, n);
  /* Record 0 holds the list's length and the digest of its names, so that two builds with other
     lists are told apart; records 1 .. n the settings. */
  const size_t per = (size_t)CLS_WORLD_MAX_SETTINGS + 1;
  wire_setting *all = calloc(per * (size_t)(g.size + 1), sizeof *all), *mine = all + per * (size_t)g.size;
  if (!all) return cls_error_set(err, CLS_ERR_OUT_OF_MEMORY, "out of host memory");
  cls_sha256 names;
  cls_sha256_init(&names);
  for (int i = 0; i < n; i++) {
    cls_sha256 h;
    uint8_t d[32];
    const char *v = settings[i].value ? settings[i].value : "";
    cls_sha256_init(&h);
    cls_sha256_update(&h, settings[i].name, strlen(settings[i].name) + 1);
    cls_sha256_update(&h, v, strlen(v));
    cls_sha256_final(&h, d);
    memcpy(mine[i + 1].digest, d, sizeof mine[i + 1].digest);
    snprintf(mine[i + 1].shown, VALUE_SHOWN, "%s", v);
    if (strlen(v) >= VALUE_SHOWN) memcpy(mine[i + 1].shown + VALUE_SHOWN - 4, "...", 4);
    cls_sha256_update(&names, settings[i].name, strlen(settings[i].name) + 1);
  }
  uint8_t d[32];
  cls_sha256_final(&names, d);
  memcpy(mine[0].digest, d, sizeof mine[0].digest);
  snprintf(mine[0].shown, VALUE_SHOWN, "%d settings", n);
  cls_status st = guard(KIND_AGREE, (long long)(per * sizeof *all), err);
  /* The one collective of the agreement: every rank's records to every rank. */
  int rc = st == CLS_OK ? MPI_Allgather(mine, (int)(per * sizeof *all), MPI_BYTE, all, (int)(per * sizeof *all),
                                        MPI_BYTE, MPI_COMM_WORLD)
                        : MPI_SUCCESS;
  if (st == CLS_OK && rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    st = cls_error_set(err, CLS_ERR_WORLD, "MPI_Allgather failed on rank %d of %d (host %s): %s", g.rank, g.size,
                       host_of(g.rank), mpi_text(rc, text));
  }
  /* The first record where a rank differs from rank 0, every rank's value of it, and how many more. */
  int first = -1, more = 0;
  for (int i = 0; st == CLS_OK && i <= n; i++)
    for (int r = 1; r < g.size; r++)
      if (memcmp(all[per * (size_t)r + i].digest, all[i].digest, sizeof all[i].digest)) {
        if (first < 0) first = i;
        else if (i != first) more++;
        break;
      }
  if (first >= 0) {
    g.together = 1;
    char why[CLS_ERROR_CAP];
    size_t used = (size_t)snprintf(why, sizeof why, "the ranks disagree on %s:",
                                   first == 0 ? "the list of settings (different clspeech builds?)"
                                              : settings[first - 1].name);
    for (int r = 0; r < g.size && used < sizeof why; r++)
      used += (size_t)snprintf(why + used, sizeof why - used, "%s rank %d (host %s) \"%s\"", r ? ";" : "", r,
                               host_of(r), all[per * (size_t)r + first].shown);
    if (used < sizeof why && more)
      used += (size_t)snprintf(why + used, sizeof why - used, " (and %d more setting%s differ%s)", more,
                               more == 1 ? "" : "s", more == 1 ? "s" : "");
    if (used < sizeof why)
      snprintf(why + used, sizeof why - used, ": every rank of a --horovod run must be given the same settings and data");
    st = cls_error_set(err, CLS_ERR_INVALID_ARGUMENT, "%s", why);
  }
  free(all);
  return st;
#else
  (void)settings;
  (void)n;
  return CLS_OK;
#endif
}
