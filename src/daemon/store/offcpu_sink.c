// SPDX-License-Identifier: MIT
/* offcpu_sink: off-CPU events into their store (include/ember/daemon/store/offcpu_sink.h). */
#include "ember/daemon/store/offcpu_sink.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/types.h>

#include "ember/core/base/array.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/errbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/frame.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/bpf_shared.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/store/store.h"
#include "ember/daemon/store/store_sink.h"

#define MAX_FRAMES 1024

/* The root frame of each kind: the blocked state, as flamegraph.pl users read it. */
static const char *const state_frame[EMBER_KIND_NR] = {
	[EMBER_KIND_OFFCPU_S] = "[off-cpu S interruptible]",
	[EMBER_KIND_OFFCPU_D] = "[off-cpu D uninterruptible]",
	[EMBER_KIND_OFFCPU_R] = "[off-cpu R waiting for a CPU]",
};
/* EMBER_KIND_OFFCPU_RU: above the R root, before the next system call's stack */
#define USER_PREEMPT_FRAME "[preempted in user mode]"

/* A recorded waker or wakee, kept until the batch's end to join them for the chain graph. */
struct chain_item {
	uint32_t tid, pid, kind; /* tid: the wakee's (a waker's item too) */
	uint32_t wtid;		 /* a waker's own tid */
	uint64_t period_ns;	/* the wakee's period: the key of the join */
	uint64_t time_ns;	/* wakees: their period's start, Unix ns; wakers: the wakeup's
				   CLOCK_MONOTONIC ns */
	uint64_t quanta;
	uint32_t *frames;	/* names ids, root first (owned) */
	size_t n;
	uint64_t age_ns;	/* wakees, in a flush: when the period ended (sort key) */
	char comm[16];
};

#define CHAIN_MAX_WAKERS 65536 /* wakers waiting for their wakee's record */
/*
 * How long a waker waits for its wakee's record, in the records' own time (the newest record the
 * sink saw), so that a drain that falls behind does not expire them: the wakee's record comes at
 * its system call's return, after its wait for a CPU; blocked outside a system call (a page
 * fault), at its next one.
 */
#define CHAIN_WAIT_NS (10 * 1000000000ULL)

/*
 * Deeper chains: per thread (a direct-mapped cache by tid: another thread's entry can take its
 * slot, and its chains then stop at that depth), the waker part of its last recorded blocked
 * period's chain stack (chain store frame ids from its waker's leaf up), and when that waker
 * woke it. A waker W of a later period gets W's entry on top when W's was woken before.
 */
#define CHAIN_LAST_SLOTS 4096
struct chain_last {
	uint32_t tid; /* 0: empty */
	uint32_t n, nseg;
	uint32_t seg_end[OFFCPU_CHAIN_MAX_DEPTH]; /* where each waker's part ends in frames */
	uint64_t time_ns;			  /* the wakeup, CLOCK_MONOTONIC */
	uint32_t *frames;			  /* owned */
};

struct offcpu_sink {
	struct store *store;
	struct store *wakeup; /* wakers (EMBER_KIND_WAKEUP); NULL: dropped, counted */
	struct store *chain;  /* wakee stacks with their waker on top; NULL: none */
	struct chain_item *wk, *off; /* wakers waiting; this batch's wakees */
	size_t nr_wk, wk_cap, nr_off, off_cap;
	uint64_t chain_dropped, chain_nowaker;
	uint64_t newest_ns; /* the newest record's CLOCK_MONOTONIC time: wakers expire by it */
	unsigned int depth;		  /* wakers per chain stack */
	struct chain_last *last;	  /* CHAIN_LAST_SLOTS, allocated at the first use */
	uint64_t last_compactions;	  /* the chain store's: its frame ids change */
	bool owns_stores; /* built by offcpu_sink__from_config() */
	uint64_t wakeup_events, wakeup_quanta, wakeup_dropped;
	const struct strtab *names;
	uint64_t quantum_ns;
	struct frame_memo memo; /* the ingest's frame ids -> k->store's */
	int64_t real_off_ns;
	struct store_sample *batch;
	size_t batch_cap;
	uint64_t events, quanta;
	uint32_t frames[MAX_FRAMES + 2];
	uint32_t seg_end[OFFCPU_CHAIN_MAX_DEPTH + 1]; /* chain_stack(): each waker's part's end */
	uint32_t nseg;
};

