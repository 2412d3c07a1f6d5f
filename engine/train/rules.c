/* DeepSpeech's dev-loss rules (see rules.h). */
#include "train/rules.h"

cls_rule_decision cls_dev_rules(cls_rule_state *s, double dev_loss, const cls_rule_options *o) {
  cls_rule_decision d = {0, 0, 0};
  if (dev_loss > s->best_dev_loss - o->es_min_delta)
    s->epochs_without_improvement++;
  else
    s->epochs_without_improvement = 0;
  if (dev_loss < s->best_dev_loss) {
    s->best_dev_loss = dev_loss;
    d.new_best = 1;
  }
  if (o->early_stop && s->epochs_without_improvement == o->es_epochs) {
    d.early_stop = 1;
    return d; /* DeepSpeech breaks out before the plateau check */
  }
  if (o->reduce_lr_on_plateau && o->plateau_epochs > 0 && s->epochs_without_improvement > 0 &&
      s->epochs_without_improvement % o->plateau_epochs == 0)
    d.reduce_lr = 1;
  return d;
}
