// SPDX-License-Identifier: MIT
/*
 * collapse: the streaming records (time, pid, tid, comm, event, stack, count) of each format,
 * the header/frame corners of stackcollapse-perf.pl (expected values checked against the perl
 * script), the aggregation table and its perl number printing, detection, and the bounds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

#define MAX_REC 16

struct rec {
	double time_s;
	char time_str[32];
	long pid, tid;
	char comm[64], event[32], stack[512];
	uint64_t count;
	bool huge;
	unsigned long line;
};

struct recs {
	struct rec r[MAX_REC];
	size_t n;
	unsigned long skips[MAX_REC];
	size_t nskips;
};

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
	assert_true(n < cap);
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static int record_cb(const struct collapse_sample *s, void *ctx)
{
	struct recs *rs = ctx;
	struct rec *r;

	assert_true(rs->n < MAX_REC);
	r = &rs->r[rs->n++];
	r->time_s = s->time_s;
	copy(r->time_str, sizeof(r->time_str), s->time_str, s->time_len);
	r->pid = s->pid;
	r->tid = s->tid;
	copy(r->comm, sizeof(r->comm), s->comm, s->comm_len);
	copy(r->event, sizeof(r->event), s->event, s->event_len);
	copy(r->stack, sizeof(r->stack), s->stack, s->stack_len);
	r->count = s->count;
	r->huge = s->count_huge;
	r->line = s->line;
	return 0;
}

static void skip_cb(const char *name, const struct parse_error *err, void *ctx)
{
	struct recs *rs = ctx;

	if (rs->nskips < MAX_REC)
		rs->skips[rs->nskips++] = err->line;
}

/* Parses @text (NUL-terminated) with @opts into @rs; returns the parser (caller frees). */
static struct collapse *parse(const char *text, struct collapse_opts opts, struct recs *rs)
{
	struct lineread *lr = lineread__new_mem(text, strlen(text), 0);
	struct collapse *c;

	memset(rs, 0, sizeof(*rs));
	opts.on_skip = skip_cb;
	opts.on_skip_ctx = rs;
	c = collapse__new(&opts, record_cb, rs);
	assert_non_null(c);
	assert_non_null(lr);
	assert_int_equal(collapse__read(c, lr, "t"), 0);
	assert_int_equal(collapse__finish(c), 0);
	lineread__free(lr);
	return c;
}

static void test_perf_record_fields(void **state)
{
	static const char text[] =
		"# ========\n"
		"# cmdline : /usr/bin/perf record -g\n"
		"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:\n"
		"\t7f0000001000 foo+0x10 (/lib/libfoo.so)\n"
		"\t7f0000002000 main (/bin/app)\n"
		"\n"
		"java 12688 6544038.708352: 10309278 cycles:\n"
		"\t7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)\n"
		"\n";
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_PERF };
	struct recs rs;
	struct collapse *c = parse(text, opts, &rs);

	assert_int_equal(rs.n, 2);
	assert_string_equal(rs.r[0].comm, "V8 WorkerThread");
	assert_int_equal(rs.r[0].pid, 24636);
	assert_int_equal(rs.r[0].tid, 25607);
	assert_string_equal(rs.r[0].event, "cycles");
	assert_string_equal(rs.r[0].time_str, "94564.109216");
	assert_true(fabs(rs.r[0].time_s - 94564.109216) < 1e-9);
	assert_string_equal(rs.r[0].stack, "V8_WorkerThread;main;foo");
	assert_int_equal(rs.r[0].count, 100);
	assert_int_equal(rs.r[0].line, 3);
	/* TID alone: pid absent */
	assert_int_equal(rs.r[1].pid, -1);
	assert_int_equal(rs.r[1].tid, 12688);
	assert_string_equal(rs.r[1].stack, "java;java/io/PrintStream:::print");
	assert_int_equal(rs.r[1].count, 10309278);
	assert_int_equal(collapse__stats(c)->samples, 2);
	assert_int_equal(collapse__stats(c)->skipped, 0);
	assert_string_equal(collapse__event(c), "cycles");
	assert_true(collapse__event_defaulted(c));
	assert_true(collapse__clean(c));
	collapse__free(c);
}

