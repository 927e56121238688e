// SPDX-License-Identifier: MIT
/* The sample store: interning, filters, heat maps, retention by time and memory, compaction. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/daemon/store/store.h"
#include "ember/daemon/store/store_sink.h"
#include "ember/core/base/regex.h"
#include "ember/core/model/query.h"
#include "ember/core/base/strtab.h"

#define SEC 1000000000ULL
#define T0  (1700000000ULL * SEC)

/* Interns "a;b;c" with the last @nk frames kernel. */
static int stack(struct store *s, const char *text, size_t nk, unsigned int flags)
{
	uint32_t ids[64];
	size_t n = 0;
	const char *p = text, *e;

	while (*p) {
		e = strchr(p, ';');
		if (!e)
			e = p + strlen(p);
		ids[n++] = (uint32_t)store__intern_frame(s, p, (size_t)(e - p));
		p = *e ? e + 1 : e;
	}
	return store__intern_stack(s, ids, n, nk, flags);
}

static void add(struct store *s, uint64_t t, int sid, uint32_t pid, uint32_t tid,
		const char *comm, uint32_t count)
{
	struct store_sample x = { .time_ns = t, .stack_id = (uint32_t)sid, .pid = pid, .tid = tid,
				  .cpu = 1, .count = count };

	strncpy(x.comm, comm, sizeof(x.comm));
	assert_int_equal(store__append(s, &x, 1), 0);
}

/* The folded text of a query, sorted, for comparisons. */
static char *folded(struct store *s, const struct store_filter *f)
{
	struct strtab *st = strtab__new();
	struct profile *p = store__query(s, f, st);
	struct sbuf sb = SBUF_INIT;
	size_t *order, i;

	assert_non_null(p);
	order = profile__sorted(p);
	assert_non_null(order);
	for (i = 0; i < profile__nr_stacks(p); i++) {
		profile__stack_text(p, order[i], &sb);
		sbuf_addf(&sb, " %.0f\n", profile__count(p, order[i]));
	}
	free(order);
	profile__free(p);
	strtab__free(st);
	sbuf_addc(&sb, '\0');
	return sbuf_detach(&sb, NULL);
}

/* A frame name of @size - 1 bytes unique to @i ("f<i>z" then a letter), for tables that grow. */
static void long_name(char *name, size_t size, int i)
{
	memset(name, 'a' + i % 26, size - 1);
	name[size - 1] = '\0';
	snprintf(name, 16, "f%08d", i);
	name[strlen(name)] = 'z';
}

/* A drained group as the store's sink hands it over: @n samples of one stack and thread, one
 * call (@step ns apart from @t). */
static void fill_group(struct store_sample *xs, size_t n, uint64_t t, uint64_t step, int sid,
		       uint32_t pid)
{
	size_t j;

	for (j = 0; j < n; j++) {
		xs[j] = (struct store_sample){ .time_ns = t + j * step, .stack_id = (uint32_t)sid,
					       .pid = pid, .tid = pid, .cpu = 0, .count = 1 };
		strncpy(xs[j].comm, "x", sizeof(xs[j].comm));
	}
}

static struct store *fixture(void)
{
	struct store *s = store__new(3600, 64 << 20);
	int user, kern, idle;

	assert_non_null(s);
	user = stack(s, "main;burn_a", 0, 0);
	kern = stack(s, "main;write;ksys_write_[k];vfs_write_[k]", 2, 0);
	idle = stack(s, "cpu_startup_entry_[k];do_idle_[k]", 2, STORE_STACK_IDLE);
	assert_true(user >= 0 && kern >= 0 && idle >= 0);
	assert_int_equal(stack(s, "main;burn_a", 0, 0), user); /* interned once */
	add(s, T0 + 1 * SEC, user, 100, 100, "burn", 3);
	add(s, T0 + 2 * SEC, kern, 100, 101, "burn", 2);
	add(s, T0 + 3 * SEC, user, 200, 200, "other", 1);
	add(s, T0 + 4 * SEC, idle, 0, 0, "swapper/1", 5);
	return s;
}

