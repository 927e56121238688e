// SPDX-License-Identifier: MIT
/* emberd's data endpoints: folded, flame graph, heat map, samples, diff, stats, healthz. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/analysis/views.h"
#include "ember/core/render/diff.h"
#include "ember/core/render/flamegraph.h"
#include "ember/core/formats/folded.h"
#include "ember/core/render/heatmap.h"
#include "ember/daemon/http/http.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/recording.h"
#include "ember/core/formats/samples_text.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/timeexpr.h"
#include "ember/core/model/idle.h"
#include "ember/core/model/frame.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/regex.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/export/identity.h"
#include "http_internal.h"

#define NS 1000000000LL

/* --- sources --------------------------------------------------------------------------------- */

int64_t http_source_now(const struct http_source *src)
{
	int64_t first, last;

	if (src->rec) {
		if (recording__bounds(src->rec, &first, &last))
			return 0;
		return last + 1;
	}
	return http_now_ns();
}

int http_source_bounds(const struct http_source *src, int64_t *ret_first, int64_t *ret_last)
{
	struct store_stats st;

	if (src->rec)
		return recording__bounds(src->rec, ret_first, ret_last);
	store__stats(src->store, &st);
	if (!st.samples)
		return -ENODATA;
	*ret_first = (int64_t)st.oldest_ns;
	*ret_last = (int64_t)st.newest_ns;
	return 0;
}

static bool match_none(uint64_t cgroup_id, uint32_t pid, const char *comm, void *arg)
{
	(void)cgroup_id;
	(void)pid;
	(void)comm;
	(void)arg;
	return false;
}

void http_identity_filter(const struct http_source *src, const struct query_common *q,
			  struct store_filter *f, struct identity_filter *idf)
{
	bool filter = q->container[0] || q->service[0] || q->unit[0];

	memset(idf, 0, sizeof(*idf));
	idf->id = src->identity;
	idf->container = q->container[0] ? q->container : NULL;
	idf->service = q->service[0] ? q->service : NULL;
	idf->unit = q->unit[0] ? q->unit : NULL;
	f->ident_arg = idf;
	if (!src->identity) {
		f->ident_match = filter ? match_none : NULL;
		return;
	}
	if (filter || q->group_by[0])
		identity__refresh(src->identity); /* cgroups made since: known before the lock */
	if (filter)
		f->ident_match = identity_filter_match;
	if (q->group_by[0] && !identity_group_parse(q->group_by, &idf->group))
		f->group_name = identity_filter_group;
}

/* The store takes unsigned times; a range entirely before the epoch selects nothing. @idf: the
 * workload filter's state. */
static bool store_filter_from(const struct http_source *src, const struct query_common *q,
			      struct store_filter *f, struct identity_filter *idf)
{
	*f = (struct store_filter)STORE_FILTER_INIT;
	if (q->to_ns <= 0 || q->to_ns <= q->from_ns)
		return false;
	f->from_ns = q->from_ns > 0 ? (uint64_t)q->from_ns : 1; /* 0 would mean "oldest" anyway */
	f->to_ns = (uint64_t)q->to_ns;
	f->pid = q->pid;
	f->tid = q->tid;
	f->comm_re = q->has_comm ? q->comm_re : NULL;
	f->kernel = q->kernel != QUERY_FLAG_OFF;
	f->user = q->user != QUERY_FLAG_OFF;
	f->include_idle = q->idle == QUERY_FLAG_ON;
	f->root = STORE_ROOT_COMM;
	http_identity_filter(src, q, f, idf);
	return true;
}

/* Recording samples: the same filter semantics as the store's, on the recorded fields. */
static bool rec_is_idle(const struct rec_sample *s)
{
	/* the one idle rule (idle.h), as the live store's ingest applies it */
	return idle_task(s->pid, s->comm, strlen(s->comm)) &&
	       idle_stack_text(s->stack, s->stack_len);
}

/* 1 or 0; or -QUERY_ECOMM_LIMIT, -ENOMEM: the walk ends with it */
static int rec_matches(const struct rec_sample *s, const struct query_common *q)
{
	if (q->pid >= 0 && s->pid != q->pid)
		return 0;
	if (q->tid >= 0 && s->tid != q->tid)
		return 0;
	if (q->idle != QUERY_FLAG_ON && rec_is_idle(s))
		return 0;
	return query_common_match_comm(q, s->comm, strlen(s->comm));
}

/*
 * The stack text after the kernel/user frame selection; the root (comm) frame always stays.
 * Returns the text in @tmp (reset) or the original when nothing is dropped.
 */
static const char *select_frames(const struct rec_sample *s, const struct query_common *q,
				 struct sbuf *tmp, size_t *ret_len)
{
	bool keep_k = q->kernel != QUERY_FLAG_OFF, keep_u = q->user != QUERY_FLAG_OFF;
	const char *p = s->stack, *end = s->stack + s->stack_len, *semi;
	bool first = true;

	if (keep_k && keep_u) {
		*ret_len = s->stack_len;
		return s->stack;
	}
	sbuf_reset(tmp);
	while (p < end) {
		size_t n;

		semi = memchr(p, ';', (size_t)(end - p));
		n = semi ? (size_t)(semi - p) : (size_t)(end - p);
		if (first || (frame_is_kernel(p, n) ? keep_k : keep_u)) {
			if (tmp->len)
				sbuf_addc(tmp, ';');
			sbuf_add(tmp, p, n);
		}
		first = false;
		p += n + 1;
	}
	*ret_len = tmp->len;
	return tmp->buf ? tmp->buf : "";
}

