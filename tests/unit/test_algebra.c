// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cmocka 1.1.5 has no assert_double_equal */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include "ember/core/analysis/algebra.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/strtab.h"

#include "helpers.h"

static void add_text(struct profile *p, const char *stack, double c)
{
	assert_true(folded_add_stack(p, stack, strlen(stack), c, 0, false, 0) >= 0);
}

/* value of the stack named @stack in @p, 0 if absent */
static double val(const struct profile *p, const char *stack)
{
	struct strtab *st = strtab__new();
	struct profile *q = profile__new(st);
	int j;

	add_text(q, stack, 1);
	j = algebra_find(p, q, 0);
	profile__free(q);
	strtab__free(st);
	return j >= 0 ? profile__count(p, (size_t)j) : 0;
}

static struct profile *make(struct strtab *st, const char *spec)
{
	/* "a;b=3,a;c=2" */
	struct profile *p = profile__new(st);
	char *s = strdup(spec), *save = NULL, *tok, *eq;

	assert_non_null(p);
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		assert_non_null(eq);
		*eq = '\0';
		add_text(p, tok, strtod(eq + 1, NULL));
	}
	free(s);
	return p;
}

static void test_norm_distance(void **state)
{
	struct strtab *st = strtab__new(), *st2 = strtab__new();
	struct profile *a = make(st, "m;a=3,m;b=5,m=2");
	struct profile *b = make(st2, "m;a=1,m;c=4,m=2"); /* another strtab: matched by name */

	assert_near(algebra_norm1(a), 10, 0);
	/* |3-1| + |5-0| + |0-4| + |2-2| */
	assert_near(algebra_distance(a, b), 11, 0);
	assert_near(algebra_distance(b, a), 11, 0);
	assert_near(algebra_distance(a, a), 0, 0);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	strtab__free(st2);
}

static void test_add_sub_scale(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *a = make(st, "m;a=3,m;b=5");
	struct profile *b = make(st, "m;a=3,m;c=4");
	struct profile *s = algebra_add(a, b), *d = algebra_sub(a, b), *k = algebra_scale(a, 2.5);

	assert_non_null(s);
	assert_non_null(d);
	assert_non_null(k);
	assert_int_equal(profile__nr_stacks(s), 3);
	assert_near(val(s, "m;a"), 6, 0);
	assert_near(val(s, "m;c"), 4, 0);
	/* a - b: m;a cancels and leaves the support */
	assert_int_equal(profile__nr_stacks(d), 2);
	assert_near(val(d, "m;b"), 5, 0);
	assert_near(val(d, "m;c"), -4, 0);
	assert_int_equal(algebra_find(d, a, 0), -ENOENT);
	assert_near(val(k, "m;b"), 12.5, 0);
	assert_near(algebra_norm1(d), 9, 0);
	profile__free(s);
	profile__free(d);
	profile__free(k);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
}

static void test_similarity(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *a = make(st, "m;a=3,m;b=5,m;c;d=7");
	struct profile *a2 = make(st, "m;c;d=7,m;a=3,m;b=5");
	struct profile *k = algebra_scale(a, 3.7);
	struct profile *dis = make(st, "x;y=4,m;z=1");
	struct profile *half = make(st, "m;a=1,q=1"); /* {a: .5, q: .5} vs a {3/15,5/15,7/15} */
	struct profile *empty = profile__new(st), *empty2 = profile__new(st);

	assert_near(algebra_similarity(a, a), 1, 0);
	assert_near(algebra_similarity(a, a2), 1, 0);
	assert_near(algebra_similarity(a, k), 1, 1e-12);
	assert_near(algebra_similarity(k, a), 1, 1e-12);
	assert_near(algebra_similarity(a, dis), 0, 0);
	/* 1 - (|.2-.5| + 5/15 + 7/15 + .5)/2 = 1 - 1.6/2 */
	assert_near(algebra_similarity(a, half), 0.2, 1e-12);
	assert_near(algebra_similarity(empty, empty2), 1, 0);
	assert_near(algebra_similarity(a, empty), 0, 0);
	profile__free(a);
	profile__free(a2);
	profile__free(k);
	profile__free(dis);
	profile__free(half);
	profile__free(empty);
	profile__free(empty2);
	strtab__free(st);
}

/* Checks the decomposition of kb*b - ka*a: disjoint, positive, and exact. */
static void check_parts(const struct profile *a, double ka, const struct profile *b, double kb,
			const struct algebra_parts *pt)
{
	const struct profile *parts[4] = { pt->appeared, pt->disappeared, pt->grown, pt->shrunk };
	struct profile *u = algebra_add(a, b);
	size_t i, k;
	double va, vb, sum, d;
	int j, in;

	assert_non_null(u);
	/* non-negative: every stored value is > 0 (zero values are outside the support) */
	for (k = 0; k < 4; k++)
		for (i = 0; i < profile__nr_stacks(parts[k]); i++)
			assert_true(profile__count(parts[k], i) > 0);
	/* every stack of every part is in the union, so checking over the union covers them */
	for (k = 0; k < 4; k++)
		for (i = 0; i < profile__nr_stacks(parts[k]); i++)
			assert_true(algebra_find(u, parts[k], i) >= 0);
	for (i = 0; i < profile__nr_stacks(u); i++) {
		double pv[4];

		j = algebra_find(a, u, i);
		va = j >= 0 ? profile__count(a, (size_t)j) : 0;
		j = algebra_find(b, u, i);
		vb = j >= 0 ? profile__count(b, (size_t)j) : 0;
		in = 0;
		for (k = 0; k < 4; k++) {
			j = algebra_find(parts[k], u, i);
			pv[k] = j >= 0 ? profile__count(parts[k], (size_t)j) : 0;
			in += j >= 0;
		}
		assert_true(in <= 1); /* disjoint supports */
		d = kb * vb - ka * va;
		sum = pv[0] + pv[2] - pv[1] - pv[3];
		assert_true(sum == d); /* exactly */
		if (va == 0 && vb != 0)
			assert_true(pv[0] > 0);
		if (vb == 0 && va != 0)
			assert_true(pv[1] > 0);
		if (va != 0 && vb != 0)
			assert_true(pv[0] == 0 && pv[1] == 0);
	}
	profile__free(u);
}