/* Root frame and first frame for one header line + one frame line, checked with the script. */
static const struct {
	const char *header, *frame;
	bool pid, tid, kernel, jit, addrs;
	const char *stack;	/* NULL: no record */
} perf_cases[] = {
	{ "swapper     0/0 [000] 158665.570607: cpu-clock:", "\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])",
	  true, false, false, false, false, "swapper-?;native_safe_halt" },	/* TID "0" is false */
	{ "a 1 [000] 5.0: 1 cpu-clock:", "\t10 f (/x)", false, false, false, false, false,
	  "a_1_[000]_5.0:;f" },							/* comm >= 2 bytes */
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 foo(int, char) (/x)", false, false, false, false, false, "xx;foo" },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 net/http.(*Client).Do (/x)", false, false, false, false, false,
	  "xx;net/http.(*Client).Do" },						/* Go keeps parens */
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 ns::(anonymous namespace)::f(int) (/x)", false, false, false, false,
	  false, "xx;ns::(anonymous namespace)::f" },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 [unknown] (/usr/lib/libbar.so)", false, false, false, false, true,
	  "xx;[libbar.so <10>]" },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 [unknown] ([unknown])", false, false, true, false, false,
	  "xx;[unknown]" },							/* no _[k] for unknown */
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 tcp_sendmsg (/lib/modules/4.3/build/vmlinux)", false, false, true,
	  false, false, "xx;tcp_sendmsg_[k]" },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 Lfoo/Bar;::baz (/tmp/perf-7.map)", false, false, false, true, false,
	  "xx;Lfoo/Bar:::baz_[j]" },						/* L kept: not java */
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 a->b->c+0x3 (/x)", false, false, false, false, false,
	  "xx;a;b_[i];c_[i]" },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 sym with (paren) inside (/lib/x (deleted))", false, false, false, false,
	  false, "xx;sym with " },
	{ "xx 1 [000] 5.0: 1 cpu-clock:", "\t10 (deleted) (/x)", false, false, false, false, false, "xx" },
	{ "xx 3/4 [000] 5.0: 1 cpu-clock:", "\t10 f (/x)", false, true, false, false, false, "xx-3/4;f" },
	{ "xx 3/4 [000] 5.0: 1 cpu-clock:", "\t10 f (/x)", true, false, false, false, false, "xx-3;f" },
	{ "xx 7 cpu-clock:", "\t10 f (/x)", false, true, false, false, false, "xx-?/7;f" },
	{ "xx 7 cpu-clock:", "\t10 \"q'uo\"ted (/x)", false, false, false, false, false, "xx;quoted" },
	{ "xx 7 cpu-clock:", "\t10 a;b (/x)", false, false, false, false, false, "xx;a:b" },
	{ "nopid cpu-clock:", "\t10 f (/x)", false, false, false, false, false, NULL },
};

static void test_perf_corners(void **state)
{
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(perf_cases) / sizeof(perf_cases[0]); i++) {
		struct collapse_opts opts = {
			.format = COLLAPSE_FORMAT_PERF,
			.pid = perf_cases[i].pid,
			.tid = perf_cases[i].tid,
			.kernel = perf_cases[i].kernel,
			.jit = perf_cases[i].jit,
			.addrs = perf_cases[i].addrs,
		};
		struct recs rs;
		struct collapse *c;

		snprintf(text, sizeof(text), "%s\n%s\n\n", perf_cases[i].header, perf_cases[i].frame);
		c = parse(text, opts, &rs);
		if (!perf_cases[i].stack) {
			assert_int_equal(rs.n, 0);
			assert_true(collapse__stats(c)->skipped > 0);
		} else {
			assert_int_equal(rs.n, 1);
			if (strcmp(rs.r[0].stack, perf_cases[i].stack))
				fail_msg("case %zu: '%s', want '%s'", i, rs.r[0].stack, perf_cases[i].stack);
		}
		collapse__free(c);
	}
}

