/* The speech-to-text API (clspeech/stt.h) on a trained checkpoint folder (the short_run fixture's,
 * CLS_STT_MODEL) and LDC93S1: the one-shot result, the streamed ones (pieces of 1, 160, 320 and 16000
 * samples, with intermediate decodes between pieces) and the engine's own path as `clspeech transcribe
 * --stream_frames 16` runs it (cls_infer_stream on the WAV file, the same decoder) agree exactly:
 * every candidate's labels, timesteps and score, with and without a scorer; token timings lie inside the
 * utterance and increase, confidences are finite; a model package of the checkpoint gives the same
 * results with its scorer on; and bad input gets its status code and a message, every failed call its
 * own detail (a non-finite alpha or beta refused at the setter); a huge result count is clamped to the
 * beam width; streams outlive their model's free. */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sndfile.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data_present.h"
#include "clspeech/clspeech.h"
#include "clspeech/evaluate.h"
#include "clspeech/package.h"
#include "clspeech/scorer.h"
#include "clspeech/stt.h"

#define N_RESULTS 4
#define BEAM 128

static const char *model_dir;
static char wav[4096];
static cls_alphabet *alphabet; /* the folder's, for the tokens' texts */
static const int16_t *pcm_all; /* LDC93S1 at 16 kHz, n_all samples */
static size_t n_all;

typedef struct ref_result {
  cls_beam_result r[N_RESULTS];
  int n;
} ref_result;

/* The API's timesteps from the decoder's frames (stt_results.c): strictly increasing, below `frames`. */
static void increasing(int32_t *t, int n, int frames) {
  for (int k = 1; k < n; k++)
    if (t[k] <= t[k - 1]) t[k] = t[k - 1] + 1;
  if (n > 0 && t[n - 1] > frames - 1) t[n - 1] = frames - 1;
  for (int k = n - 2; k >= 0; k--)
    if (t[k] >= t[k + 1]) t[k] = t[k + 1] - 1;
}

static cls_status on_chunk(void *user, int64_t first, int n, const float *logits) {
  (void)first;
  cls_ctc_decoder *d = user;
  return cls_ctc_decoder_feed(d, logits, n, 29);
}

/* The engine's path, as `clspeech transcribe --stream_frames 16 --beam_width BEAM [--scorer_path]` runs it. */
static void reference_of(const char *file, const cls_scorer *scorer, const int32_t *hot_id, const double *hot_boost,
                         ref_result *out) {
  memset(out, 0, sizeof *out);
  char ckpt[4400];
  cls_error err;
  cls_model_config cfg;
  CHECK_INT(cls_checkpoint_choose(model_dir, CLS_LOAD_AUTO, ckpt, sizeof ckpt, NULL, &err), CLS_OK);
  CHECK_INT(cls_checkpoint_peek_model(ckpt, &cfg, &err), CLS_OK);
  CHECK_INT(cfg.n_classes, 29);
  cls_engine *e = NULL;
  CHECK_INT(cls_engine_create(NULL, &e), CLS_OK);
  int sel[8], n_sel = 0;
  CHECK_INT(cls_engine_select(e, "0:0", sel, 8, &n_sel), CLS_OK);
  CHECK_INT(cls_engine_prepare(e, sel, &n_sel), CLS_OK);
  cls_infer_config ic = {cfg, cls_mfcc_default(16000), 1, NULL, 1, 1, 0, CLS_STT_CHUNK_FRAMES};
  cls_infer *infer = NULL;
  CHECK_INT(cls_infer_create(e, sel[0], &ic, &infer), CLS_OK);
  CHECK_INT(cls_infer_load(infer, ckpt), CLS_OK);
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = BEAM;
  bo.scorer = scorer;
  bo.lm_alpha = (float)CLS_LM_ALPHA_DEFAULT; /* as the API's float setter carries them */
  bo.lm_beta = (float)CLS_LM_BETA_DEFAULT;
  bo.hot_words = hot_id;
  bo.hot_boosts = hot_boost;
  bo.n_hot_words = hot_id ? 1 : 0;
  cls_ctc_decoder *d = NULL;
  CHECK_INT(cls_ctc_decoder_begin(29, 0, &bo, &d), CLS_OK);
  int64_t frames = 0;
  CHECK_INT(cls_infer_stream(infer, file, on_chunk, d, &frames), CLS_OK);
  CHECK(frames >= 145 && frames <= 146, "%s: %lld frames", file, (long long)frames);
  CHECK_INT(cls_ctc_decoder_finish(d, out->r, N_RESULTS, &out->n), CLS_OK);
  for (int i = 0; i < out->n; i++) increasing(out->r[i].frames, out->r[i].length, (int)frames);
  cls_ctc_decoder_free(d);
  cls_infer_destroy(infer);
  cls_engine_destroy(e);
}

