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
#include "ember/core/render/heatmap.h"
#include "ember/core/render/heatmap_samples.h"
#include "ember/core/base/lineread.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/samples.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

#define S 1000000000ULL
#define MS 1000000ULL

struct fixture {
	struct strtab *st;
	struct samples *s;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->st = strtab__new();
	f->s = samples__new(f->st);
	*state = f;
	return f->s ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	samples__free(f->s);
	strtab__free(f->st);
	free(f);
	return 0;
}

static int intern(struct samples *s, const char *stack)
{
	int id = samples__intern_folded(s, stack, strlen(stack));

	assert_true(id >= 0);
	return id;
}

static void test_add_sorted_and_staged(void **state)
{
	struct fixture *f = *state;
	struct samples *s = f->s;
	int a = intern(s, "app;main;a"), b = intern(s, "app;main;b");

	assert_int_equal(intern(s, "app;main;a"), a);
	assert_int_equal(samples__nr_stacks(s), 2);
	assert_int_equal(samples__add(s, 10 * S, (uint32_t)a, 1), 0);
	assert_int_equal(samples__add(s, 12 * S, (uint32_t)b, 1), 0);
	assert_int_equal(samples__add(s, 12 * S, (uint32_t)a, 0), 0); /* no-op */
	assert_int_equal(samples__add(s, 5 * S, 99, 1), -EINVAL);
	assert_true(samples__sorted(s));
	/* out of order: staged until sorted; equal times keep arrival order */
	assert_int_equal(samples__add(s, 11 * S, (uint32_t)b, 3), 0);
	assert_int_equal(samples__add(s, 12 * S, (uint32_t)a, 2), 0);
	assert_int_equal(samples__add(s, 9 * S, (uint32_t)a, 1), 0);
	assert_false(samples__sorted(s));
	assert_int_equal(samples__nr(s), 2);
	assert_int_equal(samples__sort(s), 0);
	assert_true(samples__sorted(s));
	assert_int_equal(samples__nr(s), 5);
	assert_int_equal(samples__total(s), 8);
	assert_int_equal(samples__first_ns(s), 9 * S);
	assert_int_equal(samples__last_ns(s), 12 * S);
	assert_int_equal(samples__time_ns(s, 0), 9 * S);
	assert_int_equal(samples__time_ns(s, 1), 10 * S);
	assert_int_equal(samples__time_ns(s, 2), 11 * S);
	assert_int_equal(samples__count(s, 2), 3);
	assert_int_equal(samples__stack_id(s, 3), b); /* the earlier-added record at 12 s */
	assert_int_equal(samples__stack_id(s, 4), a);
	assert_int_equal(samples__count(s, 4), 2);
	assert_true(samples__mem_bytes(s) > 0);
}

/* Many records across blocks (count cut and 32-bit offset overflow): lower_bound and times. */
static void test_blocks_lower_bound(void **state)
{
	struct fixture *f = *state;
	struct samples *s = f->s;
	int a = intern(s, "x");
	uint64_t t = 1000 * S, *times;
	size_t i, n = 20000, j;

	times = malloc(n * sizeof(*times));
	for (i = 0; i < n; i++) {
		/* mostly 1 ms apart, with a few gaps over 4.29 s and runs of equal times */
		if (i % 5000 == 4999)
			t += 10 * S;
		else if (i % 7)
			t += MS;
		times[i] = t;
		assert_int_equal(samples__add(s, t, (uint32_t)a, 1), 0);
	}
	assert_int_equal(samples__nr(s), n);
	for (i = 0; i < n; i += 37)
		assert_int_equal(samples__time_ns(s, i), times[i]);
	for (i = 0; i < n; i += 13) {
		/* first index with time >= times[i], and >= times[i] + 1 */
		for (j = i; j > 0 && times[j - 1] == times[i]; j--)
			;
		assert_int_equal(samples__lower_bound(s, times[i]), j);
		for (j = i; j < n && times[j] <= times[i]; j++)
			;
		assert_int_equal(samples__lower_bound(s, times[i] + 1), j);
	}
	assert_int_equal(samples__lower_bound(s, 0), 0);
	assert_int_equal(samples__lower_bound(s, times[n - 1] + 1), n);
	assert_int_equal(samples__lower_bound(s, times[4999] - 1), 5000 - 1 - 0);
	/* no counts column while every count is 1: 8 bytes per record plus small overheads */
	assert_true(samples__mem_bytes(s) < n * 8 * 2 + 200000);
	free(times);
}