struct offcpu_sink *offcpu_sink__new(struct store *store, const struct strtab *names,
				     uint64_t quantum_ns)
{
	struct offcpu_sink *k;

	if (!store || !names || !quantum_ns) {
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		errno = ENOMEM;
		return NULL;
	}
	k->store = store;
	k->names = names;
	k->quantum_ns = quantum_ns;
	k->depth = 2;
	k->real_off_ns = real_minus_mono_ns();
	return k;
}

static void items_free(struct chain_item *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].frames);
}

void offcpu_sink__free(struct offcpu_sink *k)
{
	if (!k)
		return;
	items_free(k->wk, k->nr_wk);
	items_free(k->off, k->nr_off);
	if (k->last)
		for (size_t i = 0; i < CHAIN_LAST_SLOTS; i++)
			free(k->last[i].frames);
	free(k->last);
	if (k->owns_stores) {
		store__free(k->store);
		store__free(k->wakeup);
		store__free(k->chain);
	}
	free(k->wk);
	free(k->off);
	frame_memo__fini(&k->memo);
	free(k->batch);
	free(k);
}

void offcpu_sink__set_clock_offset(struct offcpu_sink *k, int64_t real_minus_mono_ns)
{
	k->real_off_ns = real_minus_mono_ns;
}

void offcpu_sink__counts(const struct offcpu_sink *k, uint64_t *ret_events, uint64_t *ret_quanta)
{
	*ret_events = k->events;
	*ret_quanta = k->quanta;
}

void offcpu_sink__set_wakeup_store(struct offcpu_sink *k, struct store *wakeup)
{
	k->wakeup = wakeup;
}

void offcpu_sink__wakeup_counts(const struct offcpu_sink *k, uint64_t *ret_events,
				uint64_t *ret_quanta, uint64_t *ret_dropped)
{
	*ret_events = k->wakeup_events;
	*ret_quanta = k->wakeup_quanta;
	*ret_dropped = k->wakeup_dropped;
}

/* Keeps @st's stack and its @i-th event as a chain item in *@v; false: not kept (no memory). */
static bool keep(struct chain_item **v, size_t *nr, size_t *cap, const struct ingest_stack *st,
		 size_t i, uint64_t time_ns, uint32_t tid, uint32_t kind, uint64_t period_ns)
{
	const struct sampler_group *g = st->g;
	struct chain_item *c;

	if (array_grow((void **)v, cap, *nr + 1, sizeof(**v), 64))
		return false;
	c = &(*v)[*nr];
	*c = (struct chain_item){ .tid = tid, .wtid = g->tid, .pid = g->pid, .kind = kind,
				  .period_ns = period_ns, .time_ns = time_ns, .quanta = g->cpus[i],
				  .n = st->nr_frames };
	c->frames = malloc((st->nr_frames ? st->nr_frames : 1) * sizeof(*c->frames));
	if (!c->frames)
		return false;
	memcpy(c->frames, st->frames, st->nr_frames * sizeof(*c->frames));
	memcpy(c->comm, g->comm, sizeof(c->comm));
	(*nr)++;
	return true;
}

/*
 * A waker: its stack under "[woke COMM S]" (the wakee's comm and state), one record per
 * quantum of the blocked time it ended, in the wakeup store: the quanta end at the wakeup
 * (the blocked time was before it), as the off-CPU store's start at the period. They went
 * from the wakeup on, into the future: a shell's 8 s wait for a child put 8000 records up to
 * 8 s ahead, a chunk's base (2 s before its first record) went past the present, and the
 * store clamped the next records forward to it, into later windows (test_offcpu: 1078 ms of
 * wakeups from before its window counted in it, 448 ms of them not the producer's whole
 * stack). Frames are interned directly (the frame map is the off-CPU store's).
 */