static void reference(const cls_scorer *scorer, const int32_t *hot_id, const double *hot_boost, ref_result *out) {
  reference_of(wav, scorer, hot_id, hot_boost, out);
}

static int16_t *read_pcm(const char *path, int rate, size_t *n) {
  SF_INFO info;
  memset(&info, 0, sizeof info);
  SNDFILE *f = sf_open(path, SFM_READ, &info);
  CHECK(f && info.channels == 1 && info.samplerate == rate, "%s: mono %d Hz", path, rate);
  if (!f) return NULL;
  int16_t *pcm = malloc((size_t)info.frames * sizeof *pcm);
  *n = (size_t)sf_readf_short(f, pcm, info.frames);
  sf_close(f);
  return pcm;
}

/* Metadata equal to the reference: every candidate's labels (as text), timesteps and score. */
static void check_same(const cls_stt_metadata *md, const ref_result *ref, const char *what) {
  CHECK(md != NULL, "%s: no metadata", what);
  if (!md) return;
  CHECK_INT(md->num_transcripts, ref->n);
  for (int i = 0; i < md->num_transcripts && i < ref->n; i++) {
    const cls_stt_transcript *t = &md->transcripts[i];
    CHECK(t->confidence == ref->r[i].log_prob, "%s: candidate %d: confidence %.17g, reference %.17g", what, i,
          t->confidence, ref->r[i].log_prob);
    CHECK_INT(t->num_tokens, ref->r[i].length);
    int same = t->num_tokens == ref->r[i].length;
    for (int k = 0; same && k < t->num_tokens; k++)
      same = t->tokens[k].timestep == ref->r[i].frames[k] &&
             strcmp(t->tokens[k].text, cls_alphabet_label(alphabet, ref->r[i].labels[k])) == 0;
    CHECK(same, "%s: candidate %d: tokens differ from the reference", what, i);
  }
}

/* Token timings inside the utterance, increasing; start_time = timestep * 20 ms; finite confidence. */
static void check_timings(const cls_stt_metadata *md, double seconds) {
  for (int i = 0; md && i < md->num_transcripts; i++) {
    const cls_stt_transcript *t = &md->transcripts[i];
    CHECK(isfinite(t->confidence), "candidate %d: confidence %g", i, t->confidence);
    for (int k = 0; k < t->num_tokens; k++) {
      const cls_stt_token *tk = &t->tokens[k];
      CHECK(tk->start_time >= 0 && tk->start_time < seconds, "token %d at %g s, audio %g s", k, tk->start_time, seconds);
      CHECK(fabsf(tk->start_time - (float)(tk->timestep * 0.02)) < 1e-6f, "token %d: %g s for timestep %d", k,
            tk->start_time, tk->timestep);
      if (k > 0) CHECK(tk->timestep > t->tokens[k - 1].timestep, "token %d: timestep %d after %d", k, tk->timestep,
                       t->tokens[k - 1].timestep);
    }
  }
}

/* Streamed in pieces of `piece` samples, an intermediate decode after every `every` pieces. */
static cls_stt_metadata *streamed_at(cls_stt_model *m, int rate, const int16_t *pcm, size_t n, size_t piece,
                                     size_t every) {
  cls_stt_stream *s = NULL;
  CHECK_INT(cls_stt_stream_create_at(m, rate, &s), CLS_STT_OK);
  size_t pieces = 0;
  int rc = CLS_STT_OK;
  for (size_t at = 0; at < n && rc == CLS_STT_OK; at += piece) {
    rc = cls_stt_stream_feed(s, pcm + at, n - at < piece ? n - at : piece);
    if (every && ++pieces % every == 0) {
      char *text = NULL;
      CHECK_INT(cls_stt_stream_intermediate(s, &text), CLS_STT_OK);
      CHECK(text != NULL, "intermediate text");
      /* The same best transcript with metadata, its tokens inside the audio fed so far. */
      cls_stt_metadata *md = NULL;
      CHECK_INT(cls_stt_stream_intermediate_metadata(s, 2, &md), CLS_STT_OK);
      CHECK(md && md->num_transcripts >= 1 && text && md->transcripts[0].num_tokens == (int)strlen(text),
            "intermediate metadata for \"%s\"", text ? text : "");
      if (md) check_timings(md, cls_stt_stream_seconds(s));
      cls_stt_metadata_free(md);
      cls_stt_string_free(text);
    }
  }
  CHECK_INT(rc, CLS_STT_OK);
  CHECK(fabs(cls_stt_stream_seconds(s) - (double)n / rate) < 1e-9, "seconds %g", cls_stt_stream_seconds(s));
  cls_stt_metadata *md = NULL;
  CHECK_INT(cls_stt_stream_finish_metadata(s, N_RESULTS, &md), CLS_STT_OK);
  /* Finished: it can only be freed. */
  char *text = (char *)1;
  CHECK_INT(cls_stt_stream_feed(s, pcm, 10), CLS_STT_ERR_STREAM_FINISHED);
  CHECK_INT(cls_stt_stream_intermediate(s, &text), CLS_STT_ERR_STREAM_FINISHED);
  CHECK(text == NULL, "no text from a finished stream");
  CHECK_INT(cls_stt_stream_finish(s, &text), CLS_STT_ERR_STREAM_FINISHED);
  cls_stt_stream_free(s);
  return md;
}