static void test_idle_and_filters(void **state)
{
	static const struct { const char *stack; bool idle; const char *comm; long pid, tid;
			      bool match; } cases[] = {
		{ "swapper;secondary_startup_64;cpu_startup_entry;do_idle;default_idle", true,
		  NULL, -1, -1, false },
		{ "swapper/3;start_secondary;cpu_startup_entry;arch_cpu_idle;native_safe_halt",
		  true, NULL, -1, -1, false },
		{ "swapper-0/0;cpu_bringup_and_idle;xen_hypercall_sched_op", true, NULL, -1, -1,
		  false },
		{ "swapper;irq_exit;do_softirq;net_rx_action", false, NULL, -1, -1, true },
		{ "app;cpu_idle_loop_lookalike", false, NULL, -1, -1, true },
		{ "swapperd;do_idle", false, "swapperd", -1, -1, true },
		{ "java-1234/1240;main", false, "java", 1234, 1240, true },
		{ "java-1234/1240;main", false, "java", 1234, 999, false },
		{ "java-1234;main", false, NULL, 1234, -1, true },
		{ "java-1234;main", false, NULL, -1, 1234, false },
		{ "java;main", false, NULL, 1234, -1, false },
		{ "my-app-7;main", false, "my-app", 7, -1, true },
		{ "my-app;main", false, "my-app", -1, -1, true },
		{ "my-app;main", false, "my", -1, -1, false },
		{ "kworker/0:1-9;x", false, "kworker/0:1", 9, -1, true },
	};
	struct fixture *f = *state;
	struct samples_filter flt;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int id = intern(f->s, cases[i].stack);

		assert_int_equal(samples__stack_is_idle(f->s, (uint32_t)id), cases[i].idle);
		samples_filter_init(&flt);
		assert_int_equal(samples__stack_matches(f->s, (uint32_t)id, &flt), !cases[i].idle);
		flt.include_idle = true;
		assert_true(samples__stack_matches(f->s, (uint32_t)id, &flt));
		assert_true(samples__stack_matches(f->s, (uint32_t)id, NULL));
		flt.include_idle = false;
		flt.comm = cases[i].comm;
		flt.pid = cases[i].pid;
		flt.tid = cases[i].tid;
		assert_int_equal(samples__stack_matches(f->s, (uint32_t)id, &flt), cases[i].match);
	}
	/* the empty stack: not idle, matches no process filter */
	i = (size_t)intern(f->s, "");
	assert_false(samples__stack_is_idle(f->s, (uint32_t)i));
	samples_filter_init(&flt);
	assert_true(samples__stack_matches(f->s, (uint32_t)i, &flt));
	flt.comm = "x";
	assert_false(samples__stack_matches(f->s, (uint32_t)i, &flt));
}