struct agg_ctx {
	const struct query_common *q;
	struct profile *p;
	int32_t *cache;		/* recording stack_id -> profile index + 1 (0: not yet) */
	size_t ncache;
	struct sbuf tmp;
};

static int agg_sample(const struct rec_sample *s, void *ctx)
{
	struct agg_ctx *a = ctx;
	const char *text;
	size_t len;
	int idx = rec_matches(s, a->q);

	if (idx <= 0)
		return idx;
	if (s->stack_id < a->ncache && a->cache[s->stack_id]) {
		idx = a->cache[s->stack_id] - 1;
		profile__set_counts(a->p, (size_t)idx, profile__count(a->p, (size_t)idx) + s->count,
				    0);
		return 0;
	}
	text = select_frames(s, a->q, &a->tmp, &len);
	if (sbuf_error(&a->tmp))
		return -ENOMEM;
	idx = folded_add_stack(a->p, text, len, s->count, 0, false, 0);
	if (idx < 0)
		return idx;
	if (s->stack_id < a->ncache)
		a->cache[s->stack_id] = idx + 1;
	return 0;
}

int http_memio_index(const struct query_common *q)
{
	switch (q->event) {
	case QUERY_EVENT_PAGEFAULT:
		return MEMIO_STORE_PAGEFAULT;
	case QUERY_EVENT_VMGROW:
		return MEMIO_STORE_VMGROW;
	case QUERY_EVENT_BLOCKIO:
		return q->weight_latency ? MEMIO_STORE_BLOCKIO_LAT : MEMIO_STORE_BLOCKIO;
	case QUERY_EVENT_MALLOC:
		return MEMIO_STORE_MALLOC;
	case QUERY_EVENT_CYCLES:
		return MEMIO_STORE_CYCLES;
	case QUERY_EVENT_INSTRUCTIONS:
		return MEMIO_STORE_INSTRUCTIONS;
	default:
		return -1;
	}
}

const char *http_event_unavailable(const struct http_source *src, const struct query_common *q)
{
	static const char *const off[MEMIO_STORE_NR] = {
		[MEMIO_STORE_PAGEFAULT] = "page faults need [pagefault] enabled",
		[MEMIO_STORE_VMGROW] = "vm growth needs [vmgrow] enabled",
		[MEMIO_STORE_BLOCKIO] = "block I/O needs [blockio] enabled",
		[MEMIO_STORE_BLOCKIO_LAT] = "block I/O needs [blockio] enabled",
		[MEMIO_STORE_MALLOC] = "malloc needs [malloc] enabled",
	};
	int m = http_memio_index(q);

	if (m < 0 || src->memio[m])
		return NULL;
	if (m == MEMIO_STORE_CYCLES || m == MEMIO_STORE_INSTRUCTIONS)
		return src->pmc_why[0] ? src->pmc_why : "hardware counters: not probed (no sampler)";
	return off[m];
}

struct store *http_source_store(const struct http_source *src, const struct query_common *q)
{
	int m = http_memio_index(q);

	if (m >= 0)
		return src->memio[m];
	if (q->event == QUERY_EVENT_WALL)
		return NULL; /* two stores: wall_profile() and the heat map weigh them */
	if (q->event == QUERY_EVENT_WAKEUP)
		return src->wakeup;
	if (q->event == QUERY_EVENT_CHAIN)
		return src->chain;
	return q->event == QUERY_EVENT_OFFCPU ? src->offcpu : src->store;
}

/*
 * Adds @from's stacks to @to, each count times @mul; @mark (when not NULL) goes in as the second
 * frame (after the root, comm), where off-CPU stacks have their state. 0 or -errno.
 */
static int wall_add(struct profile *to, const struct profile *from, uint64_t mul, int32_t mark)
{
	uint32_t buf[1024 + 1];
	size_t i, n, d;
	uint64_t c, c2;
	int r;

	for (i = 0; i < profile__nr_stacks(from); i++) {
		const uint32_t *f = profile__stack(from, i, &n);

		if (!profile__count_exact(from, i, &c, &c2))
			c = (uint64_t)profile__count(from, i);
		if (n > 1024)
			n = 1024;
		d = 0;
		if (n)
			buf[d++] = f[0];
		if (mark >= 0)
			buf[d++] = (uint32_t)mark;
		if (n > 1)
			memcpy(buf + d, f + 1, (n - 1) * sizeof(*f));
		d += n ? n - 1 : 0;
		r = profile__add_u64(to, buf, d, c * mul);
		if (r < 0)
			return r;
	}
	return 0;
}

/* event=wall: on-CPU and off-CPU stacks of the window, in microseconds. NULL + errno. */
static struct profile *wall_profile(const struct http_source *src, const struct store_filter *f,
				    struct strtab *st)
{
	struct profile *a = NULL, *b = NULL, *p = profile__new(st);
	int mark, err = -ENOMEM;

