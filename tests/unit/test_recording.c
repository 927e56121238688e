// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/model/recording.h"

struct seen {
	char out[1024];
	int n;
};

static int collect(const struct rec_sample *s, void *ctx)
{
	struct seen *w = ctx;
	size_t l = strlen(w->out);

	snprintf(w->out + l, sizeof(w->out) - l, "[%lld %d/%d %s %.*s %g #%u]", (long long)s->time_ns,
		 s->pid, s->tid, s->comm, (int)s->stack_len, s->stack, s->count, s->stack_id);
	w->n++;
	return 0;
}

static int stop_at_two(const struct rec_sample *s, void *ctx)
{
	int *n = ctx;

	(void)s;
	return ++*n == 2 ? -ECANCELED : 0;
}

static void test_add_freeze_query(void **state)
{
	struct recording *r = recording__new(0);
	struct seen w = { .out = "" };
	int64_t first, last;
	int n = 0;

	assert_non_null(r);
	assert_int_equal(recording__bounds(r, &first, &last), -ENODATA);
	/* out of order; the same stack twice shares an id */
	assert_int_equal(recording__add(r, 30, 1, 2, "a", "a;x;y", 5, 1), 0);
	assert_int_equal(recording__add(r, 10, 3, 3, "b", "b;z", 3, 2), 0);
	assert_int_equal(recording__add(r, 20, 1, 2, "a", "a;x;y;IGNORED", 5, 4), 0);
	assert_int_equal(recording__add(r, 40, -1, -1, NULL, "", 0, 1), 0);
	assert_int_equal(recording__for_each(r, 0, 100, collect, &w), -EBUSY);
	assert_int_equal(recording__freeze(r), 0);
	assert_int_equal(recording__add(r, 50, 1, 1, "a", "a", 1, 1), -EBUSY);
	assert_int_equal(recording__nr_samples(r), 4);
	assert_int_equal(recording__nr_stacks(r), 3);
	assert_true(recording__total(r) == 8);
	assert_int_equal(recording__bounds(r, &first, &last), 0);
	assert_int_equal(first, 10);
	assert_int_equal(last, 40);

	assert_int_equal(recording__for_each(r, 0, 100, collect, &w), 0);
	assert_string_equal(w.out, "[10 3/3 b b;z 2 #1][20 1/2 a a;x;y 4 #0][30 1/2 a a;x;y 1 #0]"
				   "[40 -1/-1   1 #2]");
	/* half-open ranges */
	w.out[0] = '\0';
	assert_int_equal(recording__for_each(r, 20, 40, collect, &w), 0);
	assert_string_equal(w.out, "[20 1/2 a a;x;y 4 #0][30 1/2 a a;x;y 1 #0]");
	w.out[0] = '\0';
	assert_int_equal(recording__for_each(r, 41, 1000, collect, &w), 0);
	assert_string_equal(w.out, "");
	/* a callback's error stops the walk and comes back */
	assert_int_equal(recording__for_each(r, 0, 100, stop_at_two, &n), -ECANCELED);
	assert_int_equal(n, 2);
	recording__free(r);
	recording__free(NULL);
}

static void test_memory_bound(void **state)
{
	struct recording *r = recording__new(1 << 20);
	char stack[256];
	int i, err = 0;

	assert_non_null(r);
	for (i = 0; i < 100000 && !err; i++) {
		snprintf(stack, sizeof(stack), "comm;frame_%d;leaf_%d", i, i);
		err = recording__add(r, i, 1, 1, "comm", stack, strlen(stack), 1);
	}
	assert_int_equal(err, -E2BIG);
	/* approximate: one string-table chunk (64 KiB) of slack per table */
	assert_true(recording__mem_bytes(r) <= (1 << 20) + (160 << 10));
	assert_true(recording__mem_bytes(r) >= (1 << 19));
	assert_true(recording__nr_samples(r) > 10);
	recording__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_freeze_query),
		cmocka_unit_test(test_memory_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