/* Pseudo-random samples: the fast heat map equals the plain one, filters applied per stack. */
static void test_heatmap_matches_reference(void **state)
{
	struct fixture *f = *state;
	struct samples *s = f->s;
	const char *stacks[] = { "app;a", "app;b", "swapper;cpu_startup_entry;do_idle",
				 "db-5/6;q" };
	struct samples_filter flt;
	struct heatmap_opts o;
	struct heatmap fast, ref, ref_all, ref_db;
	uint64_t t = 50 * S + 123, x = 88172645463325252ULL;
	size_t i, k, n = 30000;
	int ids[4];

	for (k = 0; k < 4; k++)
		ids[k] = intern(s, stacks[k]);
	heatmap_opts_init(&o);
	o.start_ns = 51 * S; /* starts after the first samples: they must not count */
	o.columns = 8;
	assert_int_equal(heatmap_init(&ref, &o), 0);
	assert_int_equal(heatmap_init(&ref_all, &o), 0);
	assert_int_equal(heatmap_init(&ref_db, &o), 0);
	for (i = 0; i < n; i++) {
		uint32_t c;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t += x % (2 * MS);
		if (x % 50 == 0)
			t = (t / (20 * MS) + 1) * (20 * MS); /* exactly on a row boundary */
		k = (x >> 20) % 4;
		c = (uint32_t)((x >> 30) % 3) + 1;
		assert_int_equal(samples__add(s, t, (uint32_t)ids[k], c), 0);
		if (k != 2)
			heatmap_add(&ref, t, c);
		if (k == 3)
			heatmap_add(&ref_db, t, c);
		heatmap_add(&ref_all, t, c);
	}
	assert_true(samples__sorted(s));
	assert_true(samples__last_ns(s) > 60 * S); /* runs past the map */
	assert_int_equal(heatmap_init(&fast, &o), 0);
	samples_filter_init(&flt);
	assert_int_equal(heatmap_add_samples(&fast, s, &flt), 0);
	assert_memory_equal(fast.values, ref.values, o.columns * o.rows * sizeof(double));
	assert_true(fast.max == ref.max);
	assert_true(fast.total == ref.total);
	assert_true(fast.outside == 0);
	/* pid filter: only db (the per-record path) */
	heatmap_clear(&fast);
	flt.pid = 5;
	assert_int_equal(heatmap_add_samples(&fast, s, &flt), 0);
	assert_true(fast.total > 0);
	assert_memory_equal(fast.values, ref_db.values, o.columns * o.rows * sizeof(double));
	/* no filter at all (include idle) */
	heatmap_clear(&fast);
	assert_int_equal(heatmap_add_samples(&fast, s, NULL), 0);
	assert_memory_equal(fast.values, ref_all.values, o.columns * o.rows * sizeof(double));
	/* other arrangements: 7 uneven rows of 3 s columns, and a map past the samples' end */
	heatmap_fini(&fast);
	heatmap_fini(&ref_all);
	o.column_ns = 3 * S;
	o.rows = 7;
	o.start_ns = 40 * S;
	o.columns = 40;
	assert_int_equal(heatmap_init(&fast, &o), 0);
	assert_int_equal(heatmap_init(&ref_all, &o), 0);
	for (i = 0; i < samples__nr(s); i++)
		if (!samples__stack_is_idle(s, samples__stack_id(s, i)))
			heatmap_add(&ref_all, samples__time_ns(s, i), samples__count(s, i));
	flt.pid = -1;
	assert_int_equal(heatmap_add_samples(&fast, s, &flt), 0);
	assert_memory_equal(fast.values, ref_all.values, o.columns * o.rows * sizeof(double));
	assert_true(fast.total == ref_all.total && fast.total > 0);
	heatmap_fini(&ref_all);
	heatmap_fini(&ref_db);
	/* staged samples must be sorted first */
	assert_int_equal(samples__add(s, 1, (uint32_t)ids[0], 1), 0);
	assert_int_equal(heatmap_add_samples(&fast, s, &flt), -EINVAL);
	assert_int_equal(samples__range_profile(s, 0, 100 * S, NULL, NULL), -EINVAL);
	heatmap_fini(&fast);
	heatmap_fini(&ref);
}

