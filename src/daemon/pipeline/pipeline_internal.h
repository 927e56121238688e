/* SPDX-License-Identifier: MIT */
/* Between the drain thread (drain.c) and the worker (worker.c). */
#ifndef EMBER_PIPELINE_INTERNAL_H
#define EMBER_PIPELINE_INTERNAL_H

#include "ember/core/base/clock.h"
#include "ember/daemon/pipeline/emberd.h"

#define NSEC NSEC_PER_SEC

enum work_kind { W_BATCH, W_TICK, W_UNWIND, W_DUMP, W_FILTER, W_FINAL };

/* Queues work for the worker; a full queue drops it, counted (a batch's samples as lost). */
int pipeline_push_work(struct emberd *d, enum work_kind kind, struct sampler_batch *b);
/* Counters for /api/v1/stats: the sampler's now, the worker's as of its last tick. Either
 * thread. */
void pipeline_publish(struct emberd *d);

#endif
