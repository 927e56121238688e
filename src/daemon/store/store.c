// SPDX-License-Identifier: MIT
/*
 * The sample store. Layout (see store.h):
 *
 *   strtab  frame names and comms
 *   stacks  a pool of frame ids + per stack (offset, length, n_kernel, flags), hash-indexed
 *   ctxs    (stack, pid, tid, cpu, comm) as 20-byte rows, hash-indexed
 *   chunks  a list, oldest first, of up to CHUNK_RECS records {u32 dt_us, u32 ctx}
 *
 * A chunk's records are microseconds after its base_ns. A chunk is sealed when full, when a time
 * does not fit in 32 bits of microseconds, or when it spans more than 1/32 of the retention, so
 * that expiry by whole chunks is precise to ~3% of the retention.
 */
#include "ember/daemon/store/store.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/regex.h"
#include "ember/core/base/hash.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/query.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/array.h"
#include "ember/core/base/sbuf.h"

#define CHUNK_RECS   8192u
#define BACKDATE_NS  2000000000ULL /* a chunk's base is 2 s before its first sample */
#define NSEC	     1000000000ULL
#define EXPIRY_COMPACT_MIN (1u << 20) /* tables smaller than this are not compacted for age */

struct rec {
	uint32_t dt_us;
	uint32_t ctx;
};

struct chunk {
	struct chunk *next;
	uint64_t seq; /* 0, 1, 2... in the order chunks were made: readers' cursor */
	uint64_t base_ns;
	uint64_t min_ns, max_ns;
	uint32_t n;
	struct rec recs[CHUNK_RECS];
};

struct stack_row {
	uint32_t off;		/* into frames pool */
	uint32_t len;
	uint16_t n_kernel;
	uint16_t flags;
};

struct ctx_row {
	uint64_t cgroup;	/* cgroup v2 id at sample time (0: unknown) */
	uint32_t stack;
	uint32_t pid, tid, cpu;
	uint32_t comm;		/* strtab id */
	uint32_t pad;		/* zero: rows are hashed and compared as bytes */
};

/* Open addressing over ids (+1; 0 = empty). */
struct index {
	uint32_t *slots;
	size_t cap;		/* power of 2 */
};

struct tables {
	struct strtab *st;
	uint32_t *pool;
	size_t pool_len, pool_cap;
	struct stack_row *stacks;
	size_t nr_stacks, stacks_cap;
	struct index stack_idx;
	struct ctx_row *ctxs;
	size_t nr_ctxs, ctxs_cap;
	struct index ctx_idx;
};

struct store {
	pthread_mutex_t lock;
	uint64_t retention_s, max_bytes;
	struct tables t;
	struct chunk *head, *tail; /* oldest, newest */
	size_t nr_chunks;
	uint64_t next_seq;	   /* of the next chunk */
	atomic_uint writers;	   /* writers waiting for the lock: readers let them in first */
	size_t compacted_bytes;	   /* tables_bytes() after the last compaction */
	uint64_t expiry_compact_ns; /* the sample time of the last compaction by expiry */
	size_t dropped_since;	   /* chunks dropped for memory since the last compaction */
	size_t expired_since;	   /* ... and for age */
	/* the newest time of a record dropped (evicted or expired): a batch's records arrive
	 * grouped by stack, not in time order, so a dropped chunk took some stacks of a moment
	 * and left others in the next chunk; the samples of a range are only complete after it */
	uint64_t complete_after_ns;
	struct store_stats st;	   /* counters; gauges filled by store__stats() */
	uint64_t cpu_appended[STORE_MAX_CPUS + 1]; /* by CPU; the last slot: unknown */
	uint32_t cpus_seen;			   /* highest CPU appended + 1 */
	struct sbuf comm_buf;			   /* a comm tidied (under the lock) */
};

/*
 * The writers (the daemon's drain: interning, appends, expiry) announce themselves before they
 * wait for the lock; a reader between two batches steps aside for them (a mutex is not fair: the
 * thread that unlocks usually takes it again before a woken waiter runs).
 */
static void write_lock(struct store *s)
{
	atomic_fetch_add(&s->writers, 1);
	pthread_mutex_lock(&s->lock);
	atomic_fetch_sub(&s->writers, 1);
}

/* A reader about to take the lock for its next batch. */
static void read_lock(struct store *s)
{
	int i;

	for (i = 0; i < 1000 && atomic_load(&s->writers); i++)
		sched_yield();
	pthread_mutex_lock(&s->lock);
}

/* A reader holding the lock between two batches. */
static void reader_yield(struct store *s)
{
	pthread_mutex_unlock(&s->lock);
	read_lock(s);
}

/* --- tables ------------------------------------------------------------------------------- */

static void tables_fini(struct tables *t)
{
	strtab__free(t->st);
	free(t->pool);
	free(t->stacks);
	free(t->stack_idx.slots);
	free(t->ctxs);
	free(t->ctx_idx.slots);
	*t = (struct tables){ 0 };
}

static int tables_init(struct tables *t)
{
	*t = (struct tables){ 0 };
	t->st = strtab__new();
	return t->st ? 0 : -ENOMEM;
}

static size_t tables_bytes(const struct tables *t)
{
	return strtab__mem_bytes(t->st) + t->pool_cap * sizeof(uint32_t) +
	       t->stacks_cap * sizeof(struct stack_row) + t->stack_idx.cap * sizeof(uint32_t) +
	       t->ctxs_cap * sizeof(struct ctx_row) + t->ctx_idx.cap * sizeof(uint32_t);
}

static uint64_t stack_hash(const uint32_t *frames, size_t n, size_t n_kernel, unsigned int flags)
{
	static const uint32_t none;

	return hash_bytes(n ? frames : &none, n * sizeof(*frames), ((uint64_t)n_kernel << 8) | flags);
}

static uint64_t ctx_hash(const struct ctx_row *c)
{
	return hash_bytes(c, sizeof(*c), 0x5eed);
}

/* Rebuilds @idx with @cap slots from ids 0..n-1 using @hash. */
typedef uint64_t (*id_hash_fn)(const struct tables *t, uint32_t id);

