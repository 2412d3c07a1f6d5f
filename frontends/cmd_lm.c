/* `clspeech lm --text FILE [--order 5] --out FILE.arpa`: builds a word n-gram language model from a
 * text corpus with interpolated modified Kneser-Ney smoothing (engine/decode/lm_build.c) and writes
 * it as an ARPA file. */
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "clspeech/lm_build.h"
#include "flags.h"

static void lm_progress(void *user, const char *message) {
  double t0 = *(const double *)user;
  fprintf(stderr, "clspeech lm: [%6.1f s] %s\n", (cls_now_ms() - t0) / 1000.0, message);
}

int cmd_lm(int argc, char **argv) {
  const char *text = "", *out = "";
  int order = 5;
  bool fallback = false;
  cli_flag flags[] = {
      {"text", CLI_STRING, &text, "the text corpus: one sentence per line, words separated by spaces", false},
      {"order", CLI_INT, &order, "the n-gram order, 1..6", false},
      {"out", CLI_STRING, &out, "write the model here as an ARPA file", false},
      {"discount_fallback", CLI_BOOL, &fallback,
       "when an order's counts-of-counts give no valid discounts (a tiny text), use 0.5 1 1.5 as lmplz does", false},
  };
  int rc = cli_parse_flags(argc, argv, 2, flags, (int)(sizeof flags / sizeof flags[0]), "lm",
                           "Builds a word n-gram language model (interpolated modified Kneser-Ney, as KenLM's lmplz) "
                           "from a text file and writes it as ARPA.",
                           NULL, 0, NULL);
  if (rc) return rc == 1 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
  if (!*text || !*out) {
    fprintf(stderr, "clspeech lm: --text FILE and --out FILE are required\n");
    return CLI_EXIT_USAGE;
  }
  if (order < 1 || order > CLS_LM_MAX_ORDER) {
    fprintf(stderr, "clspeech lm: --order must be in 1..%d, not %d\n", CLS_LM_MAX_ORDER, order);
    return CLI_EXIT_USAGE;
  }
  double t0 = cls_now_ms();
  cls_lm_build_options o = cls_lm_build_options_default();
  o.order = order;
  o.discount_fallback = fallback;
  o.progress = lm_progress;
  o.user = &t0;
  cls_lm_build_stats st;
  cls_error err;
  cls_status s = cls_lm_build_arpa(text, out, &o, &st, &err);
  if (s != CLS_OK) {
    fprintf(stderr, "clspeech lm: %s\n", err.text);
    return s == CLS_ERR_INVALID_ARGUMENT ? CLI_EXIT_FAILURE : cli_exit_status(s);
  }
  printf("%s: %d-gram model of %llu sentences, %llu words in %.1f s\n", out, order,
         (unsigned long long)st.sentences, (unsigned long long)st.words, (cls_now_ms() - t0) / 1000.0);
  for (int n = 1; n <= order; n++)
    printf("  %d-grams %10llu  discounts %.4f %.4f %.4f\n", n, (unsigned long long)st.ngrams[n - 1],
           st.discount[n - 1][0], st.discount[n - 1][1], st.discount[n - 1][2]);
  return CLI_EXIT_OK;
}
