/* The world of a training run (see world.h): MPI's MPI_COMM_WORLD under --horovod when the build
 * has MPI (CLSPEECH_HAVE_MPI), else this process alone; and the process-wide start, stop and abort
 * of MPI that the frontend calls (clspeech/train.h). The only file of the engine that calls MPI. */
#include "train/world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- the process: the frontend's start, stop and abort ---- */

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

void cls_world_stop(void) {
#ifdef CLSPEECH_HAVE_MPI
  if (mpi_running()) MPI_Finalize();
#endif
}

void cls_world_abort(int code) {
#ifdef CLSPEECH_HAVE_MPI
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)code;
#endif
}

/* ---- the world of a trainer ---- */

#ifdef CLSPEECH_HAVE_MPI
/* CLS_ERR_WORLD naming the MPI call, this rank, its host and MPI's text for `code`. */
static cls_status mpi_fail(cls_world *w, const char *call, int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = snprintf(text, sizeof text, "error %d", code);
  return cls_fail(w->e, CLS_ERR_WORLD, "%s failed on rank %d of %d (host %s): %.*s", call, w->rank, w->size,
                  cls_world_host(w, -1), len, text);
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
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      free(w);
      return cls_fail(e, CLS_ERR_INVALID_ARGUMENT, "--horovod needs MPI started in this process (cls_world_start)");
    }
    w->mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &w->size);
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
  char mine[HOST_CAP] = "";
  if (gethostname(mine, sizeof mine - 1) != 0) snprintf(mine, sizeof mine, "?");
  cls_status st = cls_world_gather(w, mine, HOST_CAP, w->hosts);
  if (st != CLS_OK) {
    cls_world_close(w);
    return st;
  }
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
/* In-place MPI_SUM over every rank of n elements of `type` (`size` bytes each), in pieces. */
static cls_status sum_in_place(cls_world *w, void *buf, size_t n, MPI_Datatype type, size_t size) {
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
  return sum_in_place(w, buf, n, MPI_FLOAT, sizeof *buf);
#else
  (void)buf;
  (void)n;
  return CLS_OK;
#endif
}

cls_status cls_world_sum_double(cls_world *w, double *buf, size_t n) {
  if (!w->mpi) return CLS_OK;
#ifdef CLSPEECH_HAVE_MPI
  return sum_in_place(w, buf, n, MPI_DOUBLE, sizeof *buf);
#else
  (void)buf;
  (void)n;
  return CLS_OK;
#endif
}

cls_status cls_world_broadcast(cls_world *w, void *buf, size_t bytes) {
  if (!w->mpi) return CLS_OK;
#ifdef CLSPEECH_HAVE_MPI
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
  int rc = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return mpi_fail(w, "MPI_Allgather", rc);
#endif
  return CLS_OK;
}