static cls_stt_metadata *streamed(cls_stt_model *m, const int16_t *pcm, size_t n, size_t piece, size_t every) {
  return streamed_at(m, 16000, pcm, n, piece, every);
}

static void check_agreement(cls_stt_model *m, int rate, const int16_t *pcm, size_t n, const ref_result *ref,
                            const char *what) {
  cls_stt_metadata *one = NULL;
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, rate, N_RESULTS, &one), CLS_STT_OK);
  check_same(one, ref, what);
  check_timings(one, (double)n / rate);
  char *text = NULL;
  CHECK_INT(cls_stt_speech_to_text(m, pcm, n, rate, &text), CLS_STT_OK);
  CHECK(text && one && one->num_transcripts > 0 && (int)strlen(text) == one->transcripts[0].num_tokens,
        "%s: one-shot text \"%s\"", what, text ? text : "(null)");
  printf("%s: \"%s\", confidence %.6f, %d tokens\n", what, text ? text : "", one ? one->transcripts[0].confidence : 0,
         one ? one->transcripts[0].num_tokens : 0);
  cls_stt_string_free(text);
  cls_stt_metadata_free(one);
  const size_t pieces[] = {1, 160, 320, 16000};
  for (int p = 0; p < 4; p++) {
    cls_stt_metadata *md = streamed_at(m, rate, pcm, n, pieces[p], pieces[p] == 320 ? 1 : pieces[p] == 1 ? 997 : 0);
    char label[128];
    snprintf(label, sizeof label, "%s, pieces of %zu", what, pieces[p]);
    check_same(md, ref, label);
    cls_stt_metadata_free(md);
  }
}

/* Several streams of one model on several threads at once. */
typedef struct worker {
  cls_stt_model *m;
  const int16_t *pcm;
  size_t n, piece;
  int rc;
  cls_stt_metadata *md;
} worker;

/* No CHECK on the thread (its counters are not atomic): the first failing code is kept for the main one. */
static void *run_worker(void *arg) {
  worker *w = arg;
  cls_stt_stream *s = NULL;
  w->rc = cls_stt_stream_create(w->m, &s);
  for (size_t at = 0; at < w->n && w->rc == CLS_STT_OK; at += w->piece) {
    w->rc = cls_stt_stream_feed(s, w->pcm + at, w->n - at < w->piece ? w->n - at : w->piece);
    char *text = NULL;
    if (w->rc == CLS_STT_OK) w->rc = cls_stt_stream_intermediate(s, &text);
    cls_stt_string_free(text);
  }
  if (w->rc == CLS_STT_OK) w->rc = cls_stt_stream_finish_metadata(s, N_RESULTS, &w->md);
  cls_stt_stream_free(s);
  return NULL;
}

static void check_threads(cls_stt_model *m, const int16_t *pcm, size_t n, const ref_result *ref) {
  worker w[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    w[i] = (worker){m, pcm, n, (size_t)(160 * (i + 1) + 7), CLS_STT_OK, NULL};
    CHECK_INT(pthread_create(&th[i], NULL, run_worker, &w[i]), 0);
  }
  for (int i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    CHECK_INT(w[i].rc, CLS_STT_OK);
    char label[64];
    snprintf(label, sizeof label, "thread %d", i);
    check_same(w[i].md, ref, label);
    cls_stt_metadata_free(w[i].md);
  }
}

/* Leaves a known detail on the model (a rate out of range), so that a failing call's own detail shows
 * that the call set it afresh. */
static void stale(cls_stt_model *m) {
  char *text = NULL;
  CHECK_INT(cls_stt_speech_to_text(m, pcm_all, 100, 500, &text), CLS_STT_ERR_SAMPLE_RATE);
  CHECK_CONTAINS(cls_stt_model_detail(m), "audio at 500 Hz");
}

/* A call on a model fails with `code` and its own detail, whatever the detail was before. */
#define CHECK_FRESH(m, call, code, needle)          \
  do {                                              \
    stale(m);                                       \
    CHECK_INT((call), (code));                      \
    CHECK_CONTAINS(cls_stt_model_detail(m), needle); \
  } while (0)

/* Every error return of a call on a model or a stream sets its detail afresh; a non-finite alpha or
 * beta is refused at the setter, naming the value (issue 45, item 6). The model has no scorer. */
