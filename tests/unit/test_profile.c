// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

struct fixture {
	struct strtab *st;
	struct profile *p;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->st = strtab__new();
	f->p = profile__new(f->st);
	*state = f;
	return f->p ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	profile__free(f->p);
	strtab__free(f->st);
	free(f);
	return 0;
}

static void add_text(struct profile *p, const char *stack, double c)
{
	assert_true(folded_add_stack(p, stack, strlen(stack), c, 0, false, 0) >= 0);
}

static void test_add_sums(void **state)
{
	struct fixture *f = *state;
	uint32_t s1[] = { 0, 1, 2 }, s2[] = { 0, 1 };
	size_t depth;
	int a, b, c;

	a = profile__add(f->p, s1, 3, 5);
	b = profile__add(f->p, s2, 2, 1);
	c = profile__add(f->p, s1, 3, 2.5);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 0);
	assert_int_equal(profile__nr_stacks(f->p), 2);
	assert_true(profile__count(f->p, 0) == 7.5);
	assert_true(profile__total(f->p) == 8.5);
	assert_int_equal(profile__stack(f->p, 0, &depth)[2], 2);
	assert_int_equal(depth, 3);
	assert_int_equal(profile__find(f->p, s2, 2), 1);
	assert_int_equal(profile__find(f->p, s2, 1), -ENOENT);
	assert_int_equal(profile__max_depth(f->p), 3);
	assert_false(profile__has_count2(f->p));
}

static void test_many_stacks(void **state)
{
	struct fixture *f = *state;
	uint32_t s[4];
	uint32_t i;

	for (i = 0; i < 100000; i++) {
		s[0] = i % 7, s[1] = i, s[2] = i * 3, s[3] = 9;
		assert_int_equal(profile__add(f->p, s, 4, 1), (int)i);
	}
	for (i = 0; i < 100000; i += 997) {
		s[0] = i % 7, s[1] = i, s[2] = i * 3, s[3] = 9;
		assert_int_equal(profile__add(f->p, s, 4, 1), (int)i);
	}
	assert_int_equal(profile__nr_stacks(f->p), 100000);
	assert_true(profile__total(f->p) == 100000 + 101);
}

