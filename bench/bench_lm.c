/* The word n-gram model's load time, memory and scoring speed on an ARPA file (make one with
 * bench/make_arpa.py): prints the best of --reps loads in ms, the model's memory (its own count and
 * the process's resident-set growth), and the scores per second of --queries random 2-word-history
 * queries over the vocabulary. With --score TEXT it prints instead the log10 probabilities of each line
 * of TEXT as a sentence (<s> ... </s>, cls_lm_score_sentence: one per word, then </s>), a line each, for comparing with KenLM.
 *   bench_lm FILE.arpa [--reps 3] [--queries 2000000] [--score TEXT] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clspeech/base.h"
#include "clspeech/lm.h"

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return kib;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_lm FILE.arpa [--reps N] [--queries N]\n");
    return 2;
  }
  int reps = 3;
  long queries = 2000000;
  const char *score_path = NULL;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
    else if (strcmp(argv[i], "--queries") == 0) queries = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--score") == 0) score_path = argv[i + 1];
    else {
      fprintf(stderr, "bench_lm: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (reps < 1 || queries < 1) {
    fprintf(stderr, "bench_lm: --reps and --queries must be positive\n");
    return 2;
  }
  if (score_path) {
    cls_lm *lm = NULL;
    cls_error err;
    FILE *f = fopen(score_path, "r");
    if (!f || cls_lm_load_arpa(argv[1], &lm, &err) != CLS_OK) {
      fprintf(stderr, "bench_lm: %s\n", f ? err.text : "cannot open the --score file");
      if (f) fclose(f);
      return 1;
    }
    static char line[65536];
    static float scores[32768];
    while (fgets(line, sizeof line, f)) {
      int n = 0;
      cls_lm_score_sentence(lm, line, true, true, scores, 32768, &n, NULL);
      for (int i = 0; i < n && i < 32768; i++) printf("%s%.6f", i ? " " : "", scores[i]);
      printf("\n");
    }
    fclose(f);
    cls_lm_destroy(lm);
    return 0;
  }
  double best = 1e30;
  long rss_growth = 0;
  cls_lm *lm = NULL;
  for (int r = 0; r < reps; r++) {
    cls_lm_destroy(lm);
    lm = NULL;
    long before = rss_kib();
    double t0 = cls_now_ms();
    cls_error err;
    if (cls_lm_load_arpa(argv[1], &lm, &err) != CLS_OK) {
      fprintf(stderr, "bench_lm: %s\n", err.text);
      return 1;
    }
    double ms = cls_now_ms() - t0;
    if (ms < best) best = ms;
    if (r == 0) rss_growth = rss_kib() - before;
  }
  int64_t total = 0;
  printf("bench_lm: %s: order %d,", argv[1], cls_lm_order(lm));
  for (int n = 1; n <= cls_lm_order(lm); n++) {
    printf(" %lld %d-grams", (long long)cls_lm_count(lm, n), n);
    total += cls_lm_count(lm, n);
  }
  printf("\nbench_lm: load %.0f ms (best of %d), %.2f M n-grams/s\n", best, reps, total / best / 1000.0);
  printf("bench_lm: memory %.1f MiB (%.1f bytes an n-gram), resident set grew %.1f MiB on the first load\n",
         cls_lm_memory_bytes(lm) / 1048576.0, (double)cls_lm_memory_bytes(lm) / (double)total, rss_growth / 1024.0);
  int32_t v = cls_lm_vocab_size(lm);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  double sum = 0.0, t0 = cls_now_ms();
  int32_t hist[2];
  for (long q = 0; q < queries; q++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    hist[0] = (int32_t)((s >> 33) % (uint64_t)v);
    hist[1] = (int32_t)((s >> 13) % (uint64_t)v);
    sum += cls_lm_score(lm, hist, 2, (int32_t)((s >> 40) % (uint64_t)v));
  }
  double ms = cls_now_ms() - t0;
  printf("bench_lm: %ld scores in %.0f ms: %.1f M scores/s (sum %.1f)\n", queries, ms, queries / ms / 1000.0, sum);
  cls_lm_destroy(lm);
  return 0;
}
