/* clspeech public API, decode layer: the word n-gram language model (ARPA files of order 1..6, as
 * KenLM's lmplz and SRILM write them, and clspeech's own binary form of a loaded model, loaded by
 * mapping the file) and its scores, log10 P(word | history) with ARPA backoff.
 * Host-only: no OpenCL. A loaded model is read-only: several threads may score with it at once. */
#ifndef CLSPEECH_LM_H
#define CLSPEECH_LM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The highest n-gram order a model may have. */
#define CLS_LM_MAX_ORDER 6

/* The largest model read into memory whole, in bytes (a regular file is mapped instead, with no cap
 * but the address space): an ARPA text from a pipe or device (held whole beside the model it
 * becomes), and the binary form from a pipe or device (a package reads its scorer under its own cap,
 * CLS_PACKAGE_MAX_BYTES in clspeech/package.h); a larger model is given as a file.
 * Past it the read stops: "FILE: larger than N bytes (32 GiB), the most this reader takes; refused".
 * An endless device costs less: /dev/zero is refused at its first NUL byte (ARPA) or its first 8
 * bytes (the binary form's magic). */
#define CLS_LM_ARPA_MAX_STREAM_BYTES ((size_t)32 << 30)
#define CLS_LM_BINARY_MAX_READ_BYTES ((size_t)32 << 30)

typedef struct cls_lm cls_lm;

/* Loads an ARPA file: `\data\` with its `ngram N=COUNT` lines, then one `\N-grams:` section per order
 * (lines "LOG10PROB WORD... [LOG10BACKOFF]", fields split by tabs or spaces), then `\end\`. A model
 * without `<unk>`, `<s>` or `</s>` gets them as unigrams of log10 probability -100 (as KenLM does).
 * On failure (CLS_ERR_IO when the file cannot be read, CLS_ERR_INVALID_ARGUMENT for bad content:
 * a truncated file, a NUL byte, counts that disagree with the sections, a non-finite number, a
 * log10 probability above 0 (a probability above 1, which KenLM refuses too), an n-gram with the
 * wrong number of words or with a word that is not a unigram, a duplicate n-gram, a missing `\data\`
 * or `\end\`) *out stays NULL and `err` names the file and line ("FILE:LINE: ..."). */
cls_status cls_lm_load_arpa(const char *path, cls_lm **out, cls_error *err);
/* The same from `size` bytes in memory (which need not end in a NUL); `name` stands for the file in
 * error texts. */
cls_status cls_lm_parse_arpa(const char *text, size_t size, const char *name, cls_lm **out, cls_error *err);
void cls_lm_destroy(cls_lm *lm);

/* The binary form ("FILE.clm" by convention; `clspeech lm` writes it): the loaded model's own arrays
 * (vocabulary, unigrams, the hash tables of each order) in one file behind a 512-byte header that
 * holds the magic bytes "\x89CLSLM\r\n", the format version, a byte-order mark, the sizes of size_t
 * and of a table slot, the order, the counts, each section's offset (a multiple of 64) and size, and
 * a 64-bit checksum of the whole file. The form is the writing machine's (byte order, size_t): another
 * machine's file is refused, never misread. Scores from it are bit-identical to the model it was
 * written from. */
#define CLS_LM_BINARY_VERSION 1

/* Writes `lm` in the binary form to `path` atomically (a temporary file in the same folder, then a
 * rename: on failure nothing at `path` changes and no temporary file stays). CLS_ERR_IO, with `err`
 * naming the file, when it cannot be written. */
cls_status cls_lm_save_binary(const cls_lm *lm, const char *path, cls_error *err);
/* Loads a binary model by mapping the file read-only (MAP_PRIVATE): the model's arrays point into
 * the mapping, nothing is copied, and cls_lm_destroy unmaps it (a file that is not a regular file, a
 * pipe, is read into memory instead). Everything is checked before use: the magic, the version
 * ("FILE: binary language model format version N, this clspeech reads version M"), the byte order
 * and sizes, the file's size against its header ("FILE: truncated: ..."), the checksum ("FILE:
 * checksum mismatch (file corrupt or truncated)"), every section inside the file and of the size the
 * counts give, the tables' capacities above their counts, the word offsets inside the arena and each
 * word NUL-terminated and found at its own id, the n-gram counts of the tables, finite numbers, and
 * <s>, </s>, <unk> among the words: no file makes scoring read outside it. Failure: CLS_ERR_IO when
 * the file cannot be read, CLS_ERR_INVALID_ARGUMENT for bad content; *out stays NULL and `err` names
 * the file. The file must not be truncated in place while the model is loaded (cls_lm_save_binary
 * replaces a file by renaming, which is safe). */
