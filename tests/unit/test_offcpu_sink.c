// SPDX-License-Identifier: MIT
/* offcpu_sink: states, [offcpu] into sampler options, events into the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/profile.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/store/offcpu_sink.h"
#include "ember/daemon/store/store.h"

static void test_states(void **state)
{
	static const struct {
		const char *list;
		int ret;
		uint32_t mask;
	} cases[] = {
		{ "S,D", 0, EMBER_OFFCPU_STATE_S | EMBER_OFFCPU_STATE_D },
		{ "s, d ,R", 0, EMBER_OFFCPU_STATE_S | EMBER_OFFCPU_STATE_D | EMBER_OFFCPU_STATE_R },
		{ "R", 0, EMBER_OFFCPU_STATE_R },
		{ "", -EINVAL, 0 },
		{ ",", -EINVAL, 0 },
		{ "SD", -EINVAL, 0 },
		{ "S,X", -EINVAL, 0 },
		{ "sleep", -EINVAL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t m = 0xdead;

		assert_int_equal(offcpu_states_parse(cases[i].list, &m), cases[i].ret);
		assert_int_equal(m, cases[i].ret ? 0xdead : cases[i].mask);
	}
}

static void test_config(void **state)
{
	struct sampler_offcpu_opts o;
	struct ember_config c;
	char err[256];

	(void)state;
	ember_config_init(&c);
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), 0);
	assert_false(o.enabled); /* off by default */
	c.offcpu = true;
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), 0);
	assert_true(o.enabled);
	assert_int_equal(o.states, EMBER_OFFCPU_STATE_S | EMBER_OFFCPU_STATE_D);
	assert_int_equal(o.min_ns, 1000000);
	assert_int_equal(o.quantum_ns, 1000000);
	assert_int_equal(o.max_ns, 60000000000ULL);
	assert_true(o.kernel_stacks); /* on by default (docs/benchmarks.md "Off-CPU kernel stacks") */
	c.offcpu_kernel_stacks = false;
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), 0);
	assert_false(o.kernel_stacks);
	c.offcpu_quantum_us = 2000; /* > min_blocked_us */
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), -EINVAL);
	assert_false(o.enabled);
	assert_non_null(strstr(err, "quantum_us"));
	c.offcpu_quantum_us = 1000;
	snprintf(c.offcpu_comm, sizeof(c.offcpu_comm), "%s", "a-very-long-comm-name");
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), -EINVAL);
	snprintf(c.offcpu_comm, sizeof(c.offcpu_comm), "%s", "blocker");
	snprintf(c.offcpu_states, sizeof(c.offcpu_states), "%s", "S,Z");
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), -EINVAL);
	snprintf(c.offcpu_states, sizeof(c.offcpu_states), "%s", "R");
	assert_int_equal(offcpu_opts_from_config(&c, &o, err, sizeof(err)), 0);
	assert_string_equal(o.comm, "blocker");
	assert_int_equal(o.states, EMBER_OFFCPU_STATE_R);
}

/* The sink built from [offcpu] owns three stores (freed with it: ASan sees any leak). */
static void test_from_config(void **state)
{
	struct sampler_offcpu_opts o;
	struct offcpu_sink *k = (void *)1;
	struct store *a, *b, *c;
	struct strtab *names = strtab__new();
	struct ember_config cfg;
	char err[256];

	(void)state;
	ember_config_init(&cfg);
	assert_int_equal(offcpu_sink__from_config(&cfg, names, &o, &k, err, sizeof(err)), 0);
	assert_null(k); /* off */
	offcpu_sink__stores(k, &a, &b, &c);
	assert_null(a);
	cfg.offcpu = true;
	cfg.offcpu_min_us = 10; /* < quantum_us */
	assert_int_equal(offcpu_sink__from_config(&cfg, names, &o, &k, err, sizeof(err)), -EINVAL);
	assert_null(k);
	cfg.offcpu_min_us = 1000;
	assert_int_equal(offcpu_sink__from_config(&cfg, names, &o, &k, err, sizeof(err)), 0);
	assert_non_null(k);
	assert_true(o.enabled);
	offcpu_sink__stores(k, &a, &b, &c);
	assert_true(a && b && c && a != b && b != c && a != c);
	{
		/* one offcpu.memory_limit for the three, shown in the stats */
		struct offcpu_sink_stats ks;
		struct store_stats sa, sb, sc;

		offcpu_sink__stats(k, &ks);
		store__stats(a, &sa);
		store__stats(b, &sb);
		store__stats(c, &sc);
		assert_int_equal(ks.max_bytes, cfg.offcpu_memory_bytes);
		assert_int_equal(sa.max_bytes, cfg.offcpu_memory_bytes / 2);
		assert_int_equal(sb.max_bytes + sc.max_bytes, cfg.offcpu_memory_bytes / 2);
		assert_int_equal(ks.bytes, sa.bytes + sb.bytes + sc.bytes);
	}
	offcpu_sink__expire(k, 1);
	assert_int_equal(offcpu_sink__flush(k), 0);
	offcpu_sink__free(k);
	strtab__free(names);
}