/* Record counts on checkpoint multiples (64, 128) and cells whose sizes jump 100-fold. */
static void test_heatmap_checkpoints_and_bursts(void **state)
{
	struct fixture *f = *state;
	struct samples *s = f->s;
	int busy = intern(s, "app;a"), idle = intern(s, "swapper;do_idle");
	size_t n, i, per_cell[] = { 1, 300, 2, 0, 0, 150, 3, 1000, 1, 64, 64, 65 };
	struct samples_filter flt;
	struct heatmap_opts o;
	struct heatmap hm, ref, ref_all;
	uint64_t t;

	heatmap_opts_init(&o);
	o.start_ns = 0;
	o.columns = 2;
	o.rows = 6;
	assert_int_equal(heatmap_init(&hm, &o), 0);
	assert_int_equal(heatmap_init(&ref, &o), 0);
	assert_int_equal(heatmap_init(&ref_all, &o), 0);
	for (n = 0, i = 0; i < sizeof(per_cell) / sizeof(per_cell[0]); i++) {
		size_t k;
		uint64_t cell = 1000000000ULL / 6 + 1;

		for (k = 0; k < per_cell[i]; k++) {
			int id = (k % 3) ? busy : idle;

			t = (i / 6) * S + heatmap_row_offset_ns(&o, (unsigned int)(i % 6)) +
			    k * (cell / (per_cell[i] + 1));
			assert_int_equal(samples__add(s, t, (uint32_t)id, 1), 0);
			if (id == busy)
				heatmap_add(&ref, t, 1);
			heatmap_add(&ref_all, t, 1);
			n++;
			if (n == 64 || n == 128) {
				samples_filter_init(&flt);
				heatmap_clear(&hm);
				assert_int_equal(heatmap_add_samples(&hm, s, &flt), 0);
				assert_true(hm.total == ref.total);
				heatmap_clear(&hm);
				assert_int_equal(heatmap_add_samples(&hm, s, NULL), 0);
				assert_true(hm.total == ref_all.total);
			}
		}
	}
	samples_filter_init(&flt);
	heatmap_clear(&hm);
	assert_int_equal(heatmap_add_samples(&hm, s, &flt), 0);
	assert_memory_equal(hm.values, ref.values, 12 * sizeof(double));
	heatmap_clear(&hm);
	assert_int_equal(heatmap_add_samples(&hm, s, NULL), 0);
	assert_memory_equal(hm.values, ref_all.values, 12 * sizeof(double));
	heatmap_fini(&hm);
	heatmap_fini(&ref);
	heatmap_fini(&ref_all);
}

static double count_of(const struct profile *p, struct strtab *st, const char *stack)
{
	struct profile *q = profile__new(st);
	int idx, found;
	size_t depth;
	const uint32_t *fr;
	double c = 0;

	idx = folded_add_stack(q, stack, strlen(stack), 1, 0, false, 0);
	assert_true(idx >= 0);
	fr = profile__stack(q, (size_t)idx, &depth);
	found = profile__find(p, fr, depth);
	if (found >= 0)
		c = profile__count(p, (size_t)found);
	profile__free(q);
	return c;
}

static void test_range_profile(void **state)
{
	struct fixture *f = *state;
	struct samples *s = f->s;
	struct strtab *other = strtab__new();
	struct profile *p = profile__new(f->st), *q = profile__new(other);
	struct samples_filter flt;
	int a = intern(s, "app;main;a"), b = intern(s, "app;main;b"),
	    idle = intern(s, "swapper;do_idle");

	assert_int_equal(samples__add(s, 10 * S, (uint32_t)a, 1), 0);
	assert_int_equal(samples__add(s, 10 * S + 500 * MS, (uint32_t)b, 2), 0);
	assert_int_equal(samples__add(s, 10 * S + 500 * MS, (uint32_t)idle, 7), 0);
	assert_int_equal(samples__add(s, 11 * S, (uint32_t)a, 4), 0);
	assert_int_equal(samples__add(s, 12 * S, (uint32_t)b, 8), 0);
	samples_filter_init(&flt);
	/* half-open: 11 s is out of [10, 11) */
	assert_int_equal(samples__range_profile(s, 10 * S, 11 * S, &flt, p), 3);
	assert_int_equal(profile__nr_stacks(p), 2);
	assert_true(count_of(p, f->st, "app;main;a") == 1);
	assert_true(count_of(p, f->st, "app;main;b") == 2);
	/* include idle, into a profile with its own strtab */
	flt.include_idle = true;
	assert_int_equal(samples__range_profile(s, 10 * S, 11 * S + 1, &flt, q), 14);
	assert_true(count_of(q, other, "swapper;do_idle") == 7);
	assert_true(count_of(q, other, "app;main;a") == 5);
	assert_int_equal(samples__range_profile(s, 11 * S, 11 * S, &flt, q), 0);
	assert_int_equal(samples__range_profile(s, 13 * S, 20 * S, &flt, q), 0);
	profile__free(p);
	profile__free(q);
	strtab__free(other);
}