	if (!p)
		return NULL;
	if (!src->offcpu || !src->cpu_us)
		return p; /* [offcpu] off: nothing to add up */
	mark = strtab__intern(st, "[on-cpu]", 8);
	a = store__query(src->store, f, st);
	b = a ? store__query(src->offcpu, f, st) : NULL;
	if (mark >= 0 && a && b) {
		err = wall_add(p, a, src->cpu_us, mark);
		if (!err)
			err = wall_add(p, b, src->offcpu_us, -1);
	} else if (!a || !b) {
		err = http_query_err(errno);
	}
	profile__free(a);
	profile__free(b);
	if (err) {
		profile__free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

static struct profile *source_profile(const struct http_source *src, const struct query_common *q,
				      struct strtab *st)
{
	struct store_filter f;
	struct identity_filter idf;
	struct agg_ctx a = { .q = q, .tmp = SBUF_INIT };
	int err;

	if (src->store) {
		if (!store_filter_from(src, q, &f, &idf))
			return profile__new(st);
		if (q->event == QUERY_EVENT_WALL)
			return wall_profile(src, &f, st);
		if (!http_source_store(src, q))
			return profile__new(st);
		return store__query(http_source_store(src, q), &f, st);
	}
	a.p = profile__new(st);
	if (!a.p)
		return NULL;
	a.ncache = recording__nr_stacks(src->rec);
	a.cache = calloc(a.ncache ? a.ncache : 1, sizeof(*a.cache));
	if (!a.cache) {
		profile__free(a.p);
		errno = ENOMEM;
		return NULL;
	}
	err = recording__for_each(src->rec, q->from_ns, q->to_ns, agg_sample, &a);
	free(a.cache);
	sbuf_fini(&a.tmp);
	if (err) {
		profile__free(a.p);
		errno = -err;
		return NULL;
	}
	return a.p;
}

/* The profile of @q, focus= and ignore= applied last: on whole stacks, as pprof does. */
struct profile *http_source_profile(const struct http_source *src, const struct query_common *q,
				    struct strtab *st)
{
	struct profile *p = source_profile(src, q, st), *f;

	if (!p || !query_common_has_frames(q))
		return p;
	f = views_filter_frames(p, q);
	profile__free(p);
	return f;
}

/*
 * focus= and ignore= sample by sample (heat map, samples): the answer per stack is cached by
 * an id of the walk's own (a store context, a recording's stack id). 1 keep, 0 drop, -errno.
 */
struct pass_cache {
	signed char *v; /* 0: not asked; 1: drop; 2: keep */
	size_t cap;
};

static int pass_frame(const struct query_common *q, const char *name, size_t len, bool *focus_hit)
{
	int r = query_common_match_frame(q, name, len);

	if (r < 0)
		return r;
	if (r & QUERY_FRAME_IGNORE)
		return 0;
	if (r & QUERY_FRAME_FOCUS)
		*focus_hit = true;
	return 1;
}

static int pass_cached(struct pass_cache *c, size_t id, int answer)
{
	if (id >= c->cap) {
		size_t cap = c->cap ? c->cap : 1024;
		signed char *nv;

		while (cap <= id)
			cap *= 2;
		nv = realloc(c->v, cap);
		if (!nv)
			return -ENOMEM;
		memset(nv + c->cap, 0, cap - c->cap);
		c->v = nv;
		c->cap = cap;
	}
	if (answer >= 0)
		c->v[id] = (signed char)(answer + 1);
	return c->v[id] - 1;
}

static int pass_names(const struct query_common *q, struct pass_cache *c, size_t id,
		      const char *const *names, size_t n)
{
	bool hit = !q->focus_re;
	size_t i;
	int r;

	if (!query_common_has_frames(q))
		return 1;
	r = pass_cached(c, id, -1);
	if (r != -1)
		return r;
	for (i = 0, r = 1; i < n && r > 0; i++)
		r = pass_frame(q, names[i], strlen(names[i]), &hit);
	if (r < 0)
		return r;
	return pass_cached(c, id, r > 0 && hit);
}

int http_frames_pass(const struct query_common *q, const char *const *names, size_t n)
{
	bool hit = !q->focus_re;
	size_t i;
	int r;

	if (!query_common_has_frames(q))
		return 1;
	for (i = 0, r = 1; i < n && r > 0; i++)
		r = pass_frame(q, names[i], strlen(names[i]), &hit);
	return r < 0 ? r : r > 0 && hit;
}

static int pass_text(const struct query_common *q, struct pass_cache *c, size_t id,
		     const char *text, size_t len)
{
	const char *p = text, *end = text + len, *semi;
	bool hit = !q->focus_re;
	int r;

	if (!query_common_has_frames(q))
		return 1;
	r = pass_cached(c, id, -1);
	if (r != -1)
		return r;
	for (r = 1; p < end && r > 0; p = semi + 1) {
		semi = memchr(p, ';', (size_t)(end - p));
		if (!semi)
			semi = end;
		r = pass_frame(q, p, (size_t)(semi - p), &hit);
	}
	if (r < 0)
		return r;
	return pass_cached(c, id, r > 0 && hit);
}

struct hm_ctx {
	const struct query_common *q;
	struct heatmap *hm;
	struct pass_cache pc;
	double weight; /* store walks: each sample's weight (event=wall: microseconds) */
};

static int hm_sample(const struct rec_sample *s, void *ctx)
{
	struct hm_ctx *h = ctx;
	int m = rec_matches(s, h->q);

	if (m > 0)
		m = pass_text(h->q, &h->pc, s->stack_id, s->stack, s->stack_len);
	if (m > 0 && s->time_ns >= 0)
		heatmap_add(h->hm, (uint64_t)s->time_ns, s->count);
	return m < 0 ? m : 0;
}

static int hm_store_sample(const struct store_sample_view *v, void *ctx)
{
	struct hm_ctx *h = ctx;
	int m = pass_names(h->q, &h->pc, v->context, v->frames, v->nr_frames);

	if (m > 0)
		heatmap_add(h->hm, v->time_ns, h->weight);
	return m < 0 ? m : 0;
}

/* focus=/ignore= on a heat map: the store's samples one by one, their frames matched */
static int hm_walk(struct store *store, const struct store_filter *f, struct hm_ctx *h,
		   double weight)
{
	int err;

	h->weight = weight;
	err = store__foreach_sample(store, f, 0, hm_store_sample, h);
	free(h->pc.v); /* contexts are numbered per walk */
	h->pc = (struct pass_cache){ 0 };
	return err;
}

int http_source_heatmap(const struct http_source *src, const struct query_common *q,
			struct heatmap *hm)
{
	struct hm_ctx h = { .q = q, .hm = hm };
	struct store_point *pts = NULL;
	struct store_filter f;
	struct identity_filter idf;
	uint64_t bucket;
	size_t n = 0, i;
	int err;

	if (src->rec) {
		err = recording__for_each(src->rec, q->from_ns, q->to_ns, hm_sample, &h);
		free(h.pc.v);
		return err;
	}
	if (!store_filter_from(src, q, &f, &idf) ||
	    (q->event != QUERY_EVENT_WALL && !http_source_store(src, q)))
		return 0;
	if (query_common_has_frames(q)) {
		if (q->event != QUERY_EVENT_WALL)
			return hm_walk(http_source_store(src, q), &f, &h, 1);
		if (!src->offcpu || !src->cpu_us)
			return 0;
		err = hm_walk(src->store, &f, &h, (double)src->cpu_us);
		return err ? err : hm_walk(src->offcpu, &f, &h, (double)src->offcpu_us);
	}
	/* the rows are whole buckets (checked by the handler), so points land in their cells */
	bucket = hm->o.column_ns / hm->o.rows;
	if (q->event == QUERY_EVENT_WALL) {
		/* both stores, weighed in microseconds */
		if (!src->offcpu || !src->cpu_us)
			return 0;
		err = store__heatmap(src->store, &f, bucket, &pts, &n);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			heatmap_add(hm, pts[i].time_ns, (double)pts[i].count * (double)src->cpu_us);
		free(pts);
		pts = NULL;
		err = store__heatmap(src->offcpu, &f, bucket, &pts, &n);
		if (err)
			return err;
		for (i = 0; i < n; i++)
			heatmap_add(hm, pts[i].time_ns, (double)pts[i].count * (double)src->offcpu_us);
		free(pts);
		return 0;
	}
	err = store__heatmap(http_source_store(src, q), &f, bucket, &pts, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		heatmap_add(hm, pts[i].time_ns, (double)pts[i].count);
	free(pts);
	return 0;
}

struct samples_ctx {
	const struct query_common *q;
	struct sbuf *sb;
	struct sbuf tmp;
	uint64_t max_bytes;
	struct pass_cache pc;
};

static int samples_rec(const struct rec_sample *s, void *ctx)
{
	struct samples_ctx *c = ctx;
	const char *text;
	size_t len;
	int m = rec_matches(s, c->q);

	if (m > 0)
		m = pass_text(c->q, &c->pc, s->stack_id, s->stack, s->stack_len);
	if (m <= 0)
		return m;
	text = select_frames(s, c->q, &c->tmp, &len);
	samples_format_line(c->sb, s->time_ns > 0 ? (uint64_t)s->time_ns : 0, text, len,
			    s->count > 0 ? (uint64_t)s->count : 1);
	if (c->sb->len > c->max_bytes)
		return -E2BIG;
	return sbuf_error(c->sb); /* -ENOMEM, or the server's -E2BIG, -ENOBUFS, -ECANCELED */
}

static int samples_store(const struct store_sample_view *v, void *ctx)
{
	struct samples_ctx *c = ctx;
	size_t i;
	int m = pass_names(c->q, &c->pc, v->context, v->frames, v->nr_frames);

	if (m <= 0)
		return m;
	sbuf_reset(&c->tmp);
	for (i = 0; i < v->nr_frames; i++) {
		if (i)
			sbuf_addc(&c->tmp, ';');
		sbuf_adds(&c->tmp, v->frames[i]);
	}
	samples_format_line(c->sb, v->time_ns, c->tmp.buf ? c->tmp.buf : "", c->tmp.len, 1);
	if (c->sb->len > c->max_bytes)
		return -E2BIG;
	if (sbuf_error(c->sb))
		return sbuf_error(
		    c->sb); /* -ENOMEM, or the server's -E2BIG, -ENOBUFS, -ECANCELED */
	return sbuf_error(&c->tmp) ? -ENOMEM : 0;
}

int http_source_samples(const struct http_source *src, const struct query_common *q,
			struct sbuf *sb, uint64_t max_bytes)
{
	struct samples_ctx c = { .q = q, .sb = sb, .tmp = SBUF_INIT, .max_bytes = max_bytes };
	struct store_filter f;
	struct identity_filter idf;
	int err = 0;

	sbuf_adds(sb, SAMPLES_HEADER "\n");
	if (src->rec)
		err = recording__for_each(src->rec, q->from_ns, q->to_ns, samples_rec, &c);
	else if (store_filter_from(src, q, &f, &idf) && http_source_store(src, q))
		err = store__foreach_sample(http_source_store(src, q), &f, 0, samples_store, &c);
	sbuf_fini(&c.tmp);
	free(c.pc.v);
	return err;
}

/* --- the rules every route shares ------------------------------------------------------------ */

static int task_found_rec(const struct rec_sample *s, void *ctx)
{
	const struct query_common *q = ctx;

	if ((q->pid >= 0 && s->pid != q->pid) || (q->tid >= 0 && s->tid != q->tid))
		return 0;
	return -EEXIST; /* found: the walk stops */
}


/* Whether @src holds any sample of @q's pid and tid, at any time. */
static bool source_has_task(const struct http_source *src, const struct query_common *q)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct store *stores[2] = { http_source_store(src, q), NULL };
	bool found = false;
	size_t i;

	if (src->rec)
		return recording__for_each(src->rec, INT64_MIN, INT64_MAX, task_found_rec,
					   (void *)q) == -EEXIST;
	if (q->event == QUERY_EVENT_WALL) {
		stores[0] = src->store;
		stores[1] = src->offcpu;
	}
	f.pid = q->pid;
	f.tid = q->tid;
	f.include_idle = true;
	/* one bucket of a heat map: the store matches contexts and counts, copying no frames */
	for (i = 0; i < 2; i++) {
		struct store_point *pts = NULL;
		size_t n = 0;

		if (!stores[i])
			continue;
		if (store__heatmap(stores[i], &f, UINT64_MAX / 2, &pts, &n) || n)
			found = true; /* an error: answered by the route itself, not as "nothing" */
		free(pts);
		if (found)
			return true;
	}
	return false;
}

static bool task_running(int64_t id)
{
	/* kill() takes a thread's id as well as a process's; EPERM: it exists */
	return id >= 0 && (kill((pid_t)id, 0) == 0 || errno != ESRCH);
}

int http_source_check(const struct http_source *srv_src, const struct http_source *src,
		      const struct query_common *q, struct query_error *err)
{
	bool replay = !srv_src->store;

	if (q->event >= QUERY_EVENT_PAGEFAULT) { /* memory, I/O and hardware counter events */
		const char *why = http_event_unavailable(srv_src, q);

		if (why) {
			*err = (struct query_error){ .param = "event", .status = 409,
						     .reason = replay ? "memory and I/O events need live "
								"sampling (a replay holds on-CPU "
								"samples)"
							      : why };
			return -EINVAL;
		}
	} else if (q->event != QUERY_EVENT_CPU && !srv_src->offcpu) {
		*err = (struct query_error){
			.param = "event", .status = 409,
			.reason = replay ? "off-CPU events need live sampling with [offcpu] enabled "
					   "= yes (a replay holds on-CPU samples)"
					 : HTTP_OFFCPU_OFF
		};
		return -EINVAL;
	}
	/* one rule for a pid or tid that names nothing: not running (live), and no sample of it
	 * in what the route reads; an exited process's samples are still answered */
	if ((q->pid >= 0 || q->tid >= 0) &&
	    (replay || !(task_running(q->pid) || task_running(q->tid))) &&
	    !source_has_task(src, q)) {
		bool pid = q->pid >= 0;

		*err = (struct query_error){ .status = 404 };
		snprintf(err->param, sizeof(err->param), "%s", pid ? "pid" : "tid");
		snprintf(err->buf, sizeof(err->buf),
			 "no %s %lld: %sno sample of it is held", pid ? "process" : "thread",
			 (long long)(pid ? q->pid : q->tid),
			 replay ? "" : "it is not running and ");
		err->reason = err->buf;
		return -EINVAL;
	}
	return src == srv_src ? http_source_check_history(src, q, q->to_ns, "to", err) : 0;
}

int http_source_check_history(const struct http_source *src, const struct query_common *q,
			      int64_t to_ns, const char *param, struct query_error *err)
{
	/* a range the history no longer reaches: evicted, not empty */
	if (src->store) {
		struct store *store = q->event == QUERY_EVENT_WALL ? src->store : http_source_store(src, q);
		struct store_stats st;

		if (!store)
			return 0;
		store__stats(store, &st);
		if (st.samples && st.evicted_time + st.evicted_memory > 0 &&
		    to_ns <= (int64_t)st.oldest_ns) {
			char when[40];

			*err = (struct query_error){ .status = 410 };
			snprintf(err->param, sizeof(err->param), "%s", param);
			snprintf(err->buf, sizeof(err->buf),
				 "the range ends before the history: the oldest sample held is from "
				 "%s; %llu samples evicted since start (%llu for memory, %llu for age)",
				 timeexpr_format_rfc3339((int64_t)st.oldest_ns, when, sizeof(when)),
				 (unsigned long long)(st.evicted_time + st.evicted_memory),
				 (unsigned long long)st.evicted_memory,
				 (unsigned long long)st.evicted_time);
			err->reason = err->buf;
			return -EINVAL;
		}
	}
	return 0;
}

/* --- cache policy ---------------------------------------------------------------------------- */

/*
 * Replayed data never changes. Live data for a range that ended more than a few seconds ago
 * only changes by eviction: cacheable for a minute. Anything reaching "now" (relative or
 * default ranges) must be revalidated.
 */
const char *http_data_cache_control(const struct http_server *srv, const struct query_common *q,
				   int64_t now_ns)
{
	if (http_server__is_replay(srv))
		return "public, max-age=3600";
	if (q && q->has_to && q->to_ns < now_ns - 5 * NS)
		return "private, max-age=60";
	return "no-cache";
}

/* --- handlers -------------------------------------------------------------------------------- */

int http_handle_healthz(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	if (http_request__parse(req, NULL, 0, NULL, NULL, resp))
		return 0;
	resp->content_type = "text/plain; charset=utf-8";
	resp->cache_control = "no-store";
	if (srv->live) {
		struct liveness_state ls;

		liveness_check(srv->live, mono_ns(), &ls);
		if (ls.stalled) {
			resp->status = 503;
			sbuf_addf(&resp->body, "stalled: %s\n", ls.reason);
			return 0;
		}
	}
	sbuf_adds(&resp->body, "ok\n");
	return 0;
}

/* ?download=1 adds Content-Disposition: attachment. */
static int download_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	bool *dl = ctx;

	if (strcmp(key, "download"))
		return 0;
	return query_parse_bool(key, value, dl, err) ? -EINVAL : 1;
}

static void set_download(struct http_response *resp, const struct query_common *q,
			 const char *ext)
{
	snprintf(resp->disposition, sizeof(resp->disposition),
		 "attachment; filename=\"ember-%lld-%lld.%s\"", (long long)(q->from_ns / NS),
		 (long long)(q->to_ns / NS), ext);
}

int http_serve_folded(struct http_server *srv, const struct http_source *src,
		      struct http_request *req, struct http_response *resp)
{
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	bool dl = false;
	int err = 0;