#define T0 1000000000000ULL /* CLOCK_MONOTONIC of the events */
#define Q  1000000ULL	    /* 1 ms quanta */

/* Two S events of 3 and 2 quanta and one R of 1, in one group each by kind: 5 ms under the S
 * root frame, 1 ms under R, each quantum at its own time (a heat map of 1 ms buckets); one R
 * preempted in user mode (EMBER_KIND_OFFCPU_RU) of 1: under R and its marker. */
static void test_put(void **state)
{
	struct store *s = store__new(3600, 16ULL << 20);
	struct strtab *names = strtab__new(), *st = strtab__new();
	struct offcpu_sink *k;
	struct store_filter f = STORE_FILTER_INIT;
	struct store_point *pts = NULL;
	struct profile *p;
	struct sbuf sb = SBUF_INIT;
	uint32_t ids[2];
	uint64_t times[2] = { T0, T0 + 10 * Q }, ev, qu, c, c2;
	uint32_t w[2] = { 3, 2 }, w1[1] = { 1 };
	struct sampler_group g = {
		.pid = 42, .tid = 43, .comm = "blocker", .times_ns = times, .cpus = w, .nr_times = 2,
		.kind = EMBER_KIND_OFFCPU_S,
	};
	struct ingest_stack is = { .frames = ids, .nr_frames = 2, .g = &g };
	size_t n = 0, i;
	bool seen_s = false, seen_r = false, seen_ru = false;

	(void)state;
	assert_non_null(s);
	ids[0] = (uint32_t)strtab__intern(names, "main", 4);
	ids[1] = (uint32_t)strtab__intern(names, "read", 4);
	k = offcpu_sink__new(s, names, Q);
	assert_non_null(k);
	offcpu_sink__set_clock_offset(k, 0);
	assert_int_equal(offcpu_sink__put(&is, k), 0);
	g.kind = EMBER_KIND_OFFCPU_R;
	g.cpus = w1;
	g.nr_times = 1;
	assert_int_equal(offcpu_sink__put(&is, k), 0);
	g.kind = EMBER_KIND_OFFCPU_RU;
	assert_int_equal(offcpu_sink__put(&is, k), 0);
	g.kind = EMBER_KIND_CPU; /* not an off-CPU group: refused */
	assert_int_equal(offcpu_sink__put(&is, k), -EINVAL);
	g.kind = EMBER_KIND_OFFCPU_RU + 1; /* unknown: refused */
	assert_int_equal(offcpu_sink__put(&is, k), -EINVAL);
	offcpu_sink__counts(k, &ev, &qu);
	assert_int_equal(ev, 4);
	assert_int_equal(qu, 7);

	p = store__query(s, &f, st);
	assert_non_null(p);
	assert_int_equal(profile__nr_stacks(p), 3);
	for (i = 0; i < profile__nr_stacks(p); i++) {
		sbuf_reset(&sb);
		profile__stack_text(p, i, &sb);
		assert_true(profile__count_exact(p, i, &c, &c2));
		if (!strcmp(sb.buf, "blocker;[off-cpu S interruptible];main;read")) {
			assert_int_equal(c, 5);
			seen_s = true;
		} else if (!strcmp(sb.buf, "blocker;[off-cpu R waiting for a CPU];main;read")) {
			assert_int_equal(c, 1);
			seen_r = true;
		} else if (!strcmp(sb.buf, "blocker;[off-cpu R waiting for a CPU];"
					   "[preempted in user mode];main;read")) {
			assert_int_equal(c, 1);
			seen_ru = true;
		} else {
			fail_msg("unexpected stack '%s'", sb.buf);
		}
	}
	assert_true(seen_s && seen_r && seen_ru);
	/* quanta spread one a quantum from each period's start: T0 .. T0+2 (3, plus R's and RU's
	 * at T0), T0+10, T0+11 */
	assert_int_equal(store__heatmap(s, &f, Q, &pts, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(pts[0].time_ns, T0);
	assert_int_equal(pts[0].count, 3);
	assert_int_equal(pts[2].time_ns, T0 + 2 * Q);
	assert_int_equal(pts[3].time_ns, T0 + 10 * Q);
	assert_int_equal(pts[4].time_ns, T0 + 11 * Q);
	free(pts);
	sbuf_fini(&sb);
	profile__free(p);
	offcpu_sink__free(k);
	strtab__free(st);
	strtab__free(names);
	store__free(s);
}

/* The chain graph's total of @s: quanta under the producer (waker on top) and with no waker. */
static void chain_totals(struct store *s, uint64_t *ret_joined, uint64_t *ret_none)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = strtab__new();
	struct profile *p = store__query(s, &f, st);
	struct sbuf sb = SBUF_INIT;
	uint64_t c, c2;
	size_t i;

	assert_non_null(p);
	*ret_joined = *ret_none = 0;
	for (i = 0; i < profile__nr_stacks(p); i++) {
		sbuf_reset(&sb);
		profile__stack_text(p, i, &sb);
		assert_true(profile__count_exact(p, i, &c, &c2));
		if (!strcmp(sb.buf, "consumer;[off-cpu S interruptible];main;take_item;--;"
				    "signal_[w];produce_item_[w];main_[w];producer_[w]"))
			*ret_joined += c;
		else if (!strcmp(sb.buf, "consumer;[off-cpu S interruptible];main;take_item;--;"
					 "[no waker recorded]"))
			*ret_none += c;
		else
			fail_msg("unexpected chain stack '%s'", sb.buf);
	}
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
}

/*
 * The chain join: a waker's record waits for its wakee's, whatever the batches in between (the
 * drain's events-only batches flush too: the join dropped wakers after two flushes, and a quiet
 * host, whose wakee records came a tick later, lost most of them); it expires only after
 * CHAIN_WAIT_NS of the records' own time, counted.
 */
static void test_chain_join(void **state)
{
	struct store *off = store__new(3600, 16ULL << 20), *wk = store__new(3600, 16ULL << 20),
		     *ch = store__new(3600, 16ULL << 20);
	struct strtab *names = strtab__new();
	struct offcpu_sink *k;
	struct offcpu_sink_stats sst;
	uint32_t wids[3], oids[2];
	uint64_t wt[1] = { T0 + 5 * Q }, ot[1] = { T0 }, joined, none;
	uint32_t wq[1] = { 4 }, oq[1] = { 6 };
	struct sampler_group wg = {
		.pid = 42, .tid = 42, .comm = "producer", .times_ns = wt, .cpus = wq, .nr_times = 1,
		.kind = EMBER_KIND_WAKEUP, .wakee_tid = 43, .wakee_kind = EMBER_KIND_OFFCPU_S,
		.wakee_comm = "consumer", .period_ns = T0,
	};
	struct sampler_group og = {
		.pid = 42, .tid = 43, .comm = "consumer", .times_ns = ot, .cpus = oq, .nr_times = 1,
		.kind = EMBER_KIND_OFFCPU_S,
	};
	struct ingest_stack ws = { .frames = wids, .nr_frames = 3, .g = &wg };
	struct ingest_stack os = { .frames = oids, .nr_frames = 2, .g = &og };
	int i;

	(void)state;
	assert_true(off && wk && ch && names);
	wids[0] = (uint32_t)strtab__intern(names, "main", 4);
	wids[1] = (uint32_t)strtab__intern(names, "produce_item", 12);
	wids[2] = (uint32_t)strtab__intern(names, "signal", 6);
	oids[0] = wids[0];
	oids[1] = (uint32_t)strtab__intern(names, "take_item", 9);
	k = offcpu_sink__new(off, names, Q);
	assert_non_null(k);
	offcpu_sink__set_clock_offset(k, 0);
	offcpu_sink__set_wakeup_store(k, wk);
	offcpu_sink__set_chain_store(k, ch);

	/* the waker in one batch, five empty flushes, then its wakee (6 quanta, 4 of them woken
	 * by it: the rest had no waker recorded) */
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	for (i = 0; i < 6; i++)
		assert_int_equal(offcpu_sink__flush(k), 0);
	assert_int_equal(offcpu_sink__put(&os, k), 0);
	assert_int_equal(offcpu_sink__flush(k), 0);
	chain_totals(ch, &joined, &none);
	assert_int_equal(joined, 4);
	assert_int_equal(none, 2);
	offcpu_sink__stats(k, &sst);
	assert_int_equal(sst.chain_dropped, 0);
	assert_int_equal(sst.chain_nowaker, 2);

	/* a waker whose wakee's record never comes: kept while the records are within
	 * CHAIN_WAIT_NS (10 s) of it, then dropped, counted */
	wt[0] = T0 + 100 * Q;
	wg.period_ns = T0 + 90 * Q;
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	assert_int_equal(offcpu_sink__flush(k), 0);
	ot[0] = T0 + 9000 * Q; /* another period, 9 s later: the waker still waits */
	assert_int_equal(offcpu_sink__put(&os, k), 0);
	assert_int_equal(offcpu_sink__flush(k), 0);
	offcpu_sink__stats(k, &sst);
	assert_int_equal(sst.chain_dropped, 0);
	ot[0] = T0 + 10200 * Q; /* 10.1 s after the wakeup: gone */
	assert_int_equal(offcpu_sink__put(&os, k), 0);
	assert_int_equal(offcpu_sink__flush(k), 0);
	offcpu_sink__stats(k, &sst);
	assert_int_equal(sst.chain_dropped, 4);
	chain_totals(ch, &joined, &none);
	assert_int_equal(joined, 4);
	assert_int_equal(none, 2 + 6 + 6);

	offcpu_sink__free(k);
	store__free(off);
	store__free(wk);
	store__free(ch);
	strtab__free(names);
}

/*
 * The wakeup store's quanta are the blocked time the wakeup ended: they end at the wakeup, none
 * after it. A long wait's quanta went from the wakeup on, into the future (8 s for a shell's
 * wait of a child in test_offcpu), a store chunk's base went past the present, and the next wakers' records
 * were clamped forward to it, into later windows (test_offcpu's wakeup graph counted 1078 ms of
 * the consumer's wakeups from before its window).
 */
static void test_wakeup_times(void **state)
{
	struct store *off = store__new(3600, 64ULL << 20), *wk = store__new(3600, 64ULL << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *names = strtab__new();
	struct offcpu_sink *k;
	struct offcpu_sink_stats sst;
	struct store_stats ss;
	struct store_point *pts = NULL;
	uint32_t ids[1];
	uint64_t wt[1] = { T0 + 5 * Q }, lt[1] = { T0 + 9000 * Q };
	uint32_t wq[1] = { 4 }, lq[1] = { 10000 };
	struct sampler_group wg = {
		.pid = 42, .tid = 42, .comm = "producer", .times_ns = wt, .cpus = wq, .nr_times = 1,
		.kind = EMBER_KIND_WAKEUP, .wakee_tid = 43, .wakee_kind = EMBER_KIND_OFFCPU_S,
		.wakee_comm = "consumer", .period_ns = T0,
	};
	/* a child's exit ends its shell's 10 s wait (more quanta than a store chunk's 8192) */
	struct sampler_group lg = {
		.pid = 50, .tid = 50, .comm = "prodcons", .times_ns = lt, .cpus = lq, .nr_times = 1,
		.kind = EMBER_KIND_WAKEUP, .wakee_tid = 7, .wakee_kind = EMBER_KIND_OFFCPU_S,
		.wakee_comm = "bash", .period_ns = T0 + 1000 * Q,
	};
	struct ingest_stack ws = { .frames = ids, .nr_frames = 1, .g = &wg };
	struct ingest_stack ls = { .frames = ids, .nr_frames = 1, .g = &lg };
	size_t n, i;
	uint64_t tot = 0;

	(void)state;
	assert_true(off && wk && names);
	ids[0] = (uint32_t)strtab__intern(names, "main", 4);
	k = offcpu_sink__new(off, names, Q);
	assert_non_null(k);
	offcpu_sink__set_clock_offset(k, 0);
	offcpu_sink__set_wakeup_store(k, wk);

	/* 4 quanta woken at T0+5: at T0+1 .. T0+4, the last one ending at the wakeup */
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	assert_int_equal(store__heatmap(wk, &f, Q, &pts, &n), 0);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		assert_int_equal(pts[i].time_ns, T0 + (i + 1) * Q);
		assert_int_equal(pts[i].count, 1);
	}
	free(pts);
	pts = NULL;

	/* the long wait's 10000 quanta before its wakeup (T0-1000 .. T0+8999), then wakers of the
	 * consumer at T0+9005 and T0+9010: each where it was, none moved (clamped) */
	assert_int_equal(offcpu_sink__put(&ls, k), 0);
	wt[0] = T0 + 9005 * Q;
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	wt[0] = T0 + 9010 * Q;
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	store__stats(wk, &ss);
	assert_int_equal(ss.clamped, 0);
	f.from_ns = T0 + 9000 * Q; /* the window after the long wait's wakeup: the consumer's 8 */
	assert_int_equal(store__heatmap(wk, &f, Q, &pts, &n), 0);
	for (i = 0; i < n; i++) {
		assert_true(pts[i].time_ns < T0 + 9010 * Q);
		tot += pts[i].count;
	}
	assert_int_equal(tot, 8);
	free(pts);
	pts = NULL;
	f.from_ns = 0;
	f.to_ns = T0 + 9000 * Q; /* and before it: the long wait's 10000 and the first 4 */
	assert_int_equal(store__heatmap(wk, &f, Q, &pts, &n), 0);
	for (i = 0, tot = 0; i < n; i++)
		tot += pts[i].count;
	assert_int_equal(tot, 10004);
	free(pts);

	/* a waker from before the oldest chunk's base is moved forward to it: counted by the
	 * store, and shown in the sink's counters (/api/v1/stats offcpu.clamped_quanta) */
	offcpu_sink__stats(k, &sst);
	assert_int_equal(sst.clamped, 0);
	wt[0] = T0 - 100000 * Q;
	assert_int_equal(offcpu_sink__put(&ws, k), 0);
	store__stats(wk, &ss);
	assert_true(ss.clamped > 0);
	offcpu_sink__stats(k, &sst);
	assert_int_equal(sst.clamped, ss.clamped);

	offcpu_sink__free(k);
	store__free(off);
	store__free(wk);
	strtab__free(names);
}

/* The chain store's stacks as "folded count" lines, sorted, in @out. */
static void chain_folded(struct store *s, char *out, size_t len)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = strtab__new();
	struct profile *p = store__query(s, &f, st);
	struct sbuf sb = SBUF_INIT;
	char lines[8][512];
	size_t i, j, nl = 0, at = 0;
	uint64_t c, c2;

	assert_non_null(p);
	for (i = 0; i < profile__nr_stacks(p) && nl < 8; i++) {
		sbuf_reset(&sb);
		profile__stack_text(p, i, &sb);
		assert_true(profile__count_exact(p, i, &c, &c2));
		snprintf(lines[nl++], sizeof(lines[0]), "%s %llu", sb.buf, (unsigned long long)c);
	}
	qsort(lines, nl, sizeof(lines[0]), (int (*)(const void *, const void *))strcmp);
	out[0] = '\0';
	for (j = 0; j < nl; j++)
		at += (size_t)snprintf(out + at, len - at, "%s\n", lines[j]);
	sbuf_fini(&sb);
	profile__free(p);
	strtab__free(st);
}

