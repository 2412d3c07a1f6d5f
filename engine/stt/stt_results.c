/* The stt results (see clspeech/stt.h): a decoder's best prefixes as UTF-8 text over the model's
 * alphabet, or as metadata (candidate transcripts of tokens with their text, timestep and start time,
 * and the beam's score as the confidence; a bytes-mode model's tokens one per character), allocated so
 * that one free releases everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "stt/stt_internal.h"

/* The decoder's best max results; CLS_STT_OK or the code with `detail` set. */
static int finish_results(cls_ctc_decoder *decoder, cls_beam_result *r, int max, int *n, cls_error *detail) {
  const cls_status st = cls_ctc_decoder_finish(decoder, r, max, n);
  if (st == CLS_OK) return CLS_STT_OK;
  cls_error_set(detail, CLS_ERR_IO, "the decoder: %s", cls_status_string(st));
  return st == CLS_ERR_OUT_OF_MEMORY ? CLS_STT_ERR_OUT_OF_MEMORY : CLS_STT_ERR_DECODE;
}

int stt_results_text(const cls_stt_model *m, cls_ctc_decoder *decoder, char **text, cls_error *detail) {
  cls_beam_result r;
  int n = 0;
  int rc = finish_results(decoder, &r, 1, &n, detail);
  if (rc != CLS_STT_OK) return rc;
  size_t bytes = 1;
  for (int i = 0; i < r.length; i++) bytes += strlen(cls_alphabet_label(m->alphabet, r.labels[i]));
  char *t = malloc(bytes);
  if (t) {
    size_t at = 0;
    for (int i = 0; i < r.length; i++) {
      const char *label = cls_alphabet_label(m->alphabet, r.labels[i]);
      const size_t len = strlen(label);
      memcpy(t + at, label, len);
      at += len;
    }
    t[at] = '\0';
  } else {
    rc = CLS_STT_ERR_OUT_OF_MEMORY;
    cls_error_set(detail, CLS_ERR_OUT_OF_MEMORY, "out of memory for a transcript of %zu bytes", bytes);
  }
  cls_beam_results_free(&r, n);
  *text = t;
  return rc;
}

/* The decoder's frame of each label (its best alignment's, recorded per label as DeepSpeech 0.9 does)
 * can repeat or go back a frame or two, since a label keeps the frame of its own best extension while
 * the labels before it move on; a CTC alignment gives each label a frame of its own, in order. So the
 * timesteps are made strictly increasing and within frames 0 .. frames-1: each at least one after the
 * one before, then each at most one before the one after (n <= frames: a label per frame at most). */
static void increasing(int *t, int n, int64_t frames) {
  for (int k = 1; k < n; k++)
    if (t[k] <= t[k - 1]) t[k] = t[k - 1] + 1;
  if (n > 0 && t[n - 1] > frames - 1) t[n - 1] = (int)(frames - 1);
  for (int k = n - 2; k >= 0; k--)
    if (t[k] >= t[k + 1]) t[k] = t[k + 1] - 1;
}

/* A bytes-mode result's tokens: one per character (the decoder gives whole valid UTF-8 characters),
 * its text copied to *texts (NUL-terminated, advancing it; a character of k bytes takes k+1 <= 2k) and
 * its frame its first byte's. Returns the tokens made. */
static int character_tokens(const cls_beam_result *r, double step_s, cls_stt_token *tok, char **texts) {
  int n = 0;
  for (int k = 0; k < r->length;) {
    unsigned char ch[CLS_UTF8_MAX];
    int have = 0;
    while (have < CLS_UTF8_MAX && k + have < r->length) {
      ch[have] = (unsigned char)(r->labels[k + have] + 1);
      have++;
    }
    uint32_t cp;
    const int len = cls_utf8_decode(ch, (size_t)have, &cp);
    if (len == 0) { /* not from a bytes-mode decoder: the byte is left out */
      k++;
      continue;
    }
    memcpy(*texts, ch, (size_t)len);
    (*texts)[len] = '\0';
    tok[n].text = *texts;
    tok[n].timestep = r->frames[k];
    tok[n].start_time = (float)(r->frames[k] * step_s);
    *texts += len + 1;
    n++;
    k += len;
  }
  return n;
}

/* One block: the metadata, its transcripts, their tokens (and a bytes-mode model's token texts); token
 * texts point at the alphabet's labels, which live as long as the model, or into the block. */
int stt_results_metadata(const cls_stt_model *m, cls_ctc_decoder *decoder, int64_t frames, int max,
                         cls_stt_metadata **out, cls_error *detail) {
  cls_beam_result *r = calloc((size_t)max, sizeof *r);
  if (!r) {
    cls_error_set(detail, CLS_ERR_OUT_OF_MEMORY, "out of memory for %d results", max);
    return CLS_STT_ERR_OUT_OF_MEMORY;
  }
  int n = 0;
  int rc = finish_results(decoder, r, max, &n, detail);
  if (rc != CLS_STT_OK) {
    free(r);
    return rc;
  }
  size_t tokens = 0;
  for (int i = 0; i < n; i++) tokens += (size_t)r[i].length;
  const size_t head = sizeof(cls_stt_metadata) + (size_t)n * sizeof(cls_stt_transcript);
  const size_t pad = (head + _Alignof(cls_stt_token) - 1) / _Alignof(cls_stt_token) * _Alignof(cls_stt_token);
  const bool bytes = cls_alphabet_is_bytes(m->alphabet);
  unsigned char *block = malloc(pad + tokens * sizeof(cls_stt_token) + (bytes ? 2 * tokens : 0));
  if (!block) {
    cls_beam_results_free(r, n);
    free(r);
    cls_error_set(detail, CLS_ERR_OUT_OF_MEMORY, "out of memory for %d results of %zu tokens", n, tokens);
    return CLS_STT_ERR_OUT_OF_MEMORY;
  }
  cls_stt_metadata *md = (cls_stt_metadata *)block;
  cls_stt_transcript *tr = (cls_stt_transcript *)(block + sizeof(cls_stt_metadata));
  cls_stt_token *tok = (cls_stt_token *)(block + pad);
  char *texts = (char *)(block + pad + tokens * sizeof(cls_stt_token));
  const double step_s = (double)m->tables->cfg.win_step_ms / 1000.0;
  for (int i = 0; i < n; i++) {
    tr[i].tokens = tok;
    tr[i].num_tokens = r[i].length;
    tr[i].confidence = r[i].log_prob;
    increasing(r[i].frames, r[i].length, frames);
    if (bytes) {
      tr[i].num_tokens = character_tokens(&r[i], step_s, tok, &texts);
      tok += tr[i].num_tokens;
      continue;
    }
    for (int k = 0; k < r[i].length; k++) {
      tok[k].text = cls_alphabet_label(m->alphabet, r[i].labels[k]);
      tok[k].timestep = r[i].frames[k];
      tok[k].start_time = (float)(r[i].frames[k] * step_s);
    }
    tok += r[i].length;
  }
  md->transcripts = tr;
  md->num_transcripts = n;
  cls_beam_results_free(r, n);
  free(r);
  *out = md;
  return CLS_STT_OK;
}

void cls_stt_metadata_free(cls_stt_metadata *metadata) { free(metadata); }

void cls_stt_string_free(char *text) { free(text); }
