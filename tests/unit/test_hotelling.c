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

#include "ember/core/formats/folded.h"
#include "ember/core/analysis/hotelling.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void add_text(struct profile *p, const char *stack, double c)
{
	assert_true(folded_add_stack(p, stack, strlen(stack), c, 0, false, 0) >= 0);
}

/* One-stack samples: T^2 is the square of the pooled two-sample t statistic. */
static void test_one_dimension(void **state)
{
	static const double xa[] = { 10, 12, 11, 13 }, xb[] = { 15, 14, 17, 16, 18 };
	struct strtab *st = strtab__new();
	struct profile *a[4], *b[5];
	struct hotelling_result r;
	double t, sp2;
	size_t i;

	for (i = 0; i < 4; i++) {
		a[i] = profile__new(st);
		add_text(a[i], "main;work", xa[i]);
	}
	for (i = 0; i < 5; i++) {
		b[i] = profile__new(st);
		add_text(b[i], "main;work", xb[i]);
	}
	assert_int_equal(hotelling_test(a, 4, b, 5, NULL, &r), 0);
	/* means 11.5 and 16; SS 5 and 10; pooled variance 15/7 */
	sp2 = 15.0 / 7;
	t = (16 - 11.5) / sqrt(sp2 * (1.0 / 4 + 1.0 / 5));
	assert_int_equal(r.p, 1);
	assert_near(r.t2, t * t, 1e-9);
	assert_near(r.f, t * t, 1e-9); /* p = 1: F = T^2 */
	assert_near(r.df2, 7, 0);
	assert_near(r.kept[0].var, sp2, 1e-12);
	assert_near(r.kept[0].delta, 4.5, 1e-12);
	/* t(7) two-sided 5%: 2.364624; the interval is delta +- t * se */
	assert_near(sqrt(r.t2_crit), 2.364624, 1e-5);
	assert_true(r.kept[0].significant);
	assert_true(r.p_value > 0.001 && r.p_value < 0.01); /* t = 4.58 on 7 df */
	hotelling_result_fini(&r);
	for (i = 0; i < 4; i++)
		profile__free(a[i]);
	for (i = 0; i < 5; i++)
		profile__free(b[i]);
	strtab__free(st);
}

/* Constant and collinear stacks are passed over; rare stacks rank last. */
static void test_selection(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p[12];
	struct hotelling_result r;
	struct hotelling_opts o = { .max_stacks = 10 };
	size_t i;

	for (i = 0; i < 12; i++) {
		double x = (double)((i * 7) % 5), y = (double)((i * 3) % 4);

		p[i] = profile__new(st);
		add_text(p[i], "m;const", 9);
		add_text(p[i], "m;x", 10 + x);
		add_text(p[i], "m;y", 20 + y + (i >= 6 ? 5 : 0));
		add_text(p[i], "m;x;y", 30 + x + y); /* x + y: collinear */
		if (i % 4 == 0)
			add_text(p[i], "m;rare", 1 + (double)i);
	}
	assert_int_equal(hotelling_test(p, 6, p + 6, 6, &o, &r), 0);
	assert_int_equal(r.nr_stacks, 5);
	assert_int_equal(r.skipped_constant, 1);
	assert_int_equal(r.skipped_collinear, 1);
	assert_int_equal(r.p, 3);
	assert_int_equal(r.kept[2].df, 3); /* m;rare last */
	for (i = 0; i < r.p; i++) {
		size_t n;
		const uint32_t *f = profile__stack(r.all, r.kept[i].stack, &n);

		if (n == 2 && !strcmp(strtab__str(st, f[1]), "y")) {
			assert_near(r.kept[i].delta, 5, 1e-9);
			assert_true(r.kept[i].significant);
		}
	}
	{
		struct profile *red = hotelling_reduced_diff(&r);
		size_t changed = 0;

		assert_non_null(red);
		for (i = 0; i < profile__nr_stacks(red); i++)
			changed += profile__count(red, i) != profile__count2(red, i);
		assert_int_equal(changed, r.nr_significant);
		profile__free(red);
	}
	hotelling_result_fini(&r);
	for (i = 0; i < 12; i++)
		profile__free(p[i]);
	strtab__free(st);
}

static void test_errors(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p[4];
	struct hotelling_result r;
	struct hotelling_opts bad = { .alpha = 1.5 };
	size_t i;

	for (i = 0; i < 4; i++) {
		p[i] = profile__new(st);
		add_text(p[i], "m;same", 3);
	}
	assert_int_equal(hotelling_test(p, 1, p + 1, 3, NULL, &r), -EINVAL);
	assert_int_equal(hotelling_test(p, 2, p + 2, 2, &bad, &r), -EINVAL);
	assert_int_equal(hotelling_test(p, 2, p + 2, 2, NULL, &r), -ENODATA);
	assert_null(r.all);
	for (i = 0; i < 4; i++)
		profile__free(p[i]);
	strtab__free(st);
}

