/* The stt layer's shared parts (public API in clspeech/stt.h): the model object (reference-counted: its
 * streams hold it), the reference-counted scorer streams hold, the model's failure details, the
 * streams' entry for the one-shot calls, and the results' building. */
#ifndef CLS_STT_INTERNAL_H
#define CLS_STT_INTERNAL_H

#include <pthread.h>

#include "clspeech/data.h"
#include "clspeech/decode.h"
#include "clspeech/features.h"
#include "clspeech/lm.h"
#include "clspeech/model.h"
#include "clspeech/stt.h"

/* A scorer shared by the model and the streams made while it was enabled; freed with its last holder.
 * refs is changed under the model's lock. */
typedef struct stt_scorer_ref {
  cls_scorer *scorer;
  cls_lm *lm; /* the model the scorer borrows, when it does not own it (a package's scorer); else NULL */
  int refs;
} stt_scorer_ref;

/* Copies text into dst[cap] (cut to fit, always terminated); NULL dst or cap 0 is a no-op. */
void stt_copy(char *dst, size_t cap, const char *text);

struct cls_stt_model {
  pthread_mutex_t lock;      /* the replica (its buffers and queue, the engine's error) and the settings */
  int refs;                  /* holders, changed under the lock: the program's until cls_stt_model_free, and
                                one per stream; the model is destroyed with the last */
  cls_engine *engine;
  cls_infer *infer;          /* the network on its device, streaming in chunks of CLS_STT_CHUNK_FRAMES */
  cls_alphabet *alphabet;
  cls_model_config cfg;
  cls_mfcc_tables *tables;   /* the feature geometry (read-only: streams share it) */
  int beam_width;
  double alpha, beta;
  stt_scorer_ref *scorer;    /* NULL: none */
  char **hot_words;          /* [n_hot] the hot-words (malloc'ed copies) and their boosts */
  double *hot_boosts;
  int n_hot, cap_hot;
  cls_error detail;          /* the last model-level failure */
};

/* The status code for an engine status. */
int stt_status_of(cls_status st);

/* A failure of a call on the model: its detail set afresh to the printf-style text (under the model's
 * lock; _locked: the caller holds it); returns code. Every error return of a call with a model sets it. */
int stt_model_fail(cls_stt_model *m, int code, const char *fmt, ...) CLS_PRINTF(3, 4);
int stt_model_fail_locked(cls_stt_model *m, int code, const char *fmt, ...) CLS_PRINTF(3, 4);

/* Drops one hold on the model (not under its lock), destroying it with the last. */
void stt_model_release(cls_stt_model *m);

/* Drops one hold on a scorer (under the model's lock); NULL is a no-op. */
void stt_scorer_release(cls_stt_model *m, stt_scorer_ref *ref);

/* Results: the best result's text, or up to max candidates as metadata, from a decoder's finish. */
int stt_results_text(const cls_stt_model *m, cls_ctc_decoder *decoder, char **text, cls_error *detail);
/* frames: the frames decoded (the timesteps are kept below it); max: at most the candidates the decoder
 * can give (the caller clamps it: max results are allocated). */
int stt_results_metadata(const cls_stt_model *m, cls_ctc_decoder *decoder, int64_t frames, int max,
                         cls_stt_metadata **out, cls_error *detail);

#endif