static int put_wakeup(struct offcpu_sink *k, const struct ingest_stack *st)
{
	const struct sampler_group *g = st->g;
	char top[64];
	size_t i, j, n = st->nr_frames, total = 0, at = 0;
	int id, len;

	if (!k->wakeup) {
		for (i = 0; i < g->nr_times; i++)
			k->wakeup_dropped += g->cpus[i];
		return 0;
	}
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	len = snprintf(top, sizeof(top), "[woke %s %s]", g->wakee_comm,
		       g->wakee_kind == EMBER_KIND_OFFCPU_D ? "D" : "S");
	id = store__intern_frame(k->wakeup, top, (size_t)len);
	if (id < 0)
		return id;
	k->frames[0] = (uint32_t)id;
	for (i = 0; i < n; i++) {
		id = store__intern_frame(k->wakeup, strtab__str(k->names, st->frames[i]),
					 strtab__len(k->names, st->frames[i]));
		if (id < 0)
			return id;
		k->frames[i + 1] = (uint32_t)id;
	}
	id = store__intern_stack(k->wakeup, k->frames, n + 1, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	for (i = 0; i < g->nr_times; i++)
		total += g->cpus[i];
	if (!total)
		return 0;
	if (array_grow((void **)&k->batch, &k->batch_cap, total, sizeof(*k->batch), 64))
		return -ENOMEM;
	for (i = 0; i < g->nr_times; i++) {
		uint64_t t1 = (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns);
		uint64_t span = (uint64_t)g->cpus[i] * k->quantum_ns;
		uint64_t t0 = t1 > span ? t1 - span : 0;

		for (j = 0; j < g->cpus[i]; j++) {
			struct store_sample *x = &k->batch[at++];

			*x = (struct store_sample){ .time_ns = t0 + j * k->quantum_ns,
						    .stack_id = (uint32_t)id,
						    .pid = g->pid,
						    .tid = g->tid,
						    .cpu = UINT32_MAX,
						    .count = 1 };
			memcpy(x->comm, g->comm, sizeof(x->comm));
		}
	}
	k->wakeup_events += g->nr_times;
	k->wakeup_quanta += total;
	for (i = 0; k->chain && i < g->nr_times; i++)
		if (k->nr_wk >= CHAIN_MAX_WAKERS ||
		    !keep(&k->wk, &k->nr_wk, &k->wk_cap, st, i, g->times_ns[i], g->wakee_tid,
			  g->wakee_kind, g->period_ns))
			k->chain_dropped += g->cpus[i];
	if (g->times_ns[g->nr_times - 1] > k->newest_ns)
		k->newest_ns = g->times_ns[g->nr_times - 1];
	return store__append(k->wakeup, k->batch, total);
}

int offcpu_sink__put(const struct ingest_stack *st, void *ctx)
{
	struct offcpu_sink *k = ctx;
	const struct sampler_group *g = st->g;
	size_t i, j, n = st->nr_frames, total = 0, at = 0, m = 1;
	unsigned int kind = g->kind;
	int id;

	if (g->kind == EMBER_KIND_WAKEUP)
		return put_wakeup(k, st);
	if (kind == EMBER_KIND_OFFCPU_RU) /* R, under its marker */
		kind = EMBER_KIND_OFFCPU_R;
	if (!kind || kind >= EMBER_KIND_NR)
		return -EINVAL;
	if (n > MAX_FRAMES)
		n = MAX_FRAMES;
	id = store__intern_frame(k->store, state_frame[kind], strlen(state_frame[kind]));
	if (id < 0)
		return id;
	k->frames[0] = (uint32_t)id;
	if (g->kind == EMBER_KIND_OFFCPU_RU) {
		/* the stack is the system call's that followed the preemption, not where it was */
		id = store__intern_frame(k->store, USER_PREEMPT_FRAME, strlen(USER_PREEMPT_FRAME));
		if (id < 0)
			return id;
		k->frames[m++] = (uint32_t)id;
	}
	id = frame_memo__intern(&k->memo, k->store, k->names, st->frames, n, k->frames + m);
	if (id < 0)
		return id;
	id = store__intern_stack(k->store, k->frames, n + m, st->nr_kernel, st->flags);
	if (id < 0)
		return id;
	for (i = 0; i < g->nr_times; i++)
		total += g->cpus[i];
	if (!total)
		return 0;
	if (array_grow((void **)&k->batch, &k->batch_cap, total, sizeof(*k->batch), 64))
		return -ENOMEM;
	/* each quantum at its own time in the period: heat map cells get the time blocked in them */
	for (i = 0; i < g->nr_times; i++) {
		uint64_t t0 = (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns);

		for (j = 0; j < g->cpus[i]; j++) {
			struct store_sample *x = &k->batch[at++];

			*x = (struct store_sample){
				.time_ns = t0 + j * k->quantum_ns,
				.stack_id = (uint32_t)id,
				.pid = g->pid,
				.tid = g->tid,
				.cpu = UINT32_MAX,
				.count = 1,
			};
			memcpy(x->comm, g->comm, sizeof(x->comm));
		}
	}
	k->events += g->nr_times;
	k->quanta += total;
	if (g->times_ns[g->nr_times - 1] > k->newest_ns)
		k->newest_ns = g->times_ns[g->nr_times - 1];
	for (i = 0; k->chain && kind != EMBER_KIND_OFFCPU_R && i < g->nr_times; i++)
		if (!keep(&k->off, &k->nr_off, &k->off_cap, st, i,
			  (uint64_t)((int64_t)g->times_ns[i] + k->real_off_ns), g->tid, g->kind,
			  g->times_ns[i]))
			k->chain_dropped += g->cpus[i];
	return store__append(k->store, k->batch, total);
}

void offcpu_sink__chain_counts(const struct offcpu_sink *k, uint64_t *ret_nowaker,
			       uint64_t *ret_dropped)
{
	*ret_nowaker = k->chain_nowaker;
	*ret_dropped = k->chain_dropped;
}

void offcpu_sink__set_chain_store(struct offcpu_sink *k, struct store *chain)
{
	k->chain = chain;
}

/* Interns @name with "_[w]" appended (a waker's frame, as flamegraph.pl marks them). */
static int intern_w(struct store *s, const char *name, size_t len)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "%.*s" FRAME_WAKER_SUFFIX, (int)(len > 400 ? 400 : len),
			 name);

	return store__intern_frame(s, buf, (size_t)n);
}

