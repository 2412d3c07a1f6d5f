/* The one-shot calls of clspeech/stt.h (cls_stt_speech_to_text, _metadata): one stream of the model fed
 * all the samples and finished, so that their result is exactly the streamed one. */
#include <stddef.h>

#include "stt/stt_internal.h"

/* One stream fed everything and finished: the one-shot calls are exactly the streamed result. */
static int one_shot(cls_stt_model *m, const int16_t *samples, size_t n, int rate, int num, char **text,
                    cls_stt_metadata **meta) {
  if (text) *text = NULL;
  if (meta) *meta = NULL;
  if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
  if (!samples && n) return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "NULL samples, %zu of them", n);
  cls_stt_stream *s = NULL;
  int rc = cls_stt_stream_create_at(m, rate, &s);
  if (rc == CLS_STT_OK) rc = cls_stt_stream_feed(s, samples, n);
  if (rc == CLS_STT_OK) rc = text ? cls_stt_stream_finish(s, text) : cls_stt_stream_finish_metadata(s, num, meta);
  if (rc != CLS_STT_OK && s) stt_model_fail(m, rc, "%s", cls_stt_stream_detail(s)); /* no stream: create set it */
  cls_stt_stream_free(s);
  return rc;
}

int cls_stt_speech_to_text(cls_stt_model *m, const int16_t *samples, size_t n, int rate, char **text) {
  if (!text && m) return stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "speech to text: NULL output");
  if (!text) return CLS_STT_ERR_INVALID_ARGUMENT;
  return one_shot(m, samples, n, rate, 1, text, NULL);
}

int cls_stt_speech_to_text_metadata(cls_stt_model *m, const int16_t *samples, size_t n, int rate, int num,
                                    cls_stt_metadata **out) {
  if (!out || num < 1) {
    if (out) *out = NULL;
    if (!m) return CLS_STT_ERR_INVALID_ARGUMENT;
    return !out ? stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "speech to text: NULL output")
                : stt_model_fail(m, CLS_STT_ERR_INVALID_ARGUMENT, "%d results: at least 1", num);
  }
  return one_shot(m, samples, n, rate, num, NULL, out);
}