	query_common_init(&q);
	if (http_request__parse(req, &q, 0, download_param, &dl, resp))
		goto out;
	st = http_render_strtab(srv);
	p = st ? http_source_profile(src, &q, st) : NULL;
	if (!p) {
		err = http_query_err(errno);
		goto out;
	}
	resp->content_type = "text/plain; charset=utf-8";
	resp->cache_control = http_data_cache_control(srv, &q, req->now_ns);
	if (dl)
		set_download(resp, &q, "folded");
	err = folded_write(p, &resp->body);
out:
	profile__free(p);
	strtab__free(st);
	query_common_fini(&q);
	return err;
}

int http_handle_folded(struct http_server *srv, struct http_request *req,
		       struct http_response *resp)
{
	return http_serve_folded(srv, &srv->src, req, resp);
}

struct fg_params {
	struct flamegraph_opts *o;
	bool download;
};

static int fg_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct fg_params *fp = ctx;
	int r;

	if (!strcmp(key, "download"))
		return download_param(key, value, &fp->download, err);
	if (flamegraph_opt_is_file(key)) {
		*err = (struct query_error){ .reason = "option reads or writes files: not over HTTP",
					     .status = 400 };
		snprintf(err->param, sizeof(err->param), "%.63s", key);
		return -EINVAL;
	}
	r = flamegraph_opts_set(fp->o, key, value);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		*err = (struct query_error){ .reason = "unknown flame graph option or bad value",
					     .status = 400 };
		snprintf(err->param, sizeof(err->param), "%.63s", key);
		return -EINVAL;
	}
	/* pixels are memory: bound them like any other resource; flamegraph.pl pads 10 px on
	 * each side, so a narrower image has no room for a frame (the renderer's EINVAL) */
	if (fp->o->width > 100000 || fp->o->width <= 20 || fp->o->height > 1000) {
		*err = (struct query_error){ .reason = "out of range", .status = 400 };
		snprintf(err->param, sizeof(err->param), "%.63s", key);
		return -EINVAL;
	}
	return 1;
}