static void test_decompose_example(void **state)
{
	/* the paper's figure 3: B grew D and C's own value, gained B; lost E and some of A */
	struct strtab *st = strtab__new();
	struct profile *a = make(st, "A=4,A;C=2,A;C;D=3,A;E=2");
	struct profile *b = make(st, "A=2,A;B=3,A;C=4,A;C;D=5");
	struct algebra_parts pt;

	assert_int_equal(algebra_decompose(a, 1, b, 1, &pt), 0);
	assert_int_equal(profile__nr_stacks(pt.appeared), 1);
	assert_near(val(pt.appeared, "A;B"), 3, 0);
	assert_int_equal(profile__nr_stacks(pt.disappeared), 1);
	assert_near(val(pt.disappeared, "A;E"), 2, 0);
	assert_int_equal(profile__nr_stacks(pt.grown), 2);
	assert_near(val(pt.grown, "A;C"), 2, 0);
	assert_near(val(pt.grown, "A;C;D"), 2, 0);
	assert_int_equal(profile__nr_stacks(pt.shrunk), 1);
	assert_near(val(pt.shrunk, "A"), 2, 0);
	check_parts(a, 1, b, 1, &pt);
	algebra_parts_fini(&pt);
	/* normalized by the norms, as the paper recommends for viewing */
	assert_int_equal(algebra_decompose(a, 1 / algebra_norm1(a), b, 1 / algebra_norm1(b), &pt),
			 0);
	check_parts(a, 1 / algebra_norm1(a), b, 1 / algebra_norm1(b), &pt);
	/* A;C: 4/14 - 2/11 > 0; A;C;D: 5/14 - 3/11 > 0; A: 2/14 - 4/11 < 0 */
	assert_near(val(pt.shrunk, "A"), 4.0 / 11 - 2.0 / 14, 1e-15);
	algebra_parts_fini(&pt);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
}

static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
	return helpers_xorshift64(&rng_state);
}

static void test_decompose_random(void **state)
{
	struct strtab *st = strtab__new(), *st2 = strtab__new();
	char name[64];
	int round, i;

	for (round = 0; round < 50; round++) {
		struct profile *a = profile__new(st), *b = profile__new(round & 1 ? st2 : st);
		struct algebra_parts pt;
		double ka = round % 3 ? 1 : 1.0 / 3, kb = round % 5 ? 1 : 0.7;

		for (i = 0; i < 60; i++) {
			snprintf(name, sizeof(name), "main;f%d;g%d", (int)(rnd() % 40),
				 (int)(rnd() % 3));
			/* fractional and integer values, some equal on both sides */
			if (rnd() % 2)
				add_text(a, name, (double)(rnd() % 50) + (rnd() % 2 ? 0.1 : 0));
			if (rnd() % 2)
				add_text(b, name, (double)(rnd() % 50) + (rnd() % 2 ? 0.3 : 0));
		}
		if (ka != 1)
			ka = 1 / algebra_norm1(a);
		assert_int_equal(algebra_decompose(a, ka, b, kb, &pt), 0);
		check_parts(a, ka, b, kb, &pt);
		/* the norms add up: ||D|| = ||appeared|| + ||grown|| + ||disappeared|| + ||shrunk|| */
		{
			struct profile *d = algebra_combine(b, kb, a, -ka);

			assert_near(algebra_norm1(d),
					    algebra_norm1(pt.appeared) + algebra_norm1(pt.grown) +
						    algebra_norm1(pt.disappeared) +
						    algebra_norm1(pt.shrunk),
					    1e-9);
			profile__free(d);
		}
		algebra_parts_fini(&pt);
		profile__free(a);
		profile__free(b);
	}
	strtab__free(st);
	strtab__free(st2);
}

static void test_decompose_errors(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *a = make(st, "m;a=3");
	struct profile *neg = make(st, "m;a=-1");
	struct algebra_parts pt = { 0 };

	assert_int_equal(algebra_decompose(a, 1, neg, 1, &pt), -EDOM);
	assert_int_equal(algebra_decompose(neg, 1, a, 1, &pt), -EDOM);
	assert_int_equal(algebra_decompose(a, 0, a, 1, &pt), -EDOM);
	assert_null(pt.appeared); /* untouched on failure */
	profile__free(a);
	profile__free(neg);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_norm_distance),
		cmocka_unit_test(test_add_sub_scale),
		cmocka_unit_test(test_similarity),
		cmocka_unit_test(test_decompose_example),
		cmocka_unit_test(test_decompose_random),
		cmocka_unit_test(test_decompose_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