static uint64_t stack_id_hash(const struct tables *t, uint32_t id)
{
	const struct stack_row *r = &t->stacks[id];

	return stack_hash(t->pool + r->off, r->len, r->n_kernel, r->flags);
}

static uint64_t ctx_id_hash(const struct tables *t, uint32_t id)
{
	return ctx_hash(&t->ctxs[id]);
}

static int index_maybe_grow(const struct tables *t, struct index *idx, size_t n, id_hash_fn h)
{
	size_t cap, i, j;
	uint32_t *slots;

	if ((n + 1) * 4 <= idx->cap * 3)
		return 0;
	cap = idx->cap ? idx->cap * 2 : 256;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		j = h(t, (uint32_t)i) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(idx->slots);
	idx->slots = slots;
	idx->cap = cap;
	return 0;
}

static int tables_stack(struct tables *t, const uint32_t *frames, size_t n, size_t n_kernel,
			unsigned int flags)
{
	uint64_t h = stack_hash(frames, n, n_kernel, flags);
	size_t j;
	uint32_t id;

	if (index_maybe_grow(t, &t->stack_idx, t->nr_stacks, stack_id_hash))
		return -ENOMEM;
	for (j = h & (t->stack_idx.cap - 1); t->stack_idx.slots[j];
	     j = (j + 1) & (t->stack_idx.cap - 1)) {
		const struct stack_row *r = &t->stacks[t->stack_idx.slots[j] - 1];

		if (r->len == n && r->n_kernel == n_kernel && r->flags == flags &&
		    !memcmp(t->pool + r->off, frames, n * sizeof(*frames)))
			return (int)(t->stack_idx.slots[j] - 1);
	}
	if (t->nr_stacks >= INT32_MAX || t->pool_len + n >= UINT32_MAX)
		return -ENOMEM;
	if (array_grow((void **)&t->pool, &t->pool_cap, t->pool_len + n, sizeof(*t->pool), 64) ||
	    array_grow((void **)&t->stacks, &t->stacks_cap, t->nr_stacks + 1, sizeof(*t->stacks),
		       64))
		return -ENOMEM;
	if (n)
		memcpy(t->pool + t->pool_len, frames, n * sizeof(*frames));
	id = (uint32_t)t->nr_stacks++;
	t->stacks[id] = (struct stack_row){ .off = (uint32_t)t->pool_len, .len = (uint32_t)n,
					    .n_kernel = (uint16_t)n_kernel,
					    .flags = (uint16_t)flags };
	t->pool_len += n;
	t->stack_idx.slots[j] = id + 1;
	return (int)id;
}

static int tables_ctx(struct tables *t, const struct ctx_row *c)
{
	uint64_t h = ctx_hash(c);
	size_t j;
	uint32_t id;

	if (index_maybe_grow(t, &t->ctx_idx, t->nr_ctxs, ctx_id_hash))
		return -ENOMEM;
	for (j = h & (t->ctx_idx.cap - 1); t->ctx_idx.slots[j]; j = (j + 1) & (t->ctx_idx.cap - 1))
		if (!memcmp(&t->ctxs[t->ctx_idx.slots[j] - 1], c, sizeof(*c)))
			return (int)(t->ctx_idx.slots[j] - 1);
	if (t->nr_ctxs >= INT32_MAX)
		return -ENOMEM;
	if (array_grow((void **)&t->ctxs, &t->ctxs_cap, t->nr_ctxs + 1, sizeof(*t->ctxs), 64))
		return -ENOMEM;
	id = (uint32_t)t->nr_ctxs++;
	t->ctxs[id] = *c;
	t->ctx_idx.slots[j] = id + 1;
	return (int)id;
}

/* --- lifetime ----------------------------------------------------------------------------- */

static int check_limits(uint64_t retention_s, uint64_t max_bytes)
{
	if (!retention_s || retention_s > 366ULL * 86400 || max_bytes < STORE_MIN_MAX_BYTES)
		return -EINVAL;
	return 0;
}

struct store *store__new(uint64_t retention_s, uint64_t max_bytes)
{
	struct store *s;

