/* The stt streams (see clspeech/stt.h): 16-bit PCM pieces of any length to features (frames of the
 * feature window every step, each from its own samples, so the cut between pieces does not matter),
 * features to context windows and the network a chunk of CLS_STT_CHUNK_FRAMES frames at a time (the
 * chunks and their windows as cls_infer_stream makes them: a chunk runs once the features reach
 * n_context frames past it, the last one at finish with zeros past the end), the LSTM state kept here
 * and run on the model's shared replica under its lock, the logits to the stream's own CTC decoder. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <samplerate.h>

#include "clspeech/lm.h"
#include "clspeech/scorer.h"
#include "model/infer.h"
#include "stt/stt_internal.h"

#define STT_BLOCK 1024   /* samples converted from 16-bit at a time */
#define STT_RS_OUT 4096  /* the resampler's output per call */

struct cls_stt_stream {
  cls_stt_model *m;          /* held while the stream lives (the model outlives cls_stt_model_free for it) */
  stt_scorer_ref *scorer;    /* held while the stream lives */
  cls_ctc_decoder *decoder;
  int32_t *hot_ids;          /* the model's hot-words as the scorer's word ids, and their boosts */
  double *hot_boosts;
  int n_hidden, n_context, n_coeff, n_classes, width;
  size_t window, step;       /* samples */
  float *h, *c;              /* [n_hidden] the LSTM state after the frames run */
  float *pending;            /* [pending_cap] samples not yet featurised; the first is sample fend * step */
  size_t n_pending, pending_cap, drop; /* drop: samples still to skip (a step longer than the window) */
  float *feats;              /* [feat_rows, n_coeff] features of frames fbase .. fend */
  size_t feat_rows, fbase, fend, obase; /* obase: the first frame not yet run */
  float *windows;            /* [CLS_STT_CHUNK_FRAMES, width] */
  float *logits;             /* [CLS_STT_CHUNK_FRAMES, n_classes] */
  size_t fed;                /* samples fed, at `rate` */
  int rate;                  /* the audio's rate */
  SRC_STATE *src;            /* resampling to the model's rate, NULL when the rates agree */
  double ratio;
  float *rs_out;             /* [STT_RS_OUT] the resampler's output */
  int candidates;            /* the most results the decoder can give: 1 greedy, else the beam width */
  int finished;
  int failed;                /* a sticky failure's code, 0 if none */
  cls_error failure;         /* its text */
  cls_error detail;          /* the last failed call's text (cls_stt_stream_detail) */
};

/* A sticky failure: its code, and its text after `what`, kept for every later call. */
static int fail(cls_stt_stream *s, int code, const char *what, const char *text) {
  s->failed = code;
  cls_error_set(&s->failure, CLS_ERR_IO, "%s: %s", what, text);
  s->detail = s->failure;
  return code;
}

/* A failed call that leaves the stream as it was: its code, the detail set afresh. */
static int refuse(cls_stt_stream *s, int code, const char *fmt, ...) CLS_PRINTF(3, 4);
static int refuse(cls_stt_stream *s, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cls_error_clear(&s->detail);
  cls_error_vadd(&s->detail, fmt, ap);
  va_end(ap);
  s->detail.status = CLS_ERR_IO;
  return code;
}

/* The state that refuses a call: finished, or a sticky failure (its text again); CLS_STT_OK if none. */
static int refused(cls_stt_stream *s) {
  if (s->finished) return refuse(s, CLS_STT_ERR_STREAM_FINISHED, "the stream has finished: it can only be freed");
  if (s->failed) s->detail = s->failure;
  return s->failed;
}

int cls_stt_stream_create(cls_stt_model *m, cls_stt_stream **out) {
  return cls_stt_stream_create_at(m, m ? m->tables->cfg.sample_rate : 0, out);
}

