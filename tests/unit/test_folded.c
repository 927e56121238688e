// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

/* flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/, applied once or twice */
static const struct {
	const char *line;
	enum folded_columns cols;
	int ret;
	const char *stack;
	int ncounts;
	double c1, c2;
} cases[] = {
	{ "main;foo;bar 3", FOLDED_COLUMNS_AUTO, 1, "main;foo;bar", 1, 3, 0 },
	{ "main;foo;bar", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },	/* no count */
	{ "bar 18446744073709551615", FOLDED_COLUMNS_AUTO, 1, "bar", 1, 18446744073709551615.0, 0 },
	{ "a;b 2.5", FOLDED_COLUMNS_AUTO, 1, "a;b", 1, 2.5, 0 },
	{ "a;b 2.", FOLDED_COLUMNS_AUTO, 1, "a;b", 1, 2, 0 },
	{ "a;b .5", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },		/* digits before '.' */
	{ "a;b -5", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },		/* no sign */
	{ "a;b 1e3", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },		/* no exponent */
	{ "a;b 3 4", FOLDED_COLUMNS_AUTO, 1, "a;b", 2, 3, 4 },		/* difffolded */
	{ "a;b 3 4", FOLDED_COLUMNS_ONE, 1, "a;b 3", 1, 4, 0 },
	{ "a;b 4", FOLDED_COLUMNS_TWO, -EINVAL, NULL, 0, 0, 0 },
	{ "a;b\t7\r", FOLDED_COLUMNS_AUTO, 1, "a;b", 1, 7, 0 },		/* tab, CRLF */
	{ "a b;c d 9", FOLDED_COLUMNS_AUTO, 1, "a b;c d", 1, 9, 0 },	/* spaces in frames */
	{ "a  5", FOLDED_COLUMNS_AUTO, 1, "a ", 1, 5, 0 },		/* only the last space goes */
	{ "5", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },
	{ " 5", FOLDED_COLUMNS_AUTO, 1, "", 1, 5, 0 },			/* the empty stack */
	{ "", FOLDED_COLUMNS_AUTO, 0, NULL, 0, 0, 0 },
	{ "  \r", FOLDED_COLUMNS_AUTO, 0, NULL, 0, 0, 0 },
	{ "caf\xc3\xa9;\xff\xfe 1", FOLDED_COLUMNS_AUTO, 1, "caf\xc3\xa9;\xff\xfe", 1, 1, 0 },
	{ "x;y 12x", FOLDED_COLUMNS_AUTO, -EINVAL, NULL, 0, 0, 0 },
};

static void test_parse_line(void **state)
{
	struct parse_error err;
	struct folded_line fl;
	size_t i;
	int r;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err = (struct parse_error){ 0 };
		r = folded_parse_line(cases[i].line, strlen(cases[i].line), cases[i].cols, &fl, &err);
		assert_int_equal(r, cases[i].ret);
		if (r < 0) {
			assert_non_null(err.reason);
			continue;
		}
		if (r == 0)
			continue;
		assert_int_equal(fl.stack_len, strlen(cases[i].stack));
		assert_memory_equal(fl.stack, cases[i].stack, fl.stack_len);
		assert_int_equal(fl.ncounts, cases[i].ncounts);
		assert_true(fl.count == cases[i].c1);
		assert_true(fl.ncounts == 1 || fl.count2 == cases[i].c2);
	}
}

struct skips {
	int n;
	unsigned long lines[8];
};

static void on_skip(const char *name, const struct parse_error *err, void *ctx)
{
	struct skips *sk = ctx;

	if (sk->n < 8)
		sk->lines[sk->n] = err->line;
	sk->n++;
}

static char *roundtrip(const char *in, struct folded_read_opts *opts, struct folded_stats *stats,
		       int *ret)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct lineread *lr = lineread__new_mem(in, strlen(in), 0);
	struct sbuf sb = SBUF_INIT;
	char *out;

	*ret = folded_read(lr, p, opts, stats, NULL);
	assert_int_equal(folded_write(p, &sb), 0);
	out = sbuf_detach(&sb, NULL);
	lineread__free(lr);
	profile__free(p);
	strtab__free(st);
	return out;
}

static void test_read_merges_sorts_and_skips(void **state)
{
	const char *in = "b;c 1\n"
			 "a;b 2\r\n"
			 "\n"
			 "garbage line\n"
			 "a;b 3\n"
			 "a;b;c 0.5\n"
			 "no count;\n"
			 "b;c 1"; /* no final newline */
	struct skips sk = { 0 };
	struct folded_read_opts opts = { .on_skip = on_skip, .on_skip_ctx = &sk };
	struct folded_stats stats = { 0 };
	char *out;
	int r;

	out = roundtrip(in, &opts, &stats, &r);
	assert_int_equal(r, 0);
	assert_string_equal(out, "a;b 5\na;b;c 0.5\nb;c 2\n");
	assert_int_equal(stats.lines, 8);
	assert_int_equal(stats.stacks, 5);
	assert_int_equal(stats.skipped, 2);
	assert_true(stats.total == 7.5);
	assert_int_equal(sk.n, 2);
	assert_int_equal(sk.lines[0], 4);
	assert_int_equal(sk.lines[1], 7);
	free(out);
}