static void test_query_filters(void **state)
{
	struct store *s = fixture();
	struct store_filter f = STORE_FILTER_INIT;
	struct ember_regex *re;
	char *out;

	out = folded(s, &f);
	assert_string_equal(out, "burn;main;burn_a 3\n"
				 "burn;main;write;ksys_write_[k];vfs_write_[k] 2\n"
				 "other;main;burn_a 1\n");
	free(out);

	f.include_idle = true;
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "cpu_startup_entry_[k];do_idle_[k] 5\n"
				 "main;burn_a 4\n"
				 "main;write;ksys_write_[k];vfs_write_[k] 2\n");
	free(out);

	f = (struct store_filter)STORE_FILTER_INIT;
	f.pid = 100;
	f.root = STORE_ROOT_COMM_TID;
	out = folded(s, &f);
	assert_string_equal(out, "burn-100/100;main;burn_a 3\n"
				 "burn-100/101;main;write;ksys_write_[k];vfs_write_[k] 2\n");
	free(out);

	f = (struct store_filter)STORE_FILTER_INIT;
	f.user = false;
	out = folded(s, &f);	/* kernel only: user-only stacks become the bare root */
	assert_string_equal(out, "burn 3\nburn;ksys_write_[k];vfs_write_[k] 2\nother 1\n");
	free(out);

	f = (struct store_filter)STORE_FILTER_INIT;
	f.kernel = false;
	re = ember_regex__new("^bu", 3, NULL, 0);
	assert_non_null(re);
	f.comm_re = re;
	f.root = STORE_ROOT_COMM_PID;
	out = folded(s, &f);
	assert_string_equal(out, "burn-100;main;burn_a 3\nburn-100;main;write 2\n");
	free(out);
	ember_regex__free(re);

	f = (struct store_filter)STORE_FILTER_INIT;
	f.from_ns = T0 + 2 * SEC;
	f.to_ns = T0 + 3 * SEC;	/* exclusive */
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "main;write;ksys_write_[k];vfs_write_[k] 2\n");
	free(out);

	f = (struct store_filter)STORE_FILTER_INIT;
	/* a pattern that reaches its match limit on a comm: the query fails, never guesses */
	re = ember_regex__new("(.*.*)*[[:digit:]]", 18, NULL, 0);
	assert_non_null(re);
	ember_regex__set_match_limit(re, 5);
	f.comm_re = re;
	{
		struct strtab *st = strtab__new();
		struct store_point *pts = NULL;
		size_t npts = 0;

		assert_null(store__query(s, &f, st));
		assert_int_equal(errno, QUERY_ECOMM_LIMIT);
		assert_int_equal(store__heatmap(s, &f, SEC, &pts, &npts), -QUERY_ECOMM_LIMIT);
		free(pts);
		ember_regex__free(re);
		f.comm_re = NULL;
		f.kernel = f.user = false;
		assert_null(store__query(s, &f, st));
		strtab__free(st);
	}
	store__free(s);
}

