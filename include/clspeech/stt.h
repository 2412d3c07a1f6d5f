/* clspeech public API, stt layer: speech-to-text for programs that embed a trained model, shaped like
 * DeepSpeech 0.9's native_client API (deepspeech.h): a model made from a checkpoint folder, its sample
 * rate and beam width, an external language-model scorer with its alpha and beta, one-shot
 * transcription of 16-bit PCM with or without metadata (candidate transcripts, each token's text,
 * timestep and start time, a confidence), and streams fed audio in pieces of any length that give
 * exactly the one-shot result. The model runs forward only on one OpenCL device (PoCL's CPU device
 * when there is no GPU), features on the host, decoding on the host (clspeech/decode.h). Every
 * function returns a status code (cls_stt_error_message names it) and never exits or prints. */
#ifndef CLSPEECH_STT_H
#define CLSPEECH_STT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes ---- */
typedef enum cls_stt_status {
  CLS_STT_OK = 0,
  CLS_STT_ERR_INVALID_ARGUMENT = 1, /* a NULL model, stream or output pointer, a negative length, a bad value */
  CLS_STT_ERR_NO_MODEL = 2,         /* the path does not exist, or the folder holds no checkpoint */
  CLS_STT_ERR_BAD_MODEL = 3,        /* the checkpoint, alphabet.txt or features.txt is unreadable or they disagree;
                                       a file that is not a valid model package */
  CLS_STT_ERR_UNSUPPORTED = 4,      /* a model form this build does not read (kept for the ABI; not returned now) */
  CLS_STT_ERR_DEVICE = 5,           /* no OpenCL device, or the device failed (kernel build, a call) */
  CLS_STT_ERR_OUT_OF_MEMORY = 6,
  CLS_STT_ERR_SCORER = 7,           /* the scorer file cannot be read, or it does not fit the alphabet */
  CLS_STT_ERR_SAMPLE_RATE = 8,      /* audio at a rate outside 1000 .. 384000 Hz (other rates are resampled) */
  CLS_STT_ERR_STREAM_FINISHED = 9,  /* a stream fed or decoded after cls_stt_stream_finish */
  CLS_STT_ERR_DECODE = 10,          /* the decoder failed (a NaN in the model's output) */
  CLS_STT_ERR_NO_SCORER = 11,       /* hot-words need a scorer: none is enabled */
  CLS_STT_ERR_HOT_WORD = 12         /* adding a hot-word already added, or erasing one that is not */
} cls_stt_status;

/* A fixed English sentence for a status code (DS_ErrorCodeToErrorMessage); never NULL ("unknown
 * status" for a value outside the enum). */
const char *cls_stt_error_message(int status);

/* The library's version, as cls_version gives it ("0.1.0"); static text. */
const char *cls_stt_version(void);

/* ---- the model ---- */
/* A model holds the OpenCL engine, the network's parameters on one device, the alphabet, the feature
 * geometry, the decoder's settings (beam width, scorer, alpha, beta, hot-words) and a mutex. Streams made from it
 * share the device replica: each chunk of a stream runs under the model's mutex (the stream's own LSTM
 * state is written to the device, the chunk run, its logits and state read back), while features and
 * decoding run on the stream's thread outside it. So several streams of one model may run on
 * several threads at once (their model work is serialised); one stream is for one thread at a time.
 * The settings below may be changed while streams exist (they take the lock): a stream keeps those
 * in force when it was created, and a scorer stays alive until the last stream using it is freed; so does
 * the model itself (cls_stt_model_free). */
typedef struct cls_stt_model cls_stt_model;

/* Makes a model from `path`, one of:
 *   a checkpoint folder written by `clspeech train`: the best_dev checkpoint, else the latest train
 *   checkpoint (as `clspeech transcribe --load_evaluate auto`); the network's geometry from the
 *   checkpoint, the alphabet from DIR/alphabet.txt and the feature geometry from DIR/features.txt
 *   (both required; folders from before those files cannot be used here).
 *   a file: a model package (.clsm, `clspeech export`; clspeech/package.h): the weights, alphabet and
 *   feature settings it holds, all checked before use (a bad file: CLS_STT_ERR_BAD_MODEL naming it);
 *   a scorer it carries is enabled with the package's lm_alpha and lm_beta (disable or replace it
 *   with the scorer calls below).
 * `devices`: an engine device selection (clspeech.h's cls_engine_select: "cpu", "gpu", "0:1", a name);
 * NULL or "" for the engine's default (CLSPEECH_DEVICES, else every GPU, else the CPU); the first
 * device selected runs the model (a selection that matches nothing: CLS_STT_ERR_INVALID_ARGUMENT).
 * The engine reads its options from the environment (the kernel cache: CLSPEECH_KERNEL_CACHE, ...).
 * Beam width 1024 (DeepSpeech's), no scorer, no hot-words.
 * On failure *out is NULL and `detail` (may be NULL; cap bytes) says what went wrong, naming the file. */
