// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ember/core/base/lineread.h"
#include "ember/core/base/parse.h"

/* A parser of lines "ok", "bad" (malformed at column 2), "oom" (an error) and blank lines. */
static int parse(const char *line, size_t len, struct parse_error *perr, void *ctx)
{
	unsigned int *taken = ctx;

	if (!len || (len == 2 && !memcmp(line, "ok", 2))) {
		*taken += len != 0;
		return 0;
	}
	if (len == 3 && !memcmp(line, "oom", 3))
		return -ENOMEM;
	perr->col = 2;
	perr->reason = "bad line";
	return -EINVAL;
}

struct skips {
	unsigned int n;
	unsigned long first_line;
	const char *first_reason;
};

static void on_skip(const char *name, const struct parse_error *err, void *ctx)
{
	struct skips *sk = ctx;

	assert_string_equal(name, "t");
	if (!sk->n++) {
		sk->first_line = err->line;
		sk->first_reason = err->reason;
	}
}

static const struct {
	const char *in;
	bool strict;
	int ret;
	unsigned int taken;
	unsigned long lines, skipped, err_line; /* err_line: the first skip, or the strict error */
	const char *reason;
} cases[] = {
	{ "ok\n\nok\n", false, 0, 2, 3, 0, 0, NULL },
	{ "ok\nbad\nok\nbad", false, 0, 2, 4, 2, 2, "bad line" },
	{ "ok\nbad\nok\n", true, -EINVAL, 1, 2, 1, 2, "bad line" },
	{ "ok\noom\nok\n", false, -ENOMEM, 1, 2, 0, 0, NULL },		/* errors end the read */
	{ "ok\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok\n", false, 0, 2, 2, 1, 2,
	  "line too long" },						/* not given to @fn */
	{ "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nok\n", true, -EINVAL, 0, 0, 1, 1,
	  "line too long" },
};

static void test_parse_lines(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lineread *lr = lineread__new_mem(cases[i].in, strlen(cases[i].in), 16);
		unsigned long lines = 0, skipped = 0;
		struct skips sk = { 0 };
		struct lineread_parse_opts o = { .strict = cases[i].strict, .on_skip = on_skip,
						 .on_skip_ctx = &sk, .name = "t", .lines = &lines,
						 .skipped = &skipped };
		struct parse_error perr = { 0 };
		unsigned int taken = 0;

		assert_non_null(lr);
		assert_int_equal(lineread__parse_lines(lr, &o, parse, &taken, &perr), cases[i].ret);
		assert_int_equal(taken, cases[i].taken);
		assert_int_equal(lines, cases[i].lines);
		assert_int_equal(skipped, cases[i].skipped);
		if (cases[i].strict && cases[i].ret == -EINVAL) {
			assert_int_equal(sk.n, 0); /* the error is returned, not reported */
			assert_int_equal(perr.line, cases[i].err_line);
			assert_string_equal(perr.reason, cases[i].reason);
		} else {
			assert_int_equal(sk.n, cases[i].skipped);
			if (sk.n) {
				assert_int_equal(sk.first_line, cases[i].err_line);
				assert_string_equal(sk.first_reason, cases[i].reason);
			}
			assert_int_equal(perr.line, 0); /* untouched */
		}
		lineread__free(lr);
	}
}

static void test_parse_lines_no_counters(void **state)
{
	static const char in[] = "ok\nbad\n";
	struct lineread *lr = lineread__new_mem(in, sizeof(in) - 1, 0);
	struct lineread_parse_opts o = { 0 };
	unsigned int taken = 0;

	(void)state;
	assert_int_equal(lineread__parse_lines(lr, &o, parse, &taken, NULL), 0);
	assert_int_equal(taken, 1);
	lineread__free(lr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lines),
		cmocka_unit_test(test_parse_lines_no_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
