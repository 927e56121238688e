/* SPDX-License-Identifier: MIT */
/*
 * workq: one worker thread and a bounded FIFO of items it hands, one at a time and in order, to
 * a callback. The thread that pushes never waits for the work: a full queue answers -ENOSPC at
 * once (the caller counts what it could not queue).
 *
 * workq__push() from any thread; workq__finish() and workq__free() from the thread that made it.
 */
#ifndef EMBER_WORKQ_H
#define EMBER_WORKQ_H

#include <stddef.h>

/* Runs on the worker: @item is the callback's to free. */
typedef void (*workq_fn)(void *ctx, void *item);

struct workq; /* opaque */

/* Starts the worker. NULL with errno set. Free with workq__free(). */
struct workq *workq__new(workq_fn fn, void *ctx, size_t max_items);

/* Queues @item: 0, -ENOSPC (max_items waiting), -EPIPE (finishing). */
int workq__push(struct workq *q, void *item);

/* The same, but @item runs before every item pushed with workq__push() that waits, after the
 * urgent ones waiting (in order among themselves). */
int workq__push_urgent(struct workq *q, void *item);

/* Items waiting (not the one running). */
size_t workq__len(struct workq *q);

/* Lets the worker run every item queued, then stops and joins it (blocks while an item runs).
 * Later pushes answer -EPIPE. */
void workq__finish(struct workq *q);

/* Finishes if not yet; NULL is a no-op. */
void workq__free(struct workq *q);

#endif