int http_serve_flamegraph(struct http_server *srv, const struct http_source *src,
			  struct http_request *req, struct http_response *resp)
{
	struct flamegraph_opts o;
	struct fg_params fp = { .o = &o };
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	int err = 0;

	flamegraph_opts_init(&o);
	query_common_init(&q);
	if (http_request__parse(req, &q, 0, fg_param, &fp, resp))
		goto out;
	if (http_memio_index(&q) >= 0) {
		/* a record is a quantum of the kind's weight: say how much in the tooltips */
		static const char *const title[MEMIO_STORE_NR] = {
			[MEMIO_STORE_PAGEFAULT] = "Page Fault Flame Graph",
			[MEMIO_STORE_VMGROW] = "VM Growth (brk, mmap) Flame Graph",
			[MEMIO_STORE_BLOCKIO] = "Block I/O Flame Graph (bytes)",
			[MEMIO_STORE_BLOCKIO_LAT] = "Block I/O Latency Flame Graph",
			[MEMIO_STORE_MALLOC] = "malloc() Flame Graph (bytes)",
			[MEMIO_STORE_CYCLES] = "Cycles Flame Graph",
			[MEMIO_STORE_INSTRUCTIONS] = "Instructions Flame Graph",
		};
		int m = http_memio_index(&q);
		char cn[64];

		snprintf(cn, sizeof(cn), "x %llu %s",
			 (unsigned long long)src->memio_quantum[m], memio_sink_unit((enum memio_store)m));
		if ((!o.countname && flamegraph_opts_set(&o, "countname", cn) == -ENOMEM) ||
		    ((!o.title || !*o.title) &&
		     flamegraph_opts_set(&o, "title", title[m]) == -ENOMEM)) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* time, not samples: the unit in the tooltips and a title that says which */
	if (q.event != QUERY_EVENT_CPU && !o.countname &&
	    flamegraph_opts_set(&o, "countname", q.event == QUERY_EVENT_WALL ? "us" : "ms") == -ENOMEM) {
		err = -ENOMEM;
		goto out;
	}
	if (q.event != QUERY_EVENT_CPU && (!o.title || !*o.title) &&
	    flamegraph_opts_set(&o, "title",
				q.event == QUERY_EVENT_WALL	? "Wall Time Flame Graph (us)"
				: q.event == QUERY_EVENT_WAKEUP ? "Wakeup Time Flame Graph (ms)"
				: q.event == QUERY_EVENT_CHAIN	? "Chain Graph (ms)"
								: "Off-CPU Time Flame Graph (ms)") ==
		-ENOMEM) {
		err = -ENOMEM;
		goto out;
	}
	st = http_render_strtab(srv);
	p = st ? http_source_profile(src, &q, st) : NULL;
	if (!p) {
		err = http_query_err(errno);
		goto out;
	}
	resp->content_type = "image/svg+xml";
	resp->cache_control = http_data_cache_control(srv, &q, req->now_ns);
	if (fp.download)
		set_download(resp, &q, "svg");
	err = flamegraph_render(p, &o, &resp->body);
	if (err == -ENODATA) /* flamegraph.pl's "ERROR: No valid input" SVG: still a 200 */
		err = 0;
	else if (err == -EINVAL) {
		http_response__error(resp, 400, NULL, "invalid combination of flame graph options");
		err = 0;
	}
out:
	profile__free(p);
	strtab__free(st);
	query_common_fini(&q);
	flamegraph_opts_fini(&o);
	return err;
}

int http_handle_flamegraph(struct http_server *srv, struct http_request *req,
			   struct http_response *resp)
{
	return http_serve_flamegraph(srv, &srv->src, req, resp);
}

struct hm_params {
	struct heatmap_opts o;
	bool has_rows, has_col, download;
	char title[128];
};

static int hm_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct hm_params *hp = ctx;
	struct parse_error pe;
	uint64_t v;
	int64_t ns;

