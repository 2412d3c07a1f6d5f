/* DeepSpeech 0.9's end-of-epoch rules on the dev loss, as a pure function so that they can be
 * tested on scripted loss sequences: a new best is any strictly lower loss; "no improvement" means
 * not more than es_min_delta below the best; early stop when the count of consecutive epochs without
 * improvement equals es_epochs; reduce-on-plateau when that count is a positive multiple of
 * plateau_epochs (the count is not reset by a reduction). */
#ifndef CLS_RULES_H
#define CLS_RULES_H

typedef struct cls_rule_options {
  int early_stop, es_epochs;
  double es_min_delta;
  int reduce_lr_on_plateau, plateau_epochs;
} cls_rule_options;

typedef struct cls_rule_state {
  double best_dev_loss;            /* +inf at the start */
  int epochs_without_improvement;
} cls_rule_state;

typedef struct cls_rule_decision {
  int new_best;     /* save best_dev */
  int early_stop;   /* stop training */
  int reduce_lr;    /* reload best_dev, multiply the learning rate by plateau_reduction */
} cls_rule_decision;

/* Applies one epoch's dev loss to the state and says what to do. */
cls_rule_decision cls_dev_rules(cls_rule_state *state, double dev_loss, const cls_rule_options *options);

#endif