int cls_stt_stream_create_at(cls_stt_model *m, int rate, cls_stt_stream **out) {
  if (out) *out = NULL;
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!out) return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "stream create: NULL output");
  if (rate < CLS_AUDIO_MIN_RATE || rate > CLS_AUDIO_MAX_RATE)
    return stt_model_fail(m, CLS_STT_ERR_SAMPLE_RATE, "audio at %d Hz: the rate must be %d .. %d Hz", rate,
                          CLS_AUDIO_MIN_RATE, CLS_AUDIO_MAX_RATE);
  cls_stt_stream *s = calloc(1, sizeof *s);
  if (!s) return stt_model_fail(m, CLS_STT_ERR_OUT_OF_MEMORY, "stream create: out of memory");
  s->m = m;
  s->rate = rate;
  int src_ok = 1;
  if (rate != m->tables->cfg.sample_rate) {
    int err = 0;
    s->src = src_new(SRC_SINC_BEST_QUALITY, 1, &err);
    s->ratio = (double)m->tables->cfg.sample_rate / (double)rate;
    s->rs_out = malloc(STT_RS_OUT * sizeof(float));
    src_ok = s->src && s->rs_out;
  }
  s->n_hidden = m->cfg.n_hidden;
  s->n_context = m->cfg.n_context;
  s->n_coeff = m->cfg.n_input;
  s->n_classes = m->cfg.n_classes;
  s->width = cls_model_input_width(&m->cfg);
  s->window = (size_t)m->tables->window;
  s->step = (size_t)m->tables->step;
  const size_t T = CLS_STT_CHUNK_FRAMES, ctx2 = 2 * (size_t)s->n_context;
  s->pending_cap = s->window + T * s->step;
  s->feat_rows = 2 * T + ctx2;
  s->h = calloc((size_t)s->n_hidden, sizeof(float));
  s->c = calloc((size_t)s->n_hidden, sizeof(float));
  s->pending = malloc(s->pending_cap * sizeof(float));
  s->feats = malloc(s->feat_rows * (size_t)s->n_coeff * sizeof(float));
  s->windows = malloc(T * (size_t)s->width * sizeof(float));
  s->logits = malloc(T * (size_t)s->n_classes * sizeof(float));
  pthread_mutex_lock(&m->lock);
  m->refs++; /* from here on the stream's free releases the model */
  cls_beam_options bo = cls_beam_options_default();
  bo.beam_width = m->beam_width;
  s->candidates = bo.beam_width <= 1 ? 1 : bo.beam_width;
  bo.lm_alpha = m->alpha;
  bo.lm_beta = m->beta;
  bo.utf8_bytes = cls_alphabet_is_bytes(m->alphabet); /* a bytes-mode model: whole UTF-8 characters */
  s->scorer = m->scorer;
  int hot_ok = 1;
  if (s->scorer) {
    s->scorer->refs++;
    bo.scorer = s->scorer->scorer;
    if (m->n_hot > 0) { /* words the vocabulary lacks can never be scored: left out */
      s->hot_ids = malloc((size_t)m->n_hot * sizeof *s->hot_ids);
      s->hot_boosts = malloc((size_t)m->n_hot * sizeof *s->hot_boosts);
      hot_ok = s->hot_ids && s->hot_boosts;
      const cls_lm *lm = cls_scorer_lm(bo.scorer);
      for (int i = 0; hot_ok && i < m->n_hot; i++) {
        const int32_t id = cls_lm_word_id(lm, m->hot_words[i], strlen(m->hot_words[i]));
        if (id < 0) continue;
        s->hot_ids[bo.n_hot_words] = id;
        s->hot_boosts[bo.n_hot_words++] = m->hot_boosts[i];
      }
      bo.hot_words = s->hot_ids;
      bo.hot_boosts = s->hot_boosts;
    }
  }
  pthread_mutex_unlock(&m->lock);
  cls_status st = hot_ok ? cls_ctc_decoder_begin(s->n_classes, bo.beam_width <= 1, &bo, &s->decoder)
                         : CLS_ERR_OUT_OF_MEMORY;
  if (!src_ok || !s->h || !s->c || !s->pending || !s->feats || !s->windows || !s->logits || st != CLS_OK) {
    cls_stt_stream_free(s);
    if (st == CLS_OK || st == CLS_ERR_OUT_OF_MEMORY)
      return stt_model_fail(m, CLS_STT_ERR_OUT_OF_MEMORY, "stream create: out of memory");
    return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT,
                          "stream create: the decoder refuses beam width %d, alpha %g, beta %g", bo.beam_width,
                          bo.lm_alpha, bo.lm_beta);
  }
  *out = s;
  return CLS_STT_OK;
}

void cls_stt_stream_free(cls_stt_stream *s) {
  if (!s) return;
  if (s->scorer) {
    pthread_mutex_lock(&s->m->lock);
    stt_scorer_release(s->m, s->scorer);
    pthread_mutex_unlock(&s->m->lock);
  }
  cls_ctc_decoder_free(s->decoder);
  if (s->src) src_delete(s->src);
  free(s->rs_out);
  free(s->hot_ids);
  free(s->hot_boosts);
  free(s->h);
  free(s->c);
  free(s->pending);
  free(s->feats);
  free(s->windows);
  free(s->logits);
  cls_stt_model *m = s->m;
  free(s);
  stt_model_release(m);
}

/* Frames obase .. obase+n through the model: their context windows from the features held (zero before
 * frame 0 and from fend on), the model on the shared replica under the lock, the logits to the decoder. */
