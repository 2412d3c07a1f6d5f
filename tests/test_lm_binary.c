/* The n-gram model's binary form (engine/decode/lm_binary.c): ARPA -> binary -> load gives the same
 * counts, vocabulary and bit-identical scores (every n-gram of the KenLM fixture tests/fixtures/
 * lm_small.arpa, every 3-word sequence over its vocabulary, its KenLM sentences, and the Kneser-Ney
 * fixture kn_corpus.3.arpa); the model is mapped, not copied; cls_lm_load tells the two forms apart;
 * a loaded binary saved again is the same file; each kind of bad file is refused with the file and
 * the reason named (magic, version, byte order, size, checksum, and, with the checksum made right
 * again, offsets, capacities, ids, words and numbers); a failed save leaves nothing behind. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "clspeech/lm.h"
#include "decode/lm_binary.h"
#include "decode/lm_model.h"

static char dir[64];

static const char *in_dir(const char *leaf) {
  static char paths[8][128];
  static int next;
  char *p = paths[next++ % 8];
  snprintf(p, 128, "%s/%s", dir, leaf);
  return p;
}

static unsigned char *read_all(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
  *size = buf && fread(buf, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
  fclose(f);
  return buf;
}

static void write_all(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(data, 1, size, f) == size, "writing %s", path);
  if (f) fclose(f);
}

static bool same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Counts, vocabulary, specials of b equal a's. */
static void check_same_model(const cls_lm *a, const cls_lm *b, const char *what) {
  CHECK(cls_lm_order(a) == cls_lm_order(b), "%s: order", what);
  for (int n = 0; n <= CLS_LM_MAX_ORDER + 1; n++)
    CHECK(cls_lm_count(a, n) == cls_lm_count(b, n), "%s: %d-gram count %lld vs %lld", what, n,
          (long long)cls_lm_count(a, n), (long long)cls_lm_count(b, n));
  CHECK_INT(cls_lm_vocab_size(b), cls_lm_vocab_size(a));
  for (int32_t id = 0; id < cls_lm_vocab_size(a); id++) {
    const char *wa = cls_lm_word(a, id), *wb = cls_lm_word(b, id);
    CHECK(wa && wb && strcmp(wa, wb) == 0, "%s: word %d: %s vs %s", what, id, wa, wb ? wb : "(null)");
    CHECK(wb && cls_lm_word_id(b, wb, strlen(wb)) == id, "%s: id of %s", what, wb ? wb : "(null)");
  }
  CHECK(cls_lm_word(b, cls_lm_vocab_size(b)) == NULL, "%s: id past the vocabulary", what);
  CHECK_INT(cls_lm_word_id(b, "zebra-not-a-word", 16), -1);
  CHECK(cls_lm_bos(a) == cls_lm_bos(b) && cls_lm_eos(a) == cls_lm_eos(b) && cls_lm_unk(a) == cls_lm_unk(b),
        "%s: <s> </s> <unk>", what);
}

/* Every sequence of up to 3 ids over the vocabulary (and one id out of range) scores alike. */
static void check_same_scores(const cls_lm *a, const cls_lm *b, const char *what) {
  int32_t v = cls_lm_vocab_size(a), bad_ids = 0, n = 0;
  if (v > 60) v = 60;
  for (int32_t h0 = -1; h0 <= v; h0++)
    for (int32_t h1 = 0; h1 <= v; h1++)
      for (int32_t w = 0; w <= v; w++) {
        int32_t hist[2] = {h0, h1};
        int nh = h0 < 0 ? 1 : 2;
        const int32_t *hp = h0 < 0 ? hist + 1 : hist;
        bad_ids += !same_float(cls_lm_score(a, hp, nh, w), cls_lm_score(b, hp, nh, w));
        n++;
      }
  CHECK(bad_ids == 0 && n > 1000, "%s: %d of %d scores differ", what, bad_ids, n);
}

