/* The stt layer's status codes (see clspeech/stt.h): their messages, the code for an engine status, and
 * a model's failure detail (stt_internal.h), which every failing call on a model sets. */
#include <stdarg.h>
#include <string.h>

#include "stt/stt_internal.h"

const char *cls_stt_error_message(int status) {
  switch (status) {
    case CLS_STT_OK: return "no error";
    case CLS_STT_ERR_INVALID_ARGUMENT: return "invalid argument (a NULL model, stream or pointer, or a value out of range)";
    case CLS_STT_ERR_NO_MODEL: return "no model at that path (no such file or folder, or no checkpoint in it)";
    case CLS_STT_ERR_BAD_MODEL: return "the model cannot be used (unreadable checkpoint, alphabet or feature settings)";
    case CLS_STT_ERR_UNSUPPORTED: return "that model form is not supported by this build";
    case CLS_STT_ERR_DEVICE: return "the OpenCL device failed or none is available";
    case CLS_STT_ERR_OUT_OF_MEMORY: return "out of memory";
    case CLS_STT_ERR_SCORER: return "the scorer cannot be used with this model";
    case CLS_STT_ERR_SAMPLE_RATE: return "the audio's sample rate is out of range (1000 .. 384000 Hz)";
    case CLS_STT_ERR_STREAM_FINISHED: return "the stream has finished: it can only be freed";
    case CLS_STT_ERR_DECODE: return "decoding failed";
    case CLS_STT_ERR_NO_SCORER: return "hot-words need a scorer, and none is enabled";
    case CLS_STT_ERR_HOT_WORD: return "that word is already a hot-word, or is not one to erase";
    default: return "unknown status";
  }
}

int stt_status_of(cls_status st) {
  switch (st) {
    case CLS_OK: return CLS_STT_OK;
    case CLS_ERR_INVALID_ARGUMENT: return CLS_STT_ERR_INVALID_ARGUMENT;
    case CLS_ERR_OUT_OF_MEMORY:
    case CLS_ERR_DEVICE_OUT_OF_MEMORY: return CLS_STT_ERR_OUT_OF_MEMORY;
    case CLS_ERR_IO: return CLS_STT_ERR_BAD_MODEL;
    default: return CLS_STT_ERR_DEVICE;
  }
}

static void detail_v(cls_stt_model *m, const char *fmt, va_list ap) {
  cls_error_clear(&m->detail);
  cls_error_vadd(&m->detail, fmt, ap);
  m->detail.status = CLS_ERR_IO;
}

int stt_model_fail_locked(cls_stt_model *m, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  detail_v(m, fmt, ap);
  va_end(ap);
  return code;
}

int stt_model_fail(cls_stt_model *m, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&m->lock);
  detail_v(m, fmt, ap);
  pthread_mutex_unlock(&m->lock);
  va_end(ap);
  return code;
}

void stt_copy(char *dst, size_t cap, const char *text) {
  if (!dst || !cap) return;
  size_t n = strlen(text);
  if (n >= cap) n = cap - 1;
  memmove(dst, text, n);
  dst[n] = '\0';
}
