/* `clspeech train`'s time estimate (see train_estimate.h): the lines of the estimate (the crew's
 * epoch, passes and run, then each tower's device, share and time) and of the measured epochs after
 * training, with the estimate's error against them. */
#include "train_estimate.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

int train_estimate_make(train_estimate *te, cls_engine *engine, cls_trainer *trainer, const data_set *train,
                        const cls_eval_set *evals, int n_evals, const char *command) {
  const cls_train_estimate_request r = {train->utts, train->frames, train->n, evals, n_evals};
  cls_train_estimate *e = &te->e;
  cls_status st = cls_trainer_estimate(trainer, &r, e);
  if (st != CLS_OK) return cli_report(command, engine, st);
  te->made = 1;
  char passes[192] = "";
  if (e->eval_batches > 0)
    snprintf(passes, sizeof passes, " + %.3f s of dev and metrics passes (%lld batches, %d timed, on the first tower)",
             e->eval_s, (long long)e->eval_batches, e->eval_timed);
  fprintf(stderr,
          "clspeech: estimate: %.3f s per epoch of training (%lld steps, %d timed from the lightest to the heaviest)%s "
          "= %.3f s per epoch, %.3f s for %d epoch%s\n",
          e->epoch_s, (long long)e->steps, e->timed, passes, e->epoch_s + e->eval_s, e->run_s, e->epochs,
          e->epochs == 1 ? "" : "s");
  for (int i = 0; i < e->n_towers; i++) {
    const cls_train_estimate_tower *t = &e->towers[i];
    const cls_device_info *d = cls_engine_device(engine, t->device);
    fprintf(stderr, "clspeech: estimate: tower %d on device %d:%d (%s): %.0f utterances, %.3f s of gradients per epoch\n",
            t->tower, d ? d->platform_index : -1, d ? d->device_index : -1, d ? d->name : "?", t->utterances,
            t->epoch_s);
  }
  return 0;
}

void train_estimate_progress(void *user, const cls_progress *p) {
  train_estimate *te = user;
  if (p->finished && !strcmp(p->phase, "Training")) {
    te->train_s += p->elapsed_s;
    te->epochs++;
  } else if (p->finished && (!strcmp(p->phase, "Validation") || !strcmp(p->phase, "Metrics"))) {
    te->eval_s += p->elapsed_s;
  }
  if (te->progress) progress_print(te->progress, p);
}

/* The estimate's error against a measured time, in percent of the measured (0 when it is 0). */
static double off(double estimate, double measured) {
  return measured > 0 ? 100.0 * (estimate - measured) / measured : 0;
}

void train_estimate_report(const train_estimate *te) {
  if (!te->made || te->epochs == 0) return;
  const double train = te->train_s / te->epochs, eval = te->eval_s / te->epochs;
  const cls_train_estimate *e = &te->e;
  char passes[128] = "";
  if (e->eval_batches > 0)
    snprintf(passes, sizeof passes, " + %.3f s of dev and metrics passes (estimate %.3f s, %+.0f%%)", eval, e->eval_s,
             off(e->eval_s, eval));
  fprintf(stderr, "clspeech: measured: %.3f s per epoch of training (estimate %.3f s, %+.0f%%)%s, the mean of %d epoch%s\n",
          train, e->epoch_s, off(e->epoch_s, train), passes, te->epochs, te->epochs == 1 ? "" : "s");
}