static void check_details(cls_stt_model *m, const int16_t *pcm, size_t n) {
  char *text = NULL;
  cls_stt_metadata *md = NULL;
  cls_stt_stream *s = NULL;
  CHECK_FRESH(m, cls_stt_model_set_beam_width(m, 0), CLS_STT_ERR_INVALID_ARGUMENT, "beam width 0");
  CHECK_FRESH(m, cls_stt_model_set_beam_width(m, 65537), CLS_STT_ERR_INVALID_ARGUMENT, "beam width 65537");
  CHECK_FRESH(m, cls_stt_model_set_scorer_alpha_beta(m, 1, INFINITY), CLS_STT_ERR_INVALID_ARGUMENT, "beta inf");
  CHECK_FRESH(m, cls_stt_model_set_scorer_alpha_beta(m, -INFINITY, 1), CLS_STT_ERR_INVALID_ARGUMENT, "alpha -inf");
  CHECK_FRESH(m, cls_stt_model_set_scorer_alpha_beta(m, NAN, 1), CLS_STT_ERR_INVALID_ARGUMENT, "must be finite");
  CHECK_FRESH(m, cls_stt_model_enable_scorer(m, NULL), CLS_STT_ERR_INVALID_ARGUMENT, "NULL path");
  CHECK_FRESH(m, cls_stt_model_enable_scorer(m, "/nonexistent/lm.arpa"), CLS_STT_ERR_SCORER, "/nonexistent/lm.arpa");
  CHECK_FRESH(m, cls_stt_model_add_hot_word(m, "year", 1.0f), CLS_STT_ERR_NO_SCORER, "no scorer");
  CHECK_FRESH(m, cls_stt_model_add_hot_word(m, "all year", 1.0f), CLS_STT_ERR_INVALID_ARGUMENT, "one word");
  CHECK_FRESH(m, cls_stt_model_add_hot_word(m, NULL, 1.0f), CLS_STT_ERR_INVALID_ARGUMENT, "(NULL)");
  CHECK_FRESH(m, cls_stt_model_add_hot_word(m, "year", INFINITY), CLS_STT_ERR_INVALID_ARGUMENT, "boost inf");
  CHECK_FRESH(m, cls_stt_model_erase_hot_word(m, "year"), CLS_STT_ERR_NO_SCORER, "no scorer");
  CHECK_FRESH(m, cls_stt_model_erase_hot_word(m, NULL), CLS_STT_ERR_INVALID_ARGUMENT, "NULL word");
  CHECK_FRESH(m, cls_stt_model_clear_hot_words(m), CLS_STT_ERR_NO_SCORER, "no scorer");
  CHECK_FRESH(m, cls_stt_speech_to_text(m, pcm, n, 16000, NULL), CLS_STT_ERR_INVALID_ARGUMENT, "NULL output");
  CHECK_FRESH(m, cls_stt_speech_to_text(m, NULL, 10, 16000, &text), CLS_STT_ERR_INVALID_ARGUMENT, "NULL samples");
  CHECK_FRESH(m, cls_stt_speech_to_text_metadata(m, pcm, n, 16000, 0, &md), CLS_STT_ERR_INVALID_ARGUMENT,
              "0 results");
  CHECK_FRESH(m, cls_stt_speech_to_text_metadata(m, pcm, n, 16000, 1, NULL), CLS_STT_ERR_INVALID_ARGUMENT,
              "NULL output");
  CHECK_FRESH(m, cls_stt_stream_create_at(m, 16000, NULL), CLS_STT_ERR_INVALID_ARGUMENT, "NULL output");
  CHECK_FRESH(m, cls_stt_stream_create_at(m, 400000, &s), CLS_STT_ERR_SAMPLE_RATE, "audio at 400000 Hz");
  CHECK(text == NULL && md == NULL && s == NULL, "no output from a failed call");
  /* A stream's: each failed call's own text, one after another. */
  CHECK_INT(cls_stt_stream_create(m, &s), CLS_STT_OK);
  if (!s) return;
  CHECK_INT(cls_stt_stream_feed(s, NULL, 10), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_stt_stream_detail(s), "NULL samples");
  CHECK_INT(cls_stt_stream_intermediate_metadata(s, 0, &md), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_stt_stream_detail(s), "0 results");
  CHECK_INT(cls_stt_stream_intermediate(s, NULL), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_stt_stream_detail(s), "NULL output");
  CHECK_INT(cls_stt_stream_feed(s, pcm, n), CLS_STT_OK); /* refused calls leave the stream usable */
  CHECK_INT(cls_stt_stream_finish(s, &text), CLS_STT_OK);
  CHECK(text && *text, "a transcript after refused calls");
  cls_stt_string_free(text);
  CHECK_INT(cls_stt_stream_finish_metadata(s, 1, NULL), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_stt_stream_detail(s), "NULL output");
  CHECK_INT(cls_stt_stream_feed(s, pcm, 10), CLS_STT_ERR_STREAM_FINISHED);
  CHECK_CONTAINS(cls_stt_stream_detail(s), "finished");
  cls_stt_stream_free(s);
}