static int run_chunk(cls_stt_stream *s, int n) {
  const int ctx = s->n_context, nc = s->n_coeff;
  for (int i = 0; i < n; i++)
    for (int w = 0; w <= 2 * ctx; w++) {
      const long long src = (long long)s->obase + i - ctx + w;
      float *dst = s->windows + (size_t)i * (size_t)s->width + (size_t)w * (size_t)nc;
      if (src >= 0 && (size_t)src < s->fend)
        memcpy(dst, s->feats + ((size_t)src - s->fbase) * (size_t)nc, (size_t)nc * sizeof(float));
      else
        memset(dst, 0, (size_t)nc * sizeof(float));
    }
  cls_stt_model *m = s->m;
  pthread_mutex_lock(&m->lock);
  cls_status st = cls_infer_windows(m->infer, s->windows, n, s->h, s->c, s->logits);
  if (st != CLS_OK) fail(s, stt_status_of(st), "the model", cls_engine_error(m->engine));
  pthread_mutex_unlock(&m->lock);
  if (st != CLS_OK) return s->failed;
  st = cls_ctc_decoder_feed(s->decoder, s->logits, n, (size_t)s->n_classes);
  if (st != CLS_OK) return fail(s, CLS_STT_ERR_DECODE, "the decoder", cls_status_string(st));
  s->obase += (size_t)n;
  const size_t keep = s->obase > (size_t)ctx ? s->obase - (size_t)ctx : 0; /* the next chunk's left context */
  if (keep > s->fbase) {
    memmove(s->feats, s->feats + (keep - s->fbase) * (size_t)nc, (s->fend - keep) * (size_t)nc * sizeof(float));
    s->fbase = keep;
  }
  return CLS_STT_OK;
}

/* Every chunk whose right context is in (all the frames left, at the end). */
static int run_ready(cls_stt_stream *s, int ended) {
  const size_t T = CLS_STT_CHUNK_FRAMES, ctx = (size_t)s->n_context;
  int rc = CLS_STT_OK;
  while (rc == CLS_STT_OK) {
    size_t n = 0;
    if (ended) n = s->fend - s->obase < T ? s->fend - s->obase : T;
    else if (s->fend - s->obase >= T + ctx) n = T;
    if (n == 0) break;
    rc = run_chunk(s, (int)n);
  }
  return rc;
}

/* DeepSpeech's scale for 16-bit PCM, computed as the audio reader does for a 16-bit file (the sample
 * left-aligned to 32 bits, times 1 / 32767 / 65536), so that the values are those `clspeech
 * transcribe` reads from a WAV file. */
static float pcm_value(int16_t x) {
  const double scale = 1.0 / ((double)(1u << 15) - 1.0) / (double)(1u << 16);
  return (float)((double)((int32_t)x * 65536) * scale);
}

/* n samples at the model's rate: featurised, and the chunks they complete run. */
static int feed_samples(cls_stt_stream *s, const float *x, size_t n) {
  const size_t W = s->window, S = s->step, nc = (size_t)s->n_coeff;
  size_t i = 0;
  int rc = CLS_STT_OK;
  while (rc == CLS_STT_OK) {
    /* Samples in, skipping those between frames when the step is longer than the window. */
    while (i < n && s->drop > 0) {
      i++;
      s->drop--;
    }
    size_t take = n - i < s->pending_cap - s->n_pending ? n - i : s->pending_cap - s->n_pending;
    memcpy(s->pending + s->n_pending, x + i, take * sizeof(float));
    s->n_pending += take;
    i += take;
    /* The frames they complete, as many as the features held leave room for. */
    size_t k = s->n_pending >= W ? 1 + (s->n_pending - W) / S : 0;
    const size_t room = s->feat_rows - (s->fend - s->fbase);
    if (k > room) k = room;
    if (k > 0) {
      cls_mfcc_host(s->m->tables, s->pending, (k - 1) * S + W, s->feats + (s->fend - s->fbase) * nc);
      s->fend += k;
      if (k * S > s->n_pending) {
        s->drop = k * S - s->n_pending;
        s->n_pending = 0;
      } else {
        s->n_pending -= k * S;
        memmove(s->pending, s->pending + k * S, s->n_pending * sizeof(float));
      }
    }
    rc = run_ready(s, 0);
    if (i >= n && k == 0) break;
  }
  return rc;
}

/* n samples at the stream's rate through the resampler (libsamplerate's best sinc converter, as the
 * audio reader resamples a file), its output fed on; `end`: the input has ended, drain the converter. */