/* Every n-gram line of the ARPA file: scored as its last word after the others, alike. */
static void check_arpa_ngrams(const char *arpa, const cls_lm *a, const cls_lm *b) {
  FILE *f = fopen(arpa, "r");
  CHECK(f != NULL, "open %s", arpa);
  if (!f) return;
  char line[1024];
  int order = 0, checked = 0, differ = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "\\%d-grams:", &order) == 1 || line[0] == '\\' || line[0] == '\n' || !order) continue;
    char *save = NULL, *tok = strtok_r(line, " \t\n", &save);
    const char *words[CLS_LM_MAX_ORDER + 1];
    int nw = 0;
    for (tok = strtok_r(NULL, " \t\n", &save); tok && nw < order; tok = strtok_r(NULL, " \t\n", &save)) words[nw++] = tok;
    if (nw != order) continue;
    bool oa = false, ob = false;
    float sa = cls_lm_score_words(a, words, nw - 1, words[nw - 1], &oa);
    float sb = cls_lm_score_words(b, words, nw - 1, words[nw - 1], &ob);
    differ += !same_float(sa, sb) || oa != ob;
    checked++;
  }
  fclose(f);
  CHECK(differ == 0 && checked >= 40, "%s: %d of %d n-grams score differently", arpa, differ, checked);
  printf("test_lm_binary: %s: %d n-grams score bit-identically\n", arpa, checked);
}

/* The KenLM fixture's sentences: the same per-word scores, bit for bit. */
static void check_kenlm_sentences(const cls_lm *a, const cls_lm *b) {
  FILE *f = fopen(CLS_FIXTURE_DIR "/lm_small_kenlm.txt", "r");
  CHECK(f != NULL, "open the KenLM fixture");
  if (!f) return;
  char line[4096];
  int sentences = 0, differ = 0;
  while (fgets(line, sizeof line, f)) {
    int bos = 0, eos = 0, used = 0;
    if (line[0] != 'S' || sscanf(line, "S %d %d %n", &bos, &eos, &used) != 2) continue;
    float sa[256], sb[256];
    int na = 0, nb = 0, oa = 0, ob = 0;
    double ta = cls_lm_score_sentence(a, line + used, bos, eos, sa, 256, &na, &oa);
    double tb = cls_lm_score_sentence(b, line + used, bos, eos, sb, 256, &nb, &ob);
    differ += na != nb || oa != ob || ta != tb || memcmp(sa, sb, (size_t)(na < 256 ? na : 256) * sizeof(float)) != 0;
    sentences++;
  }
  fclose(f);
  CHECK(differ == 0 && sentences == 12, "%d of %d KenLM sentences score differently", differ, sentences);
}

static void round_trip(const char *arpa, const char *leaf) {
  cls_error err;
  cls_lm *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  CHECK(cls_lm_load_arpa(arpa, &a, &err) == CLS_OK, "load %s: %s", arpa, err.text);
  if (!a) return;
  const char *bin = in_dir(leaf);
  CHECK(cls_lm_save_binary(a, bin, &err) == CLS_OK, "save %s: %s", bin, err.text);
  CHECK(cls_lm_load_binary(bin, &b, &err) == CLS_OK, "load %s: %s", bin, err.text);
  CHECK(cls_lm_load(bin, &c, &err) == CLS_OK, "cls_lm_load %s: %s", bin, err.text);
  if (b && c) {
    CHECK(cls_lm_is_mapped(b) && cls_lm_is_mapped(c) && !cls_lm_is_mapped(a), "mapped: the binary ones only");
    /* the arrays point into the mapping: the memory is the file's size */
    struct stat sb;
    CHECK(stat(bin, &sb) == 0 && cls_lm_memory_bytes(b) == sizeof(struct cls_lm) + (size_t)sb.st_size,
          "memory %zu for a file of %lld bytes", cls_lm_memory_bytes(b), (long long)sb.st_size);
    CHECK(sb.st_size % 64 == 0, "the file is padded to 64 bytes");
    check_same_model(a, b, leaf);
    check_same_scores(a, b, leaf);
    check_arpa_ngrams(arpa, a, b);
    check_same_model(a, c, "cls_lm_load");
    /* from memory: a copy, not a mapping, and the same scores */
    size_t size = 0;
    unsigned char *bytes = read_all(bin, &size);
    CHECK(bytes && cls_lm_parse_binary(bytes, size, "mem.clm", &d, &err) == CLS_OK, "parse: %s", err.text);
    free(bytes);
    if (d) {
      CHECK(!cls_lm_is_mapped(d), "a parsed model is a copy");
      check_same_scores(a, d, "parsed");
    }
    /* a binary model written again is the same file */
    const char *again = in_dir("again.clm");
    CHECK(cls_lm_save_binary(b, again, &err) == CLS_OK, "save again: %s", err.text);
    size_t s1 = 0, s2 = 0;
    unsigned char *f1 = read_all(bin, &s1), *f2 = read_all(again, &s2);
    CHECK(f1 && f2 && s1 == s2 && memcmp(f1, f2, s1) == 0, "saved again: %zu vs %zu bytes, or other bytes", s1, s2);
    free(f1);
    free(f2);
  }
  cls_lm_destroy(d);
  cls_lm_destroy(c);
  cls_lm_destroy(b);
  /* cls_lm_load of the ARPA file reads ARPA */
  CHECK(cls_lm_load(arpa, &c, &err) == CLS_OK && !cls_lm_is_mapped(c), "cls_lm_load of ARPA: %s", err.text);
  if (c) check_same_scores(a, c, "cls_lm_load ARPA");
  cls_lm_destroy(c);
  cls_lm_destroy(a);
}