	if (!strcmp(key, "download"))
		return download_param(key, value, &hp->download, err);
	if (!strcmp(key, "rows")) {
		if (query_parse_u64(key, value, 1, HEATMAP_MAX_ROWS, &v, err))
			return -EINVAL;
		hp->o.rows = (unsigned int)v;
		hp->has_rows = true;
		return 1;
	}
	if (!strcmp(key, "column_s")) {
		if (timeexpr_parse_duration(value, strlen(value), &ns, &pe) || ns < 1000 ||
		    (uint64_t)ns > HEATMAP_MAX_COLUMN_NS) {
			*err = (struct query_error){ .param = "column_s",
						     .reason = "expected a duration (seconds, or "
							       "with a unit: 20ms, 1m, 1h)",
						     .status = 400 };
			return -EINVAL;
		}
		hp->o.column_ns = (uint64_t)ns;
		hp->has_col = true;
		return 1;
	}
	if (!strcmp(key, "title")) {
		snprintf(hp->title, sizeof(hp->title), "%s", value);
		return 1;
	}
	return 0;
}

int http_serve_heatmap(struct http_server *srv, const struct http_source *src,
		       struct http_request *req, struct http_response *resp, bool svg)
{
	struct hm_params hp = { .title = "" };
	struct heatmap hm = { 0 };
	struct query_common q;
	const char *reason = NULL;
	int64_t first, last, from, to, last_ns;
	int err = 0;