static void test_heatmap(void **state)
{
	struct store *s = store__new(3600, 16 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct store_point *pts = NULL;
	size_t n = 0;
	int sid = stack(s, "main;f", 0, 0);

	/* 1 ms resolution survives: 20 ms buckets are exact at their edges */
	add(s, T0 + 19999999, sid, 1, 1, "x", 1);	/* bucket 0 */
	add(s, T0 + 20000000, sid, 1, 1, "x", 2);	/* bucket 1 */
	add(s, T0 + 39999000, sid, 1, 1, "x", 1);	/* bucket 1 */
	add(s, T0 + 5 * SEC, sid, 1, 1, "x", 4);
	add(s, T0 + 1000, sid, 1, 1, "x", 1);		/* out of order: bucket 0 */
	assert_int_equal(store__heatmap(s, &f, 20000000, &pts, &n), 0);
	assert_int_equal(n, 3);
	assert_true(pts[0].time_ns == T0 && pts[0].count == 2);
	assert_true(pts[1].time_ns == T0 + 20000000 && pts[1].count == 3);
	assert_true(pts[2].time_ns == T0 + 5 * SEC && pts[2].count == 4);
	free(pts);
	assert_int_equal(store__heatmap(s, &f, 10, &pts, &n), -EINVAL);
	f.pid = 7;
	assert_int_equal(store__heatmap(s, &f, SEC, &pts, &n), 0);
	assert_int_equal(n, 0);
	assert_null(pts);
	store__free(s);
}

struct seen {
	int n;
	char last[256];
};

static int each(const struct store_sample_view *v, void *ctx)
{
	struct seen *x = ctx;
	size_t i, len = 0;

	x->n++;
	x->last[0] = '\0';
	for (i = 0; i < v->nr_frames; i++)
		len += (size_t)snprintf(x->last + len, sizeof(x->last) - len, "%s%s", i ? ";" : "",
					v->frames[i]);
	return x->n == 100 ? 42 : 0;
}

static void test_foreach(void **state)
{
	struct store *s = fixture();
	struct store_filter f = STORE_FILTER_INIT;
	struct seen x = { 0 };

	f.root = STORE_ROOT_COMM_PID;
	assert_int_equal(store__foreach_sample(s, &f, 0, each, &x), 0);
	assert_int_equal(x.n, 6);
	assert_string_equal(x.last, "other-200;main;burn_a");
	x.n = 0;
	assert_int_equal(store__foreach_sample(s, &f, 2, each, &x), 0);
	assert_int_equal(x.n, 2);
	store__free(s);

	s = store__new(60, 16 << 20);
	x.n = 0;
	add(s, T0, stack(s, "a", 0, 0), 1, 1, "a", 150);
	assert_int_equal(store__foreach_sample(s, &f, 0, each, &x), 42); /* callback stops */
	assert_int_equal(x.n, 100);
	store__free(s);
}

struct batched {
	struct store *s;
	int n;
	uint64_t samples; /* store__stats() from inside the callback */
	int bad_names;
	bool churn; /* on the first call, intern and append enough to compact */
};

/* Runs without the store lock (it used to run under it): calls back into the store. */
static int batched_each(const struct store_sample_view *v, void *ctx)
{
	struct batched *b = ctx;
	struct store_stats st;
	char name[32];
	int i, sid;

	if (b->n++ == 70000) {
		store__stats(b->s, &st); /* would deadlock under the lock */
		b->samples = st.samples;
	}
	if (b->churn && b->n == 1) {
		/* many new stacks: the tables outgrow half the limit and are compacted (ids
		 * renumbered) while the walk holds a cursor; the oldest chunks may go too */
		for (i = 0; i < 40000; i++) {
			snprintf(name, sizeof(name), "main;churn_%d", i);
			sid = stack(b->s, name, 0, 0);
			assert_true(sid >= 0);
			add(b->s, T0 + 3600 * SEC + (uint64_t)i, sid, 9, 9, "churn", 1);
		}
	}
	if (v->nr_frames != 3 || strcmp(v->frames[0], v->comm) || strcmp(v->frames[1], "main") ||
	    (strcmp(v->frames[2], "a") && strcmp(v->frames[2], "b")))
		b->bad_names++;
	return 0;
}

/* Queries walk the ring in batches, the lock released in between. */
/* Summed times of the samples walked, and their count. */
struct since_ctx {
	uint64_t n, sum_us;
	uint32_t contexts[4];
};

static int since_fn(const struct store_sample_view *v, void *arg)
{
	struct since_ctx *c = arg;

	c->n++;
	c->sum_us += (v->time_ns - T0) / 1000;
	if (v->pid < 4)
		c->contexts[v->pid] = v->context + 1;
	return 0;
}

/* The exporter's walk: in append order from a cursor, late samples included, each once. */
static void test_foreach_since(void **state)
{
	struct store *s = store__new(3600, 64ULL << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct store_cursor cur;
	struct since_ctx c = { 0 };
	bool gap = true;
	int sid;

	(void)state;
	assert_non_null(s);
	store__cursor_end(s, &cur); /* an empty store */
	sid = stack(s, "main;work", 0, 0);
	add(s, T0 + 10 * SEC, sid, 1, 1, "a", 2);
	add(s, T0 + 20 * SEC, sid, 2, 2, "b", 1);
	assert_int_equal(store__foreach_since(s, &f, &cur, since_fn, &c, &gap), 0);
	assert_false(gap);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.sum_us, 40000000);
	assert_true(c.contexts[1] && c.contexts[2] && c.contexts[1] != c.contexts[2]);
	/* nothing new: nothing walked */
	memset(&c, 0, sizeof(c));
	assert_int_equal(store__foreach_since(s, &f, &cur, since_fn, &c, &gap), 0);
	assert_int_equal(c.n, 0);
	/* a late sample (older than those already walked) and a new one: both, once */
	add(s, T0 + 9 * SEC, sid, 3, 3, "c", 1); /* not before the chunk's base (T0 + 8 s) */
	add(s, T0 + 30 * SEC, sid, 1, 1, "a", 1);
	assert_int_equal(store__foreach_since(s, &f, &cur, since_fn, &c, &gap), 0);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.sum_us, 39000000);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store__foreach_since(s, &f, &cur, since_fn, &c, &gap), 0);
	assert_int_equal(c.n, 0);
	/* a cursor taken now sees only what comes after it */
	store__cursor_end(s, &cur);
	add(s, T0 + 40 * SEC, sid, 2, 2, "b", 1);
	assert_int_equal(store__foreach_since(s, &f, &cur, since_fn, &c, &gap), 0);
	assert_int_equal(c.n, 1);
	store__free(s);
}