static void test_strict(void **state)
{
	struct parse_error perr = { 0 };
	struct folded_read_opts opts = { .strict = true };
	const char *in = "a 1\nb 2\nbad\nc 3\n";
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct lineread *lr = lineread__new_mem(in, strlen(in), 0);

	assert_int_equal(folded_read(lr, p, &opts, NULL, &perr), -EINVAL);
	assert_int_equal(perr.line, 3);
	assert_non_null(perr.reason);
	lineread__free(lr);
	profile__free(p);
	strtab__free(st);
}

static void test_two_columns_and_strip_hex(void **state)
{
	struct folded_read_opts opts = { .rewrite = folded_strip_hex };
	char *out;
	int r;

	out = roundtrip("f+0x1a;g+0xFF 1 2\nf+0x2b;g+0x0 3 0\nx0x 1 1\n", &opts, NULL, &r);
	assert_int_equal(r, 0);
	assert_string_equal(out, "f+0x...;g+0x... 4 2\nx0x 1 1\n");
	free(out);
}

static void test_long_line_skipped(void **state)
{
	size_t n = 3000;
	char *in = malloc(n + 32);
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct lineread *lr;
	struct folded_stats stats = { 0 };

	memset(in, 'x', n);
	strcpy(in + n, " 1\nok 2\n");
	lr = lineread__new_mem(in, strlen(in), 1000);
	assert_int_equal(folded_read(lr, p, NULL, &stats, NULL), 0);
	assert_int_equal(stats.skipped, 1);
	assert_int_equal(profile__nr_stacks(p), 1);
	assert_true(profile__total(p) == 2);
	lineread__free(lr);
	profile__free(p);
	strtab__free(st);
	free(in);
}

static void test_max_depth(void **state)
{
	struct folded_read_opts opts = { .max_depth = 3 };
	struct folded_stats stats = { 0 };
	char *out;
	int r;

	out = roundtrip("a;b;c 1\na;b;c;d 1\n", &opts, &stats, &r);
	assert_int_equal(r, 0);
	assert_string_equal(out, "a;b;c 1\n");
	assert_int_equal(stats.skipped, 1);
	free(out);
}

/* Integer counts are read and summed exactly past 2^53, and refused past 2^64-1. */
static void test_exact_counts(void **state)
{
	static const struct {
		const char *line;
		int ret;
		bool exact;
		uint64_t c1, c2;
	} exact_cases[] = {
		{ "a 9007199254740993", 1, true, 9007199254740993ull, 0 },
		{ "a 18446744073709551615", 1, true, UINT64_MAX, 0 },
		{ "a 12.", 1, true, 12, 0 },
		{ "a 12.000", 1, true, 12, 0 },
		{ "a 007", 1, true, 7, 0 },
		{ "a 12.5", 1, false, 0, 0 },
		{ "a 18446744073709551616", -EINVAL, false, 0, 0 },
		{ "a 99999999999999999999999 1", -EINVAL, false, 0, 0 },
		{ "a 18446744073709551616.5", 1, false, 0, 0 }, /* a fraction: a double anyway */
		{ "a 9007199254740993 18446744073709551615", 1, true, 9007199254740993ull,
		  UINT64_MAX },
	};
	struct parse_error perr;
	struct folded_line fl;
	struct folded_read_opts opts = { 0 };
	struct folded_stats stats = { 0 };
	size_t i;
	char *out;
	int r;

	for (i = 0; i < sizeof(exact_cases) / sizeof(exact_cases[0]); i++) {
		const char *l = exact_cases[i].line;

		perr = (struct parse_error){ 0 };
		r = folded_parse_line(l, strlen(l), FOLDED_COLUMNS_AUTO, &fl, &perr);
		if (r != exact_cases[i].ret)
			fail_msg("'%s': %d", l, r);
		if (r < 0) {
			assert_string_equal(perr.reason, "sample count over 18446744073709551615");
			assert_true(perr.col == 3);
			continue;
		}
		if (fl.exact != exact_cases[i].exact)
			fail_msg("'%s': exact %d", l, fl.exact);
		if (fl.exact && (fl.ucount != exact_cases[i].c1 || fl.ucount2 != exact_cases[i].c2))
			fail_msg("'%s': %llu %llu", l, (unsigned long long)fl.ucount,
				 (unsigned long long)fl.ucount2);
	}

	/* summed and written exactly (a double would print ...992 and ...616) */
	out = roundtrip("c 9007199254740993\nc 1\nb 18446744073709551614\nb 1\nd 2.5\nd 3\n", &opts,
			&stats, &r);
	assert_int_equal(r, 0);
	assert_string_equal(out, "b 18446744073709551615\nc 9007199254740994\nd 5.5\n");
	free(out);
	/* a sum past 2^64-1 is a malformed line, not a wrapped or rounded count */
	out = roundtrip("b 18446744073709551615\nb 1\nc 1\n", &opts, &stats, &r);
	assert_int_equal(r, 0);
	assert_string_equal(out, "b 18446744073709551615\nc 1\n");
	free(out);
	opts.strict = true;
	out = roundtrip("b 18446744073709551615\nb 1\n", &opts, &stats, &r);
	assert_int_equal(r, -EINVAL);
	free(out);
}