int cls_stt_model_create(const char *path, const char *devices, cls_stt_model **out, char *detail, size_t cap);

/* Ends the program's use of the model; NULL is a no-op. Streams made from it may still be live: they
 * hold the model, so every stream call stays valid on them (feed, decode, finish, detail, free), and
 * the model's memory and device are released with the last of them (at once when there is none). After
 * this call the model pointer itself must not be used again (no new streams, settings or one-shot calls
 * through it). */
void cls_stt_model_free(cls_stt_model *model);

/* The sample rate the model's features were trained at (Hz); 0 for a NULL model. */
int cls_stt_model_sample_rate(const cls_stt_model *model);

/* The beam width of the CTC prefix beam search (1: greedy decoding, as `clspeech transcribe
 * --beam_width 1`); 0 for a NULL model. Set: 1 .. 65536, for streams created afterwards. */
int cls_stt_model_beam_width(const cls_stt_model *model);
int cls_stt_model_set_beam_width(cls_stt_model *model, int beam_width);

/* The external scorer (DeepSpeech's --scorer_path): a language model in ARPA text or clspeech's binary
 * form (.clm, `clspeech lm`), joined to the model's alphabet (clspeech/scorer.h), for streams created
 * afterwards. Enabling replaces any scorer enabled before; alpha and beta keep their values (at first
 * DeepSpeech's 0.931289039105002 and 1.1834137581510284). The scorer is not used by greedy decoding
 * (beam width 1). CLS_STT_ERR_SCORER with the reason in the model's detail text
 * (cls_stt_model_detail) when the file cannot be used. */
int cls_stt_model_enable_scorer(cls_stt_model *model, const char *scorer_path);
int cls_stt_model_disable_scorer(cls_stt_model *model);
/* alpha and beta must be finite (NaN, +inf or -inf: CLS_STT_ERR_INVALID_ARGUMENT, the values named in the
 * detail, the weights in force kept). */
int cls_stt_model_set_scorer_alpha_beta(cls_stt_model *model, float alpha, float beta);

/* Hot-words (DeepSpeech 0.9's): words whose language-model score gets `boost` added (to ln P(word |
 * history), before alpha weighs it) whenever a word is scored at the space after it and the word or
 * one of the words before it in that n-gram is a hot-word; a positive boost makes the word likelier,
 * a negative one rarer. Only the scorer scores words, so a scorer must be enabled
 * (CLS_STT_ERR_NO_SCORER); the list stays when the scorer is changed or disabled. A word is one word
 * of the scorer's vocabulary (no space: CLS_STT_ERR_INVALID_ARGUMENT; one the vocabulary lacks has no
 * effect). Adding a word twice or erasing one never added: CLS_STT_ERR_HOT_WORD. For streams created
 * afterwards. */
int cls_stt_model_add_hot_word(cls_stt_model *model, const char *word, float boost);
int cls_stt_model_erase_hot_word(cls_stt_model *model, const char *word);
int cls_stt_model_clear_hot_words(cls_stt_model *model);

/* The text of the model's last failure, "" if none: every call given a model that fails (a setter, the
 * scorer, hot-words, a one-shot call, making a stream) sets it afresh, saying why. The pointer is the
 * model's; its text may change when another call on the model fails. */
const char *cls_stt_model_detail(const cls_stt_model *model);

/* ---- metadata ---- */
typedef struct cls_stt_token {
  const char *text;   /* the label's UTF-8 text (one character); a bytes-mode model (--bytes_output_mode):
                         one token per character, its bytes' text, at its first byte's frame */
  int timestep;       /* the token's frame: where the beam search's best alignment of it emitted it
                         (DeepSpeech 0.9's timestep), made strictly increasing from token to token and
                         kept inside the frames decoded (that search records each label's frame on its
                         own, and can give a token the frame of the one before or one a frame or two
                         earlier; each token then moves to one frame after the one before) */
  float start_time;   /* seconds from the start of the audio: timestep * the feature window step */
} cls_stt_token;

typedef struct cls_stt_transcript {
  const cls_stt_token *tokens;
  int num_tokens;
  double confidence;  /* the beam's score of this transcript: ln P(labels | audio) over the alignments
                         the beam kept, plus with a scorer its weighted terms (0 for greedy decoding) */
} cls_stt_transcript;

typedef struct cls_stt_metadata {
  const cls_stt_transcript *transcripts; /* best first */
  int num_transcripts;
} cls_stt_metadata;

