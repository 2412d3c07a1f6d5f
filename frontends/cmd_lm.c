/* `clspeech lm --text FILE [--order 5] [--prune 0 1 1] --out FILE.clm|FILE.arpa [--arpa FILE.arpa]`: builds a
 * word n-gram language model from a text corpus with interpolated modified Kneser-Ney smoothing
 * (engine/decode/lm_build.c) and writes it as ARPA (an --out ending in .arpa) or in the binary form
 * (engine/decode/lm_binary.c; .clm by convention), or both; `clspeech lm --arpa_in FILE.arpa --out
 * FILE.clm` converts an existing ARPA file to the binary form. With --characters the model is
 * character-level (each character a word, for --bytes_output_mode), which the binary form records. */
#include <stdbool.h>
#include <stdint.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clspeech/lm.h"
#include "clspeech/lm_build.h"
#include "flags.h"

static int cmd_lm_flags(int argc, char **argv, uint64_t *prune, int n_prune);

static void lm_progress(void *user, const char *message) {
  double t0 = *(const double *)user;
  fprintf(stderr, "clspeech lm: [%6.1f s] %s\n", (cls_now_ms() - t0) / 1000.0, message);
}

/* Takes lmplz's `--prune T1 T2 ...` (or --prune "T1 T2 ..." / --prune=T1,T2) out of argv: the
 * thresholds into prune[] (the last one repeats to the highest order), the other arguments kept in
 * order in `rest`. 0, or CLI_EXIT_USAGE after printing why. */
static int take_prune(int argc, char **argv, char **rest, int *n_rest, uint64_t *prune, int *n_prune) {
  *n_rest = 0;
  *n_prune = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int is_flag = !strcmp(a, "--prune") || !strcmp(a, "-prune");
    int is_eq = !strncmp(a, "--prune=", 8);
    if (!is_flag && !is_eq) {
      rest[(*n_rest)++] = argv[i];
      continue;
    }
    int j = i + 1, any = 0;
    for (;;) {
      const char *v = is_eq ? a + 8 : (j < argc ? argv[j] : NULL);
      if (!v || !isdigit((unsigned char)v[0])) break;
      for (const char *p = v; *p;) {
        char *end;
        unsigned long long t = strtoull(p, &end, 10);
        if (end == p || (*end && *end != ' ' && *end != ',')) {
          fprintf(stderr, "clspeech lm: --prune takes whole counts, one per order (e.g. --prune 0 1 1), not \"%s\"\n", v);
          return CLI_EXIT_USAGE;
        }
        if (*n_prune == CLS_LM_MAX_ORDER) {
          fprintf(stderr, "clspeech lm: --prune: more than %d thresholds\n", CLS_LM_MAX_ORDER);
          return CLI_EXIT_USAGE;
        }
        prune[(*n_prune)++] = t;
        any = 1;
        p = end;
        while (*p == ' ' || *p == ',') p++;
      }
      if (is_eq) break;
      j++;
    }
    if (!any) {
      fprintf(stderr, "clspeech lm: --prune needs one count per order (e.g. --prune 0 1 1)\n");
      return CLI_EXIT_USAGE;
    }
    i = is_eq ? i : j - 1;
  }
  return 0;
}

int cmd_lm(int argc, char **argv) {
  uint64_t prune[CLS_LM_MAX_ORDER] = {0};
  int n_prune = 0, n_rest = 0;
  char **rest = malloc(((size_t)argc + 1) * sizeof *rest);
  if (!rest) return CLI_EXIT_FAILURE;
  int prc = take_prune(argc, argv, rest, &n_rest, prune, &n_prune);
  rest[n_rest] = NULL;
  int rc = prc ? prc : cmd_lm_flags(n_rest, rest, prune, n_prune);
  free(rest);
  return rc;
}

static bool ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* Writes `lm` in the binary form at `out` (the output rule); the model's summary to stdout. */
static int write_binary(cls_lm *lm, const char *out, double t0) {
  char msg[CLS_PATH_CAP];
  snprintf(msg, sizeof msg, "writing %s", out);
  lm_progress(&t0, msg);
  cls_error err;
  cls_status s = cls_lm_save_binary(lm, out, &err);
  if (s != CLS_OK) {
    fprintf(stderr, "clspeech lm: %s\n", err.text);
    return cli_exit_status(s);
  }
  printf("%s: binary %d-gram %smodel (format version %d), %.1f MiB,", out, cls_lm_order(lm),
         cls_lm_characters(lm) ? "character " : "", CLS_LM_BINARY_VERSION, cls_lm_memory_bytes(lm) / 1048576.0);
  for (int n = 1; n <= cls_lm_order(lm); n++) printf(" %lld %d-grams", (long long)cls_lm_count(lm, n), n);
  printf("\n");
  return CLI_EXIT_OK;
}