/* Appends @q quanta of the chain stack k->frames[0..n) for wakee @o from its period's start. */
static int chain_append(struct offcpu_sink *k, const struct chain_item *o, size_t n, uint64_t q,
			uint64_t first)
{
	size_t j;
	int id = store__intern_stack(k->chain, k->frames, n, 0, 0);

	if (id < 0)
		return id;
	if (!q)
		return 0;
	if (array_grow((void **)&k->batch, &k->batch_cap, q, sizeof(*k->batch), 64))
		return -ENOMEM;
	for (j = 0; j < q; j++) {
		struct store_sample *x = &k->batch[j];

		*x = (struct store_sample){ .time_ns = o->time_ns + (first + j) * k->quantum_ns,
					    .stack_id = (uint32_t)id,
					    .pid = o->pid,
					    .tid = o->tid,
					    .cpu = UINT32_MAX,
					    .count = 1 };
		memcpy(x->comm, o->comm, sizeof(x->comm));
	}
	return store__append(k->chain, k->batch, q);
}

/* The cache entry of thread @tid (its slot, which may hold another thread's). */
static struct chain_last *last_slot(struct offcpu_sink *k, uint32_t tid)
{
	if (!k->last) {
		k->last = calloc(CHAIN_LAST_SLOTS, sizeof(*k->last));
		if (!k->last)
			return NULL;
	}
	return &k->last[(tid * 2654435761u) >> 20 & (CHAIN_LAST_SLOTS - 1)];
}