/* A result count past the candidates there can be (the beam width; 1 greedy) is clamped before anything is
 * allocated: the results are the first ones of a smaller count (issue 45, item 10). */
static void check_result_count(cls_stt_model *m, const int16_t *pcm, size_t n) {
  cls_stt_metadata *few = NULL, *all = NULL;
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, 16000, N_RESULTS, &few), CLS_STT_OK);
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, 16000, 1000000000, &all), CLS_STT_OK);
  CHECK(few && all && all->num_transcripts >= few->num_transcripts && all->num_transcripts <= BEAM,
        "1e9 results: %d candidates, beam %d", all ? all->num_transcripts : -1, BEAM);
  for (int i = 0; few && all && i < few->num_transcripts && i < all->num_transcripts; i++)
    CHECK(all->transcripts[i].confidence == few->transcripts[i].confidence, "candidate %d: %.17g, %.17g", i,
          all->transcripts[i].confidence, few->transcripts[i].confidence);
  cls_stt_metadata_free(few);
  cls_stt_metadata_free(all);
  cls_stt_stream *s = NULL;
  CHECK_INT(cls_stt_stream_create(m, &s), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_feed(s, pcm, n), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_intermediate_metadata(s, INT_MAX, &all), CLS_STT_OK);
  CHECK(all && all->num_transcripts >= 1 && all->num_transcripts <= BEAM, "INT_MAX intermediate results: %d",
        all ? all->num_transcripts : -1);
  cls_stt_metadata_free(all);
  CHECK_INT(cls_stt_stream_finish_metadata(s, INT_MAX, &all), CLS_STT_OK);
  CHECK(all && all->num_transcripts >= 1 && all->num_transcripts <= BEAM, "INT_MAX final results: %d",
        all ? all->num_transcripts : -1);
  cls_stt_metadata_free(all);
  cls_stt_stream_free(s);
  /* Greedy decoding has one candidate. */
  CHECK_INT(cls_stt_model_set_beam_width(m, 1), CLS_STT_OK);
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, 16000, INT_MAX, &all), CLS_STT_OK);
  CHECK(all && all->num_transcripts == 1, "greedy, INT_MAX results: %d", all ? all->num_transcripts : -1);
  cls_stt_metadata_free(all);
  CHECK_INT(cls_stt_model_set_beam_width(m, BEAM), CLS_STT_OK);
}

/* Freeing the model under live streams (issue 45, item 11): they hold it, so they go on giving the
 * model's results (`ref`: without a scorer) and the last one's free releases it (under ASan: no use
 * after free, no leak). Takes the program's hold on m. */