static enum folded_unit guess(const char *in, uint64_t *period)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct lineread *lr = lineread__new_mem(in, strlen(in), 0);
	struct folded_read_opts opts = { 0 };
	enum folded_unit u;

	assert_int_equal(folded_read(lr, p, &opts, NULL, NULL), 0);
	u = folded_guess_unit(p, period);
	lineread__free(lr);
	profile__free(p);
	strtab__free(st);
	return u;
}

/* perf's periods summed are told from sample counts */
static void test_guess_unit(void **state)
{
	uint64_t period;
	enum folded_unit u;

	(void)state;
	/* stackcollapse-perf.pl of cpu-clock at 99 Hz: multiples of 10101010 */
	assert_int_equal(guess("a;b 20202020\na;c 10101010\nd 303030300\n", &period), FOLDED_UNIT_NS);
	assert_int_equal(period, 10101010);
	/* every stack with 10 or more samples: the gcd is a multiple of the period */
	assert_int_equal(guess("a 303030300\nb 202020200\nc 101010100\n", &period), FOLDED_UNIT_NS);
	assert_int_equal(period, 10101010);
	/* every count a multiple of 3 periods at 99 Hz (99 + 60 + 39 samples): the gcd 30303030 is
	 * a 33 Hz period too, and was taken for one (a recording of 198 samples converted to 66);
	 * 99 Hz is the rate profilers run at */
	assert_int_equal(guess("a 999999990\nb 606060600\nc 393939390\n", &period),
			 FOLDED_UNIT_NS);
	assert_int_equal(period, 10101010);
	/* 9 periods (11 Hz, 33 Hz and 99 Hz fit): 99 Hz */
	assert_int_equal(guess("a 90909090\nb 181818180\nc 909090900\n", &period), FOLDED_UNIT_NS);
	assert_int_equal(period, 10101010);
	/* every count a multiple of 11 periods at 99 Hz (198 samples as 77 + 66 + 55): 111111110
	 * is 1 ns off 9 Hz's 111111111.1, and was taken for it (198 samples converted to 18) */
	assert_int_equal(guess("a 777777770\nb 666666660\nc 555555550\n", &period),
			 FOLDED_UNIT_NS);
	assert_int_equal(period, 10101010);
	/* 9 Hz itself: 111111111 */
	assert_int_equal(guess("a 777777777\nb 666666666\nc 555555555\n", &period),
			 FOLDED_UNIT_NS);
	assert_int_equal(period, 111111111);
	/* 4000 Hz (perf's default), every count a multiple of 3 periods */
	assert_int_equal(guess("a 750000\nb 1500000\nc 7500000\n", &period), FOLDED_UNIT_NS);
	assert_int_equal(period, 250000);
	/* at 997 Hz: 1003009 ns */
	assert_int_equal(guess("a 1003009\nb 2006018\nc 5015045\n", &period), FOLDED_UNIT_NS);
	assert_int_equal(period, 1003009);
	/* sample counts */
	assert_int_equal(guess("a;b 2\na;c 1\nd 30\n", &period), FOLDED_UNIT_SAMPLES);
	assert_int_equal(period, 0);
	/* a common factor that is no clock period (1e9 / 7692 Hz is 130005 ns, not 130000) */
	assert_int_equal(guess("a 1300000\nb 130000\nc 260000\n", &period), FOLDED_UNIT_SAMPLES);
	/* under 100000 ns: not taken for a period */
	assert_int_equal(guess("a 50000\nb 100000\nc 150000\n", &period), FOLDED_UNIT_SAMPLES);
	/* too few stacks to tell: samples */
	assert_int_equal(guess("a 10101010\nb 20202020\n", &period), FOLDED_UNIT_SAMPLES);
	/* fractional counts are no periods */
	assert_int_equal(guess("a 10101010.5\nb 20202020\nc 10101010\n", &period), FOLDED_UNIT_SAMPLES);
	assert_int_equal(folded_unit_parse("ns", &u), 0);
	assert_int_equal(u, FOLDED_UNIT_NS);
	assert_int_equal(folded_unit_parse("samples", &u), 0);
	assert_int_equal(u, FOLDED_UNIT_SAMPLES);
	assert_int_equal(folded_unit_parse("ms", &u), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test(test_read_merges_sorts_and_skips),
		cmocka_unit_test(test_strict),
		cmocka_unit_test(test_two_columns_and_strip_hex),
		cmocka_unit_test(test_long_line_skipped),
		cmocka_unit_test(test_max_depth),
		cmocka_unit_test(test_exact_counts),
		cmocka_unit_test(test_guess_unit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