/* Forgets every thread's chain (the chain store's frame ids changed: it compacted). */
static void last_reset(struct offcpu_sink *k)
{
	size_t i;

	for (i = 0; k->last && i < CHAIN_LAST_SLOTS; i++) {
		free(k->last[i].frames);
		k->last[i] = (struct chain_last){ 0 };
	}
}

/*
 * The chain stack of wakee @o (state, its frames, "--") with waker @w on top (NULL: none), and,
 * to k->depth wakers, the waker of @w's own last recorded blocked period before it woke @o
 * ("--" between them). *@ret_at: where the waker part starts in k->frames.
 */
static int chain_stack(struct offcpu_sink *k, const struct chain_item *o,
		       const struct chain_item *w, size_t *ret_n, size_t *ret_at)
{
	const struct chain_last *up;
	size_t n = 0, i, m, d;
	int id, sep;

	id = store__intern_frame(k->chain, state_frame[o->kind & (EMBER_KIND_NR - 1)],
				 strlen(state_frame[o->kind & (EMBER_KIND_NR - 1)]));
	if (id < 0)
		return id;
	k->frames[n++] = (uint32_t)id;
	for (i = 0; i < o->n && n < MAX_FRAMES / 2; i++) {
		id = store__intern_frame(k->chain, strtab__str(k->names, o->frames[i]),
					 strtab__len(k->names, o->frames[i]));
		if (id < 0)
			return id;
		k->frames[n++] = (uint32_t)id;
	}
	sep = store__intern_frame(k->chain, "--", 2);
	if (sep < 0)
		return sep;
	k->frames[n++] = (uint32_t)sep;
	*ret_at = n;
	if (!w) {
		id = store__intern_frame(k->chain, "[no waker recorded]", 19);
		if (id < 0)
			return id;
		k->frames[n++] = (uint32_t)id;
		*ret_n = n;
		return 0;
	}
	/* the waker leaf first, its comm at the top */
	for (i = w->n; i > 0 && n < MAX_FRAMES * 3 / 4; i--) {
		id = intern_w(k->chain, strtab__str(k->names, w->frames[i - 1]),
			      strtab__len(k->names, w->frames[i - 1]));
		if (id < 0)
			return id;
		k->frames[n++] = (uint32_t)id;
	}
	id = intern_w(k->chain, w->comm, strnlen(w->comm, sizeof(w->comm)));
	if (id < 0)
		return id;
	k->frames[n++] = (uint32_t)id;
	k->seg_end[0] = (uint32_t)(n - *ret_at);
	k->nseg = 1;
	/* the waker's own waker, when it was woken (recorded) before it woke @o */
	up = k->depth > 1 && k->last ? last_slot(k, w->wtid) : NULL;
	if (up && up->tid == w->wtid && up->nseg && up->time_ns <= w->time_ns) {
		d = up->nseg < k->depth - 1 ? up->nseg : k->depth - 1;
		m = up->seg_end[d - 1];
		if (n + 1 + m <= MAX_FRAMES) {
			k->frames[n++] = (uint32_t)sep;
			memcpy(k->frames + n, up->frames, m * sizeof(*k->frames));
			for (i = 0; i < d; i++)
				k->seg_end[k->nseg++] = k->seg_end[0] + 1 + up->seg_end[i];
			n += m;
		}
	}
	*ret_n = n;
	return 0;
}

/* Notes k->frames[at, n) (k->nseg wakers) as the waker part of @tid's last recorded chain,
 * its waker at @time_ns. */