	heatmap_opts_init(&hp.o);
	query_common_init(&q);
	/* the heat map's default range is the whole retained history */
	req->unlimited_range = true;
	if (http_request__parse(req, &q, INT64_MAX / 4, hm_param, &hp, resp))
		goto out;
	if (hp.has_col && !hp.has_rows) /* minute rows by default for hour columns etc. */
		hp.o.rows = hp.o.column_ns >= 3600 * NS ? 60 : hp.o.rows;
	if (hp.o.column_ns % hp.o.rows || hp.o.column_ns / hp.o.rows < 1000) {
		http_response__error(resp, 400, "rows",
				     "column_s must divide into rows of whole microseconds");
		goto out;
	}
	if (http_source_bounds(src, &first, &last)) {
		first = last = req->now_ns; /* empty: one empty column at now */
	}
	/* the last ns of the range; to=1677-09-21T00:12:43.145224192Z is INT64_MIN itself, and the
	 * range is not limited here: no arithmetic may overflow */
	last_ns = q.to_ns > INT64_MIN ? q.to_ns - 1 : INT64_MIN;
	from = q.from_ns > first ? q.from_ns : first;
	to = last_ns < last ? last_ns : last;
	if (from > to)
		from = to = last_ns > 0 ? last_ns : 0;
	if (from < 0)
		from = 0;
	if (to < from)
		to = from;
	if (to == INT64_MAX)
		to--; /* its end, to + 1, below */
	err = heatmap_opts_fit(&hp.o, (uint64_t)from, (uint64_t)to);
	if (!err)
		err = heatmap_opts_check(&hp.o, &reason);
	if (err) {
		http_response__error(resp, 413, hp.has_col ? "column_s" : "from",
				     reason ? reason : "the heat map would have too many cells");
		err = 0;
		goto out;
	}
	err = heatmap_init(&hm, &hp.o);
	if (err)
		goto out;
	/* only samples inside the requested range; the map may start earlier (aligned) */
	q.from_ns = from;
	q.to_ns = to + 1;
	err = http_source_heatmap(src, &q, &hm);
	if (err)
		goto out;
	resp->cache_control = http_data_cache_control(srv, &q, req->now_ns);
	if (svg) {
		struct heatmap_svg_opts so;
		char sub[QUERY_MAX_REGEX + 32];

		heatmap_svg_opts_init(&so);
		snprintf(sub, sizeof(sub), "%s%s%s", http_server__is_replay(srv) ? "replay" : "live",
			 q.has_comm ? ", comm=" : "", q.has_comm ? q.comm_src : "");
		so.title = hp.title[0] ? hp.title : NULL;
		so.subtitle = sub;
		so.flamegraph_url = "/api/v1/flamegraph.svg?from={start}&to={end}";
		resp->content_type = "image/svg+xml";
		if (hp.download)
			set_download(resp, &q, "svg");
		err = heatmap_render_svg(&hm, &so, &resp->body);
	} else {
		err = heatmap_render_json(&hm, &resp->body);
	}
out:
	heatmap_fini(&hm);
	query_common_fini(&q);
	return err;
}

