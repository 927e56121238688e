// SPDX-License-Identifier: MIT
/* workq: the worker runs items in order, a full queue says so at once, finish runs the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "ember/core/base/workq.h"

struct rec {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int seen[64];
	int n;
	int gate; /* items wait while 0 */
};

static void run(void *ctx, void *item)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->lock);
	while (!r->gate)
		pthread_cond_wait(&r->cond, &r->lock);
	r->seen[r->n++] = (int)(intptr_t)item;
	pthread_mutex_unlock(&r->lock);
}

static void open_gate(struct rec *r)
{
	pthread_mutex_lock(&r->lock);
	r->gate = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

static void test_order_bound_finish(void **state)
{
	struct rec r = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct workq *q = workq__new(run, &r, 4);
	int i, pushed = 0, full = 0;

	(void)state;
	assert_non_null(q);
	/* the worker holds the first item at the gate: 4 more wait, the rest are refused at once */
	for (i = 1; i <= 10; i++) {
		int e = workq__push(q, (void *)(intptr_t)i);

		if (!e)
			pushed++;
		else if (e == -ENOSPC)
			full++;
		else
			fail_msg("push: %d", e);
	}
	assert_true(pushed >= 4 && pushed <= 5); /* 5 when the worker took the first already */
	assert_int_equal(pushed + full, 10);
	assert_true(workq__len(q) <= 4);
	open_gate(&r);
	workq__finish(q); /* runs what was queued, then stops */
	assert_int_equal(r.n, pushed);
	for (i = 0; i < r.n; i++)
		assert_int_equal(r.seen[i], i + 1); /* in order */
	assert_int_equal(workq__push(q, (void *)1), -EPIPE);
	workq__free(q);
}

static void test_urgent(void **state)
{
	struct rec r = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct workq *q = workq__new(run, &r, 8);
	static const int want[] = { 1, 5, 6, 2, 3, 4 };
	int i;

	(void)state;
	assert_non_null(q);
	assert_int_equal(workq__push(q, (void *)1), 0);
	while (workq__len(q)) /* the worker holds 1 at the gate */
		sched_yield();
	for (i = 2; i <= 4; i++)
		assert_int_equal(workq__push(q, (void *)(intptr_t)i), 0);
	assert_int_equal(workq__push_urgent(q, (void *)5), 0);
	assert_int_equal(workq__push_urgent(q, (void *)6), 0); /* after 5, before 2 */
	open_gate(&r);
	workq__finish(q);
	assert_int_equal(r.n, 6);
	for (i = 0; i < 6; i++)
		assert_int_equal(r.seen[i], want[i]);
	workq__free(q);
}

static void test_bad_size(void **state)
{
	(void)state;
	assert_null(workq__new(run, NULL, 0));
	assert_int_equal(errno, EINVAL);
	workq__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_bound_finish),
		cmocka_unit_test(test_urgent),
		cmocka_unit_test(test_bad_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