/* Before a long build: 0 when `path` can be written (a device or FIFO as it is, else its folder
 * writable), else CLI_EXIT_FAILURE after saying why. */
static int writable(const char *flag, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return 0;
  char dir[CLS_PATH_CAP];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  if (access(dir, W_OK | X_OK) == 0) return 0;
  fprintf(stderr, "clspeech lm: %s %s: cannot write there: %s (the folder %s)\n", flag, path, strerror(errno), dir);
  return CLI_EXIT_FAILURE;
}

static int cmd_lm_flags(int argc, char **argv, uint64_t *prune, int n_prune) {
  const char *text = "", *out = "", *arpa = "", *arpa_in = "";
  int order = 5;
  bool fallback = false, characters = false;
  cli_flag flags[] = {
      {"text", CLI_STRING, &text, "the text corpus: one sentence per line, words separated by spaces", false},
      {"order", CLI_INT, &order, "the n-gram order, 1..6", false},
      {"out", CLI_STRING, &out,
       "write the model here: as ARPA when the name ends in .arpa, else in clspeech's binary form (name it "
       "FILE.clm; it is loaded by mapping the file, far faster than ARPA)", false},
      {"arpa", CLI_STRING, &arpa, "with --text and a binary --out: also write the model here as ARPA", false},
      {"arpa_in", CLI_STRING, &arpa_in,
       "convert this ARPA file (lmplz's or any other) to the binary form at --out, instead of building from --text",
       false},
      {"discount_fallback", CLI_BOOL, &fallback,
       "when an order's counts-of-counts give no valid discounts (a tiny text), use 0.5 1 1.5 as lmplz does", false},
      {"characters", CLI_BOOL, &characters,
       "a character-level model for --bytes_output_mode (DeepSpeech's generate_scorer_package "
       "--force_bytes_output_mode): with --text every character is a word (whitespace dropped: text without "
       "spaces, such as Mandarin), with --arpa_in the model's words are taken as characters; the binary --out "
       "records it, and the decoder then scores each character as it completes", false},
  };
  int rc = cli_parse_flags(argc, argv, 2, flags, (int)(sizeof flags / sizeof flags[0]), "lm",
                           "Builds a word n-gram language model (interpolated modified Kneser-Ney, as KenLM's lmplz) "
                           "from a text file, or converts an ARPA file, and writes it as ARPA or in clspeech's binary "
                           "form (.clm). Examples: clspeech lm --text corpus.txt --order 5 --out lm.clm [--arpa lm.arpa]; "
                           "clspeech lm --arpa_in lm.arpa --out lm.clm",
                           NULL, 0, NULL);
  if (rc == 1)
    printf("  --prune T1 T2 ...  lmplz's pruning: leave out n-grams of order n >= 2 seen at most Tn times (the\n"
           "                     first must be 0, non-decreasing, the last repeats; default: no pruning)\n");
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if (!*out || (!*text) == (!*arpa_in)) {
    fprintf(stderr, "clspeech lm: --text FILE and --out FILE are required (or --arpa_in FILE and --out FILE to "
                    "convert an ARPA file)\n");
    return CLI_EXIT_USAGE;
  }
  bool out_arpa = ends_with(out, ".arpa");
  if (*arpa && (out_arpa || *arpa_in)) {
    fprintf(stderr, "clspeech lm: --arpa writes the ARPA form beside a binary --out built from --text; %s\n",
            *arpa_in ? "with --arpa_in the ARPA file exists already" : "--out already names an ARPA file");
    return CLI_EXIT_USAGE;
  }
  if (characters && out_arpa) {
    fprintf(stderr, "clspeech lm: --characters is recorded in the binary form only: --out must not end in .arpa "
                    "(use .clm; --arpa FILE writes the ARPA text beside it)\n");
    return CLI_EXIT_USAGE;
  }
  if (*arpa_in && out_arpa) {
    fprintf(stderr, "clspeech lm: --arpa_in converts to the binary form: --out must not end in .arpa (use .clm)\n");
    return CLI_EXIT_USAGE;
  }
  if (*arpa && !strcmp(arpa, out)) {
    fprintf(stderr, "clspeech lm: --arpa and --out name the same file\n");
    return CLI_EXIT_USAGE;
  }
  /* an output that is an input is refused (the output rule); --arpa and --out are not one file */
  if ((rc = cli_refuse_input("lm", "--out", out, "--text", text)) ||
      (rc = cli_refuse_input("lm", "--arpa", arpa, "--text", text)) ||
      (rc = cli_refuse_input("lm", "--out", out, "--arpa_in", arpa_in)))
    return rc;
  if (*arpa && cls_same_file(arpa, out)) {
    fprintf(stderr, "clspeech lm: --arpa %s and --out %s are one file\n", arpa, out);
    return CLI_EXIT_USAGE;
  }
  double t0 = cls_now_ms();
  if (*arpa_in) {
    if (!strcmp(arpa_in, out)) {
      fprintf(stderr, "clspeech lm: --arpa_in and --out name the same file\n");
      return CLI_EXIT_USAGE;
    }
    lm_progress(&t0, "loading the ARPA model");
    cls_lm *lm = NULL;
    cls_error err;
    if (cls_lm_load_arpa(arpa_in, &lm, &err) != CLS_OK) {
      fprintf(stderr, "clspeech lm: %s\n", err.text);
      return err.status == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_FAILURE : cli_exit_status(err.status);
    }
    cls_lm_set_characters(lm, characters);
    rc = write_binary(lm, out, t0);
    cls_lm_destroy(lm);
    return rc;
  }
  if (order < 1 || order > CLS_LM_MAX_ORDER) {
    fprintf(stderr, "clspeech lm: --order must be in 1..%d, not %d\n", CLS_LM_MAX_ORDER, order);
    return CLI_EXIT_USAGE;
  }
  if (n_prune && prune[0]) {
    fprintf(stderr, "clspeech lm: --prune: unigrams cannot be pruned; the first threshold must be 0\n");
    return CLI_EXIT_USAGE;
  }
  for (int n = 1; n < n_prune; n++)
    if (prune[n] < prune[n - 1]) {
      fprintf(stderr, "clspeech lm: --prune: the thresholds must not decrease (%llu after %llu)\n",
              (unsigned long long)prune[n], (unsigned long long)prune[n - 1]);
      return CLI_EXIT_USAGE;
    }
  for (int n = n_prune; n_prune && n < CLS_LM_MAX_ORDER; n++) prune[n] = prune[n_prune - 1];
  /* The builder writes ARPA: to --out, or (a binary --out) into memory, from which the binary form is
   * made and --arpa written; no path is read back, so --out and --arpa may be FIFOs or devices, and
   * --out and --arpa give the same scores. */
  if ((rc = writable("--out", out)) || (*arpa && (rc = writable("--arpa", arpa)))) return rc;
  cls_lm_build_options o = cls_lm_build_options_default();
  o.order = order;
  o.discount_fallback = fallback;
  o.characters = characters;
  memcpy(o.prune, prune, sizeof o.prune);
  o.progress = lm_progress;
  o.user = &t0;
  cls_lm_build_stats st;
  cls_error err;
  char *arpa_text = NULL;
  size_t arpa_size = 0;
  cls_status s = out_arpa ? cls_lm_build_arpa(text, out, &o, &st, &err)
                          : cls_lm_build_arpa_text(text, &o, &arpa_text, &arpa_size, &st, &err);
  if (s != CLS_OK) {
    fprintf(stderr, "clspeech lm: %s\n", err.text);
    return s == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_FAILURE : cli_exit_status(s);
  }
  printf("%s: %d-gram model of %llu sentences, %llu words in %.1f s\n", *arpa ? arpa : out, order,
         (unsigned long long)st.sentences, (unsigned long long)st.words, (cls_now_ms() - t0) / 1000.0);
  for (int n = 1; n <= order; n++)
    printf("  %d-grams %10llu  discounts %.4f %.4f %.4f\n", n, (unsigned long long)st.ngrams[n - 1],
           st.discount[n - 1][0], st.discount[n - 1][1], st.discount[n - 1][2]);
  if (out_arpa) return CLI_EXIT_OK;
  int brc = CLI_EXIT_OK;
  if (*arpa) {
    char msg[CLS_PATH_CAP];
    snprintf(msg, sizeof msg, "writing %s", arpa);
    lm_progress(&t0, msg);
    const void *chunk = arpa_text;
    if (cls_write_atomic(arpa, &chunk, &arpa_size, 1, &err) != CLS_OK) {
      fprintf(stderr, "clspeech lm: %s\n", err.text);
      brc = CLI_EXIT_FAILURE;
    }
  }
  cls_lm *lm = NULL;
  if (brc == CLI_EXIT_OK) {
    lm_progress(&t0, "making the binary form");
    char name[8600];
    snprintf(name, sizeof name, "%s (the ARPA text built from %s)", out, text);
    if (cls_lm_parse_arpa(arpa_text, arpa_size, name, &lm, &err) != CLS_OK) {
      fprintf(stderr, "clspeech lm: %s\n", err.text);
      brc = err.status == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_FAILURE : cli_exit_status(err.status);
    }
  }
  free(arpa_text);
  cls_lm_set_characters(lm, characters);
  if (brc == CLI_EXIT_OK) brc = write_binary(lm, out, t0);
  cls_lm_destroy(lm);
  if (brc == CLI_EXIT_OK) printf("%s: written in %.1f s\n", out, (cls_now_ms() - t0) / 1000.0);
  return brc;
}