static void last_note(struct offcpu_sink *k, uint32_t tid, uint64_t time_ns, size_t at, size_t n)
{
	struct chain_last *e = k->depth > 1 ? last_slot(k, tid) : NULL;
	uint32_t *f;

	if (!e || n <= at || !k->nseg)
		return;
	if (e->tid == tid && e->time_ns > time_ns)
		return; /* a later period's is there already */
	f = realloc(e->frames, (n - at) * sizeof(*f));
	if (!f)
		return;
	memcpy(f, k->frames + at, (n - at) * sizeof(*f));
	e->frames = f;
	e->tid = tid;
	e->time_ns = time_ns;
	e->n = (uint32_t)(n - at);
	memcpy(e->seg_end, k->seg_end, sizeof(e->seg_end));
	e->nseg = k->nseg;
}

/* Wakers by (wakee tid, kind, period, wakeup time): each wakee's are found by bsearch. */
static int cmp_waker(const void *pa, const void *pb)
{
	const struct chain_item *a = pa, *b = pb;

	if (a->tid != b->tid)
		return (a->tid > b->tid) - (a->tid < b->tid);
	if (a->kind != b->kind)
		return (a->kind > b->kind) - (a->kind < b->kind);
	if (a->period_ns != b->period_ns)
		return (a->period_ns > b->period_ns) - (a->period_ns < b->period_ns);
	return (a->time_ns > b->time_ns) - (a->time_ns < b->time_ns);
}

