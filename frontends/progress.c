/* DeepSpeech-style progress lines (see progress.h). */
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

void progress_init(progress_printer *p, bool show_progressbar) {
  p->enabled = show_progressbar;
  p->tty = isatty(fileno(stderr));
  p->last_print = -1;
}

static void clock_text(double s, char *out, size_t cap) {
  long t = (long)(s + 0.5);
  snprintf(out, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

void progress_print(void *user, const cls_progress *p) {
  progress_printer *pp = user;
  char elapsed[32], eta[48] = "";
  clock_text(p->elapsed_s, elapsed, sizeof elapsed);
  if (!p->finished && p->steps > 0 && p->total_steps > p->steps) {
    char t[32];
    clock_text(p->elapsed_s / (double)p->steps * (double)(p->total_steps - p->steps), t, sizeof t);
    snprintf(eta, sizeof eta, " | ETA: %s", t);
  }
  double rate = p->elapsed_s > 0 ? p->audio_s / p->elapsed_s : 0;
  char line[512];
  snprintf(line, sizeof line, "Epoch %d | %10s | Elapsed Time: %s | Steps: %lld | Loss: %.6f | %.1f audio-s/s%s",
           p->epoch, p->phase, elapsed, (long long)p->steps, p->mean_loss, rate, eta);
  if (p->finished) {
    fprintf(stderr, "%s%s\n", pp->tty && pp->enabled ? "\r\033[K" : "", line);
    pp->last_print = -1;
  } else if (pp->enabled && pp->tty && (pp->last_print < 0 || p->elapsed_s - pp->last_print >= 0.2)) {
    fprintf(stderr, "\r\033[K%s", line);
    pp->last_print = p->elapsed_s;
  } else if (pp->enabled && !pp->tty && (pp->last_print < 0 || p->elapsed_s - pp->last_print >= 30)) {
    if (pp->last_print >= 0) fprintf(stderr, "%s\n", line); /* long passes: a line every 30 s */
    pp->last_print = p->elapsed_s;
  }
  fflush(stderr);
}
