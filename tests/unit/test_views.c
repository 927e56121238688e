// SPDX-License-Identifier: MIT
/* The top table, focus/ignore and the sandwich on small profiles whose answers are worked out by
 * hand: recursion counts once per stack, the outermost match splits a sandwich. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/analysis/views.h"
#include "ember/core/base/regex.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/query.h"

/* comm;main;a;b;a 3 (a recursive), comm;main;a;c 2, comm;main;x;b 4, comm 1 (no function) */
static const char *const STACKS[][2] = {
	{ "comm;main;a;b;a", "3" }, { "comm;main;a;c", "2" }, { "comm;main;x;b", "4" }, { "comm", "1" },
};

static struct profile *make(struct strtab *st)
{
	struct profile *p = profile__new(st);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < sizeof(STACKS) / sizeof(STACKS[0]); i++)
		assert_true(folded_add_stack(p, STACKS[i][0], strlen(STACKS[i][0]),
					     atof(STACKS[i][1]), 0, false, 0) >= 0);
	return p;
}

static const struct views_top_row *row(const struct views_top_row *r, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return &r[i];
	return NULL;
}

static void test_top(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = make(st);
	struct views_top_row *r;
	size_t n;

	(void)state;
	assert_int_equal(views_top(p, 1, VIEWS_SORT_SELF, &r, &n), 0);
	assert_int_equal(n, 5); /* main a b c x; not the root */
	assert_null(row(r, n, "comm"));
	assert_true(row(r, n, "a")->self == 3 && row(r, n, "a")->total == 5); /* once per stack */
	assert_true(row(r, n, "b")->self == 4 && row(r, n, "b")->total == 7);
	assert_true(row(r, n, "main")->self == 0 && row(r, n, "main")->total == 9);
	assert_string_equal(r[0].name, "b"); /* self 4, then a (3) */
	assert_string_equal(r[1].name, "a");
	free(r);
	assert_int_equal(views_top(p, 1, VIEWS_SORT_TOTAL, &r, &n), 0);
	assert_string_equal(r[0].name, "main");
	assert_string_equal(r[1].name, "b");
	free(r);
	profile__free(p);
	strtab__free(st);
}

static double total_of(const struct profile *p)
{
	return profile__total(p);
}

static void test_focus_ignore(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = make(st), *f;
	struct query_common q;
	struct query_error qe;

	(void)state;
	query_common_init(&q);
	assert_int_equal(query_common_set(&q, "focus", "^a$", 0, &qe), 1);
	f = views_filter_frames(p, &q);
	assert_non_null(f);
	assert_true(total_of(f) == 5);
	profile__free(f);
	assert_int_equal(query_common_set(&q, "ignore", "^c$", 0, &qe), 1);
	f = views_filter_frames(p, &q);
	assert_true(total_of(f) == 3);
	profile__free(f);
	assert_int_equal(query_common_set(&q, "focus", "", 0, &qe), 1); /* an empty box: none */
	f = views_filter_frames(p, &q);
	assert_true(total_of(f) == 8); /* all but comm;main;a;c */
	profile__free(f);
	assert_int_equal(query_common_set(&q, "ignore", "(", 0, &qe), -EINVAL);
	assert_string_equal(qe.param, "ignore");
	query_common_fini(&q);
	profile__free(p);
	strtab__free(st);
}

static void test_sandwich(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = make(st), *up, *down;
	struct ember_regex *re = ember_regex__new("^a$", 3, NULL, 0);
	struct sbuf sb = SBUF_INIT;
	double total;

	(void)state;
	assert_int_equal(views_sandwich(p, 1, re, &up, &down, &total), 0);
	assert_true(total == 5 && profile__total(up) == 5 && profile__total(down) == 5);
	assert_int_equal(folded_write(up, &sb), 0);
	assert_string_equal(sb.buf, "a;main;comm 5\n"); /* merged from both stacks */
	sbuf_reset(&sb);
	assert_int_equal(folded_write(down, &sb), 0);
	assert_string_equal(sb.buf, "a;b;a 3\na;c 2\n"); /* split at the outermost a */
	sbuf_fini(&sb);
	profile__free(up);
	profile__free(down);
	ember_regex__free(re);
	profile__free(p);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_focus_ignore),
		cmocka_unit_test(test_sandwich),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
