// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cmocka 1.1.5 has no assert_double_equal */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

#include "ember/core/render/diff.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void add_text(struct profile *p, const char *stack, double c)
{
	assert_true(folded_add_stack(p, stack, strlen(stack), c, 0, false, 0) >= 0);
}

static char *render(const struct profile *d)
{
	struct sbuf sb = SBUF_INIT;

	assert_int_equal(diff_write(d, &sb), 0);
	return sbuf_detach(&sb, NULL);
}

static void test_columns(void **state)
{
	struct strtab *st = strtab__new(), *st2 = strtab__new();
	struct profile *a = profile__new(st), *b = profile__new(st2); /* different strtabs */
	struct profile *d;
	char *s;

	add_text(a, "m;x", 3);
	add_text(a, "m;gone", 1);
	add_text(a, "m;zero", 0);
	add_text(b, "m;x", 4);
	add_text(b, "m;new", 2.5);
	d = diff_profiles(a, b, NULL);
	assert_non_null(d);
	assert_true(profile__has_count2(d));
	s = render(d);
	/* sorted by stack; zero rows kept, as difffolded prints them */
	assert_string_equal(s, "m;gone 1 0\nm;new 0 2.5\nm;x 3 4\nm;zero 0 0\n");
	free(s);
	assert_near(diff_elided_share(d), 0.25, 0);
	{
		struct profile *e = diff_elided(d);

		assert_non_null(e);
		assert_int_equal(profile__nr_stacks(e), 1);
		assert_near(profile__total(e), 1, 0);
		profile__free(e);
	}
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	strtab__free(st2);
}

static void test_normalize_truncates(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *a = profile__new(st), *b = profile__new(st), *d;
	struct diff_opts o = { .normalize = true };
	char *s;

	add_text(a, "p", 7);
	add_text(a, "q", 2); /* total A 9 */
	add_text(b, "p", 10); /* total B 10 */
	d = diff_profiles(a, b, &o);
	assert_non_null(d);
	s = render(d);
	/* int(7*10/9) = int(7.78) = 7, int(2*10/9) = 2 */
	assert_string_equal(s, "p 7 10\nq 2 0\n");
	free(s);
	profile__free(d);
	profile__free(b);
	/* equal totals: untouched, fractions kept */
	b = profile__new(st);
	add_text(b, "p", 9);
	d = diff_profiles(a, b, &o);
	s = render(d);
	assert_string_equal(s, "p 7 9\nq 2 0\n");
	free(s);
	profile__free(d);
	profile__free(a);
	/* an empty A against a non-empty B: perl dies dividing by zero */
	a = profile__new(st);
	assert_null(diff_profiles(a, b, &o));
	assert_int_equal(errno, EDOM);
	d = diff_profiles(a, b, NULL);
	assert_non_null(d);
	assert_near(diff_elided_share(d), 0, 0);
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
}

static void test_perl_numbers(void **state)
{
	static const struct { double v; const char *s; } cases[] = {
		{ 0, "0" },
		{ 42, "42" },
		{ 0.1 + 0.2, "0.3" },			/* perl's %.15g, not the shortest round trip */
		{ 2.75, "2.75" },
		{ 1e15, "1000000000000000" },		/* an IV in perl */
		{ 123456789012.5, "123456789012.5" },
		{ 1.0 / 3, "0.333333333333333" },
		{ 0.00001, "1e-05" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sbuf sb = SBUF_INIT;

		diff_format_number(&sb, cases[i].v);
		assert_string_equal(sb.buf, cases[i].s);
		sbuf_fini(&sb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_normalize_truncates),
		cmocka_unit_test(test_perl_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