static void test_perf_event_filter(void **state)
{
	static const char text[] =
		"aa 1 1.0: 5 cycles:\n\t1 a (/x)\n\n"
		"bb 2 2.0: 7 instructions:\n\t1 b (/x)\n\n"
		"cc 3 3.0: 0 cycles:\n\t1 c (/x)\n\n"	/* period 0 counts as 1 */
		"dd 4 4.0: cycles:\n\t1 d (/x)\n";	/* no blank line: dropped */
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_PERF };
	struct recs rs;
	struct collapse *c = parse(text, opts, &rs);

	assert_int_equal(rs.n, 2);
	assert_string_equal(rs.r[0].stack, "aa;a");
	assert_string_equal(rs.r[1].stack, "cc;c");
	assert_int_equal(rs.r[1].count, 1);
	assert_int_equal(collapse__stats(c)->filtered, 1);
	assert_int_equal(collapse__stats(c)->incomplete, 1);
	assert_string_equal(collapse__other_event(c), "instructions");
	collapse__free(c);

	opts.event_filter = "instructions";
	c = parse(text, opts, &rs);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.r[0].stack, "bb;b");
	assert_int_equal(rs.r[0].count, 7);
	assert_false(collapse__event_defaulted(c));
	collapse__free(c);
}

static void test_perf_skips_and_lines(void **state)
{
	static const char text[] =
		"garbage\n"
		"aa 1 1.0: 1 cycles:\n"
		"\t1 a (/x)\n"
		"\tnot a frame\n"
		"\n";
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_PERF };
	struct recs rs;
	struct collapse *c = parse(text, opts, &rs);

	assert_int_equal(rs.n, 1);
	assert_int_equal(rs.nskips, 2);
	assert_int_equal(rs.skips[0], 1);
	assert_int_equal(rs.skips[1], 4);
	assert_int_equal(collapse__stats(c)->skipped, 2);
	assert_int_equal(collapse__stats(c)->lines, 5);
	collapse__free(c);
}

static void test_dtrace(void **state)
{
	static const char text[] =
		"CPU     ID                    FUNCTION:NAME\n"
		"  0  64091                        :tick-60s\n"
		"\n"
		"              libc.so.1`_read+0x7\n"
		"              mysqld`Foo::bar(int)+0x12\n"
		"              Ljava/Thread;.run+0x5\n"
		"                3\n"
		"\n"
		"                5\n";
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_AUTO };
	struct recs rs;
	struct collapse *c = parse(text, opts, &rs);

	assert_int_equal(collapse__format(c), COLLAPSE_FORMAT_DTRACE);
	assert_int_equal(rs.n, 2);
	assert_string_equal(rs.r[0].stack, "java/Thread:.run;mysqld`Foo::bar;libc.so.1`_read");
	assert_int_equal(rs.r[0].count, 3);
	assert_int_equal(rs.r[0].line, 4);
	assert_true(isnan(rs.r[0].time_s));
	assert_string_equal(rs.r[1].stack, "");	/* an empty stack, as the script keeps it */
	assert_int_equal(rs.r[1].count, 5);
	collapse__free(c);
}

static void test_bpftrace(void **state)
{
	static const char text[] =
		"Attaching 1 probe...\n"
		"@[\n"
		"    native_safe_halt+14\n"
		"    default_idle+28\n"
		", \n"
		"    0x7f00\n"
		", swapper/0]: 1234\n"
		"@[, bash]: 3\n";
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_AUTO };
	struct recs rs;
	struct collapse *c = parse(text, opts, &rs);

	assert_int_equal(collapse__format(c), COLLAPSE_FORMAT_BPFTRACE);
	assert_int_equal(rs.n, 2);
	assert_string_equal(rs.r[0].stack, "swapper/0;0x7f00;, ;default_idle+28;native_safe_halt+14");
	assert_int_equal(rs.r[0].count, 1234);
	assert_string_equal(rs.r[1].stack, "bash");
	collapse__free(c);
}