/* the one verdict the page and /api/v1/compare give */
static void test_verdict(void **state)
{
	struct hotelling_result r = { .alpha = 0.05, .p_value = 0.174, .t2 = 1, .t2_crit = 2 };
	struct sbuf sb = SBUF_INIT;

	(void)state;
	hotelling_verdict(&r, &sb);
	assert_string_equal(sb.buf, "no significant difference (p-value 0.174, alpha 0.05)");
	sbuf_reset(&sb);
	r.t2 = 3;
	r.p_value = 0.01;
	hotelling_verdict(&r, &sb);
	assert_string_equal(sb.buf, "the ranges differ as a whole (p-value 0.01, alpha 0.05), but no "
				    "single stack's change is significant on its own");
	sbuf_reset(&sb);
	r.nr_significant = 2;
	hotelling_verdict(&r, &sb);
	assert_string_equal(sb.buf, "the ranges differ (p-value 0.01, alpha 0.05): 2 stacks changed "
				    "significantly");
	sbuf_fini(&sb);
}

/*
 * Exact changes: a stack with one count in every A profile and another in every B profile has
 * no variance, but is the most certain change there is. It was passed over as "zero variance"
 * and the regress experiment's main;startup (100 samples in every regressed run, 0 in every
 * baseline run) went unreported (fresh-clone CI of stop 32). Kept after the tested stacks,
 * significant, H0 rejected; with nothing else varying there is no T^2 but still a result.
 */
static void test_exact_change(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p[12];
	struct hotelling_result r;
	struct sbuf sb = SBUF_INIT;
	size_t i, n;
	const uint32_t *f;

	(void)state;
	for (i = 0; i < 12; i++) {
		p[i] = profile__new(st);
		add_text(p[i], "m;same", 7);				/* constant: passed over */
		add_text(p[i], "m;noise", (double)(i % 3));		/* varies, no change */
		if (i >= 6)
			add_text(p[i], "m;startup", 100);		/* exact change */
	}
	assert_int_equal(hotelling_test(p, 6, p + 6, 6, NULL, &r), 0);
	assert_int_equal(r.skipped_constant, 1);
	assert_int_equal(r.p, 1);
	assert_int_equal(r.nr_exact, 1);
	assert_int_equal(r.nr_kept, 2);
	assert_false(r.kept[0].exact);
	assert_false(r.kept[0].significant);
	assert_true(r.kept[1].exact);
	assert_true(r.kept[1].significant);
	assert_near(r.kept[1].delta, 100, 0);
	assert_near(r.kept[1].ci_lo, 100, 0);
	f = profile__stack(r.all, r.kept[1].stack, &n);
	assert_int_equal(n, 2);
	assert_string_equal(strtab__str(st, f[1]), "startup");
	assert_int_equal(r.nr_significant, 1);
	assert_false(r.t2 > r.t2_crit); /* the noise alone is no difference */
	assert_true(hotelling_rejects(&r));
	assert_near(r.p_value, 0, 0);
	hotelling_verdict(&r, &sb);
	assert_string_equal(sb.buf, "the ranges differ (p-value 0, alpha 0.05): 1 stack changed "
				    "significantly");
	sbuf_reset(&sb);
	assert_int_equal(hotelling_write_json(&r, &sb), 0);
	assert_non_null(strstr(sb.buf, "\"nr_exact\":1,"));
	assert_non_null(strstr(sb.buf, "\"reject\":true"));
	assert_non_null(strstr(sb.buf, "\"stack\":\"m;startup\""));
	assert_non_null(strstr(sb.buf, "\"exact\":true,\"significant\":true}"));
	{
		struct profile *red = hotelling_reduced_diff(&r);
		size_t changed = 0;

		assert_non_null(red);
		for (i = 0; i < profile__nr_stacks(red); i++)
			changed += profile__count(red, i) != profile__count2(red, i);
		assert_int_equal(changed, 1);
		profile__free(red);
	}
	hotelling_result_fini(&r);
	for (i = 0; i < 12; i++)
		profile__free(p[i]);

	/* nothing varies at all: no T^2, the exact change still reported */
	for (i = 0; i < 4; i++) {
		p[i] = profile__new(st);
		add_text(p[i], "m;a", i < 2 ? 200 : 150);
	}
	assert_int_equal(hotelling_test(p, 2, p + 2, 2, NULL, &r), 0);
	assert_int_equal(r.p, 0);
	assert_int_equal(r.nr_kept, 1);
	assert_true(hotelling_rejects(&r));
	assert_near(r.kept[0].delta, -50, 0);
	sbuf_reset(&sb);
	assert_int_equal(hotelling_write_json(&r, &sb), 0);
	assert_non_null(strstr(sb.buf, "\"t2\":null,"));
	hotelling_result_fini(&r);
	for (i = 0; i < 4; i++)
		profile__free(p[i]);
	sbuf_fini(&sb);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_dimension),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_exact_change),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