static void check_free_under_streams(cls_stt_model *m, const int16_t *pcm, size_t n, const ref_result *ref) {
  cls_stt_stream *a = NULL, *b = NULL;
  CHECK_INT(cls_stt_stream_create(m, &a), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_create_at(m, 8000, &b), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_feed(a, pcm, n / 2), CLS_STT_OK); /* chunks run before the free, the rest after */
  cls_stt_model_free(m);
  if (!a || !b) {
    cls_stt_stream_free(a);
    cls_stt_stream_free(b);
    return;
  }
  CHECK_INT(cls_stt_stream_feed(a, pcm + n / 2, n - n / 2), CLS_STT_OK);
  char *text = NULL;
  CHECK_INT(cls_stt_stream_intermediate(a, &text), CLS_STT_OK);
  CHECK(text != NULL, "an intermediate transcript after the model's free");
  cls_stt_string_free(text);
  cls_stt_metadata *md = NULL;
  CHECK_INT(cls_stt_stream_finish_metadata(a, N_RESULTS, &md), CLS_STT_OK);
  check_same(md, ref, "a stream after its model's free");
  cls_stt_metadata_free(md);
  cls_stt_stream_free(a);
  /* The other stream still holds the model: fed, refused, finished. */
  CHECK_INT(cls_stt_stream_feed(b, pcm, 8000), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_feed(b, NULL, 1), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(cls_stt_stream_detail(b), "NULL samples");
  CHECK_INT(cls_stt_stream_finish(b, &text), CLS_STT_OK);
  CHECK(text != NULL, "the last stream's transcript after the model's free");
  cls_stt_string_free(text);
  CHECK(fabs(cls_stt_stream_seconds(b) - 1.0) < 1e-9, "seconds %g", cls_stt_stream_seconds(b));
  cls_stt_stream_free(b); /* the last holder: the model goes with it */
}

static void check_bad_input(cls_stt_model *m, const int16_t *pcm, size_t n) {
  char detail[512] = "x";
  cls_stt_model *none = (cls_stt_model *)1;
  CHECK_INT(cls_stt_model_create("/nonexistent/model", NULL, &none, detail, sizeof detail), CLS_STT_ERR_NO_MODEL);
  CHECK(none == NULL, "no model");
  CHECK_CONTAINS(detail, "/nonexistent/model");
  CHECK_INT(cls_stt_model_create(wav, NULL, &none, detail, sizeof detail), CLS_STT_ERR_BAD_MODEL);
  CHECK_CONTAINS(detail, "not a clspeech model package");
  CHECK_CONTAINS(detail, "LDC93S1.wav");
  CHECK_INT(cls_stt_model_create(CLS_TEST_DATA, NULL, &none, detail, sizeof detail), CLS_STT_ERR_NO_MODEL);
  CHECK_CONTAINS(detail, "no checkpoint to load");
  CHECK_INT(cls_stt_model_create(NULL, NULL, &none, detail, sizeof detail), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_create(model_dir, "no-such-device-xyz", &none, detail, sizeof detail),
            CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_CONTAINS(detail, "no-such-device-xyz");
  /* A NULL model or stream anywhere. */
  char *text = NULL;
  cls_stt_metadata *md = NULL;
  cls_stt_stream *s = NULL;
  CHECK_INT(cls_stt_speech_to_text(NULL, pcm, n, 16000, &text), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_speech_to_text_metadata(NULL, pcm, n, 16000, 1, &md), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_stream_create(NULL, &s), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_stream_feed(NULL, pcm, n), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_stream_intermediate(NULL, &text), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_stream_finish(NULL, &text), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_stream_finish_metadata(NULL, 1, &md), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_set_beam_width(NULL, 10), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_enable_scorer(NULL, "x"), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_disable_scorer(NULL), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_set_scorer_alpha_beta(NULL, 1, 1), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_sample_rate(NULL), 0);
  CHECK_INT(cls_stt_model_beam_width(NULL), 0);
  cls_stt_model_free(NULL);
  cls_stt_stream_free(NULL);
  cls_stt_metadata_free(NULL);
  CHECK_INT(cls_stt_model_set_beam_width(m, 0), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, 16000, 0, &md), CLS_STT_ERR_INVALID_ARGUMENT);
  /* Audio at a rate out of range: refused, with the rate in the text. */
  CHECK_INT(cls_stt_speech_to_text(m, pcm, n, 500, &text), CLS_STT_ERR_SAMPLE_RATE);
  CHECK(text == NULL, "no text");
  CHECK_CONTAINS(cls_stt_model_detail(m), "audio at 500 Hz: the rate must be 1000 .. 384000 Hz");
  CHECK_INT(cls_stt_stream_create_at(m, 400000, &s), CLS_STT_ERR_SAMPLE_RATE);
  CHECK(s == NULL, "no stream");
  /* Shorter than one window: an empty transcript. */
  CHECK_INT(cls_stt_speech_to_text(m, pcm, 100, 16000, &text), CLS_STT_OK);
  CHECK(text && !*text, "empty transcript for 100 samples");
  cls_stt_string_free(text);
  /* Hot-words without a scorer. */
  CHECK_INT(cls_stt_model_add_hot_word(m, "year", 1.0f), CLS_STT_ERR_NO_SCORER);
  CHECK_INT(cls_stt_model_erase_hot_word(m, "year"), CLS_STT_ERR_NO_SCORER);
  CHECK_INT(cls_stt_model_clear_hot_words(m), CLS_STT_ERR_NO_SCORER);
  CHECK_INT(cls_stt_model_add_hot_word(NULL, "year", 1.0f), CLS_STT_ERR_INVALID_ARGUMENT);
  /* A scorer that cannot be read. */
  CHECK_INT(cls_stt_model_enable_scorer(m, "/nonexistent/lm.arpa"), CLS_STT_ERR_SCORER);
  CHECK_CONTAINS(cls_stt_model_detail(m), "/nonexistent/lm.arpa");
  for (int code = 0; code <= 12; code++)
    CHECK(strcmp(cls_stt_error_message(code), "unknown status") != 0, "message of %d", code);
  CHECK(strcmp(cls_stt_error_message(99), "unknown status") == 0, "message of 99");
  CHECK_CONTAINS(cls_stt_version(), ".");
}

/* A unigram language model of the sentence's words (every word equally likely). */
static void write_arpa(const char *path) {
  static const char *words[] = {"she", "had", "your", "dark", "suit", "in", "greasy", "wash", "water", "all", "year"};
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "%s", path);
  if (!f) return;
  fprintf(f, "\\data\\\nngram 1=14\n\n\\1-grams:\n-2.0\t<unk>\n-99\t<s>\n-1.1\t</s>\n");
  for (int i = 0; i < 11; i++) fprintf(f, "-1.1\t%s\n", words[i]);
  fprintf(f, "\n\\end\\\n");
  fclose(f);
}

/* A model package (.clsm, `clspeech export`) of the same checkpoint carrying the scorer of `arpa`: the
 * model it makes has the scorer on with the package's weights and gives the folder's results with that
 * scorer (`with`); with the scorer disabled, the results without one. */