/* A change to a good file's image; `fix` recomputes the checksum (to reach the checks behind it). */
typedef struct bad_case {
  const char *what;
  void (*edit)(unsigned char *image, size_t *size);
  bool fix;
  const char *needle;
} bad_case;

static lm_bin_header *H(unsigned char *image) { return (lm_bin_header *)(void *)image; }
static void e_magic(unsigned char *m, size_t *s) { (void)s, m[1] = 'X'; }
static void e_version(unsigned char *m, size_t *s) { (void)s, H(m)->version = 7; }
static void e_endian(unsigned char *m, size_t *s) { (void)s, H(m)->endian = 0x04030201u; }
static void e_flip_body(unsigned char *m, size_t *s) { m[*s - 100] ^= 0x10; }
static void e_flip_header(unsigned char *m, size_t *s) { (void)s, H(m)->bos ^= 1; }
static void e_truncate(unsigned char *m, size_t *s) { (void)m, *s -= 64; }
static void e_short(unsigned char *m, size_t *s) { (void)m, *s = 100; }
static void e_offset(unsigned char *m, size_t *s) { H(m)->section[LM_BIN_TABLE2 + 1].offset = *s; }
static void e_misaligned(unsigned char *m, size_t *s) { (void)s, H(m)->section[LM_BIN_UNI_PROB].offset += 4; }
static void e_overlap(unsigned char *m, size_t *s) {
  (void)s, H(m)->section[LM_BIN_VOCAB].offset = H(m)->section[LM_BIN_WORD_OFF].offset;
}
static void e_cap(unsigned char *m, size_t *s) { (void)s, H(m)->table_cap[2] = (uint64_t)H(m)->counts[2]; }
static void e_vocab_cap(unsigned char *m, size_t *s) { (void)s, H(m)->vocab_cap = 24; }
static void e_counts(unsigned char *m, size_t *s) { (void)s, H(m)->counts[1] += 1; }
static void e_order(unsigned char *m, size_t *s) { (void)s, H(m)->order = 7; }
static void e_unk(unsigned char *m, size_t *s) { (void)s, H(m)->unk = H(m)->n_words; }
static void e_word_off(unsigned char *m, size_t *s) {
  (void)s;
  size_t *off = (size_t *)(void *)(m + H(m)->section[LM_BIN_WORD_OFF].offset);
  off[3] = (size_t)H(m)->arena_len + 10;
}
static void e_nul(unsigned char *m, size_t *s) {
  (void)s, m[H(m)->section[LM_BIN_ARENA].offset + 2] = '\0'; /* inside word 0 ("<unk>") */
}
static void e_vocab_id(unsigned char *m, size_t *s) {
  (void)s;
  int32_t *slots = (int32_t *)(void *)(m + H(m)->section[LM_BIN_VOCAB].offset);
  for (uint64_t i = 0; i < H(m)->vocab_cap; i++)
    if (slots[i] >= 0) {
      slots[i] = 1000;
      break;
    }
}
static void e_vocab_dup(unsigned char *m, size_t *s) {
  (void)s;
  int32_t *slots = (int32_t *)(void *)(m + H(m)->section[LM_BIN_VOCAB].offset);
  int32_t first = -1;
  for (uint64_t i = 0; i < H(m)->vocab_cap; i++)
    if (slots[i] >= 0) {
      if (first < 0) first = slots[i];
      else {
        slots[i] = first; /* one id twice, another missing */
        break;
      }
    }
}
static void e_table_full(unsigned char *m, size_t *s) {
  (void)s;
  cls_lm_entry *e = (cls_lm_entry *)(void *)(m + H(m)->section[LM_BIN_TABLE2].offset);
  for (uint64_t i = 0; i < H(m)->table_cap[2]; i++)
    if (!e[i].key) e[i].key = 0x1234567 + i; /* no empty slot: a lookup of a missing key would never end */
}
static void e_nan(unsigned char *m, size_t *s) {
  (void)s;
  float *p = (float *)(void *)(m + H(m)->section[LM_BIN_UNI_BACKOFF].offset);
  p[2] = NAN;
}
static void e_reserved(unsigned char *m, size_t *s) { (void)s, H(m)->reserved[5] = 1; }