static void test_detect(void **state)
{
	assert_int_equal(collapse_detect("# ========\n# captured on: x\n", 28), COLLAPSE_FORMAT_PERF);
	assert_int_equal(collapse_detect("perf 1 cycles:\n\tffff81 f ([k])\n", 31), COLLAPSE_FORMAT_PERF);
	assert_int_equal(collapse_detect("@[\n  a+1\n", 9), COLLAPSE_FORMAT_BPFTRACE);
	assert_int_equal(collapse_detect("\n\n   unix`foo+0x1\n", 18), COLLAPSE_FORMAT_DTRACE);
	assert_int_equal(collapse_detect("\n\n   0x1234\n   12\n", 19), COLLAPSE_FORMAT_DTRACE);
	assert_int_equal(collapse_detect("hello\nworld\n", 12), COLLAPSE_FORMAT_AUTO);
	assert_int_equal(collapse_detect("", 0), COLLAPSE_FORMAT_AUTO);
}

static void test_undecidable(void **state)
{
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_AUTO };
	struct collapse *c = collapse__new(&opts, NULL, NULL);

	assert_non_null(c);
	assert_int_equal(collapse__feed(c, "hello", 5, 1), 0);
	assert_int_equal(collapse__finish(c), -EINVAL);
	collapse__free(c);

	/* empty input: nothing to tell, nothing lost */
	c = collapse__new(&opts, NULL, NULL);
	assert_int_equal(collapse__feed(c, "", 0, 1), 0);
	assert_int_equal(collapse__finish(c), 0);
	collapse__free(c);
}

static void test_agg_numbers(void **state)
{
	struct collapse_agg *a = collapse_agg__new();
	struct sbuf sb = SBUF_INIT;
	struct collapse_sample s = { .stack = "b", .stack_len = 1 };

	assert_non_null(a);
	assert_int_equal(collapse_agg__add(a, "b;c", 3, 2), 0);
	assert_int_equal(collapse_agg__add(a, "a", 1, 1), 0);
	assert_int_equal(collapse_agg__add(a, "b;c", 3, 3), 0);
	assert_int_equal(collapse_agg__add(a, "b", 1, 0), 0);	/* kept with 0, as perl keeps it */
	/* 2^64-1 + 1 turns into perl's NV, printed with %.15g */
	s.count = UINT64_MAX;
	s.count_f = 18446744073709551615.0;
	assert_int_equal(collapse_agg__add_sample(a, &s), 0);
	s.count = 1;
	s.count_f = 1;
	assert_int_equal(collapse_agg__add_sample(a, &s), 0);
	assert_int_equal(collapse_agg__nr_stacks(a), 3);
	assert_int_equal(collapse_agg__write(a, true, &sb), 0);
	assert_string_equal(sb.buf, "a 1\nb 1.84467440737096e+19\nb;c 5\n");
	sbuf_reset(&sb);
	assert_int_equal(collapse_agg__write(a, false, &sb), 0);
	assert_string_equal(sb.buf, "b;c 5\na 1\nb 1.84467440737096e+19\n");
	sbuf_fini(&sb);
	collapse_agg__free(a);
}

static void test_agg_merge_profile(void **state)
{
	struct collapse_agg *a = collapse_agg__new(), *b = collapse_agg__new();
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	char name[32];
	size_t i;

	for (i = 0; i < 5000; i++) {	/* past several rehashes */
		int n = snprintf(name, sizeof(name), "root;f%zu", i);

		assert_int_equal(collapse_agg__add(i % 2 ? a : b, name, (size_t)n, i), 0);
		assert_int_equal(collapse_agg__add(b, name, (size_t)n, 1), 0);
	}
	assert_int_equal(collapse_agg__merge(a, b), 0);
	assert_int_equal(collapse_agg__nr_stacks(a), 5000);
	assert_int_equal(collapse_agg__to_profile(a, p), 0);
	assert_int_equal(profile__nr_stacks(p), 5000);
	/* sum of i over 0..4999 plus one per stack from b */
	assert_true(profile__total(p) == 4999.0 * 5000 / 2 + 5000);
	profile__free(p);
	strtab__free(st);
	collapse_agg__free(a);
	collapse_agg__free(b);
}

