// SPDX-License-Identifier: MIT
/* workq: a worker thread and its bounded FIFO (include/ember/core/base/workq.h). */
#include "ember/core/base/workq.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct workq {
	workq_fn fn;
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void **ring;		/* max_items slots */
	size_t max_items, head, len;
	size_t urgent;		/* the first this many waiting items were pushed urgent */
	bool finishing, joined;
	pthread_t thread;
};

static void *worker_main(void *arg)
{
	struct workq *q = arg;
	void *item;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->len && !q->finishing)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->len)
			break; /* finishing, and everything ran */
		item = q->ring[q->head];
		q->head = (q->head + 1) % q->max_items;
		q->len--;
		if (q->urgent)
			q->urgent--;
		pthread_mutex_unlock(&q->lock);
		q->fn(q->ctx, item);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

struct workq *workq__new(workq_fn fn, void *ctx, size_t max_items)
{
	struct workq *q = calloc(1, sizeof(*q));
	int err;

	if (!q || !max_items)
		goto nomem;
	*q = (struct workq){ .fn = fn, .ctx = ctx, .max_items = max_items };
	q->ring = calloc(max_items, sizeof(*q->ring));
	if (!q->ring)
		goto nomem;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	err = pthread_create(&q->thread, NULL, worker_main, q);
	if (err) {
		pthread_cond_destroy(&q->cond);
		pthread_mutex_destroy(&q->lock);
		free(q->ring);
		free(q);
		errno = err;
		return NULL;
	}
	return q;
nomem:
	if (q)
		free(q->ring);
	free(q);
	errno = max_items ? ENOMEM : EINVAL;
	return NULL;
}

int workq__push(struct workq *q, void *item)
{
	int err = 0;

	pthread_mutex_lock(&q->lock);
	if (q->finishing)
		err = -EPIPE;
	else if (q->len == q->max_items)
		err = -ENOSPC;
	else
		q->ring[(q->head + q->len++) % q->max_items] = item;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return err;
}

int workq__push_urgent(struct workq *q, void *item)
{
	size_t i;
	int err = 0;

	pthread_mutex_lock(&q->lock);
	if (q->finishing) {
		err = -EPIPE;
	} else if (q->len == q->max_items) {
		err = -ENOSPC;
	} else {
		/* after the urgent ones already waiting, before the rest: move the rest up one */
		for (i = q->len; i > q->urgent; i--)
			q->ring[(q->head + i) % q->max_items] = q->ring[(q->head + i - 1) % q->max_items];
		q->ring[(q->head + q->urgent) % q->max_items] = item;
		q->len++;
		q->urgent++;
	}
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return err;
}

size_t workq__len(struct workq *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->len;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void workq__finish(struct workq *q)
{
	if (q->joined)
		return;
	pthread_mutex_lock(&q->lock);
	q->finishing = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	(void)pthread_join(q->thread, NULL);
	q->joined = true;
}

void workq__free(struct workq *q)
{
	if (!q)
		return;
	workq__finish(q);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q->ring);
	free(q);
}