/* The first waker of wakee @o in the sorted k->wk, or k->nr_wk. */
static size_t first_waker(const struct offcpu_sink *k, const struct chain_item *o)
{
	struct chain_item key = { .tid = o->tid, .kind = o->kind, .period_ns = o->period_ns };
	size_t lo = 0, hi = k->nr_wk, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cmp_waker(&k->wk[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool same_period(const struct chain_item *w, const struct chain_item *o)
{
	return w->tid == o->tid && w->kind == o->kind && w->period_ns == o->period_ns;
}

/* Wakees in the order their blocked periods ended (their first waker's wakeup, else start). */
static int cmp_wakee(const void *pa, const void *pb)
{
	const struct chain_item *a = pa, *b = pb;

	return (a->age_ns > b->age_ns) - (a->age_ns < b->age_ns);
}

int offcpu_sink__flush(struct offcpu_sink *k)
{
	size_t i, j, n, at, keep_n = 0;
	uint64_t q, m, first, comp;
	int err = 0, r;

	if (!k->chain)
		return 0;
	comp = store__compactions(k->chain);
	if (comp != k->last_compactions) {
		last_reset(k);
		k->last_compactions = comp;
	}
	if (k->nr_wk > 1)
		qsort(k->wk, k->nr_wk, sizeof(*k->wk), cmp_waker);
	/* a waker's own waker must be noted before: wakees by when they were woken */
	for (i = 0; i < k->nr_off; i++) {
		j = first_waker(k, &k->off[i]);
		k->off[i].age_ns = j < k->nr_wk && same_period(&k->wk[j], &k->off[i])
					   ? k->wk[j].time_ns
					   : k->off[i].period_ns;
	}
	if (k->nr_off > 1)
		qsort(k->off, k->nr_off, sizeof(*k->off), cmp_wakee);
	for (i = 0; i < k->nr_off; i++) {
		struct chain_item *o = &k->off[i];

		first = 0;
		/* its wakers (one per wakeup of the period that was weighed into a record) */
		for (j = first_waker(k, o); j < k->nr_wk && same_period(&k->wk[j], o) &&
					    first < o->quanta;
		     j++) {
			struct chain_item *w = &k->wk[j];

			if (!w->quanta)
				continue;
			m = w->quanta < o->quanta - first ? w->quanta : o->quanta - first;
			r = chain_stack(k, o, w, &n, &at);
			if (!r) {
				last_note(k, o->tid, w->time_ns, at, n);
				r = chain_append(k, o, n, m, first);
			}
			if (r && !err)
				err = r;
			w->quanta -= m;
			first += m;
		}
		q = o->quanta - first;
		if (q) { /* woken by nothing recorded (a signal, a wakeup lost): shown as such */
			struct chain_last *e = first || !k->last ? NULL : last_slot(k, o->tid);

			if (e && e->tid == o->tid && e->time_ns <= o->age_ns)
				e->nseg = 0; /* its last period had no waker: none on top of it */
			k->chain_nowaker += q;
			r = chain_stack(k, o, NULL, &n, &at);
			if (!r)
				r = chain_append(k, o, n, q, first);
			if (r && !err)
				err = r;
		}
	}
	items_free(k->off, k->nr_off);
	k->nr_off = 0;
	/*
	 * wakers still waiting: their wakee's system call returns in a later batch (never an
	 * earlier one: sched_waking records the waker before the wakee is queued to run)
	 */
	for (i = 0; i < k->nr_wk; i++) {
		struct chain_item *w = &k->wk[i];

		if (!w->quanta || w->time_ns + CHAIN_WAIT_NS < k->newest_ns) {
			k->chain_dropped += w->quanta;
			free(w->frames);
			continue;
		}
		k->wk[keep_n++] = *w;
	}
	k->nr_wk = keep_n;
	return err;
}

int offcpu_sink__names_carry(struct offcpu_sink *k, struct strtab *names)
{
	size_t i, j, keep_n = 0;
	int id, err = 0;

	/* between batches: the wakees are joined and gone (flush), the wakers waiting carry theirs */
	for (i = 0; i < k->nr_wk; i++) {
		struct chain_item *w = &k->wk[i];

		for (j = 0; j < w->n; j++) {
			id = strtab__carry(names, w->frames[j]);
			if (id < 0)
				break;
			w->frames[j] = (uint32_t)id;
		}
		if (j < w->n) { /* not carried: dropped, counted like a waker that waited too long */
			k->chain_dropped += w->quanta;
			free(w->frames);
			err = -ENOMEM;
			continue;
		}
		k->wk[keep_n++] = *w;
	}
	k->nr_wk = keep_n;
	return err;
}

void offcpu_sink__set_chain_depth(struct offcpu_sink *k, unsigned int depth)
{
	k->depth = depth < 1 ? 1 : depth > OFFCPU_CHAIN_MAX_DEPTH ? OFFCPU_CHAIN_MAX_DEPTH : depth;
}

int offcpu_states_parse(const char *list, uint32_t *ret_mask)
{
	uint32_t m = 0;
	const char *p;

	for (p = list; *p; p++) {
		if (*p == ',' || isspace((unsigned char)*p))
			continue;
		if (p[1] && p[1] != ',' && !isspace((unsigned char)p[1]))
			return -EINVAL;
		switch (toupper((unsigned char)*p)) {
		case 'S':
			m |= EMBER_OFFCPU_STATE_S;
			break;
		case 'D':
			m |= EMBER_OFFCPU_STATE_D;
			break;
		case 'R':
			m |= EMBER_OFFCPU_STATE_R;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!m)
		return -EINVAL;
	*ret_mask = m;
	return 0;
}

int offcpu_opts_from_config(const struct ember_config *c, struct sampler_offcpu_opts *ret,
			    char *err, size_t errlen)
{
	struct sampler_offcpu_opts o = { .enabled = true };
	size_t n = strlen(c->offcpu_comm);

	*ret = (struct sampler_offcpu_opts){ 0 };
	if (!c->offcpu)
		return 0;
	if (offcpu_states_parse(c->offcpu_states, &o.states))
		return errbuf_set(err, errlen, -EINVAL, "states '%s': a list of S, D, R expected",
				  c->offcpu_states);
	if (c->offcpu_quantum_us > c->offcpu_min_us || c->offcpu_min_us > c->offcpu_max_us)
		return errbuf_set(err, errlen, -EINVAL,
				  "quantum_us <= min_blocked_us <= max_blocked_us expected");
	if (n > 15)
		return errbuf_set(err, errlen, -EINVAL, "comm '%s' is longer than 15 characters",
				  c->offcpu_comm);
	o.min_ns = c->offcpu_min_us * 1000;
	o.max_ns = c->offcpu_max_us * 1000;
	o.quantum_ns = c->offcpu_quantum_us * 1000;
	o.pid = (uint32_t)c->offcpu_pid;
	o.cgroup_id = c->offcpu_cgroup_id;
	memcpy(o.comm, c->offcpu_comm, n);
	o.threads = (uint32_t)c->offcpu_threads;
	o.kernel_stacks = c->offcpu_kernel_stacks;
	*ret = o;
	return 0;
}

void offcpu_sink__stats(const struct offcpu_sink *k, struct offcpu_sink_stats *ret)
{
	struct store *stores[3];
	struct store_stats st;
	size_t i;

	*ret = (struct offcpu_sink_stats){
		.events = k->events,
		.quanta = k->quanta,
		.wakeup_events = k->wakeup_events,
		.wakeup_quanta = k->wakeup_quanta,
		.chain_nowaker = k->chain_nowaker,
		.chain_dropped = k->chain_dropped + k->wakeup_dropped,
	};
	offcpu_sink__stores(k, &stores[0], &stores[1], &stores[2]);
	for (i = 0; i < 3; i++) {
		if (!stores[i])
			continue;
		store__stats(stores[i], &st);
		ret->clamped += st.clamped;
		ret->evicted[i] = st.evicted_memory;
		ret->bytes += st.bytes;
		ret->max_bytes += st.max_bytes;
	}
}

int offcpu_sink__from_config(const struct ember_config *c, const struct strtab *names,
			     struct sampler_offcpu_opts *ret_opts, struct offcpu_sink **ret_sink,
			     char *err, size_t errlen)
{
	struct store *off, *wake, *chain;
	struct offcpu_sink *k;
	int r;

	*ret_sink = NULL;
	r = offcpu_opts_from_config(c, ret_opts, err, errlen);
	if (r || !ret_opts->enabled)
		return r;
	/* one offcpu.memory_limit for the three: each took all of it (3 x 64 MiB by default, which
	 * no figure showed); the blocked stacks half, the wakers and the chains a quarter each */
	off = store__new(c->retention_s, c->offcpu_memory_bytes / 2);
	wake = store__new(c->retention_s, c->offcpu_memory_bytes / 4);
	chain = store__new(c->retention_s, c->offcpu_memory_bytes / 4);
	k = off && wake && chain ? offcpu_sink__new(off, names, ret_opts->quantum_ns) : NULL;
	if (!k) {
		store__free(off);
		store__free(wake);
		store__free(chain);
		return errbuf_set(err, errlen, -ENOMEM, "cannot create the off-CPU stores");
	}
	k->wakeup = wake;
	k->chain = chain;
	k->owns_stores = true;
	offcpu_sink__set_chain_depth(k, (unsigned int)c->offcpu_chain_depth);
	*ret_sink = k;
	return 0;
}

void offcpu_sink__stores(const struct offcpu_sink *k, struct store **ret_offcpu,
			 struct store **ret_wakeup, struct store **ret_chain)
{
	*ret_offcpu = k ? k->store : NULL;
	*ret_wakeup = k ? k->wakeup : NULL;
	*ret_chain = k ? k->chain : NULL;
}

void offcpu_sink__expire(struct offcpu_sink *k, uint64_t now_ns)
{
	(void)store__expire(k->store, now_ns);
	if (k->wakeup)
		(void)store__expire(k->wakeup, now_ns);
	if (k->chain)
		(void)store__expire(k->chain, now_ns);
}