static void test_read_profile(void **state)
{
	static const char text[] = "aa 1 1.0: 2 cycles:\n\t1 x (/x)\n\t2 y (/x)\n\n"
				   "aa 1 1.5: 3 cycles:\n\t1 x (/x)\n\t2 y (/x)\n\n";
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_AUTO };
	struct lineread *lr = lineread__new_mem(text, strlen(text), 0);
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);
	struct collapse_stats stats;
	size_t depth;
	const uint32_t *f;

	assert_int_equal(collapse_read_profile(lr, "t", &opts, p, &stats), 0);
	assert_int_equal(stats.samples, 2);
	assert_int_equal(profile__nr_stacks(p), 1);
	assert_true(profile__count(p, 0) == 5);
	f = profile__stack(p, 0, &depth);
	assert_int_equal(depth, 3);
	assert_string_equal(strtab__str(st, f[0]), "aa");
	assert_string_equal(strtab__str(st, f[2]), "x");
	profile__free(p);
	strtab__free(st);
	lineread__free(lr);
}

static void test_record_bound(void **state)
{
	/* a perf "record" without blank lines grows one stack; past the bound it is dropped */
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_PERF };
	struct recs rs = { 0 };
	struct collapse *c;
	char line[600];
	unsigned long i;

	opts.on_skip = skip_cb;
	opts.on_skip_ctx = &rs;
	c = collapse__new(&opts, record_cb, &rs);
	assert_int_equal(collapse__feed(c, "aa 1 1.0: 1 cycles:", 19, 1), 0);
	memset(line, 'f', sizeof(line));
	memcpy(line, "\t1 ", 3);
	memcpy(line + sizeof(line) - 5, " (x)", 4);
	for (i = 0; i < 40000; i++)	/* ~24 MB of frames */
		assert_int_equal(collapse__feed(c, line, sizeof(line) - 1, i + 2), 0);
	assert_int_equal(collapse__feed(c, "", 0, i + 2), 0);
	assert_int_equal(rs.n, 0);
	assert_int_equal(collapse__stats(c)->skipped, 1);
	assert_int_equal(rs.skips[0], 1);
	/* and the parser goes on */
	assert_int_equal(collapse__feed(c, "bb 1 1.0: 1 cycles:", 19, i + 3), 0);
	assert_int_equal(collapse__feed(c, "\t1 g (x)", 8, i + 4), 0);
	assert_int_equal(collapse__feed(c, "", 0, i + 5), 0);
	assert_int_equal(rs.n, 1);
	assert_string_equal(rs.r[0].stack, "bb;g");
	collapse__free(c);
}

static void test_set_event(void **state)
{
	struct collapse_opts opts = { .format = COLLAPSE_FORMAT_PERF };
	struct recs rs = { 0 };
	struct collapse *c = collapse__new(&opts, record_cb, &rs);

	assert_int_equal(collapse__set_event(c, "cycles", true), 0);
	assert_int_equal(collapse__feed(c, "aa 1 1.0: 1 instructions:", 25, 1), 0);
	assert_int_equal(collapse__feed(c, "\t1 g (x)", 8, 2), 0);
	assert_int_equal(collapse__feed(c, "", 0, 3), 0);
	assert_int_equal(rs.n, 0);
	assert_int_equal(collapse__stats(c)->filtered, 1);
	assert_int_equal(collapse__set_event(c, "other", true), 0);	/* no-op once set */
	assert_string_equal(collapse__event(c), "cycles");
	collapse__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_record_fields),
		cmocka_unit_test(test_perf_corners),
		cmocka_unit_test(test_perf_event_filter),
		cmocka_unit_test(test_perf_skips_and_lines),
		cmocka_unit_test(test_dtrace),
		cmocka_unit_test(test_bpftrace),
		cmocka_unit_test(test_detect),
		cmocka_unit_test(test_undecidable),
		cmocka_unit_test(test_agg_numbers),
		cmocka_unit_test(test_agg_merge_profile),
		cmocka_unit_test(test_read_profile),
		cmocka_unit_test(test_record_bound),
		cmocka_unit_test(test_set_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