static const bad_case BAD[] = {
    {"wrong magic", e_magic, false, "not a clspeech binary language model"},
    {"another version", e_version, true, "binary language model format version 7, this clspeech reads version 1"},
    {"other byte order", e_endian, true, "written on a machine of the other byte order"},
    {"flipped byte", e_flip_body, false, "checksum mismatch (file corrupt or truncated)"},
    {"flipped header byte", e_flip_header, false, "checksum mismatch (file corrupt or truncated)"},
    {"truncated", e_truncate, false, "truncated:"},
    {"too short", e_short, false, "100 bytes: too short for a binary language model"},
    {"offset past the end", e_offset, true, "the 3-gram table (offset"},
    {"misaligned section", e_misaligned, true, "the unigram probabilities (offset"},
    {"overlapping sections", e_overlap, true, "the vocabulary table (offset"},
    {"table without an empty slot", e_cap, true, "16 2-grams in a table of 16 slots"},
    {"vocabulary table not a power of two", e_vocab_cap, true, "a vocabulary table of 24 slots for 11 words"},
    {"counts disagree", e_counts, true, "12 unigrams for 11 words"},
    {"order 7", e_order, true, "order 7 is outside 1..6"},
    {"<unk> out of range", e_unk, true, "<s>, </s> or <unk> (ids"},
    {"word offset outside the arena", e_word_off, true, "word 2's offsets (10..54) are out of order or outside the arena of 44 bytes"},
    {"NUL inside a word", e_nul, true, "word 0 is not one NUL-terminated string"},
    {"vocabulary id out of range", e_vocab_id, true, "vocabulary slot 0 holds id 1000"},
    {"duplicate vocabulary id", e_vocab_dup, true, "is not found at its own id"},
    {"full n-gram table", e_table_full, true, "the 2-gram table holds"},
    {"NaN backoff", e_nan, true, "word 2's unigram probability or backoff is not finite"},
    {"reserved byte", e_reserved, true, "reserved header byte 5 is not 0"},
};

static void check_bad(void) {
  cls_error err;
  cls_lm *lm = NULL;
  CHECK(cls_lm_load_arpa(CLS_FIXTURE_DIR "/lm_small.arpa", &lm, &err) == CLS_OK, "load: %s", err.text);
  const char *good = in_dir("good.clm");
  CHECK(lm && cls_lm_save_binary(lm, good, &err) == CLS_OK, "save: %s", err.text);
  cls_lm_destroy(lm);
  size_t size = 0;
  unsigned char *orig = read_all(good, &size);
  CHECK(orig && size > 1024, "read %s", good);
  if (!orig) return;
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    unsigned char *m = malloc(size);
    memcpy(m, orig, size);
    size_t s = size;
    BAD[i].edit(m, &s);
    if (BAD[i].fix) H(m)->checksum = lm_bin_checksum(m, s);
    const char *path = in_dir("bad.clm");
    write_all(path, m, s);
    lm = (cls_lm *)1;
    cls_status st = cls_lm_load_binary(path, &lm, &err);
    CHECK(st == CLS_ERR_INVALID_ARGUMENT && lm == NULL, "%s: status %d", BAD[i].what, (int)st);
    char want[256];
    snprintf(want, sizeof want, "%s: ", path); /* the file first, then the reason */
    CHECK(strncmp(err.text, want, strlen(want)) == 0 && strstr(err.text, BAD[i].needle),
          "%s: expected \"%s...%s\" in \"%s\"", BAD[i].what, want, BAD[i].needle, err.text);
    /* from memory the same, with the name given */
    lm = (cls_lm *)1;
    st = cls_lm_parse_binary(m, s, "mem.clm", &lm, &err);
    CHECK(st == CLS_ERR_INVALID_ARGUMENT && lm == NULL && strncmp(err.text, "mem.clm: ", 9) == 0 &&
              strstr(err.text, BAD[i].needle), "%s from memory: %s", BAD[i].what, err.text);
    free(m);
  }
  /* cls_lm_load of a file without the magic reads it as ARPA, which names its first NUL byte's line */
  unsigned char *m = malloc(size);
  memcpy(m, orig, size);
  m[0] = 'x';
  const char *path = in_dir("nomagic.clm");
  write_all(path, m, size);
  free(m);
  CHECK(cls_lm_load(path, &lm, &err) == CLS_ERR_INVALID_ARGUMENT && lm == NULL, "no magic: %s", err.text);
  CHECK(strstr(err.text, path) && strstr(err.text, ".clm:2:") && strstr(err.text, ": a NUL byte: binary data, not ARPA text"), "no magic: %s", err.text);
  CHECK(cls_lm_load(in_dir("missing.clm"), &lm, &err) == CLS_ERR_IO && strstr(err.text, "missing.clm: cannot open"),
        "missing: %s", err.text);
  free(orig);
}