/* The sort order is that of the joined text, byte by byte, as `sort` and flamegraph.pl see it. */
static void test_sorted_like_joined_text(void **state)
{
	struct fixture *f = *state;
	static const char *stacks[] = {
		"a;b", "a b;c", "a", "a;b;c", "ab", "a;", "b", "a;a", "a\xff", "",
	};
	static const char *want[] = {
		"", "a", "a b;c", "a;a", "a;b", "a;b;c", "ab", "a\xff", "b",
	};
	struct sbuf sb = SBUF_INIT;
	size_t *idx, i;

	for (i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		add_text(f->p, stacks[i], 1);
	/* "a;" is "a" (trailing empty frames dropped) */
	assert_int_equal(profile__nr_stacks(f->p), 9);
	idx = profile__sorted(f->p);
	for (i = 0; i < 9; i++) {
		sbuf_reset(&sb);
		profile__stack_text(f->p, idx[i], &sb);
		assert_string_equal(sb.buf ? sb.buf : "", want[i]);
	}
	free(idx);
	sbuf_fini(&sb);
}

static bool keep_main(const struct profile *p, size_t idx, void *ctx)
{
	size_t depth;
	const uint32_t *fr = profile__stack(p, idx, &depth);

	return depth && !strcmp(strtab__str(profile__strtab(p), fr[0]), ctx);
}

static void test_merge_and_filter(void **state)
{
	struct fixture *f = *state;
	struct strtab *st2 = strtab__new();
	struct profile *q = profile__new(st2), *r;

	add_text(f->p, "main;a", 2);
	add_text(f->p, "other;b", 1);
	add_text(q, "zzz;first", 1); /* different ids in the other strtab */
	add_text(q, "main;a", 3);
	assert_int_equal(profile__merge(f->p, q, 2.0), 0);
	assert_int_equal(profile__nr_stacks(f->p), 3);
	assert_true(profile__total(f->p) == 3 + 8);
	assert_int_equal(profile__merge(f->p, f->p, 1), -EINVAL);
	r = profile__filter(f->p, keep_main, "main");
	assert_non_null(r);
	assert_int_equal(profile__nr_stacks(r), 1);
	assert_true(profile__total(r) == 8);
	profile__free(r);
	profile__free(q);
	strtab__free(st2);
}

static void test_two_columns(void **state)
{
	struct fixture *f = *state;
	uint32_t s[] = { 1 };

	assert_int_equal(profile__add2(f->p, s, 1, 3, 5), 0);
	assert_int_equal(profile__add2(f->p, s, 1, 1, 0), 0);
	assert_true(profile__has_count2(f->p));
	assert_true(profile__count(f->p, 0) == 4 && profile__count2(f->p, 0) == 5);
	assert_true(profile__total2(f->p) == 5);
	profile__set_counts(f->p, 0, 1, 1);
	assert_true(profile__total(f->p) == 1 && profile__total2(f->p) == 1);
}

static bool keep_all(const struct profile *p, size_t idx, void *ctx)
{
	return true;
}

/* Integer counts are exact up to 2^64-1 (a double rounds them past 2^53), and a sum past it is
 * refused, not wrapped or rounded. */
static void test_exact_counts(void **state)
{
	struct fixture *f = *state;
	uint32_t s1[] = { 0, 1 }, s2[] = { 2 };
	struct profile *q;
	uint64_t c1, c2, t;

	assert_int_equal(profile__add_u64(f->p, s1, 2, 9007199254740993ull), 0); /* 2^53 + 1 */
	assert_int_equal(profile__add_u64(f->p, s1, 2, 1), 0);
	assert_true(profile__count_exact(f->p, 0, &c1, &c2));
	assert_true(c1 == 9007199254740994ull && c2 == 0);
	assert_int_equal(profile__add_u64(f->p, s2, 1, UINT64_MAX - 1), 1);
	assert_int_equal(profile__add_u64(f->p, s2, 1, 1), 1);
	assert_true(profile__count_exact(f->p, 1, &c1, &c2) && c1 == UINT64_MAX);
	assert_int_equal(profile__add_u64(f->p, s2, 1, 1), -ERANGE); /* nothing added */
	assert_true(profile__count_exact(f->p, 1, &c1, &c2) && c1 == UINT64_MAX);
	/* the total passed 2^64-1: no exact total, a double one */
	assert_false(profile__total_exact(f->p, &t));
	assert_true(profile__total(f->p) > 1.8e19);

	/* filter and merge (scale 1) copy exactly; a merge that would overflow says so */
	q = profile__filter(f->p, keep_all, NULL);
	assert_non_null(q);
	assert_true(profile__count_exact(q, 0, &c1, &c2) && c1 == 9007199254740994ull);
	assert_int_equal(profile__merge(q, f->p, 1), -ERANGE);
	profile__free(q);
	q = profile__new(f->st);
	assert_int_equal(profile__merge(q, f->p, 1), 0);
	assert_true(profile__count_exact(q, 1, &c1, &c2) && c1 == UINT64_MAX);
	profile__free(q);

	/* a fractional part: the double, not the integer */
	assert_int_equal(profile__add(f->p, s1, 2, 0.5), 0);
	assert_false(profile__count_exact(f->p, 0, &c1, &c2));
	assert_true(profile__count(f->p, 0) == 9007199254740994.0 + 0.5);
	/* integral doubles below 2^64 are exact too; the two columns each */
	assert_int_equal(profile__add2_u64(f->p, s2, 1, 0, 1ull << 60), 1);
	assert_true(profile__has_count2(f->p));
	assert_true(profile__count_exact(f->p, 1, &c1, &c2) && c2 == 1ull << 60);
}

/* A table of names charged to a counter (strtab__charge_to): it and the profiles made on it add
 * what they hold as they grow, and take it off when freed; the counter ends where it began. */
static void test_charged_memory(void **state)
{
	uint64_t counter = 7; /* others' charges stay */
	struct strtab *st = strtab__new();
	struct profile *p;
	uint32_t frames[3];
	char name[32];
	int i, j;

	(void)state;
	assert_non_null(st);
	strtab__charge_to(st, &counter);
	assert_int_equal(counter, 7 + strtab__mem_bytes(st));
	p = profile__new(st);
	assert_non_null(p);
	for (i = 0; i < 5000; i++) {
		for (j = 0; j < 3; j++) {
			snprintf(name, sizeof(name), "f%d_%d", i, j);
			frames[j] = (uint32_t)strtab__intern(st, name, strlen(name));
		}
		assert_true(profile__add(p, frames, 3, 1) >= 0);
	}
	assert_int_equal(counter, 7 + strtab__mem_bytes(st) + profile__mem_bytes(p));
	assert_true(counter > 7 + 5000 * 3 * 4);
	profile__free(p);
	assert_int_equal(counter, 7 + strtab__mem_bytes(st));
	strtab__free(st);
	assert_int_equal(counter, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_sums, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sorted_like_joined_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_and_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_columns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exact_counts, setup, teardown),
		cmocka_unit_test(test_charged_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