static int resample(cls_stt_stream *s, const float *x, size_t n, int end) {
  size_t used = 0;
  int rc = CLS_STT_OK;
  while (rc == CLS_STT_OK) {
    SRC_DATA d;
    memset(&d, 0, sizeof d);
    static const float none = 0.0f; /* libsamplerate does not drain on a NULL input, even an empty one */
    d.data_in = x ? x + used : &none;
    d.input_frames = (long)(n - used);
    d.data_out = s->rs_out;
    d.output_frames = STT_RS_OUT;
    d.src_ratio = s->ratio;
    d.end_of_input = end;
    const int err = src_process(s->src, &d);
    if (err != 0) return fail(s, CLS_STT_ERR_DECODE, "resampling", src_strerror(err));
    used += (size_t)d.input_frames_used;
    if (d.output_frames_gen > 0) rc = feed_samples(s, s->rs_out, (size_t)d.output_frames_gen);
    if (used == n && (end ? d.output_frames_gen == 0 : d.output_frames_gen < STT_RS_OUT)) break;
  }
  return rc;
}

int cls_stt_stream_feed(cls_stt_stream *s, const int16_t *samples, size_t n) {
  if (!s) return CLS_STT_ERR_INVALID_ARGUMENT;
  int rc = refused(s);
  if (rc != CLS_STT_OK) return rc;
  if (!samples && n) return refuse(s, CLS_STT_ERR_INVALID_ARGUMENT, "feed: NULL samples, %zu of them", n);
  s->fed += n;
  float block[STT_BLOCK];
  for (size_t at = 0; at < n && rc == CLS_STT_OK; at += STT_BLOCK) {
    const size_t k = n - at < STT_BLOCK ? n - at : STT_BLOCK;
    for (size_t i = 0; i < k; i++) block[i] = pcm_value(samples[at + i]);
    rc = s->src ? resample(s, block, k, 0) : feed_samples(s, block, k);
  }
  return rc;
}

/* A decode's checks: the stream, the output, its state, and (num >= 0) the count of results. */
static int check_decodable(cls_stt_stream *s, void *out, int num) {
  if (!s) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!out) return refuse(s, CLS_STT_ERR_INVALID_ARGUMENT, "NULL output");
  const int rc = refused(s);
  if (rc == CLS_STT_OK && num < 1) return refuse(s, CLS_STT_ERR_INVALID_ARGUMENT, "%d results: at least 1", num);
  return rc;
}

int cls_stt_stream_intermediate(cls_stt_stream *s, char **text) {
  if (text) *text = NULL;
  int rc = check_decodable(s, text, 1);
  if (rc == CLS_STT_OK) rc = stt_results_text(s->m, s->decoder, text, &s->detail);
  return rc;
}

/* Up to num results as metadata, num clamped first to the candidates the decoder can give (a huge num
 * allocates no more than those). */
static int metadata(cls_stt_stream *s, int num, cls_stt_metadata **out) {
  const int max = num < s->candidates ? num : s->candidates;
  return stt_results_metadata(s->m, s->decoder, (int64_t)s->obase, max, out, &s->detail);
}

int cls_stt_stream_intermediate_metadata(cls_stt_stream *s, int num, cls_stt_metadata **out) {
  if (out) *out = NULL;
  int rc = check_decodable(s, out, num);
  if (rc == CLS_STT_OK) rc = metadata(s, num, out);
  return rc;
}

/* The resampler drained and the last frames run; the stream is finished whatever happens. */
static int finish(cls_stt_stream *s) {
  int rc = s->src ? resample(s, NULL, 0, 1) : CLS_STT_OK;
  if (rc == CLS_STT_OK) rc = run_ready(s, 1);
  s->finished = 1;
  return rc;
}

int cls_stt_stream_finish(cls_stt_stream *s, char **text) {
  if (text) *text = NULL;
  int rc = check_decodable(s, text, 1);
  if (rc == CLS_STT_OK) rc = finish(s);
  if (rc == CLS_STT_OK) rc = stt_results_text(s->m, s->decoder, text, &s->detail);
  return rc;
}

int cls_stt_stream_finish_metadata(cls_stt_stream *s, int num, cls_stt_metadata **out) {
  if (out) *out = NULL;
  int rc = check_decodable(s, out, num);
  if (rc == CLS_STT_OK) rc = finish(s);
  if (rc == CLS_STT_OK) rc = metadata(s, num, out);
  return rc;
}

double cls_stt_stream_seconds(const cls_stt_stream *s) {
  return s ? (double)s->fed / (double)s->rate : 0.0;
}

const char *cls_stt_stream_detail(const cls_stt_stream *s) { return s ? s->detail.text : ""; }