/* Frees metadata (and all it points to); NULL is a no-op. */
void cls_stt_metadata_free(cls_stt_metadata *metadata);
/* Frees a transcript string this API returned; NULL is a no-op. */
void cls_stt_string_free(char *text);

/* ---- one-shot ---- */
/* The transcript of n 16-bit mono PCM samples at `sample_rate` Hz: the model's (cls_stt_model_sample_rate),
 * or any other rate in 1000 .. 384000 Hz, resampled to it (as cls_stt_stream_create_at; outside that
 * range CLS_STT_ERR_SAMPLE_RATE). Samples are scaled by 1/32767 as DeepSpeech's training reads WAV.
 * Audio shorter than one feature window gives "". *text is a string to free with cls_stt_string_free
 * (NULL on an error). Exactly a stream fed all the samples and finished. */
int cls_stt_speech_to_text(cls_stt_model *model, const int16_t *samples, size_t n, int sample_rate, char **text);

/* The same with metadata: up to num_results (>= 1) candidate transcripts, best first. There are at most
 * as many candidates as the beam width (1 with greedy decoding), and fewer while the beam holds fewer
 * prefixes: num_results is clamped to the beam width first, so any value (INT_MAX) costs no more memory
 * than that. Free *out with cls_stt_metadata_free. */
int cls_stt_speech_to_text_metadata(cls_stt_model *model, const int16_t *samples, size_t n, int sample_rate,
                                    int num_results, cls_stt_metadata **out);

/* ---- streams ---- */
/* A stream: feed 16-bit PCM in pieces of any length, ask for the transcript so far
 * at any point, finish. The audio runs through the features (frames of the feature window every
 * feature step, as training computes them), the network (in chunks of CLS_STT_CHUNK_FRAMES frames, a
 * chunk running once the audio reaches n_context frames past it, the LSTM state carried over) and the
 * beam search as the pieces come, so the final result does not depend on how the audio was cut, and
 * equals `clspeech transcribe --stream_frames 16` on the same samples. An intermediate result covers
 * the chunks run so far (it lags the audio by up to a chunk plus the model's 9 frames of right context,
 * 0.5 s at DeepSpeech's 20 ms step). Memory: the stream's LSTM state, a chunk's features and windows,
 * and the beam's prefixes; nothing grows with the audio except the transcript. */
#define CLS_STT_CHUNK_FRAMES 16

typedef struct cls_stt_stream cls_stt_stream;

/* A stream with the model's current beam width, scorer, alpha, beta and hot-words, for audio at the
 * model's rate. */
int cls_stt_stream_create(cls_stt_model *model, cls_stt_stream **out);

/* The same for audio at `sample_rate` (1000 .. 384000 Hz, else CLS_STT_ERR_SAMPLE_RATE): when it is not
 * the model's, the samples are resampled to it as they come with libsamplerate's best sinc converter
 * (SRC_SINC_BEST_QUALITY, the one `clspeech transcribe` resamples files with; its output does not depend
 * on how the input is cut), and the converter is drained at finish. */
int cls_stt_stream_create_at(cls_stt_model *model, int sample_rate, cls_stt_stream **out);

/* n samples (n may be 0) at the stream's rate. CLS_STT_ERR_STREAM_FINISHED after a finish; a failure
 * (device, decoder) sticks: every later call on the stream returns it, cls_stt_stream_detail says why. */
int cls_stt_stream_feed(cls_stt_stream *stream, const int16_t *samples, size_t n);

/* The best transcript of the chunks run so far (malloc'ed *text, free with cls_stt_string_free), or
 * with metadata up to num_results candidates (>= 1; clamped to the stream's beam width, as for
 * cls_stt_speech_to_text_metadata). The stream goes on. */
int cls_stt_stream_intermediate(cls_stt_stream *stream, char **text);
int cls_stt_stream_intermediate_metadata(cls_stt_stream *stream, int num_results, cls_stt_metadata **out);

/* Runs what is left of the audio (the last frames, with zero right context) and gives the final
 * result; the stream can then only be freed (later feeds and decodes: CLS_STT_ERR_STREAM_FINISHED).
 * Unlike DeepSpeech's DS_FinishStream, finishing does not free the stream. */
int cls_stt_stream_finish(cls_stt_stream *stream, char **text);
int cls_stt_stream_finish_metadata(cls_stt_stream *stream, int num_results, cls_stt_metadata **out);

/* Audio seconds fed so far. */
double cls_stt_stream_seconds(const cls_stt_stream *stream);

/* The text of the stream's last failure, "" if none: every call given a stream that fails sets it
 * afresh (a sticky failure's text again on each call it refuses). */
const char *cls_stt_stream_detail(const cls_stt_stream *stream);

/* NULL is a no-op. */
void cls_stt_stream_free(cls_stt_stream *stream);

#ifdef __cplusplus
}
#endif
#endif