cls_status cls_lm_load_binary(const char *path, cls_lm **out, cls_error *err);
/* The same from `size` bytes in memory, which are copied (the model owns its copy; `data` may be
 * freed at once); `name` stands for the file in error texts. */
cls_status cls_lm_parse_binary(const void *data, size_t size, const char *name, cls_lm **out, cls_error *err);
/* Loads either form: the binary one when the file starts with its magic bytes, else ARPA (so an ARPA
 * reader's error for anything else). A regular file is opened by the reader of its form (a binary one
 * mapped); a pipe is read whole first. What --scorer_path takes. */
cls_status cls_lm_load(const char *path, cls_lm **out, cls_error *err);
/* true when the model's arrays are a mapped binary file (cls_lm_load_binary of a regular file). */
bool cls_lm_is_mapped(const cls_lm *lm);

/* A character-level model (DeepSpeech's scorer in UTF-8 mode, `generate_scorer_package
 * --force_bytes_output_mode`; `clspeech lm --characters`): every word is one character, and the
 * scorer (scorer.h) scores each character as it completes, with no space between. The binary form
 * records it in a header flag (a file without it is a word model); an ARPA file has no place for it,
 * so a model read from ARPA is a word model until cls_lm_set_characters says otherwise. */
bool cls_lm_characters(const cls_lm *lm);
void cls_lm_set_characters(cls_lm *lm, bool characters);

/* The model's order (1..CLS_LM_MAX_ORDER), its number of n-grams of order n (1..order; 0 otherwise,
 * unigrams counting the ones added for missing <unk>, <s>, </s>), and its host memory in bytes (for
 * a binary model, the size of its file image, mapped or copied). */
int cls_lm_order(const cls_lm *lm);
int64_t cls_lm_count(const cls_lm *lm, int n);
size_t cls_lm_memory_bytes(const cls_lm *lm);

/* The vocabulary: word ids are 0..cls_lm_vocab_size-1. cls_lm_word_id gives the id of the `len`
 * bytes at `word`, or -1 when the word is not in the vocabulary; cls_lm_lookup gives the id of
 * <unk> for such a word and sets *oov (may be NULL) to say so. cls_lm_word gives the word of an id
 * (NUL-terminated; NULL for an id out of range). */
int32_t cls_lm_vocab_size(const cls_lm *lm);
int32_t cls_lm_word_id(const cls_lm *lm, const char *word, size_t len);
int32_t cls_lm_lookup(const cls_lm *lm, const char *word, size_t len, bool *oov);
const char *cls_lm_word(const cls_lm *lm, int32_t id);
int32_t cls_lm_bos(const cls_lm *lm); /* <s> */
int32_t cls_lm_eos(const cls_lm *lm); /* </s> */
int32_t cls_lm_unk(const cls_lm *lm); /* <unk> */

/* log10 P(word | history) by ARPA backoff: the probability of the longest n-gram "history-suffix
 * word" in the model, plus the backoff weights of the longer history suffixes (0 for those not in
 * the model). history[0..n_history-1] runs oldest to newest; only its last order-1 words count.
 * An id out of range is scored as <unk>. */
float cls_lm_score(const cls_lm *lm, const int32_t *history, int n_history, int32_t word);
/* The same by strings (each NUL-terminated); *oov (may be NULL) says whether `word` was out of the
 * vocabulary (and so scored as <unk>). */
float cls_lm_score_words(const cls_lm *lm, const char *const *history, int n_history, const char *word, bool *oov);

/* Scores a sentence of whitespace-separated words as KenLM's full_scores does: with `bos` the history
 * starts at <s>, with `eos` </s> is scored after the last word. per_word (may be NULL) receives up to
 * `cap` log10 probabilities, one per word then </s>; *n_scores (may be NULL) their number (also past
 * `cap`), *n_oov (may be NULL) the number of words out of the vocabulary. Returns the sum in log10. */
double cls_lm_score_sentence(const cls_lm *lm, const char *sentence, bool bos, bool eos, float *per_word, int cap,
                             int *n_scores, int *n_oov);

#ifdef __cplusplus
}
#endif
#endif
