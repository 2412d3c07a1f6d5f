/* The world of a training run: the processes that train together under MPI (`clspeech train
 * --horovod` under mpirun, one process per machine or per device) or this process alone. The rest of
 * engine/train talks to the other processes through this small interface only: rank, size, host
 * names, the in-place sum of a host buffer (the step's gradient; its counts in doubles), the broadcast of rank
 * 0's state and the gather of a few bytes per rank (checksums, batch shares). Without MPI
 * (or without --horovod) the world is one process and every call is a copy or nothing.
 *
 * Every call is collective: each rank makes the same calls in the same order, on the thread that
 * made the world (MPI_THREAD_FUNNELED). A failed MPI call returns CLS_ERR_WORLD naming the call,
 * the rank and its host; the engine never aborts the job (the frontend does, cls_world_abort). */
#ifndef CLS_WORLD_H
#define CLS_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "clspeech/train.h"

typedef struct cls_world cls_world;

/* The world of this process: with horovod 0 this process alone; with horovod 1 every process of
 * MPI_COMM_WORLD (MPI started by cls_world_start), or CLS_ERR_INVALID_ARGUMENT when this build has
 * no MPI or MPI was not started. Gathers every rank's host name. */
cls_status cls_world_open(cls_engine *engine, int horovod, cls_world **out);
void cls_world_close(cls_world *world);

int cls_world_rank(const cls_world *world);
int cls_world_size(const cls_world *world);
/* Host name of `rank` (this process's with rank < 0). */
const char *cls_world_host(const cls_world *world, int rank);

/* buf[0 .. n) = the sum over ranks of everyone's buf (in place): floats (the step's gradient), doubles
 * (the step's counts, loss sums and times; the evaluation's loss sums). */
cls_status cls_world_sum(cls_world *world, float *buf, size_t n);
cls_status cls_world_sum_double(cls_world *world, double *buf, size_t n);
/* Rank 0's bytes into every rank's buf. */
cls_status cls_world_broadcast(cls_world *world, void *buf, size_t bytes);
/* all[r*bytes ..] = rank r's `mine` (bytes each), on every rank. */
cls_status cls_world_gather(cls_world *world, const void *mine, size_t bytes, void *all);


#endif