static void check_package(const char *arpa, const ref_result *with) {
  char clsm[4200], clm[4200], detail[1024];
  cls_error err;
  snprintf(clsm, sizeof clsm, "%s/test_stt.clsm", model_dir);
  snprintf(clm, sizeof clm, "%s/test_stt.clm", model_dir);
  cls_lm *lm = NULL; /* a package holds the binary form */
  CHECK_INT(cls_lm_load(arpa, &lm, &err), CLS_OK);
  CHECK_INT(cls_lm_save_binary(lm, clm, &err), CLS_OK);
  cls_lm_destroy(lm);
  CHECK_INT(cls_package_write_from_dir(clsm, model_dir, CLS_LOAD_AUTO, clm, (float)CLS_LM_ALPHA_DEFAULT,
                                       (float)CLS_LM_BETA_DEFAULT, NULL, &err),
            CLS_OK);
  if (err.status != CLS_OK) fprintf(stderr, "%s\n", err.text);
  cls_stt_model *pm = NULL;
  CHECK_INT(cls_stt_model_create(clsm, "0:0", &pm, detail, sizeof detail), CLS_STT_OK);
  if (!pm) {
    fprintf(stderr, "%s\n", detail);
    return;
  }
  CHECK_INT(cls_stt_model_sample_rate(pm), 16000);
  CHECK_INT(cls_stt_model_set_beam_width(pm, BEAM), CLS_STT_OK);
  check_agreement(pm, 16000, pcm_all, n_all, with, "package with its scorer");
  CHECK_INT(cls_stt_model_add_hot_word(pm, "zebra", 1.0f), CLS_STT_OK); /* a scorer is on */
  CHECK_INT(cls_stt_model_disable_scorer(pm), CLS_STT_OK);
  CHECK_INT(cls_stt_model_add_hot_word(pm, "zebra", 1.0f), CLS_STT_ERR_NO_SCORER);
  ref_result none;
  reference(NULL, NULL, NULL, &none);
  check_agreement(pm, 16000, pcm_all, n_all, &none, "package without its scorer");
  cls_beam_results_free(none.r, none.n);
  cls_stt_model_free(pm);
  remove(clsm);
  remove(clm);
}