static int count_entries(const char *d) {
  DIR *dp = opendir(d);
  int n = 0;
  for (struct dirent *e; dp && (e = readdir(dp));) n += e->d_name[0] != '.';
  if (dp) closedir(dp);
  return n;
}

/* A save that fails leaves nothing at its path and no temporary file. */
static void check_save_failure(void) {
  cls_error err;
  cls_lm *lm = NULL;
  CHECK(cls_lm_load_arpa(CLS_FIXTURE_DIR "/lm_small.arpa", &lm, &err) == CLS_OK, "load: %s", err.text);
  if (!lm) return;
  const char *nodir = in_dir("no/such/dir/x.clm");
  CHECK(cls_lm_save_binary(lm, nodir, &err) == CLS_ERR_IO, "save into a missing folder");
  CHECK(strstr(err.text, "no/such/dir/x.clm") != NULL, "error names the file: %s", err.text);
  CHECK(access(nodir, F_OK) != 0, "nothing at %s", nodir);
  /* the target is a folder: the rename fails after the write; the temporary file goes */
  const char *sub = in_dir("sub");
  CHECK(mkdir(sub, 0755) == 0, "mkdir");
  char target[160];
  snprintf(target, sizeof target, "%s/model.clm", sub);
  CHECK(mkdir(target, 0755) == 0, "mkdir target");
  CHECK(cls_lm_save_binary(lm, target, &err) == CLS_ERR_IO && strstr(err.text, "model.clm"), "save over a folder: %s",
        err.text);
  CHECK_INT(count_entries(sub), 1); /* the folder model.clm alone */
  rmdir(target);
  rmdir(sub);
  cls_lm_destroy(lm);
}

/* The fuzz target's seeds (tests/fuzz/corpus/lm_binary, checksum field 0, which the target fills in)
 * load once the checksum is written, so that the fuzzer starts from files that pass every check. */
static void check_fuzz_seeds(void) {
  const char *seeds[] = {"small3.clm", "tiny1.clm"};
  const int orders[] = {3, 1};
  for (int i = 0; i < 2; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/../fuzz/corpus/lm_binary/%s", CLS_FIXTURE_DIR, seeds[i]);
    size_t size = 0;
    unsigned char *m = read_all(path, &size);
    CHECK(m && size >= sizeof(lm_bin_header) && H(m)->checksum == 0, "seed %s: its checksum field is 0", path);
    if (!m || size < sizeof(lm_bin_header)) {
      free(m);
      continue;
    }
    H(m)->checksum = lm_bin_checksum(m, size);
    cls_lm *lm = NULL;
    cls_error err;
    CHECK(cls_lm_parse_binary(m, size, seeds[i], &lm, &err) == CLS_OK && cls_lm_order(lm) == orders[i],
          "seed %s: %s", seeds[i], err.text);
    cls_lm_destroy(lm);
    free(m);
  }
}

static void remove_dir(void) {
  DIR *dp = opendir(dir);
  for (struct dirent *e; dp && (e = readdir(dp));)
    if (e->d_name[0] != '.') unlink(in_dir(e->d_name));
  if (dp) closedir(dp);
  rmdir(dir);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/test_lm_binary-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  round_trip(CLS_FIXTURE_DIR "/lm_small.arpa", "small.clm");
  round_trip(CLS_FIXTURE_DIR "/kn_corpus.3.arpa", "kn.clm");
  {
    cls_error err;
    cls_lm *a = NULL, *b = NULL;
    if (cls_lm_load_arpa(CLS_FIXTURE_DIR "/lm_small.arpa", &a, &err) == CLS_OK &&
        cls_lm_save_binary(a, in_dir("k.clm"), &err) == CLS_OK && cls_lm_load(in_dir("k.clm"), &b, &err) == CLS_OK)
      check_kenlm_sentences(a, b);
    CHECK(a && b, "the KenLM sentences: %s", err.text);
    cls_lm_destroy(a);
    cls_lm_destroy(b);
  }
  check_bad();
  check_save_failure();
  check_fuzz_seeds();
  remove_dir();
  return check_finish("test_lm_binary");
}
