/* The trainer (trainer.c) as seen from the layers above engine/train: its crew of towers, so that
 * evaluation (engine/eval) checks a request against the towers' sizes and model, and a benchmark
 * (the towers benchmark, engine/bench) drives training's step (step.h) on a trainer that
 * cls_trainer_create built and cls_trainer_load initialised. The strategies never include this
 * header: they are handed the crew. */
#ifndef CLS_TRAINER_H
#define CLS_TRAINER_H

#include "clspeech/train.h"
#include "train/crew.h"

cls_crew *cls_trainer_crew(cls_trainer *trainer);

#endif