static void test_parse_line(void **state)
{
	static const struct { const char *line; int ret; uint64_t t; const char *stack;
			      uint64_t count; unsigned int col; } cases[] = {
		{ "1712345678.123456789 app;main;a 3", 1, 1712345678123456789ULL, "app;main;a",
		  3, 0 },
		{ "12 a b;c d 1", 1, 12 * S, "a b;c d", 1, 0 },
		{ "12.5\tapp;x 2\r", 1, 12 * S + 500 * MS, "app;x", 2, 0 },
		{ "12 app;x 2.000", 1, 12 * S, "app;x", 2, 0 },
		{ "12 app;x 18446744073709551615", 1, 12 * S, "app;x", UINT64_MAX, 0 },
		{ "12 app;x 0", 1, 12 * S, "app;x", 0, 0 },
		{ "", 0, 0, NULL, 0, 0 },
		{ "   \r", 0, 0, NULL, 0, 0 },
		{ "# a comment", 0, 0, NULL, 0, 0 },
		{ "# ember-samples v1", 0, 0, NULL, 0, 0 },
		{ "# ember-samples v2", -EINVAL, 0, NULL, 0, 17 },
		{ "x12 app 1", -EINVAL, 0, NULL, 0, 1 },
		{ "-1 app 1", -EINVAL, 0, NULL, 0, 1 },
		{ "1.0000000001 app 1", -EINVAL, 0, NULL, 0, 1 },
		{ "99999999999 app 1", -EINVAL, 0, NULL, 0, 1 },
		{ "12", -EINVAL, 0, NULL, 0, 3 },
		{ "12 app;x", -EINVAL, 0, NULL, 0, 0 },
		{ "12 app;x 2.5", -EINVAL, 0, NULL, 0, 10 },
		{ "12 app;x 18446744073709551616", -EINVAL, 0, NULL, 0, 10 },
		{ " 12 app 1", -EINVAL, 0, NULL, 0, 1 },
	};
	struct parse_error perr;
	const char *stack;
	size_t slen, i;
	uint64_t t, count;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		perr = (struct parse_error){ 0 };
		r = samples_parse_line(cases[i].line, strlen(cases[i].line), &t, &stack, &slen,
				       &count, &perr);
		if (r != cases[i].ret)
			fail_msg("case %zu '%s': %d", i, cases[i].line, r);
		if (r == 1) {
			assert_int_equal(t, cases[i].t);
			assert_int_equal(slen, strlen(cases[i].stack));
			assert_memory_equal(stack, cases[i].stack, slen);
			assert_int_equal(count, cases[i].count);
		} else if (r < 0) {
			assert_non_null(perr.reason);
			if (cases[i].col)
				assert_int_equal(perr.col, cases[i].col);
		}
	}
	assert_true(samples_detect("# ember-samples v1", 18));
	assert_true(samples_detect("12.5 a;b 1", 10));
	assert_false(samples_detect("swapper     0 [000] 12.5: cpu-clock:", 36));
	assert_false(samples_detect("\tffffffff810013aa xen_hypercall_sched_op ([kernel])", 51));
}

struct skip_log {
	unsigned long n, first_line;
};

