/* The word n-gram model's load time, memory and scoring speed on an ARPA file (make one with
 * bench/make_arpa.py or `clspeech lm`) or its binary form (`clspeech lm --out FILE.clm`), whichever
 * FILE is (cls_lm_load): prints the first load's time and the process's resident-set growth (from
 * /proc/self/statm, and how much of it is file pages: a mapped binary model's), with --cold after
 * asking the kernel to drop FILE from the page cache (posix_fadvise DONTNEED: clean pages go, so the
 * first load reads the disk), then the best of --reps loads in ms, the model's memory, and the scores
 * per second of --queries random queries over the vocabulary with 2-word and with 4-word histories.
 * With --score TEXT it prints instead the log10 probabilities of each line of TEXT as a sentence
 * (<s> ... </s>, cls_lm_score_sentence: one per word, then </s>), a line each, for comparing with KenLM.
 *   bench_lm FILE [--reps 3] [--queries 2000000] [--cold] [--score TEXT]
 * The issue-34 figures (a 5-gram model of 1 M words, 23,140 word types):
 *   python3 tests/ref/make_lm_text.py text.txt 1000000 100000
 *   clspeech lm --text text.txt --order 5 --out x.clm --arpa x.arpa
 *   bench_lm x.arpa --cold; bench_lm x.clm --cold */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clspeech/base.h"
#include "clspeech/lm.h"

/* The resident set and its file-backed part (shared pages: a mapped file's), in KiB. */
static void rss_kib(long *resident, long *file) {
  long size = 0, res = 0, shared = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld %ld %ld", &size, &res, &shared) != 3) res = shared = -1;
  if (f) fclose(f);
  long page_kib = sysconf(_SC_PAGESIZE) / 1024;
  *resident = res * page_kib;
  *file = shared * page_kib;
}

/* Drops the file's clean pages from the page cache (nothing when it cannot). */
static void drop_cache(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

static void score_queries(const cls_lm *lm, long queries, int n_hist) {
  int32_t v = cls_lm_vocab_size(lm);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  double sum = 0.0, t0 = cls_now_ms();
  int32_t hist[4];
  for (long q = 0; q < queries; q++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    for (int k = 0; k < n_hist; k++) hist[k] = (int32_t)((s >> (33 - 5 * k)) % (uint64_t)v);
    sum += cls_lm_score(lm, hist, n_hist, (int32_t)((s >> 40) % (uint64_t)v));
  }
  double ms = cls_now_ms() - t0;
  if (n_hist == 2)
    printf("bench_lm: %ld scores in %.0f ms: %.1f M scores/s (sum %.1f)\n", queries, ms, queries / ms / 1000.0, sum);
  else
    printf("bench_lm: %ld scores (%d-word histories) in %.0f ms: %.1f M scores/s (sum %.1f)\n", queries, n_hist, ms,
           queries / ms / 1000.0, sum);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: bench_lm FILE.arpa|FILE.clm [--reps N] [--queries N] [--cold] [--score TEXT]\n");
    return 2;
  }
  int reps = 3;
  long queries = 2000000;
  const char *score_path = NULL;
  int cold = 0;
  for (int i = 2; i < argc; i += 2) {
    if (strcmp(argv[i], "--cold") == 0) {
      cold = 1;
      i--;
    } else if (i + 1 >= argc) {
      fprintf(stderr, "bench_lm: %s needs a value\n", argv[i]);
      return 2;
    } else if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
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
    if (!f || cls_lm_load(argv[1], &lm, &err) != CLS_OK) {
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
  double best = 1e30, first = 0.0;
  long rss_growth = 0, file_growth = 0;
  cls_lm *lm = NULL;
  if (cold) drop_cache(argv[1]);
  for (int r = 0; r < reps; r++) {
    cls_lm_destroy(lm);
    lm = NULL;
    long before, file_before, after, file_after;
    rss_kib(&before, &file_before);
    double t0 = cls_now_ms();
    cls_error err;
    if (cls_lm_load(argv[1], &lm, &err) != CLS_OK) {
      fprintf(stderr, "bench_lm: %s\n", err.text);
      return 1;
    }
    double ms = cls_now_ms() - t0;
    if (ms < best) best = ms;
    if (r == 0) {
      first = ms;
      rss_kib(&after, &file_after);
      rss_growth = after - before;
      file_growth = file_after - file_before;
    }
  }
  int64_t total = 0;
  printf("bench_lm: %s: order %d,", argv[1], cls_lm_order(lm));
  for (int n = 1; n <= cls_lm_order(lm); n++) {
    printf(" %lld %d-grams", (long long)cls_lm_count(lm, n), n);
    total += cls_lm_count(lm, n);
  }
  printf("\nbench_lm: %s; first load %.1f ms%s, resident set grew %.1f MiB (%.1f MiB of it file pages)\n",
         cls_lm_is_mapped(lm) ? "binary form, mapped" : "arrays in memory (ARPA, or a binary read from a pipe)", first,
         cold ? " (file dropped from the page cache first)" : "", rss_growth / 1024.0, file_growth / 1024.0);
  printf("bench_lm: load %.1f ms (best of %d), %.2f M n-grams/s\n", best, reps, total / best / 1000.0);
  printf("bench_lm: memory %.1f MiB (%.1f bytes an n-gram)\n", cls_lm_memory_bytes(lm) / 1048576.0,
         (double)cls_lm_memory_bytes(lm) / (double)total);
  score_queries(lm, queries, 2);
  score_queries(lm, queries, 4);
  cls_lm_destroy(lm);
  return 0;
}
