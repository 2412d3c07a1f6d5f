/* The trainer (trainer.c) as seen from the layers above engine/train that measure it (the towers
 * benchmark, engine/bench): its crew of towers, so that a benchmark can drive training's step
 * (step.h) on a trainer that cls_trainer_create built and cls_trainer_load initialised. The
 * strategies never include this header: they are handed the crew. */
#ifndef CLS_TRAINER_H
#define CLS_TRAINER_H

#include "clspeech/train.h"
#include "train/crew.h"

cls_crew *cls_trainer_crew(cls_trainer *trainer);

#endif