int http_handle_heatmap(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	return http_serve_heatmap(srv, &srv->src, req, resp, false);
}

int http_handle_heatmap_svg(struct http_server *srv, struct http_request *req,
			    struct http_response *resp)
{
	return http_serve_heatmap(srv, &srv->src, req, resp, true);
}

int http_serve_samples(struct http_server *srv, const struct http_source *src,
		       struct http_request *req, struct http_response *resp)
{
	struct query_common q;
	bool dl = false;
	int err = 0;

	query_common_init(&q);
	if (http_request__parse(req, &q, 0, download_param, &dl, resp))
		goto out;
	resp->content_type = "text/plain; charset=utf-8";
	resp->cache_control = http_data_cache_control(srv, &q, req->now_ns);
	if (dl)
		set_download(resp, &q, "samples");
	err = http_source_samples(src, &q, &resp->body, srv->cfg.max_response_bytes);
	if (err == -E2BIG) {
		http_response__error(resp, 413, "from",
				     "the range holds more samples than the response size limit");
		err = 0;
	}
out:
	query_common_fini(&q);
	return err;
}

int http_handle_samples(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	return http_serve_samples(srv, &srv->src, req, resp);
}

/*
 * Differential flame graph of two ranges: A = from/to, B = b_from/b_to (same filters), drawn
 * as `ember diff --flamegraph` draws it (difffolded semantics: widths from B, colours B - A).
 */
struct diff_params {
	struct fg_params fg;
	struct query_range_b b;	/* b_from, b_to, normalize, elided */
	int64_t now;
};

static int diff_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct diff_params *dp = ctx;
	int r = query_range_b_set(&dp->b, key, value, dp->now, err);

	return r ? r : fg_param(key, value, &dp->fg, err);
}

int http_handle_diff_svg(struct http_server *srv, struct http_request *req,
			 struct http_response *resp)
{
	struct flamegraph_opts o;
	struct diff_params dp = { .fg = { .o = &o }, .now = req->now_ns };
	struct diff_opts dopts = { 0 };
	struct query_common q, qb;
	struct strtab *st = NULL;
	struct profile *a = NULL, *b = NULL, *d = NULL;
	int err = 0;

	flamegraph_opts_init(&o);
	query_common_init(&q);
	query_common_init(&qb);
	if (http_request__parse(req, &q, 0, diff_param, &dp, resp))
		goto out;
	{
		struct query_error qe = { 0 };

		if (query_range_b_finish(&dp.b, (int64_t)srv->cfg.max_range_s * NS, &qe) ||
		    http_source_check_history(&srv->src, &q, dp.b.to_ns, "b_to", &qe)) {
			http_response__error(resp, qe.status, qe.param, qe.reason);
			goto out;
		}
	}
	/* B has A's filters */
	qb = q;
	qb.comm_borrowed = true; /* q's pattern, freed with q */
	qb.from_ns = dp.b.from_ns;
	qb.to_ns = dp.b.to_ns;
	dopts.normalize = dp.b.normalize;
	st = http_render_strtab(srv);
	a = st ? http_source_profile(&srv->src, &q, st) : NULL;
	b = a ? http_source_profile(&srv->src, &qb, st) : NULL;
	d = b ? diff_profiles(a, b, &dopts) : NULL;
	if (!d) {
		if (errno == EDOM) {
			http_response__error(resp, 400, "normalize",
					     "cannot normalize: range A has no samples");
			goto out;
		}
		err = http_query_err(errno);
		goto out;
	}
	resp->content_type = "image/svg+xml";
	resp->cache_control = http_data_cache_control(srv, &q, req->now_ns);
	if (dp.fg.download)
		set_download(resp, &q, "diff.svg");
	/* the share of A that vanished from B is stated; elided=1 draws just those paths */
	{
		struct sbuf note = SBUF_INIT;
		struct profile *e = dp.b.elided ? diff_elided(d) : NULL;

		diff_elided_note(d, &note);
		free(o.info);
		o.info = sbuf_detach(&note, NULL);
		err = !o.info || (dp.b.elided && !e) ? -ENOMEM
						    : flamegraph_render(e ? e : d, &o, &resp->body);
		profile__free(e);
	}
	if (err == -ENODATA) {
		err = 0;
	} else if (err == -EINVAL) { /* as /api/v1/flamegraph.svg: bad input is never a 5xx */
		http_response__error(resp, 400, NULL, "invalid combination of flame graph options");
		err = 0;
	}
out:
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	query_common_fini(&q);
	query_common_fini(&qb);
	flamegraph_opts_fini(&o);
	return err;
}
