// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/daemon/elf/keysort.h"

#include "helpers.h"

/* A record like the symbol tables': the key is not the first field, and the tie-break field
 * (rank) is compared by the callback, the original position (pos) checks stability. */
struct rec {
	uint32_t rank;
	uint64_t key;
	uint32_t pos;
};

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	return helpers_xorshift64(&rng);
}

static int by_rank(const void *a, const void *b, void *ctx)
{
	const struct rec *x = a, *y = b;

	assert_ptr_equal(ctx, &rng); /* the context reaches the callback */
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The reference order: key, then rank, then original position (a stable sort). */
static int ref_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	if (x->rank != y->rank)
		return (x->rank > y->rank) - (x->rank < y->rank);
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/* @n records, keys masked by @mask (few distinct keys: long runs of ties), sorted both ways. */
static void check(size_t n, uint64_t mask, uint32_t ranks, bool tie)
{
	struct rec *a = calloc(n ? n : 1, sizeof(*a)), *b = calloc(n ? n : 1, sizeof(*b));
	size_t i;

	assert_non_null(a);
	assert_non_null(b);
	for (i = 0; i < n; i++) {
		a[i].key = next() & mask;
		a[i].rank = tie ? (uint32_t)(next() % ranks) : 0;
		a[i].pos = (uint32_t)i;
	}
	memcpy(b, a, n * sizeof(*a));
	keysort(a, n, sizeof(*a), offsetof(struct rec, key), tie ? by_rank : NULL, &rng);
	qsort(b, n, sizeof(*b), ref_cmp);
	for (i = 0; i < n; i++) {
		assert_int_equal(a[i].key, b[i].key);
		assert_int_equal(a[i].rank, b[i].rank);
		assert_int_equal(a[i].pos, b[i].pos); /* stable: equal records keep their order */
	}
	free(a);
	free(b);
}

static void test_small_and_empty(void **state)
{
	(void)state;
	check(0, UINT64_MAX, 1, false);
	check(1, UINT64_MAX, 1, false);
	check(2, UINT64_MAX, 1, false);
	check(31, 0xff, 3, true); /* insertion sort path */
}

static void test_large_random_keys(void **state)
{
	(void)state;
	check(50000, UINT64_MAX, 1, false);	     /* every byte varies */
	check(50000, 0x1fffffULL, 4, true);	     /* a DSO's addresses: high bytes all equal */
	check(50000, 0xffffffff00000000ULL, 2, true); /* only the high bytes vary */
}

static void test_long_runs_of_ties(void **state)
{
	(void)state;
	check(20000, 0x3, 1000, true); /* runs of ~5000: past the insertion sort's size */
	check(20000, 0x3, 1, false);   /* no tie callback: stable */
	check(5000, 0, 7, true);       /* one key */
}

static void test_kernel_addresses(void **state)
{
	struct rec r[300];
	size_t i;

	(void)state;
	/* kernel text: 0xffffffff8xxxxxxx, descending input */
	for (i = 0; i < 300; i++)
		r[i] = (struct rec){ .key = 0xffffffff81000000ULL + (300 - i) * 16, .pos = (uint32_t)i };
	keysort(r, 300, sizeof(*r), offsetof(struct rec, key), NULL, NULL);
	for (i = 1; i < 300; i++)
		assert_true(r[i - 1].key < r[i].key);
	assert_int_equal(r[0].key, 0xffffffff81000000ULL + 16);
}

/* keysort_upper: the first record above a key, as a linear scan finds it */
static void test_upper(void **state)
{
	struct rec r[200];
	size_t i, j, n;

	(void)state;
	for (i = 0; i < 200; i++)
		r[i] = (struct rec){ .key = (next() % 50) * 4, .pos = (uint32_t)i };
	keysort(r, 200, sizeof(*r), offsetof(struct rec, key), NULL, NULL);
	for (n = 0; n <= 200; n += 50) {
		for (i = 0; i < 220; i++) {
			for (j = 0; j < n && r[j].key <= i; j++)
				;
			assert_int_equal(keysort_upper(r, n, sizeof(*r), offsetof(struct rec, key), i),
					 j);
		}
	}
	assert_int_equal(keysort_upper(r, 200, sizeof(*r), offsetof(struct rec, key), UINT64_MAX),
			 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_and_empty),
		cmocka_unit_test(test_large_random_keys),
		cmocka_unit_test(test_long_runs_of_ties),
		cmocka_unit_test(test_kernel_addresses),
		cmocka_unit_test(test_upper),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