int main(void) {
  if (!data_present()) return check_finish("test_stt");
  model_dir = getenv("CLS_STT_MODEL");
  CHECK(model_dir && *model_dir, "CLS_STT_MODEL (the short_run fixture's folder) is set");
  if (!model_dir || !*model_dir) return check_finish("test_stt");
  snprintf(wav, sizeof wav, "%s/deepspeech-smoke/LDC93S1.wav", CLS_TEST_DATA);
  size_t n = 0;
  int16_t *pcm = read_pcm(wav, 16000, &n);
  pcm_all = pcm;
  n_all = n;
  char detail[1024];
  cls_stt_model *m = NULL;
  CHECK_INT(cls_stt_model_create(model_dir, "0:0", &m, detail, sizeof detail), CLS_STT_OK);
  if (!pcm || !m) {
    fprintf(stderr, "%s\n", detail);
    return check_finish("test_stt");
  }
  char alphabet_path[4200];
  cls_error aerr;
  snprintf(alphabet_path, sizeof alphabet_path, "%s/alphabet.txt", model_dir);
  CHECK_INT(cls_alphabet_load(alphabet_path, &alphabet, &aerr), CLS_OK);
  CHECK_INT(cls_stt_model_sample_rate(m), 16000);
  CHECK_INT(cls_stt_model_beam_width(m), 1024);
  CHECK_INT(cls_stt_model_set_beam_width(m, BEAM), CLS_STT_OK);
  CHECK_INT(cls_stt_model_beam_width(m), BEAM);

  ref_result ref;
  reference(NULL, NULL, NULL, &ref);
  check_agreement(m, 16000, pcm, n, &ref, "no scorer");
  check_threads(m, pcm, n, &ref);
  cls_beam_results_free(ref.r, ref.n);
  /* The 8 kHz copy, resampled: as `clspeech transcribe` resamples the file, whatever the pieces. */
  char wav8k[4200];
  snprintf(wav8k, sizeof wav8k, "%s/deepspeech-smoke/LDC93S1_pcms16le_1_8000.wav", CLS_TEST_DATA);
  size_t n8 = 0;
  int16_t *pcm8 = read_pcm(wav8k, 8000, &n8);
  reference_of(wav8k, NULL, NULL, NULL, &ref);
  if (pcm8) check_agreement(m, 8000, pcm8, n8, &ref, "8 kHz resampled");
  free(pcm8);
  cls_beam_results_free(ref.r, ref.n);

  /* With a scorer: the model's, and one a stream keeps after the model disables it. */
  char arpa[4200];
  snprintf(arpa, sizeof arpa, "%s/test_stt.arpa", model_dir);
  write_arpa(arpa);
  const char *labels[28];
  for (int i = 0; i < 28; i++) labels[i] = cls_alphabet_label(alphabet, i);
  cls_error err;
  cls_scorer *scorer = NULL;
  CHECK_INT(cls_scorer_load(arpa, labels, 28, &scorer, NULL, &err), CLS_OK);
  if (!scorer) fprintf(stderr, "%s\n", err.text);
  reference(scorer, NULL, NULL, &ref);
  CHECK_INT(cls_stt_model_enable_scorer(m, arpa), CLS_STT_OK);
  CHECK_INT(cls_stt_model_set_scorer_alpha_beta(m, (float)CLS_LM_ALPHA_DEFAULT, (float)CLS_LM_BETA_DEFAULT), CLS_STT_OK);
  /* Non-finite weights are refused and leave those in force: decoding with the scorer goes on. */
  CHECK_FRESH(m, cls_stt_model_set_scorer_alpha_beta(m, 1, INFINITY), CLS_STT_ERR_INVALID_ARGUMENT, "beta inf");
  CHECK_FRESH(m, cls_stt_model_set_scorer_alpha_beta(m, INFINITY, -INFINITY), CLS_STT_ERR_INVALID_ARGUMENT,
              "alpha inf and beta -inf");
  check_agreement(m, 16000, pcm, n, &ref, "scorer");
  /* Hot-words: "year" boosted by 2 gives the engine's result with that boost, and another score. */
  const double unboosted = ref.r[0].log_prob;
  cls_beam_results_free(ref.r, ref.n);
  const int32_t year = cls_lm_word_id(cls_scorer_lm(scorer), "year", 4);
  const double two = (float)2.0;
  reference(scorer, &year, &two, &ref);
  CHECK(ref.r[0].log_prob != unboosted, "the boost changes the best score (%.9f)", unboosted);
  CHECK_INT(cls_stt_model_add_hot_word(m, "year", 2.0f), CLS_STT_OK);
  CHECK_FRESH(m, cls_stt_model_add_hot_word(m, "year", 1.0f), CLS_STT_ERR_HOT_WORD,
              "\"year\" is already a hot-word");
  CHECK_INT(cls_stt_model_add_hot_word(m, "greasy wash", 1.0f), CLS_STT_ERR_INVALID_ARGUMENT);
  CHECK_INT(cls_stt_model_add_hot_word(m, "zebra", 1.0f), CLS_STT_OK); /* not in the vocabulary: no effect */
  CHECK_INT(cls_stt_model_erase_hot_word(m, "zebra"), CLS_STT_OK);
  CHECK_FRESH(m, cls_stt_model_erase_hot_word(m, "zebra"), CLS_STT_ERR_HOT_WORD, "\"zebra\" is not a hot-word");
  cls_stt_metadata *hot_md = NULL;
  CHECK_INT(cls_stt_speech_to_text_metadata(m, pcm, n, 16000, N_RESULTS, &hot_md), CLS_STT_OK);
  check_same(hot_md, &ref, "hot-word year +2");
  cls_stt_metadata_free(hot_md);
  hot_md = streamed(m, pcm, n, 320, 3);
  check_same(hot_md, &ref, "hot-word year +2, pieces of 320");
  cls_stt_metadata_free(hot_md);
  CHECK_INT(cls_stt_model_clear_hot_words(m), CLS_STT_OK);
  CHECK_INT(cls_stt_model_erase_hot_word(m, "year"), CLS_STT_ERR_HOT_WORD);
  cls_beam_results_free(ref.r, ref.n);
  reference(scorer, NULL, NULL, &ref);

  cls_stt_stream *held = NULL;
  CHECK_INT(cls_stt_stream_create(m, &held), CLS_STT_OK);
  CHECK_INT(cls_stt_model_disable_scorer(m), CLS_STT_OK);
  CHECK_INT(cls_stt_stream_feed(held, pcm, n), CLS_STT_OK);
  cls_stt_metadata *md = NULL;
  CHECK_INT(cls_stt_stream_finish_metadata(held, N_RESULTS, &md), CLS_STT_OK);
  check_same(md, &ref, "a stream holding the scorer the model disabled");
  cls_stt_metadata_free(md);
  cls_stt_stream_free(held);
  check_package(arpa, &ref);
  cls_beam_results_free(ref.r, ref.n);
  cls_scorer_destroy(scorer);

  check_bad_input(m, pcm, n);
  check_details(m, pcm, n);
  check_result_count(m, pcm, n);
  reference(NULL, NULL, NULL, &ref);
  check_free_under_streams(m, pcm, n, &ref); /* frees m */
  cls_beam_results_free(ref.r, ref.n);
  cls_alphabet_destroy(alphabet);
  free(pcm);
  return check_finish("test_stt");
}