static void test_batched_walk(void **state)
{
	struct store *s = store__new(3600 * 24, 64 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct batched b = { .s = s };
	struct strtab *st = strtab__new();
	struct store_point *pts;
	struct profile *p;
	uint64_t total = 0;
	size_t n, i;
	int sa = stack(s, "main;a", 0, 0), sb = stack(s, "main;b", 0, 0);

	for (i = 0; i < 150000; i++)
		add(s, T0 + i * 1000, i % 3 ? sa : sb, 1, (uint32_t)(i % 3), "w", 1);
	f.to_ns = T0 + 3600 * SEC;
	p = store__query(s, &f, st);
	assert_non_null(p);
	assert_true(profile__total(p) == 150000);
	assert_int_equal(profile__nr_stacks(p), 2); /* three contexts, two stacks */
	profile__free(p);
	assert_int_equal(store__heatmap(s, &f, 1000000, &pts, &n), 0);
	for (i = 0; i < n; i++)
		total += pts[i].count;
	free(pts);
	assert_int_equal(total, 150000);
	assert_int_equal(store__foreach_sample(s, &f, 0, batched_each, &b), 0);
	assert_int_equal(b.n, 150000);
	assert_int_equal(b.samples, 150000);
	assert_int_equal(b.bad_names, 0);
	strtab__free(st);
	store__free(s);

	/* a compaction and evictions in the middle of the walk: names stay right */
	s = store__new(3600 * 24, 2 << 20);
	sa = stack(s, "main;a", 0, 0);
	sb = stack(s, "main;b", 0, 0);
	for (i = 0; i < 150000; i++)
		add(s, T0 + i * 1000, i % 2 ? sa : sb, 1, 1, "w", 1);
	b = (struct batched){ .s = s, .churn = true };
	assert_int_equal(store__foreach_sample(s, &f, 0, batched_each, &b), 0);
	assert_true(b.n > 0 && b.n <= 150000);
	assert_int_equal(b.bad_names, 0);
	assert_true(store__compactions(s) > 0);
	store__free(s);
}

static void test_retention_time(void **state)
{
	struct store *s = store__new(60, 64 << 20);
	struct store_stats st;
	int sid = stack(s, "main;f", 0, 0);
	uint64_t t, ev;

	/* one sample per 100 ms for 10 minutes */
	for (t = 0; t < 600 * SEC; t += SEC / 10)
		add(s, T0 + t, sid, 1, 1, "x", 1);
	store__stats(s, &st);
	assert_int_equal(st.appended, 6000);
	ev = store__expire(s, T0 + 600 * SEC);
	store__stats(s, &st);
	assert_int_equal(ev, st.evicted_time);
	/* within 1/32 of the retention (+ the chunk being written) of 60 s * 10/s = 600 kept */
	assert_true(st.samples >= 600 && st.samples <= 600 + 40);
	assert_int_equal(st.samples + st.evicted_time, 6000);
	assert_true(st.oldest_ns >= T0 + 540 * SEC - 2 * SEC);
	assert_int_equal(st.newest_ns, T0 + 600 * SEC - SEC / 10);
	store__free(s);
}

static void test_retention_memory(void **state)
{
	struct store *s = store__new(3600, 1 << 20);
	struct store_stats st;
	int sid = stack(s, "main;f", 0, 0);
	struct store_sample x = { .stack_id = (uint32_t)sid, .pid = 1, .tid = 1, .count = 1,
				  .comm = "x" };
	uint64_t i;

	for (i = 0; i < 1000000; i++) {
		x.time_ns = T0 + i * 1000000;
		assert_int_equal(store__append(s, &x, 1), 0);
	}
	store__stats(s, &st);
	assert_true(st.bytes <= 1 << 20);
	assert_true(st.evicted_memory > 0);
	assert_int_equal(st.samples + st.evicted_memory, 1000000);
	/* the goal of 8 bytes per sample record, chunk headers included */
	assert_true(st.sample_bytes <= st.samples * 8 + st.samples / 100 + 8192 * 8);
	/* the oldest went first */
	assert_int_equal(st.newest_ns, T0 + 999999ULL * 1000000);
	assert_true(st.oldest_ns > T0 + 800000ULL * 1000000);
	store__free(s);
}

/*
 * The drain hands a batch over grouped by stack, not in time order, and a chunk filled in the
 * middle of a batch holds some stacks of its moments and leaves the others to the next one:
 * evicting it took those moments' first stacks only. A range is answered from after the newest
 * record dropped, where nothing is missing: each stack's count over everything retained is
 * exactly what was taken after the store's oldest time. (Without that, a workload's shares at the
 * memory cap read 2.64:1 for 2:1 over the oldest seconds retained.)
 */
static void test_eviction_edge(void **state)
{
	static const char *const names[] = { "main;a", "main;b", "main;c" };
	struct store *s = store__new(3600, 1 << 20);
	struct store_sample xs[100];
	struct store_filter f = STORE_FILTER_INIT;
	struct store_stats st;
	uint64_t want[3] = { 0 }, batch, i;
	char *got, expect[256];
	int sid[3], k;
	size_t n;

	f.root = STORE_ROOT_NONE;
	for (k = 0; k < 3; k++)
		sid[k] = stack(s, names[k], 0, 0);
	/* one sample a millisecond; millisecond i runs a (i % 10 < 6), b (6..8) or c (9); a
	 * batch is 100 ms handed over as its a group, then b's, then c's */
	for (batch = 0; batch < 3000; batch++) {
		n = 0;
		for (k = 0; k < 3; k++)
			for (i = batch * 100; i < batch * 100 + 100; i++) {
				int which = i % 10 < 6 ? 0 : i % 10 < 9 ? 1 : 2;

				if (which != k)
					continue;
				xs[n] = (struct store_sample){ .time_ns = T0 + i * 1000000,
							       .stack_id = (uint32_t)sid[k],
							       .pid = 1, .tid = 1, .count = 1 };
				strncpy(xs[n].comm, "x", sizeof(xs[n].comm));
				n++;
			}
		assert_int_equal(store__append(s, xs, n), 0);
	}
	store__stats(s, &st);
	assert_true(st.evicted_memory > 0);
	for (i = 0; i < 300000; i++)
		if (T0 + i * 1000000 >= st.oldest_ns)
			want[i % 10 < 6 ? 0 : i % 10 < 9 ? 1 : 2]++;
	snprintf(expect, sizeof(expect), "main;a %llu\nmain;b %llu\nmain;c %llu\n",
		 (unsigned long long)want[0], (unsigned long long)want[1],
		 (unsigned long long)want[2]);
	got = folded(s, &f);
	assert_string_equal(got, expect);
	free(got);
	/* a range that starts before the oldest time starts at it */
	f.from_ns = T0;
	f.to_ns = st.oldest_ns + 10000000; /* 10 ms: 6, 3 and 1 */
	got = folded(s, &f);
	assert_string_equal(got, "main;a 6\nmain;b 3\nmain;c 1\n");
	free(got);
	store__free(s);
}

static void test_compaction(void **state)
{
	struct store *s = store__new(3600, 1 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct store_stats st;
	char name[32], *out;
	int i, sid;

	/* many distinct stacks: the tables outgrow half the limit and get compacted */
	for (i = 0; i < 40000; i++) {
		snprintf(name, sizeof(name), "main;fn_%d", i);
		sid = stack(s, name, 0, 0);
		assert_true(sid >= 0);
		add(s, T0 + (uint64_t)i * 1000000, sid, 1, 1, "x", 1);
	}
	store__stats(s, &st);
	assert_true(st.compactions > 0);
	assert_true(st.bytes <= 1 << 20);
	assert_int_equal(st.samples + st.evicted_memory, 40000);
	/* what remains is still right: the newest sample is the last stack */
	f.from_ns = T0 + 39999ULL * 1000000;
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "main;fn_39999 1\n");
	free(out);
	store__free(s);
}

/*
 * The sinks' memo of the ingest's frame ids (store_sink.h): right across compactions, which
 * renumber the store's frames (a memo kept from before would name other frames after).
 */
static void test_frame_memo(void **state)
{
	struct store *s = store__new(3600, 1 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *names = strtab__new();
	struct frame_memo m = { 0 };
	uint32_t ids[2], sids[2];
	char name[32], *out;
	int i, sid;

	assert_non_null(s);
	assert_non_null(names);
	ids[0] = (uint32_t)strtab__intern(names, "main", 4);
	ids[1] = (uint32_t)strtab__intern(names, "keep_me", 7);
	assert_int_equal(frame_memo__intern(&m, s, names, ids, 2, sids), 0);
	for (i = 0; i < 40000; i++) {
		uint32_t one[2] = { ids[0] }, out_ids[2];

		snprintf(name, sizeof(name), "fn_%d", i);
		one[1] = (uint32_t)strtab__intern(names, name, strlen(name));
		assert_int_equal(frame_memo__intern(&m, s, names, one, 2, out_ids), 0);
		sid = store__intern_stack(s, out_ids, 2, 0, 0);
		assert_true(sid >= 0);
		add(s, T0 + (uint64_t)i * 1000000, sid, 1, 1, "x", 1);
	}
	assert_true(store__compactions(s) > 0);
	assert_int_equal(frame_memo__intern(&m, s, names, ids, 2, sids), 0);
	sid = store__intern_stack(s, sids, 2, 0, 0);
	assert_true(sid >= 0);
	add(s, T0 + 40000ULL * 1000000, sid, 1, 1, "x", 1);
	f.from_ns = T0 + 40000ULL * 1000000;
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "main;keep_me 1\n");
	free(out);
	frame_memo__fini(&m);
	strtab__free(names);
	store__free(s);
}

/*
 * Names and stacks of samples that expired by age are freed with them: a burst of ever-new long
 * names ages out, and the tables come back to what the samples still kept use, though the
 * store was far from its memory limit (no compaction for memory).
 */
static void test_expiry_frees_names(void **state)
{
	struct store *s = store__new(60, 256 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct store_stats st;
	char name[2100], *out;
	uint64_t t, before, burst;
	int i, sid, keep;

	(void)state;
	keep = stack(s, "main;steady", 0, 0);
	for (t = 0; t < 10 * SEC; t += SEC / 100)
		add(s, T0 + t, keep, 1, 1, "steady", 1);
	store__stats(s, &st);
	before = st.bytes - st.sample_bytes;
	/* the attack: 2000 stacks of 2 KiB names, within a second */
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (i = 0; i < 2000; i++) {
		memcpy(name, "main;", 5);
		snprintf(name + 5, 12, "f%08u", (unsigned)i % 100000000u);
		name[14] = 'x';
		sid = stack(s, name, 0, 0);
		assert_true(sid >= 0);
		add(s, T0 + 10 * SEC + (uint64_t)i * 100000, sid, 2, 2, "attacker", 1);
	}
	store__stats(s, &st);
	burst = st.bytes - st.sample_bytes;
	assert_true(burst > before + (4u << 20));
	assert_int_equal(st.evicted_memory, 0);
	/* the steady process goes on for 10 minutes; the burst ages out */
	for (t = 11 * SEC; t < 600 * SEC; t += SEC / 100) {
		add(s, T0 + t, keep, 1, 1, "steady", 1);
		if (t % SEC == 0)
			(void)store__expire(s, T0 + t);
	}
	store__stats(s, &st);
	assert_int_equal(st.evicted_memory, 0);
	assert_true(st.compactions > 0);
	assert_true(st.bytes - st.sample_bytes < before + (256u << 10));
	assert_int_equal(st.frames, 2); /* main and steady (frame and comm) */
	f.from_ns = T0 + 590 * SEC;
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "main;steady 1000\n");
	free(out);
	store__free(s);
}

/* The sinks' memo across a renewal of the names (strtab__renew()): ids of the new generation
 * name the frames they name now, not what the old ids named. */
static void test_frame_memo_renewal(void **state)
{
	struct store *s = store__new(3600, 1 << 20);
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *names = strtab__new();
	struct frame_memo m = { 0 };
	uint32_t ids[2], sids[2];
	char *out;
	int sid;

	(void)state;
	ids[0] = (uint32_t)strtab__intern(names, "old_a", 5);
	ids[1] = (uint32_t)strtab__intern(names, "old_b", 5);
	assert_int_equal(frame_memo__intern(&m, s, names, ids, 2, sids), 0);
	assert_int_equal(strtab__renew(names), 0);
	strtab__renew_done(names);
	/* the same numbers, other names now */
	assert_int_equal(strtab__intern(names, "new_a", 5), (int)ids[0]);
	assert_int_equal(strtab__intern(names, "new_b", 5), (int)ids[1]);
	assert_int_equal(frame_memo__intern(&m, s, names, ids, 2, sids), 0);
	sid = store__intern_stack(s, sids, 2, 0, 0);
	assert_true(sid >= 0);
	add(s, T0, sid, 1, 1, "x", 1);
	f.root = STORE_ROOT_NONE;
	out = folded(s, &f);
	assert_string_equal(out, "new_a;new_b 1\n");
	free(out);
	frame_memo__fini(&m);
	strtab__free(names);
	store__free(s);
}

static void test_bad_input(void **state)
{
	struct store *s = store__new(60, 1 << 20);
	struct store_sample x = { .stack_id = 5, .count = 1 };
	uint32_t bad = 99;

	assert_null(store__new(0, 1 << 20));
	assert_null(store__new(60, 1000));
	assert_int_equal(store__append(s, &x, 1), -EINVAL);
	assert_int_equal(store__intern_stack(s, &bad, 1, 0, 0), -EINVAL);
	assert_int_equal(store__intern_stack(s, NULL, 0, 1, 0), -EINVAL);
	assert_true(store__intern_stack(s, NULL, 0, 0, 0) >= 0); /* an empty stack is fine */
	assert_int_equal(store__set_limits(s, 0, 1 << 20), -EINVAL);
	assert_int_equal(store__set_limits(s, 10, 2 << 20), 0);
	store__free(NULL);
	store__free(s);
}

struct reader {
	struct store *s;
	volatile int *done;
	volatile int queries; /* read by the writer while the reader runs */
	double last_total;
	bool monotonic;
};

/* Queries while the writer appends: totals only grow (no retention pressure here). */
static void *reader(void *arg)
{
	struct reader *r = arg;
	struct store_filter f = STORE_FILTER_INIT;
	struct store_point *pts;
	size_t n;

	r->monotonic = true;
	while (!*r->done) {
		struct strtab *st = strtab__new();
		struct profile *p = store__query(r->s, &f, st);

		if (!p || profile__total(p) < r->last_total)
			r->monotonic = false;
		if (p)
			r->last_total = profile__total(p);
		profile__free(p);
		strtab__free(st);
		if (store__heatmap(r->s, &f, 1000000, &pts, &n) == 0)
			free(pts);
		r->queries++;
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	struct store *s = store__new(3600, 64 << 20);
	volatile int done = 0;
	struct reader r[2] = { { .s = s, .done = &done }, { .s = s, .done = &done } };
	pthread_t t[2];
	struct store_stats st;
	char name[32];
	int i, k;

	for (k = 0; k < 2; k++)
		assert_int_equal(pthread_create(&t[k], NULL, reader, &r[k]), 0);
	/* at least 20000 samples, and on until each reader has queried twice while they came (a
	 * loaded host may start the readers after a fast writer is done: nothing overlapped) */
	for (i = 0; i < 20000 || r[0].queries < 2 || r[1].queries < 2; i++) {
		assert_true(i < 2000000); /* 16 MB of records: within the limit */
		snprintf(name, sizeof(name), "main;f%d", i % 500);
		add(s, T0 + (uint64_t)i * 100000, stack(s, name, 0, 0), 1, 1, "w", 1);
	}
	done = 1;
	for (k = 0; k < 2; k++) {
		pthread_join(t[k], NULL);
		assert_true(r[k].monotonic);
		assert_true(r[k].queries > 0);
	}
	store__stats(s, &st);
	assert_int_equal(st.samples, (uint64_t)i);
	assert_int_equal(st.stacks, 500);
	store__free(s);
}

/*
 * A batch that fills chunks while the tables are over half the limit: the compaction that makes
 * room renumbers stacks, and the rest of the batch carries the stack id interned before the call.
 * It must still name its own stack (a compaction in the middle of the batch left the remaining
 * records on a stale id: another stack, or one past the tables).
 */
static void test_compaction_mid_batch(void **state)
{
	struct store *s = store__new(3600, STORE_MIN_MAX_BYTES);
	struct store_filter f = STORE_FILTER_INIT;
	struct store_sample *xs = calloc(30000, sizeof(*xs));
	char name[600], *out, *p;
	unsigned long n;
	int i, hot;

	(void)state;
	assert_non_null(s);
	/* unreferenced stacks of long frames: the tables pass half the limit */
	for (i = 0; i < 1200; i++) {
		long_name(name, sizeof(name), i);
		assert_true(stack(s, name, 0, 0) >= 0);
	}
	hot = stack(s, "main;hot", 0, 0);
	assert_true(hot >= 0);
	/* as the store's sink hands over a drained group: one record per sample, one stack id */
	assert_non_null(xs);
	fill_group(xs, 30000, T0, 1000, hot, 7);
	assert_int_equal(store__append(s, xs, 30000), 0);
	free(xs);
	assert_true(store__compactions(s) >= 1);
	out = folded(s, &f);
	/* one stack, the batch's own, with what the limit kept of its samples */
	p = strchr(out, '\n');
	assert_non_null(p);
	assert_string_equal(p + 1, "");
	assert_int_equal(strncmp(out, "x;main;hot ", 11), 0);
	n = strtoul(out + 11, NULL, 10);
	assert_true(n > 0 && n <= 30000);
	free(out);
	store__free(s);
}

/*
 * Tables that grow with the samples (each group of samples a new stack of a long name, as
 * short-lived processes and varied kernel stacks make at a high rate): at the memory limit the
 * store keeps a steady share of history. Dropping the oldest samples alone frees none of the
 * tables' memory until a compaction; a store that waited for its tables to fill the whole limit
 * dropped every sample it had (the retained window collapsed to a chunk, again and again).
 */
static void test_memory_tables_grow_with_samples(void **state)
{
	struct store *s = store__new(3600, STORE_MIN_MAX_BYTES);
	struct store_sample xs[16];
	struct store_stats st;
	uint64_t lo = UINT64_MAX, hi = 0;
	char name[120];
	int i, sid;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < 40000; i++) {
		long_name(name, sizeof(name), i);
		sid = stack(s, name, 0, 0);
		assert_true(sid >= 0);
		/* the group in one call: a compaction at the end of a call renumbers the stacks */
		fill_group(xs, 16, T0 + (uint64_t)i * 16 * 100000, 100000, sid, 100 + (uint32_t)i % 1000);
		assert_int_equal(store__append(s, xs, 16), 0);
		store__stats(s, &st);
		assert_true(st.bytes <= st.max_bytes);
		if (!st.evicted_memory || i < 10000)
			continue; /* warm-up: the first evictions */
		if (st.samples < lo)
			lo = st.samples;
		if (st.samples > hi)
			hi = st.samples;
	}
	print_message("# held at the limit: %llu..%llu samples, %llu compactions\n",
		      (unsigned long long)lo, (unsigned long long)hi,
		      (unsigned long long)store__compactions(s));
	assert_true(hi > 0);
	assert_true(lo * 2 >= hi);
	store__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_filters),	 cmocka_unit_test(test_heatmap),
		cmocka_unit_test(test_foreach),		 cmocka_unit_test(test_retention_time),
		cmocka_unit_test(test_retention_memory), cmocka_unit_test(test_compaction), cmocka_unit_test(test_frame_memo),
		cmocka_unit_test(test_bad_input),	 cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_batched_walk),
		cmocka_unit_test(test_foreach_since),
		cmocka_unit_test(test_eviction_edge),
		cmocka_unit_test(test_compaction_mid_batch),
		cmocka_unit_test(test_memory_tables_grow_with_samples),
		cmocka_unit_test(test_frame_memo_renewal),
		cmocka_unit_test(test_expiry_frees_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