	if (check_limits(retention_s, max_bytes)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	if (tables_init(&s->t)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->retention_s = retention_s;
	s->max_bytes = max_bytes;
	return s;
}

void store__free(struct store *s)
{
	struct chunk *c, *next;

	if (!s)
		return;
	for (c = s->head; c; c = next) {
		next = c->next;
		free(c);
	}
	tables_fini(&s->t);
	sbuf_fini(&s->comm_buf);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int store__set_limits(struct store *s, uint64_t retention_s, uint64_t max_bytes)
{
	if (check_limits(retention_s, max_bytes))
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	s->retention_s = retention_s;
	s->max_bytes = max_bytes;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* --- writing ------------------------------------------------------------------------------- */

int store__intern_frame(struct store *s, const char *name, size_t len)
{
	int r;

	write_lock(s);
	r = strtab__intern(s->t.st, name, len);
	pthread_mutex_unlock(&s->lock);
	return r;
}

int store__intern_stack(struct store *s, const uint32_t *frames, size_t n, size_t n_kernel,
			unsigned int flags)
{
	size_t nframes, i;
	int r;

	if (n_kernel > n || n > UINT16_MAX || flags > UINT16_MAX)
		return -EINVAL;
	write_lock(s);
	nframes = strtab__count(s->t.st);
	for (i = 0; i < n; i++) {
		if (frames[i] >= nframes) {
			pthread_mutex_unlock(&s->lock);
			return -EINVAL;
		}
	}
	r = tables_stack(&s->t, frames, n, n_kernel, flags);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Bytes of the chunks: the samples' part of store_bytes(). */
static size_t chunks_bytes(const struct store *s)
{
	return s->nr_chunks * sizeof(struct chunk);
}

static size_t store_bytes(const struct store *s)
{
	return sizeof(*s) + chunks_bytes(s) + tables_bytes(&s->t);
}

static void drop_head(struct store *s, uint64_t *counter)
{
	struct chunk *c = s->head;

	s->head = c->next;
	if (!s->head)
		s->tail = NULL;
	s->nr_chunks--;
	s->st.samples -= c->n;
	if (c->n && c->max_ns > s->complete_after_ns)
		s->complete_after_ns = c->max_ns;
	*counter += c->n;
	free(c);
}

static int compact(struct store *s);

static void compact_now(struct store *s)
{
	(void)compact(s);
	s->compacted_bytes = tables_bytes(&s->t);
	s->dropped_since = 0;
	s->expired_since = 0;
}

/*
 * Keeps the store under max_bytes: compacts oversized tables, then drops the oldest chunks.
 * Dropping samples frees none of the tables' memory (stacks and contexts only they used) until a
 * compaction: while the tables hold more than half of the limit, every quarter of the chunks
 * dropped is followed by a compaction (paid for by a quarter of the samples: no O(n^2)), so that
 * tables growing with the samples (short-lived processes, varied kernel stacks) do not fill the
 * limit and take the whole history with them.
 * Without @may_compact (in the middle of a store__append() batch, whose samples carry stack ids
 * of the current tables: a compaction renumbers them) it only drops whole chunks older than the
 * tail, and only while they hold more than half of the limit: dropping them for the tables'
 * sake would empty the store (the batch's end compacts).
 */
static void enforce_memory(struct store *s, bool may_compact)
{
	size_t tb = tables_bytes(&s->t);

	if (!may_compact) {
		while (store_bytes(s) > s->max_bytes && chunks_bytes(s) > s->max_bytes / 2 &&
		       s->head && s->head != s->tail)
			drop_head(s, &s->st.evicted_memory);
		return;
	}
	/* compact when the tables outgrew half the limit and half again since the last
	 * compaction (which may have found everything still referenced: no O(n^2) loop) */
	if (tb > s->max_bytes / 2 && tb > s->compacted_bytes + s->compacted_bytes / 2 && s->head)
		compact_now(s);
	while (store_bytes(s) > s->max_bytes && s->head && s->head != s->tail) {
		drop_head(s, &s->st.evicted_memory);
		if (++s->dropped_since > s->nr_chunks / 4 && tables_bytes(&s->t) > s->max_bytes / 2)
			compact_now(s);
	}
	if (store_bytes(s) > s->max_bytes && s->head) {
		/* the tables alone are too big: start over from the newest chunk's samples */
		drop_head(s, &s->st.evicted_memory);
		compact_now(s);
	}
}

static struct chunk *new_chunk(struct store *s, uint64_t t)
{
	struct chunk *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	c->next = NULL;
	c->seq = s->next_seq++;
	c->base_ns = t > BACKDATE_NS ? t - BACKDATE_NS : 0;
	c->base_ns -= c->base_ns % 1000; /* whole microseconds: bucket edges stay exact */
	c->min_ns = UINT64_MAX;
	c->max_ns = 0;
	c->n = 0;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	s->nr_chunks++;
	return c;
}

/* Appends one record; 0 or -ENOMEM. */
static int append_rec(struct store *s, uint64_t t, uint32_t ctx)
{
	struct chunk *c = s->tail;
	uint64_t span = s->retention_s * NSEC / 32;
	uint64_t dt;

	if (span < NSEC)
		span = NSEC;
	if (!c || c->n == CHUNK_RECS || (t > c->base_ns && (t - c->base_ns) / 1000 > UINT32_MAX) ||
	    (c->n && t > c->min_ns && t - c->min_ns > span)) {
		c = new_chunk(s, t);
		if (!c)
			return -ENOMEM;
	}
	if (t < c->base_ns) {
		t = c->base_ns;
		s->st.clamped++;
	}
	dt = (t - c->base_ns) / 1000;
	t = c->base_ns + dt * 1000;
	c->recs[c->n++] = (struct rec){ .dt_us = (uint32_t)dt, .ctx = ctx };
	if (t < c->min_ns)
		c->min_ns = t;
	if (t > c->max_ns)
		c->max_ns = t;
	s->st.samples++;
	s->st.appended++;
	return 0;
}

/* Tallies @n samples of @cpu (UINT32_MAX: unknown) for store__cpu_samples(). Under the lock. */
static void count_cpu(struct store *s, uint32_t cpu, uint64_t n)
{
	if (cpu >= STORE_MAX_CPUS) {
		s->cpu_appended[STORE_MAX_CPUS] += n;
		return;
	}
	s->cpu_appended[cpu] += n;
	if (cpu + 1 > s->cpus_seen)
		s->cpus_seen = cpu + 1;
}

size_t store__cpu_samples(struct store *s, uint64_t *ret, size_t n, uint64_t *ret_unknown)
{
	size_t k;

	pthread_mutex_lock(&s->lock);
	k = s->cpus_seen < n ? s->cpus_seen : n;
	memcpy(ret, s->cpu_appended, k * sizeof(*ret));
	*ret_unknown = s->cpu_appended[STORE_MAX_CPUS];
	n = s->cpus_seen;
	pthread_mutex_unlock(&s->lock);
	return n;
}

#define RECENT_CTX 4

int store__append(struct store *s, const struct store_sample *samples, size_t n)
{
	struct ctx_row recent[RECENT_CTX];
	int recent_id[RECENT_CTX] = { -1, -1, -1, -1 };
	char last_comm[STORE_COMM_LEN];
	size_t i, k, next_recent = 0;
	int r = 0, id, comm_id = -1;
	bool comm_escaped = false;

	write_lock(s);
	for (i = 0; i < n; i++) {
		if (samples[i].stack_id >= s->t.nr_stacks) {
			pthread_mutex_unlock(&s->lock);
			return -EINVAL;
		}
	}
	for (i = 0; i < n; i++) {
		const struct store_sample *x = &samples[i];
		struct ctx_row c = { .cgroup = x->cgroup_id, .stack = x->stack_id, .pid = x->pid,
				     .tid = x->tid, .cpu = x->cpu };
		size_t clen;

		/*
		 * A batch is mostly one context (a drained group: one stack, pid, tid and comm, its
		 * samples spread over a few CPUs): the comm and the last contexts are remembered
		 * within the call rather than hashed for every sample.
		 */
		if (comm_id < 0 || memcmp(x->comm, last_comm, STORE_COMM_LEN)) {
			/* a comm is the process's own (prctl): tidied as a frame name, since it is
			 * the root frame of folded output (no ';', no line breaks) */
			clen = strnlen(x->comm, STORE_COMM_LEN);
			sbuf_reset(&s->comm_buf);
			comm_escaped = sbuf_add_frame(&s->comm_buf, x->comm, clen) > 0;
			comm_id = sbuf_error(&s->comm_buf)
					  ? -ENOMEM
					  : strtab__intern(s->t.st, s->comm_buf.buf, s->comm_buf.len);
			memcpy(last_comm, x->comm, STORE_COMM_LEN);
		}
		if (comm_escaped)
			s->st.comms_escaped += x->count;
		id = comm_id;
		if (id >= 0) {
			c.comm = (uint32_t)id;
			for (k = 0; k < RECENT_CTX; k++)
				if (recent_id[k] >= 0 && !memcmp(&recent[k], &c, sizeof(c)))
					break;
			if (k < RECENT_CTX) {
				id = recent_id[k];
			} else {
				id = tables_ctx(&s->t, &c);
				recent[next_recent] = c;
				recent_id[next_recent] = id;
				next_recent = (next_recent + 1) % RECENT_CTX;
			}
		}
		for (k = 0; k < x->count; k++) {
			if (id < 0 || append_rec(s, x->time_ns, (uint32_t)id)) {
				s->st.dropped += x->count - k;
				r = -ENOMEM;
				break;
			}
		}
		count_cpu(s, x->cpu, k);
		/* a full chunk: make room, but keep the tables' numbering, which the rest of the
		 * batch's stack ids (interned before the call) and the remembered ids are in */
		if (s->tail && s->tail->n == CHUNK_RECS)
			enforce_memory(s, false);
	}
	enforce_memory(s, true);
	pthread_mutex_unlock(&s->lock);
	return r;
}

uint64_t store__expire(struct store *s, uint64_t now_ns)
{
	uint64_t before, cut;

	write_lock(s);
	before = s->st.evicted_time;
	cut = now_ns > s->retention_s * NSEC ? now_ns - s->retention_s * NSEC : 0;
	while (s->head && s->head->n && s->head->max_ns < cut) {
		drop_head(s, &s->st.evicted_time);
		s->expired_since++;
	}
	/* the names and stacks only expired samples used go with a compaction too, not only
	 * under memory pressure: once a quarter of the chunks went by age (paid for by them: no
	 * O(n^2)) and the tables grew by half since the last one, past a floor not worth it */
	/* ... or once a whole retention went by since the last one: every sample that used the
	 * names it kept has expired since (a compaction during an attack kept the attacker's
	 * names, and its tables then never grew by half again: 5 MB held after it) */
	if (s->expired_since > s->nr_chunks / 4 && s->head &&
	    tables_bytes(&s->t) > EXPIRY_COMPACT_MIN &&
	    (tables_bytes(&s->t) > s->compacted_bytes + s->compacted_bytes / 2 ||
	     now_ns - s->expiry_compact_ns > s->retention_s * NSEC)) {
		compact_now(s);
		s->expiry_compact_ns = now_ns;
	}
	/* an empty tail chunk (allocation without records) is not kept either */
	if (s->head && !s->head->n && s->head == s->tail)
		drop_head(s, &s->st.evicted_time);
	enforce_memory(s, true);
	before = s->st.evicted_time - before;
	pthread_mutex_unlock(&s->lock);
	return before;
}

/*
 * Re-interns everything that retained samples use into fresh tables and renumbers the records'
 * context ids. On ENOMEM the old tables stay.
 */
static int compact(struct store *s)
{
	struct tables nt;
	int32_t *ctx_map = NULL, *stack_map = NULL, *frame_map = NULL;
	uint32_t *buf = NULL;
	struct chunk *c;
	size_t i;
	int r = -ENOMEM;

	if (tables_init(&nt))
		return -ENOMEM;
	ctx_map = malloc((s->t.nr_ctxs + 1) * sizeof(*ctx_map));
	stack_map = malloc((s->t.nr_stacks + 1) * sizeof(*stack_map));
	frame_map = malloc((strtab__count(s->t.st) + 1) * sizeof(*frame_map));
	buf = malloc(UINT16_MAX * sizeof(*buf) + sizeof(*buf));
	if (!ctx_map || !stack_map || !frame_map || !buf)
		goto out;
	memset(ctx_map, 0xff, (s->t.nr_ctxs + 1) * sizeof(*ctx_map));
	memset(stack_map, 0xff, (s->t.nr_stacks + 1) * sizeof(*stack_map));
	memset(frame_map, 0xff, (strtab__count(s->t.st) + 1) * sizeof(*frame_map));
	for (c = s->head; c; c = c->next) {
		for (i = 0; i < c->n; i++) {
			uint32_t old = c->recs[i].ctx;
			struct ctx_row row;
			const struct stack_row *sr;
			size_t k;
			int id;

			if (ctx_map[old] >= 0)
				continue;
			row = s->t.ctxs[old];
			sr = &s->t.stacks[row.stack];
			if (stack_map[row.stack] < 0) {
				for (k = 0; k < sr->len; k++) {
					uint32_t f = s->t.pool[sr->off + k];

					if (frame_map[f] < 0) {
						id = strtab__intern(nt.st, strtab__str(s->t.st, f),
								    strtab__len(s->t.st, f));
						if (id < 0)
							goto out;
						frame_map[f] = id;
					}
					buf[k] = (uint32_t)frame_map[f];
				}
				id = tables_stack(&nt, buf, sr->len, sr->n_kernel, sr->flags);
				if (id < 0)
					goto out;
				stack_map[row.stack] = id;
			}
			row.stack = (uint32_t)stack_map[row.stack];
			if (frame_map[row.comm] < 0) {
				id = strtab__intern(nt.st, strtab__str(s->t.st, row.comm),
						    strtab__len(s->t.st, row.comm));
				if (id < 0)
					goto out;
				frame_map[row.comm] = id;
			}
			row.comm = (uint32_t)frame_map[row.comm];
			id = tables_ctx(&nt, &row);
			if (id < 0)
				goto out;
			ctx_map[old] = id;
		}
	}
	for (c = s->head; c; c = c->next)
		for (i = 0; i < c->n; i++)
			c->recs[i].ctx = (uint32_t)ctx_map[c->recs[i].ctx];
	tables_fini(&s->t);
	s->t = nt;
	nt.st = NULL;
	s->st.compactions++;
	r = 0;
out:
	if (r)
		tables_fini(&nt);
	free(ctx_map);
	free(stack_map);
	free(frame_map);
	free(buf);
	return r;
}

/* --- reading ------------------------------------------------------------------------------- */

/*
 * Readers walk the ring in batches: at most WALK_BATCH_RECS records are looked at per hold of
 * the lock, which is then released so that the writer (the daemon's drain tick) never waits
 * longer than one batch (~0.2 ms) whatever the window. Between batches the walk keeps a cursor
 * (a chunk's sequence number and an index: chunks only come at the tail and go at the head,
 * records are only appended) and re-checks the compaction count: a compaction renumbers context,
 * stack and frame ids, so every cache keyed by them is dropped then (walk_sync()).
 */
#define WALK_BATCH_RECS 65536u

struct walk {
	struct store *s;
	const struct store_filter *f;
	uint64_t from, to;
	int8_t *match;	/* per ctx: -1 unknown, 0 no, 1 yes */
	size_t match_cap;
	uint64_t compactions; /* the store's count when the id caches were filled */
	uint64_t seq;	      /* cursor: the chunk ... */
	uint32_t idx;	      /* ... and the record to look at next */
	bool since;	      /* a reader of what came since its cursor: every record once */
	bool done;
};

static int walk_init(struct walk *w, struct store *s, const struct store_filter *f)
{
	*w = (struct walk){ .s = s, .f = f, .from = f->from_ns, .to = f->to_ns };
	if (!w->to)
		w->to = UINT64_MAX;
	if (!f->kernel && !f->user)
		return -EINVAL;
	return 0;
}

/*
 * Under the lock, before each batch: sizes the per-ctx cache for the contexts interned so far.
 * Returns 1 when ids were renumbered since the last call (a compaction: callers drop their own
 * id caches; the first call counts as one), 0, or -ENOMEM.
 */
static int walk_sync(struct walk *w)
{
	size_t n = w->s->t.nr_ctxs + 1, old = w->match_cap;
	int renumbered = !w->match || w->compactions != w->s->st.compactions;

	if (array_grow((void **)&w->match, &w->match_cap, n, 1, 256))
		return -ENOMEM;
	if (renumbered)
		memset(w->match, 0xff, w->match_cap);
	else if (w->match_cap > old)
		memset(w->match + old, 0xff, w->match_cap - old);
	w->compactions = w->s->st.compactions;
	return renumbered;
}

static void walk_fini(struct walk *w)
{
	free(w->match);
}

/* 1 or 0, cached per context; or -E2BIG: the comm pattern reached its match limit (and the
 * walk ends with it), -ENOMEM. */
static int ctx_matches(struct walk *w, uint32_t id)
{
	const struct ctx_row *c;
	const struct stack_row *sr;
	const char *comm;
	int m = 1;

	if (w->match[id] >= 0)
		return w->match[id];
	c = &w->s->t.ctxs[id];
	sr = &w->s->t.stacks[c->stack];
	if (w->f->pid >= 0 && c->pid != (uint64_t)w->f->pid)
		m = false;
	if (w->f->tid >= 0 && c->tid != (uint64_t)w->f->tid)
		m = false;
	if (!w->f->include_idle && (sr->flags & STORE_STACK_IDLE)) /* the one rule (idle.h) */
		m = false;
	if (m && w->f->ident_match) {
		comm = strtab__str(w->s->t.st, c->comm);
		m = w->f->ident_match(c->cgroup, c->pid, comm, w->f->ident_arg);
	}
	if (m && w->f->comm_re) {
		comm = strtab__str(w->s->t.st, c->comm);
		m = ember_regex__match(w->f->comm_re, comm, strlen(comm));
		if (m < 0)
			return m == -E2BIG ? -QUERY_ECOMM_LIMIT : m;
	}
	w->match[id] = (int8_t)m;
	return m;
}

/* Calls @fn(time, ctx) for each matching record; stops on non-zero. */
typedef int (*rec_fn)(struct walk *w, uint64_t t, uint32_t ctx, void *arg);

/*
 * Under the lock: one batch from the cursor. Returns 0 (w->done tells whether the walk is
 * over) or what @fn returned (the cursor then is past that record).
 */
static int walk_batch(struct walk *w, rec_fn fn, void *arg)
{
	const struct chunk *c;
	uint32_t i, looked = 0;
	uint64_t from = w->from;
	int r;

	/* a range starts after the newest record dropped: before it, the stacks that went with
	 * the dropped chunk are missing and those in the next one are not (burn's 6:3:1 shares
	 * read 2.64:1 for 2:1 over the oldest seconds at the memory cap). A reader since its
	 * cursor read those records before they went, or is told of the gap */
	if (!w->since && from <= w->s->complete_after_ns)
		from = w->s->complete_after_ns + 1;
	for (c = w->s->head; c && c->seq < w->seq; c = c->next)
		;
	/* the cursor's chunk may be gone (evicted meanwhile): go on from the oldest left */
	i = c && c->seq == w->seq ? w->idx : 0;
	for (; c; c = c->next, i = 0) {
		if (!c->n || c->max_ns < from || c->min_ns >= w->to) {
			i = c->n;
		}
		for (; i < c->n; i++) {
			uint64_t t = c->base_ns + (uint64_t)c->recs[i].dt_us * 1000;

			if (++looked > WALK_BATCH_RECS) {
				w->seq = c->seq;
				w->idx = i;
				return 0;
			}
			if (t < from || t >= w->to)
				continue;
			r = ctx_matches(w, c->recs[i].ctx);
			if (r < 0) {
				w->seq = c->seq;
				w->idx = i;
				return r;
			}
			if (!r)
				continue;
			r = fn(w, t, c->recs[i].ctx, arg);
			if (r) {
				w->seq = c->seq;
				w->idx = i + 1;
				return r;
			}
		}
		w->seq = c->seq;
		w->idx = c->n;
	}
	w->done = true;
	return 0;
}

/* The frame selection of a context: writes store frame ids (root first) into @out. */
static size_t select_frames(const struct walk *w, const struct stack_row *sr, const uint32_t **ret)
{
	const uint32_t *fr = w->s->t.pool + sr->off;
	size_t n_user = sr->len - sr->n_kernel;

	if (w->f->kernel && w->f->user) {
		*ret = fr;
		return sr->len;
	}
	if (w->f->kernel) {
		*ret = fr + n_user;
		return sr->n_kernel;
	}
	*ret = fr;
	return n_user;
}

/*
 * Interns @name (a unit, container or service name: what a process's cgroup is called) escaped as
 * every frame is (sbuf_add_frame()): a ';' in a unit's name must not split the stack, nor a TAB
 * or bytes outside UTF-8 reach an output raw. Id or -ENOMEM.
 */
static int intern_frame_text(struct strtab *st, const char *name)
{
	struct sbuf sb = SBUF_INIT;
	size_t len = strlen(name);
	int id;

	if (!sbuf_add_frame(&sb, name, len)) {
		sbuf_fini(&sb);
		return strtab__intern(st, name, len);
	}
	id = sbuf_error(&sb) ? -ENOMEM : strtab__intern(st, sb.buf, sb.len);
	sbuf_fini(&sb);
	return id;
}

static int root_text(const struct walk *w, const struct ctx_row *c, char *buf, size_t len)
{
	const char *comm = strtab__str(w->s->t.st, c->comm);

	switch (w->f->root) {
	case STORE_ROOT_NONE:
		return 0;
	case STORE_ROOT_COMM:
		return snprintf(buf, len, "%s", comm);
	case STORE_ROOT_COMM_PID:
		return snprintf(buf, len, "%s-%u", comm, c->pid);
	case STORE_ROOT_COMM_TID:
		return snprintf(buf, len, "%s-%u/%u", comm, c->pid, c->tid);
	}
	return 0;
}

/*
 * Under the lock: the frames of context @ctx after the filter's selection and root, interned into
 * @st, in @ids (UINT16_MAX + 3 of them). @fmap caches store frame id -> @st id (-1: not yet;
 * strtab__count() of the store's entries). Returns the number of ids or -ENOMEM.
 */
static int ctx_frames(const struct walk *w, uint32_t ctx, struct strtab *st, int32_t *fmap,
		      uint32_t *ids)
{
	const struct ctx_row *c = &w->s->t.ctxs[ctx];
	const uint32_t *fr;
	size_t n, k, m = 0;
	char root[96]; /* an escaped comm (up to 4 bytes per byte) and "-pid/tid" */
	const char *group;
	int rl, id;

	if (w->f->group_name) { /* group_by: the workload's name above the root */
		group = w->f->group_name(c->cgroup, c->pid, strtab__str(w->s->t.st, c->comm),
					 w->f->ident_arg);
		id = intern_frame_text(st, group ? group : "[none]");
		if (id < 0)
			return -ENOMEM;
		ids[m++] = (uint32_t)id;
	}
	rl = root_text(w, c, root, sizeof(root));
	if (rl > 0) {
		id = strtab__intern(st, root,
				    (size_t)rl < sizeof(root) ? (size_t)rl : sizeof(root) - 1);
		if (id < 0)
			return -ENOMEM;
		ids[m++] = (uint32_t)id;
	}
	n = select_frames(w, &w->s->t.stacks[c->stack], &fr);
	for (k = 0; k < n; k++) {
		if (fmap[fr[k]] < 0) {
			id = strtab__intern(st, strtab__str(w->s->t.st, fr[k]),
					    strtab__len(w->s->t.st, fr[k]));
			if (id < 0)
				return -ENOMEM;
			fmap[fr[k]] = id;
		}
		ids[m++] = (uint32_t)fmap[fr[k]];
	}
	return (int)m;
}

/* Grows an id-keyed cache of int32 to @n entries, new ones -1 (all of them after @reset). */
static int idmap_sync(int32_t **map, size_t *cap, size_t n, bool reset)
{
	size_t old = *cap;

	if (array_grow((void **)map, cap, n, sizeof(**map), 256))
		return -ENOMEM;
	if (reset)
		memset(*map, 0xff, *cap * sizeof(**map));
	else if (*cap > old)
		memset(*map + old, 0xff, (*cap - old) * sizeof(**map));
	return 0;
}

/* store__query's state: counts per context of the current batch, flushed into the profile. */
struct agg {
	struct profile *p;
	struct strtab *st;
	uint64_t *counts; /* per store ctx id, this batch */
	size_t counts_cap;
	uint32_t *touched; /* ctx ids with counts[] > 0 */
	size_t nr_touched, touched_cap;
	int32_t *pmap; /* store ctx id -> profile stack index (-1: not yet) */
	size_t pmap_cap;
	int32_t *fmap; /* store frame id -> st id (-1: not yet) */
	size_t fmap_cap;
	uint32_t *ids; /* UINT16_MAX + 3 */
};

static int count_rec(struct walk *w, uint64_t t, uint32_t ctx, void *arg)
{
	struct agg *a = arg;

	if (!a->counts[ctx]++) {
		if (array_grow((void **)&a->touched, &a->touched_cap, a->nr_touched + 1,
			       sizeof(*a->touched), 256))
			return -ENOMEM;
		a->touched[a->nr_touched++] = ctx;
	}
	return 0;
}

/* Under the lock: sizes the id caches (dropped after a renumbering). */
static int agg_sync(struct agg *a, const struct store *s, bool renumbered)
{
	size_t n = s->t.nr_ctxs + 1, old = a->counts_cap;

	if (array_grow((void **)&a->counts, &a->counts_cap, n, sizeof(*a->counts), 256))
		return -ENOMEM;
	memset(a->counts + old, 0, (a->counts_cap - old) * sizeof(*a->counts));
	if (idmap_sync(&a->pmap, &a->pmap_cap, n, renumbered) ||
	    idmap_sync(&a->fmap, &a->fmap_cap, strtab__count(s->t.st) + 1, renumbered))
		return -ENOMEM;
	return 0;
}

/* Under the lock, after a batch: its counts into the profile, while the ids still hold. */
static int agg_flush(struct walk *w, struct agg *a)
{
	size_t i;
	int m, idx;

	for (i = 0; i < a->nr_touched; i++) {
		uint32_t ctx = a->touched[i];
		double c = (double)a->counts[ctx];

		a->counts[ctx] = 0;
		if (a->pmap[ctx] >= 0) {
			idx = a->pmap[ctx];
			profile__set_counts(a->p, (size_t)idx,
					    profile__count(a->p, (size_t)idx) + c, 0);
			continue;
		}
		m = ctx_frames(w, ctx, a->st, a->fmap, a->ids);
		if (m < 0)
			return m;
		idx = profile__add(a->p, a->ids, (size_t)m, c);
		if (idx < 0)
			return idx;
		a->pmap[ctx] = idx;
	}
	a->nr_touched = 0;
	return 0;
}

struct profile *store__query(struct store *s, const struct store_filter *f, struct strtab *st)
{
	struct agg a = { .st = st };
	struct walk w;
	int err;

	err = walk_init(&w, s, f);
	if (err) {
		errno = -err;
		return NULL;
	}
	a.p = profile__new(st);
	a.ids = malloc((UINT16_MAX + 3) * sizeof(*a.ids));
	if (!a.p || !a.ids) {
		err = -ENOMEM;
		goto out;
	}
	pthread_mutex_lock(&s->lock);
	for (;;) {
		err = walk_sync(&w);
		if (err >= 0)
			err = agg_sync(&a, s, err > 0);
		if (!err)
			err = walk_batch(&w, count_rec, &a);
		if (!err)
			err = agg_flush(&w, &a);
		if (err || w.done)
			break;
		reader_yield(s); /* let the writer in between batches */
	}
	pthread_mutex_unlock(&s->lock);
out:
	walk_fini(&w);
	free(a.counts);
	free(a.touched);
	free(a.pmap);
	free(a.fmap);
	free(a.ids);
	if (err) {
		profile__free(a.p);
		errno = -err;
		return NULL;
	}
	return a.p;
}

struct heat {
	struct store_point *pts;
	size_t n, cap;
	uint64_t bucket;
};

static int heat_rec(struct walk *w, uint64_t t, uint32_t ctx, void *arg)
{
	struct heat *h = arg;
	uint64_t b = t - t % h->bucket;

	if (h->n && h->pts[h->n - 1].time_ns == b) {
		h->pts[h->n - 1].count++;
		return 0;
	}
	if (array_grow((void **)&h->pts, &h->cap, h->n + 1, sizeof(*h->pts), 64))
		return -ENOMEM;
	h->pts[h->n++] = (struct store_point){ .time_ns = b, .count = 1 };
	return 0;
}

static int point_cmp(const void *a, const void *b)
{
	const struct store_point *x = a, *y = b;

	return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

int store__heatmap(struct store *s, const struct store_filter *f, uint64_t bucket_ns,
		   struct store_point **ret_points, size_t *ret_n)
{
	struct heat h = { .bucket = bucket_ns };
	struct walk w;
	size_t i, j;
	int r;

	if (bucket_ns < 1000)
		return -EINVAL;
	r = walk_init(&w, s, f);
	if (r)
		return r;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		r = walk_sync(&w);
		if (r >= 0)
			r = walk_batch(&w, heat_rec, &h);
		if (r || w.done)
			break;
		reader_yield(s);
	}
	pthread_mutex_unlock(&s->lock);
	walk_fini(&w);
	if (r) {
		free(h.pts);
		return r;
	}
	/* records are nearly sorted: sort, then merge equal buckets */
	if (h.n)
		qsort(h.pts, h.n, sizeof(*h.pts), point_cmp);
	for (i = 0, j = 0; i < h.n; i++) {
		if (j && h.pts[j - 1].time_ns == h.pts[i].time_ns)
			h.pts[j - 1].count += h.pts[i].count;
		else
			h.pts[j++] = h.pts[i];
	}
	*ret_points = j ? h.pts : NULL;
	if (!j)
		free(h.pts);
	*ret_n = j;
	return 0;
}

/*
 * store__foreach_sample()'s copy of one batch: the matching records as (time, local context),
 * the contexts with their frames interned into a strtab of its own, so that the callback runs
 * without the lock.
 */
struct each_ctx {
	uint64_t cgroup;
	uint32_t pid, tid, cpu;
	uint32_t comm;	 /* id in the copy's strtab */
	uint32_t off, n; /* frames: ids in the copy's strtab, in each.frames */
	unsigned int flags;
};

struct each {
	struct strtab *st;
	uint64_t *times; /* this batch: WALK_BATCH_RECS at most */
	uint32_t *lctx;
	size_t n;
	struct each_ctx *ctxs;
	size_t nr_ctxs, ctxs_cap;
	uint32_t *frames;
	size_t nr_frames, frames_cap;
	int32_t *cmap; /* store ctx id -> index in ctxs (-1: not yet) */
	size_t cmap_cap;
	int32_t *fmap; /* store frame id -> st id */
	size_t fmap_cap;
	uint32_t *ids;	    /* UINT16_MAX + 3 */
	const char **names; /* UINT16_MAX + 3 */
};

static int each_rec(struct walk *w, uint64_t t, uint32_t ctx, void *arg)
{
	struct each *e = arg;
	const struct ctx_row *c;
	int m, id;

	if (e->cmap[ctx] < 0) {
		c = &w->s->t.ctxs[ctx];
		m = ctx_frames(w, ctx, e->st, e->fmap, e->ids);
		if (m < 0)
			return m;
		id = strtab__intern(e->st, strtab__str(w->s->t.st, c->comm),
				    strtab__len(w->s->t.st, c->comm));
		if (id < 0 || e->nr_ctxs >= INT32_MAX ||
		    array_grow((void **)&e->ctxs, &e->ctxs_cap, e->nr_ctxs + 1, sizeof(*e->ctxs),
			       64) ||
		    array_grow((void **)&e->frames, &e->frames_cap, e->nr_frames + (size_t)m,
			       sizeof(*e->frames), 256) ||
		    e->nr_frames + (size_t)m > UINT32_MAX)
			return -ENOMEM;
		memcpy(e->frames + e->nr_frames, e->ids, (size_t)m * sizeof(*e->ids));
		e->ctxs[e->nr_ctxs] = (struct each_ctx){ .cgroup = c->cgroup,
							 .pid = c->pid,
							 .tid = c->tid,
							 .cpu = c->cpu,
							 .comm = (uint32_t)id,
							 .off = (uint32_t)e->nr_frames,
							 .n = (uint32_t)m,
							 .flags = w->s->t.stacks[c->stack].flags };
		e->nr_frames += (size_t)m;
		e->cmap[ctx] = (int32_t)e->nr_ctxs++;
	}
	e->times[e->n] = t;
	e->lctx[e->n++] = (uint32_t)e->cmap[ctx];
	return 0;
}

/* Without the lock: @fn over the batch copied. Returns 0 or @fn's non-zero value. */
static int each_call(struct each *e, size_t max, size_t *done, store_sample_fn fn, void *ctx)
{
	size_t i, k;
	int r;

	for (i = 0; i < e->n; i++) {
		const struct each_ctx *c = &e->ctxs[e->lctx[i]];
		struct store_sample_view v = { .time_ns = e->times[i],
					       .pid = c->pid,
					       .tid = c->tid,
					       .cpu = c->cpu,
					       .cgroup_id = c->cgroup,
					       .context = e->lctx[i],
					       .comm = strtab__str(e->st, c->comm),
					       .frames = e->names,
					       .nr_frames = c->n,
					       .flags = c->flags };

		if (max && *done >= max)
			return 0;
		for (k = 0; k < c->n; k++)
			e->names[k] = strtab__str(e->st, e->frames[c->off + k]);
		++*done;
		r = fn(&v, ctx);
		if (r)
			return r;
	}
	return 0;
}

void store__cursor_end(struct store *s, struct store_cursor *ret)
{
	write_lock(s);
	if (s->tail)
		*ret = (struct store_cursor){ .seq = s->tail->seq, .idx = s->tail->n };
	else
		*ret = (struct store_cursor){ .seq = s->next_seq, .idx = 0 };
	pthread_mutex_unlock(&s->lock);
}

static int foreach(struct store *s, const struct store_filter *f, size_t max,
		   struct store_cursor *cursor, bool *ret_gap, store_sample_fn fn, void *ctx);

int store__foreach_sample(struct store *s, const struct store_filter *f, size_t max,
			  store_sample_fn fn, void *ctx)
{
	return foreach(s, f, max, NULL, NULL, fn, ctx);
}

int store__foreach_since(struct store *s, const struct store_filter *f, struct store_cursor *cursor,
			 store_sample_fn fn, void *ctx, bool *ret_gap)
{
	return foreach(s, f, 0, cursor, ret_gap, fn, ctx);
}

static int foreach(struct store *s, const struct store_filter *f, size_t max,
		   struct store_cursor *cursor, bool *ret_gap, store_sample_fn fn, void *ctx)
{
	struct each e = { 0 };
	struct walk w;
	size_t done = 0;
	int r;

	r = walk_init(&w, s, f);
	if (r)
		return r;
	if (cursor) {
		w.since = true;
		w.seq = cursor->seq;
		w.idx = cursor->idx;
		*ret_gap = false;
		read_lock(s);
		if (s->head && s->head->seq > cursor->seq)
			*ret_gap = true;
		pthread_mutex_unlock(&s->lock);
	}
	e.st = strtab__new();
	e.times = malloc(WALK_BATCH_RECS * sizeof(*e.times));
	e.lctx = malloc(WALK_BATCH_RECS * sizeof(*e.lctx));
	e.ids = malloc((UINT16_MAX + 3) * sizeof(*e.ids));
	e.names = malloc((UINT16_MAX + 3) * sizeof(*e.names));
	if (!e.st || !e.times || !e.lctx || !e.ids || !e.names) {
		r = -ENOMEM;
		goto out;
	}
	while (!w.done && (!max || done < max)) {
		e.n = 0;
		read_lock(s);
		r = walk_sync(&w);
		if (r >= 0) {
			bool renumbered = r > 0;

			r = idmap_sync(&e.cmap, &e.cmap_cap, s->t.nr_ctxs + 1, renumbered);
			if (!r)
				r = idmap_sync(&e.fmap, &e.fmap_cap, strtab__count(s->t.st) + 1,
					       renumbered);
		}
		if (!r)
			r = walk_batch(&w, each_rec, &e);
		pthread_mutex_unlock(&s->lock);
		if (!r)
			r = each_call(&e, max, &done, fn, ctx);
		if (r)
			break;
		if (cursor)
			*cursor = (struct store_cursor){ .seq = w.seq, .idx = w.idx };
	}
out:
	walk_fini(&w);
	strtab__free(e.st);
	free(e.times);
	free(e.lctx);
	free(e.ctxs);
	free(e.frames);
	free(e.cmap);
	free(e.fmap);
	free(e.ids);
	free(e.names);
	return r;
}

void store__stats(struct store *s, struct store_stats *ret)
{
	const struct chunk *c;

	pthread_mutex_lock(&s->lock);
	*ret = s->st;
	ret->frames = strtab__count(s->t.st);
	ret->stacks = s->t.nr_stacks;
	ret->contexts = s->t.nr_ctxs;
	ret->bytes = store_bytes(s);
	ret->sample_bytes = chunks_bytes(s);
	ret->max_bytes = s->max_bytes;
	ret->retention_s = s->retention_s;
	ret->oldest_ns = 0;
	ret->newest_ns = 0;
	for (c = s->head; c; c = c->next) {
		if (!c->n)
			continue;
		if (!ret->oldest_ns || c->min_ns < ret->oldest_ns)
			ret->oldest_ns = c->min_ns;
		if (c->max_ns > ret->newest_ns)
			ret->newest_ns = c->max_ns;
	}
	/* what a range can see: from the first microsecond after the newest record dropped */
	if (ret->oldest_ns && ret->oldest_ns <= s->complete_after_ns)
		ret->oldest_ns = s->complete_after_ns + 1000 < ret->newest_ns ?
					 s->complete_after_ns + 1000 : ret->newest_ns;
	pthread_mutex_unlock(&s->lock);
}

uint64_t store__compactions(struct store *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->st.compactions;
	pthread_mutex_unlock(&s->lock);
	return n;
}