/*
 * Chains deeper than one waker: a timer (swapper) wakes the producer from its nanosleep, the
 * producer then wakes the consumer: the consumer's chain has the producer's stack, "--", and
 * the timer's on top (depth 2); with depth 1 the producer only; a wakee whose waker's last period
 * had no recorded waker gets only its waker.
 */
static void test_chain_depth(void **state)
{
	struct store *off = store__new(3600, 16ULL << 20), *wk = store__new(3600, 16ULL << 20),
		     *ch = store__new(3600, 16ULL << 20);
	struct strtab *names = strtab__new();
	struct offcpu_sink *k;
	uint32_t tids[2], pids[3], pnap[2], cids[2];
	uint64_t t_tw[1] = { T0 + 5 * Q }, t_pw[1] = { T0 + 6 * Q }, t_po[1] = { T0 },
		 t_co[1] = { T0 + 1 * Q };
	uint32_t q5[1] = { 5 }, q4[1] = { 4 };
	char out[4096];
	/* the timer woke the producer (tid 42) blocked since T0 */
	struct sampler_group timer = {
		.pid = 0, .tid = 0, .comm = "swapper/1", .times_ns = t_tw, .cpus = q5, .nr_times = 1,
		.kind = EMBER_KIND_WAKEUP, .wakee_tid = 42, .wakee_kind = EMBER_KIND_OFFCPU_S,
		.wakee_comm = "producer", .period_ns = T0,
	};
	/* the producer woke the consumer (tid 43) blocked since T0 + 1 ms */
	struct sampler_group prod = {
		.pid = 42, .tid = 42, .comm = "producer", .times_ns = t_pw, .cpus = q4, .nr_times = 1,
		.kind = EMBER_KIND_WAKEUP, .wakee_tid = 43, .wakee_kind = EMBER_KIND_OFFCPU_S,
		.wakee_comm = "consumer", .period_ns = T0 + 1 * Q,
	};
	struct sampler_group poff = {
		.pid = 42, .tid = 42, .comm = "producer", .times_ns = t_po, .cpus = q5, .nr_times = 1,
		.kind = EMBER_KIND_OFFCPU_S,
	};
	struct sampler_group coff = {
		.pid = 42, .tid = 43, .comm = "consumer", .times_ns = t_co, .cpus = q4, .nr_times = 1,
		.kind = EMBER_KIND_OFFCPU_S,
	};
	struct ingest_stack s_timer = { .frames = tids, .nr_frames = 2, .g = &timer };
	struct ingest_stack s_prod = { .frames = pids, .nr_frames = 3, .g = &prod };
	struct ingest_stack s_poff = { .frames = pnap, .nr_frames = 2, .g = &poff };
	struct ingest_stack s_coff = { .frames = cids, .nr_frames = 2, .g = &coff };
	unsigned int depth;

	(void)state;
	assert_true(off && wk && ch && names);
	tids[0] = (uint32_t)strtab__intern(names, "irq", 3);
	tids[1] = (uint32_t)strtab__intern(names, "hrtimer_wakeup", 14);
	pids[0] = (uint32_t)strtab__intern(names, "main", 4);
	pids[1] = (uint32_t)strtab__intern(names, "produce_item", 12);
	pids[2] = (uint32_t)strtab__intern(names, "signal", 6);
	pnap[0] = pids[0];
	pnap[1] = (uint32_t)strtab__intern(names, "nanosleep", 9);
	cids[0] = pids[0];
	cids[1] = (uint32_t)strtab__intern(names, "take_item", 9);
	for (depth = 1; depth <= 2; depth++) {
		k = offcpu_sink__new(off, names, Q);
		assert_non_null(k);
		offcpu_sink__set_clock_offset(k, 0);
		offcpu_sink__set_wakeup_store(k, wk);
		offcpu_sink__set_chain_store(k, ch);
		offcpu_sink__set_chain_depth(k, depth);
		/* one batch, groups in an order that is not the events' (hash order) */
		assert_int_equal(offcpu_sink__put(&s_coff, k), 0);
		assert_int_equal(offcpu_sink__put(&s_prod, k), 0);
		assert_int_equal(offcpu_sink__put(&s_poff, k), 0);
		assert_int_equal(offcpu_sink__put(&s_timer, k), 0);
		assert_int_equal(offcpu_sink__flush(k), 0);
		chain_folded(ch, out, sizeof(out));
		if (depth == 1)
			assert_string_equal(
			    out, "consumer;[off-cpu S interruptible];main;take_item;--;signal_[w];"
				 "produce_item_[w];main_[w];producer_[w] 4\n"
				 "producer;[off-cpu S interruptible];main;nanosleep;--;"
				 "hrtimer_wakeup_[w];irq_[w];swapper/1_[w] 5\n");
		else
			assert_string_equal(
			    out, "consumer;[off-cpu S interruptible];main;take_item;--;signal_[w];"
				 "produce_item_[w];main_[w];producer_[w] 4\n"
				 "consumer;[off-cpu S interruptible];main;take_item;--;signal_[w];"
				 "produce_item_[w];main_[w];producer_[w];--;hrtimer_wakeup_[w];"
				 "irq_[w];swapper/1_[w] 4\n"
				 "producer;[off-cpu S interruptible];main;nanosleep;--;"
				 "hrtimer_wakeup_[w];irq_[w];swapper/1_[w] 10\n");
		offcpu_sink__free(k);
	}
	store__free(off);
	store__free(wk);
	store__free(ch);
	strtab__free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_from_config),
		cmocka_unit_test(test_put),
		cmocka_unit_test(test_chain_join),
		cmocka_unit_test(test_wakeup_times),
		cmocka_unit_test(test_chain_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