static void on_skip(const char *name, const struct parse_error *err, void *ctx)
{
	struct skip_log *l = ctx;

	if (!l->n++)
		l->first_line = err->line;
}

static void test_read_write_roundtrip(void **state)
{
	static const char in[] =
		"# ember-samples v1\n"
		"12.000000000 app;main;b 2\n"
		"10.5 app;main;a 1\n"
		"bad line\n"
		"10.5 app;main;a 4294967300\n"
		"\n"
		"11 app;main;c;d;e 1\n";
	static const char want[] =
		"# ember-samples v1\n"
		"10.500000000 app;main;a 1\n"
		"10.500000000 app;main;a 4294967295\n"
		"10.500000000 app;main;a 5\n"
		"11.000000000 app;main;c;d;e 1\n"
		"12.000000000 app;main;b 2\n";
	struct fixture *f = *state;
	struct skip_log sk = { 0 };
	struct samples_read_opts ro = { .on_skip = on_skip, .on_skip_ctx = &sk, .name = "t" };
	struct samples_read_stats stats = { 0 };
	struct parse_error perr = { 0 };
	struct lineread *lr = lineread__new_mem(in, sizeof(in) - 1, 0);
	struct sbuf sb = SBUF_INIT;
	struct samples *s2;

	assert_int_equal(samples_read(lr, f->s, &ro, &stats, &perr), 0);
	lineread__free(lr);
	assert_int_equal(stats.records, 4);
	assert_int_equal(stats.skipped, 1);
	assert_int_equal(stats.total, 4294967304ULL);
	assert_int_equal(sk.n, 1);
	assert_int_equal(sk.first_line, 4);
	assert_int_equal(samples__total(f->s), 4294967304ULL);
	assert_int_equal(samples__write(f->s, &sb), 0);
	assert_string_equal(sb.buf, want);
	/* written output reads back to the same */
	s2 = samples__new(f->st);
	lr = lineread__new_mem(sb.buf, sb.len, 0);
	assert_int_equal(samples_read(lr, s2, NULL, NULL, NULL), 0);
	lineread__free(lr);
	assert_int_equal(samples__nr(s2), samples__nr(f->s));
	assert_int_equal(samples__total(s2), samples__total(f->s));
	samples__free(s2);
	/* strict: the first bad line is the error */
	s2 = samples__new(f->st);
	ro.strict = true;
	lr = lineread__new_mem(in, sizeof(in) - 1, 0);
	assert_int_equal(samples_read(lr, s2, &ro, NULL, &perr), -EINVAL);
	assert_int_equal(perr.line, 4);
	lineread__free(lr);
	samples__free(s2);
	/* max depth */
	s2 = samples__new(f->st);
	ro.strict = false;
	ro.max_depth = 3;
	sk.n = 0;
	lr = lineread__new_mem(in, sizeof(in) - 1, 0);
	assert_int_equal(samples_read(lr, s2, &ro, NULL, NULL), 0);
	assert_int_equal(sk.n, 2); /* "bad line" and the 5-frame stack */
	lineread__free(lr);
	samples__free(s2);
	sbuf_fini(&sb);
}

static void test_format_line(void **state)
{
	struct sbuf sb = SBUF_INIT;

	samples_format_line(&sb, 1712345678000000001ULL, "a;b", 3, 42);
	samples_format_line(&sb, 5, "", 0, 1);
	assert_string_equal(sb.buf, "1712345678.000000001 a;b 42\n0.000000005  1\n");
	sbuf_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_sorted_and_staged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blocks_lower_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_idle_and_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heatmap_matches_reference, setup, teardown),
		cmocka_unit_test_setup_teardown(test_heatmap_checkpoints_and_bursts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_profile, setup, teardown),
		cmocka_unit_test(test_parse_line),
		cmocka_unit_test_setup_teardown(test_read_write_roundtrip, setup, teardown),
		cmocka_unit_test(test_format_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
