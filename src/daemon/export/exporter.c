// SPDX-License-Identifier: MIT
#include "ember/daemon/export/exporter.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/core/base/readall.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/otlp.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/formats/pyroscope.h"
#include "ember/core/model/frame.h"
#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/export/frameloc.h"
#include "ember/daemon/store/memio_sink.h"
#include "ember/daemon/store/store.h"

#define NSEC		   1000000000ULL
#define MSEC		   1000000ULL
#define MAX_PYRO_GROUPS	   256
#define SECRET_MAX	   4096
/* A receiver's answer is a status line and a few headers; its body is never used. Read this much
 * of it at most, then abort the transfer (libcurl then closes the connection): a receiver that
 * answers with gigabytes costs a few KiB of reading, not a CPU. */
#define BODY_MAX	   (64 * 1024)
/* Drops are said once per this interval, with the counts of those not said */
#define DROP_LOG_NS	   (10 * NSEC)

const char *const exporter_fail_names[EXPORT_FAILS] = {
	"timeout", "connect", "http_429", "http_5xx", "http_4xx", "too_large", "other",
};

struct batch {
	struct batch *next;
	enum exporter_kind kind;
	struct sbuf body;
	char *query;		/* Pyroscope: the query string */
	uint64_t samples;
	uint64_t next_try_ns;	/* CLOCK_MONOTONIC */
	unsigned int attempts;
	char why[48];		/* OUT_DROP: said in the drop's line */
};

struct exporter {
	int secret_err; /* the last read of the credentials file: 0 or -errno (said when it changes) */
	struct store *store;
	struct identity *id;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock; /* opts, stats, queue, stop */
	pthread_cond_t cond;
	bool stop;
	struct exporter_opts o;
	struct exporter_stats st[EXPORTER_KINDS];
	struct batch *head, *tail;
	uint64_t queued_bytes;
	uint64_t next_round_ns[EXPORTER_KINDS]; /* CLOCK_MONOTONIC */
	struct store_cursor cursor[EXPORTER_KINDS]; /* in append order: where the next round starts */
	uint64_t gaps[EXPORTER_KINDS];
	CURL *curl;
	unsigned int seed;
	struct frameloc *fl; /* the exporter's thread's: symbolized native frames' mappings */
	struct otlp_frame_loc *locs; /* per frame of the sample being added */
	size_t locs_cap;
	/* memory and I/O events (OTLP): their stores, quanta and cursors (under the lock) */
	struct store *memio[MEMIO_STORE_NR];
	uint64_t memio_quantum[MEMIO_STORE_NR];
	struct store_cursor memio_cursor[MEMIO_STORE_NR];
	/* drops not said yet (under the lock): said at most once per DROP_LOG_NS */
	uint64_t drop_log_next_ns;
	uint64_t drop_unsaid, drop_unsaid_samples;
	char drop_last[160];
};

/* A dropped batch of @samples, @why a short reason: counted by the caller; said now if nothing
 * was said for DROP_LOG_NS, else kept for the next line (a receiver answering 413 forever made
 * one line per sample). Under the lock. */
static void drop_note(struct exporter *e, enum exporter_kind kind, uint64_t samples,
		      const char *why)
{
	uint64_t now = mono_ns();

	e->drop_unsaid++;
	e->drop_unsaid_samples += samples;
	snprintf(e->drop_last, sizeof(e->drop_last), "%s: %s",
		 kind == EXPORTER_OTLP ? "OTLP" : "Pyroscope", why);
	if (now < e->drop_log_next_ns)
		return;
	log_warn("export: %llu batch(es) of %llu samples dropped (last: %s)",
		 (unsigned long long)e->drop_unsaid, (unsigned long long)e->drop_unsaid_samples,
		 e->drop_last);
	e->drop_unsaid = e->drop_unsaid_samples = 0;
	e->drop_log_next_ns = now + DROP_LOG_NS;
}

/* Says the drops kept since the last line once DROP_LOG_NS has passed. Under the lock. */
static void drop_flush(struct exporter *e)
{
	uint64_t now = mono_ns();

	if (!e->drop_unsaid || now < e->drop_log_next_ns)
		return;
	log_warn("export: %llu more batch(es) of %llu samples dropped in the last %llu s (last: %s)",
		 (unsigned long long)e->drop_unsaid, (unsigned long long)e->drop_unsaid_samples,
		 (unsigned long long)(DROP_LOG_NS / NSEC), e->drop_last);
	e->drop_unsaid = e->drop_unsaid_samples = 0;
	e->drop_log_next_ns = now + DROP_LOG_NS;
}

/* --- the queue (under the lock) ----------------------------------------------------------- */

static void batch_free(struct batch *b)
{
	if (!b)
		return;
	sbuf_fini(&b->body);
	free(b->query);
	free(b);
}

static void queue_gauges(struct exporter *e)
{
	struct batch *b;
	int k;

	for (k = 0; k < EXPORTER_KINDS; k++)
		e->st[k].queued = e->st[k].queued_bytes = e->st[k].queued_samples = 0;
	for (b = e->head; b; b = b->next) {
		e->st[b->kind].queued++;
		e->st[b->kind].queued_bytes += b->body.len;
		e->st[b->kind].queued_samples += b->samples;
	}
}

static struct batch *queue_pop(struct exporter *e)
{
	struct batch *b = e->head;

	if (b) {
		e->head = b->next;
		if (!e->head)
			e->tail = NULL;
		e->queued_bytes -= b->body.len;
		b->next = NULL;
	}
	return b;
}

/* Appends @b; past the bound, the oldest batches go (counted). */
static void queue_push(struct exporter *e, struct batch *b)
{
	b->next = NULL;
	if (e->tail)
		e->tail->next = b;
	else
		e->head = b;
	e->tail = b;
	e->queued_bytes += b->body.len;
	while (e->queued_bytes > e->o.queue_bytes && e->head) {
		struct batch *old = queue_pop(e);

		char why[64];

		e->st[old->kind].dropped++;
		e->st[old->kind].dropped_samples += old->samples;
		snprintf(why, sizeof(why), "queue full (%llu bytes)",
			 (unsigned long long)e->o.queue_bytes);
		drop_note(e, old->kind, old->samples, why);
		batch_free(old);
	}
	queue_gauges(e);
}

/* Puts @b back at the head (a retry keeps its place: the oldest goes first). */
static void queue_unpop(struct exporter *e, struct batch *b)
{
	b->next = e->head;
	e->head = b;
	if (!e->tail)
		e->tail = b;
	e->queued_bytes += b->body.len;
}

/* --- building batches --------------------------------------------------------------------- */

struct build {
	struct exporter *e;
	struct exporter_opts o;
	enum exporter_kind kind;
	uint64_t min_ns, max_ns;	/* the round's samples' times */
	uint64_t msg_min_ns, msg_max_ns; /* ... of the OTLP message being built */
	struct otlp_writer *w;
	struct batch *out[64]; /* made this round, queued at the end */
	size_t nr_out;
	uint64_t samples;
	/* Pyroscope: one pprof per group */
	struct pyro_group {
		char key[1024];	/* the series name */
		char query[4096];
		struct pprof_writer *pw;
		uint64_t samples;
	} *groups;
	size_t nr_groups;
	int err;
	/* OTLP: per store context, the writer's handle (of generation handle_gen[]) */
	uint32_t *handle;
	uint64_t *handle_gen;
	size_t handle_cap;
};

static struct batch *batch_new(enum exporter_kind kind)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->kind = kind;
		sbuf_init(&b->body);
	}
	return b;
}

/* The OTLP message so far becomes a batch. */
static int otlp_cut(struct build *bd)
{
	struct batch *b;
	int r;

	if (!otlp_writer__samples(bd->w))
		return 0;
	if (bd->nr_out == sizeof(bd->out) / sizeof(bd->out[0]))
		return -E2BIG;
	b = batch_new(EXPORTER_OTLP);
	if (!b)
		return -ENOMEM;
	b->samples = otlp_writer__samples(bd->w);
	r = otlp_writer__finish(bd->w, bd->msg_min_ns, bd->msg_max_ns + 1, true, &b->body);
	bd->msg_min_ns = UINT64_MAX;
	bd->msg_max_ns = 0;
	if (r) {
		batch_free(b);
		return r;
	}
	bd->out[bd->nr_out++] = b;
	return 0;
}

/* Appends @s URL-escaped for a Pyroscope label value or name. */
static void add_escaped(struct sbuf *sb, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.')
			sbuf_addc(sb, (char)c);
		else {
			sbuf_addc(sb, '%');
			sbuf_addc(sb, hex[c >> 4]);
			sbuf_addc(sb, hex[c & 15]);
		}
	}
}

static struct pyro_group *pyro_group_of(struct build *bd, const char *service,
					const struct workload *wl)
{
	struct pyro_group *g;
	struct sbuf q = SBUF_INIT, name = SBUF_INIT;
	const struct pyro_label labels[] = {
		{ "service_name", service && service[0] ? service : "unknown" },
		{ "container_id", wl->container_id },
		{ "pod_uid", wl->pod_uid },
		{ "hostname", bd->o.host_name },
	};
	size_t i;

	/* name=<service>.cpu{service_name=..,container_id=..,pod_uid=..,hostname=..}: nothing of a
	 * process's naming can end a value or add a label (core/formats/pyroscope.h) */
	if (pyroscope_series_name(&name, service, ".cpu", labels,
				  sizeof(labels) / sizeof(labels[0])) || !name.buf ||
	    name.len >= sizeof(g->key)) {
		sbuf_fini(&name);
		return NULL;
	}
	for (i = 0; i < bd->nr_groups; i++)
		if (!strcmp(bd->groups[i].key, name.buf)) {
			sbuf_fini(&name);
			return &bd->groups[i];
		}
	if (bd->nr_groups == MAX_PYRO_GROUPS) {
		sbuf_fini(&name);
		return &bd->groups[MAX_PYRO_GROUPS - 1]; /* the last one takes the rest */
	}
	g = &bd->groups[bd->nr_groups];
	memset(g, 0, sizeof(*g));
	snprintf(g->key, sizeof(g->key), "%s", name.buf);
	sbuf_adds(&q, "name=");
	add_escaped(&q, name.buf);
	snprintf(g->query, sizeof(g->query), "%s", q.buf ? q.buf : ""); /* times at the end */
	sbuf_fini(&q);
	sbuf_fini(&name);
	{
		struct pprof_opts po = { .freq_hz = bd->o.freq_hz };

		g->pw = pprof_writer__new(&po);
	}
	if (!g->pw)
		return NULL;
	bd->nr_groups++;
	return g;
}

/* Room for context @c's handle (new entries zero: none). 0 or -ENOMEM (then no cache). */
static int handles_grow(struct build *bd, uint32_t c)
{
	size_t cap = bd->handle_cap ? bd->handle_cap : 1024;
	uint32_t *h;
	uint64_t *g;

	if (c < bd->handle_cap)
		return 0;
	while (cap <= c)
		cap *= 2;
	h = realloc(bd->handle, cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	bd->handle = h;
	g = realloc(bd->handle_gen, cap * sizeof(*g));
	if (!g)
		return -ENOMEM;
	bd->handle_gen = g;
	memset(h + bd->handle_cap, 0, (cap - bd->handle_cap) * sizeof(*h));
	memset(g + bd->handle_cap, 0, (cap - bd->handle_cap) * sizeof(*g));
	bd->handle_cap = cap;
	return 0;
}

/* A plain native frame's name (frame.h): a symbol without suffix, not "[file]", not
 * "file+0xOFF" (otlp.c maps those itself), no marker. */
static bool plain_native(const char *s)
{
	struct frame f;

	frame_parse(s, strlen(s), &f);
	return f.name_len && f.kind == FRAME_NATIVE && f.form == FRAME_SYMBOL && !f.waker;
}

/* Where @v's plain native frames live (NULL: nowhere known, or no memory). */
static const struct otlp_frame_loc *frame_locs(struct exporter *e, const struct store_sample_view *v,
					       const struct proc_info *pi)
{
	struct frameloc_hit hit;
	bool any = false;
	size_t i;

	if (!e->fl || !v->nr_frames || !pi || !pi->current)
		return NULL; /* an earlier image's sample: /proc/PID/maps shows the new one's files */
	if (v->nr_frames > e->locs_cap) {
		struct otlp_frame_loc *l = realloc(e->locs, v->nr_frames * sizeof(*l));

		if (!l)
			return NULL;
		e->locs = l;
		e->locs_cap = v->nr_frames;
	}
	for (i = 0; i < v->nr_frames; i++) {
		e->locs[i] = (struct otlp_frame_loc){ 0 };
		/* the kernel's frames are the last ones: none of them is plain */
		if (plain_native(v->frames[i]) &&
		    !frameloc__find(e->fl, v->pid, v->frames[i], &hit)) {
			e->locs[i] = (struct otlp_frame_loc){ hit.file, hit.build_id, hit.offset };
			any = true;
		}
	}
	return any ? e->locs : NULL;
}

static int on_sample(const struct store_sample_view *v, void *ctx)
{
	struct build *bd = ctx;
	struct workload wl;
	struct proc_info pi;
	bool have_proc;
	char svc[256];
	int r;

	if (v->time_ns < bd->min_ns)
		bd->min_ns = v->time_ns;
	if (v->time_ns > bd->max_ns)
		bd->max_ns = v->time_ns;
	if (v->time_ns < bd->msg_min_ns)
		bd->msg_min_ns = v->time_ns;
	if (v->time_ns > bd->msg_max_ns)
		bd->msg_max_ns = v->time_ns;

	if (bd->kind == EXPORTER_OTLP && v->context < bd->handle_cap && bd->handle[v->context] &&
	    bd->handle_gen[v->context] == otlp_writer__generation(bd->w)) {
		/* a context seen in this message: its process, identity and stack are there */
		bd->samples++;
		r = otlp_writer__add_again(bd->w, bd->handle[v->context], v->time_ns);
		if (!r && otlp_writer__size(bd->w) >= bd->o.max_message_bytes)
			r = otlp_cut(bd);
		if (r)
			bd->err = r;
		return r;
	}
	(void)identity__lookup(bd->e->id, v->cgroup_id, &wl, true);
	have_proc = identity__process(bd->e->id, v->pid, v->time_ns, &pi) == 0;
	identity_merge_v1(&wl, have_proc ? &pi : NULL);
	identity__service(bd->e->id, &wl, have_proc ? pi.exe_name : NULL, v->comm, svc,
			  sizeof(svc));
	bd->samples++;
	if (bd->kind == EXPORTER_OTLP) {
		struct otlp_process p = {
			.pid = v->pid,
			.exe_name = have_proc ? pi.exe_name : v->comm,
			.exe_path = have_proc ? pi.exe_path : NULL,
			.build_id = have_proc ? pi.build_id : NULL,
			.container_id = wl.container_id,
			.pod_uid = wl.pod_uid,
			.unit = wl.unit,
			.service_name = svc,
			.host_name = bd->o.host_name,
		};

		uint32_t h = 0;

		r = otlp_writer__add_locs(bd->w, &p, v->time_ns, v->tid, v->comm, v->cpu, v->frames,
					  frame_locs(bd->e, v, have_proc ? &pi : NULL), v->nr_frames, &h);
		if (!r && !handles_grow(bd, v->context)) {
			bd->handle[v->context] = h;
			bd->handle_gen[v->context] = otlp_writer__generation(bd->w);
		}
		if (!r && otlp_writer__size(bd->w) >= bd->o.max_message_bytes)
			r = otlp_cut(bd);
	} else {
		struct pyro_group *g = pyro_group_of(bd, svc, &wl);
		struct pprof_labels l = { .pid = v->pid, .tid = -1, .comm = NULL };

		r = g ? pprof_writer__add(g->pw, v->frames, v->nr_frames, 1.0, &l) : -ENOMEM;
		if (g)
			g->samples++;
	}
	if (r)
		bd->err = r;
	return r;
}

void exporter__set_memio(struct exporter *e, const struct memio_sink *k)
{
	int i;

	pthread_mutex_lock(&e->lock);
	for (i = 0; i < MEMIO_STORE_NR; i++) {
		e->memio[i] = memio_sink__store(k, (enum memio_store)i);
		e->memio_quantum[i] = memio_sink__quantum(k, (enum memio_store)i);
		if (e->memio[i])
			store__cursor_end(e->memio[i], &e->memio_cursor[i]);
	}
	pthread_mutex_unlock(&e->lock);
}

/*
 * The memory and I/O stores' records since the last round, into OTLP batches of their own type
 * (@bd's writer and handles are this function's for the time of the call). 0 or -errno.
 */
static int memio_round(struct exporter *e, struct build *bd)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct otlp_writer *main_w = bd->w;
	struct store_cursor cur;
	struct store *s;
	uint64_t q;
	bool gap = false;
	int i, r = 0;

	f.root = STORE_ROOT_NONE;
	for (i = 0; !r && i < MEMIO_STORE_NR; i++) {
		pthread_mutex_lock(&e->lock);
		s = e->memio[i];
		q = e->memio_quantum[i];
		cur = e->memio_cursor[i];
		pthread_mutex_unlock(&e->lock);
		if (!s)
			continue;
		bd->w = otlp_writer__new(bd->o.freq_hz);
		if (!bd->w) {
			r = -ENOMEM;
			break;
		}
		/* a context's handle is of the writer it was added to: none yet in this one */
		if (bd->handle_cap)
			memset(bd->handle, 0, bd->handle_cap * sizeof(*bd->handle));
		bd->msg_min_ns = UINT64_MAX;
		bd->msg_max_ns = 0;
		r = otlp_writer__set_type(bd->w, memio_sink_type((enum memio_store)i),
					  memio_sink_unit((enum memio_store)i), q ? q : 1);
		if (!r)
			r = store__foreach_since(s, &f, &cur, on_sample, bd, &gap);
		if (!r)
			r = otlp_cut(bd);
		otlp_writer__free(bd->w);
		pthread_mutex_lock(&e->lock);
		e->memio_cursor[i] = cur;
		e->gaps[EXPORTER_OTLP] += gap;
		pthread_mutex_unlock(&e->lock);
		gap = false;
	}
	bd->w = main_w;
	return r;
}

/* One round of @kind: reads the window, makes the batches and queues them. */
static void round_run(struct exporter *e, enum exporter_kind kind)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct build bd = { .e = e, .kind = kind, .min_ns = UINT64_MAX,
			    .msg_min_ns = UINT64_MAX };
	struct store_cursor cur;
	uint64_t t0 = mono_ns();
	bool gap = false;
	size_t i;
	int r;

	pthread_mutex_lock(&e->lock);
	bd.o = e->o;
	cur = e->cursor[kind];
	pthread_mutex_unlock(&e->lock);
	f.root = STORE_ROOT_NONE;
	if (kind == EXPORTER_OTLP) {
		bd.w = otlp_writer__new(bd.o.freq_hz);
		if (!bd.w)
			return;
		if (e->fl)
			frameloc__round(e->fl); /* processes' maps read again */
	} else {
		bd.groups = calloc(MAX_PYRO_GROUPS, sizeof(*bd.groups));
		if (!bd.groups)
			return;
	}
	/* everything appended since the last round, whatever its time (late samples too) */
	r = store__foreach_since(e->store, &f, &cur, on_sample, &bd, &gap);
	if (!r && kind == EXPORTER_OTLP)
		r = otlp_cut(&bd);
	if (!r && kind == EXPORTER_OTLP)
		r = memio_round(e, &bd);
	for (i = 0; !r && i < bd.nr_groups; i++) {
		struct batch *b;

		if (!bd.groups[i].samples)
			continue;
		if (bd.nr_out == sizeof(bd.out) / sizeof(bd.out[0])) {
			r = -E2BIG;
			break;
		}
		b = batch_new(EXPORTER_PYROSCOPE);
		snprintf(bd.groups[i].query + strlen(bd.groups[i].query),
			 sizeof(bd.groups[i].query) - strlen(bd.groups[i].query),
			 "&from=%llu&until=%llu&sampleRate=%llu&spyName=ember&format=pprof",
			 (unsigned long long)(bd.min_ns / NSEC),
			 (unsigned long long)(bd.max_ns / NSEC + 1),
			 (unsigned long long)bd.o.freq_hz);
		pprof_writer__set_time(bd.groups[i].pw, (int64_t)bd.min_ns,
				       (int64_t)(bd.max_ns + 1 - bd.min_ns));
		if (!b || !(b->query = strdup(bd.groups[i].query)) ||
		    pprof_writer__finish(bd.groups[i].pw, &b->body)) {
			batch_free(b);
			r = -ENOMEM;
			break;
		}
		b->samples = bd.groups[i].samples;
		bd.out[bd.nr_out++] = b;
	}
	if (r)
		log_warn("export: %s batch incomplete: %s", kind == EXPORTER_OTLP ? "OTLP" : "Pyroscope",
			 strerror(r < 0 ? -r : r));
	if (gap)
		log_warn("export: samples evicted from the store before the %s exporter read them "
			 "(the interval is longer than the store keeps them)",
			 kind == EXPORTER_OTLP ? "OTLP" : "Pyroscope");
	pthread_mutex_lock(&e->lock);
	e->cursor[kind] = cur;
	e->gaps[kind] += gap;
	for (i = 0; i < bd.nr_out; i++) {
		bd.out[i]->next_try_ns = 0;
		e->st[kind].batches++;
		queue_push(e, bd.out[i]);
	}
	e->st[kind].build_ns += mono_ns() - t0;
	if (kind == EXPORTER_OTLP && e->fl) {
		struct frameloc_stats fs;

		frameloc__stats(e->fl, &fs);
		e->st[kind].frames_located = fs.found;
		e->st[kind].frames_unlocated = fs.not_found;
		e->st[kind].frame_files = fs.files_read;
		e->st[kind].frame_files_deferred = fs.files_deferred;
		e->st[kind].frame_procs_deferred = fs.procs_deferred;
		e->st[kind].frame_procs_refused = fs.procs_refused;
		e->st[kind].frame_files_ns = fs.load_ns;
		e->st[kind].frame_files_borrowed = fs.files_borrowed;
		e->st[kind].frame_files_unshared = fs.files_unshared;
		{
			struct elfshare_stats ss;

			elfshare__stats(e->o.share, &ss);
			e->st[kind].frame_images_kept = ss.kept;
			e->st[kind].frame_images_kept_found = ss.kept_found;
		}
	}
	pthread_mutex_unlock(&e->lock);
	otlp_writer__free(bd.w);
	free(bd.handle);
	free(bd.handle_gen);
	for (i = 0; i < bd.nr_groups; i++)
		pprof_writer__free(bd.groups[i].pw);
	free(bd.groups);
}

/* --- sending ------------------------------------------------------------------------------ */

static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
	uint64_t *retry_after_s = ctx;
	size_t len = size * n;

	if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		const char *p = buf + 12;

		while (*p == ' ' || *p == '\t')
			p++;
		if (isdigit((unsigned char)*p))
			*retry_after_s = strtoull(p, NULL, 10);
	}
	return len;
}

/* The answer's body is not used: up to BODY_MAX is read and thrown away; past it, 0 aborts the
 * transfer (CURLE_WRITE_ERROR, the connection closed) with the status already known. */
static size_t on_body(char *buf, size_t size, size_t n, void *ctx)
{
	size_t *seen = ctx;

	(void)buf;
	*seen += size * n;
	return *seen > BODY_MAX ? 0 : size * n;
}

/* libcurl's progress callback: a request in flight ends as soon as emberd stops. */
static int on_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct exporter *e = ctx;

	(void)dt;
	(void)dn;
	(void)ut;
	(void)un;
	return __atomic_load_n(&e->stop, __ATOMIC_RELAXED) ? 1 : 0;
}

/* Reads a secret file (trailing newline dropped) into @buf. 0 or -errno. */
static int read_secret(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, cap - 1, f);
	if (n == cap - 1 && fgetc(f) != EOF) { /* longer than any token: refused, not cut */
		fclose(f);
		buf[0] = '\0';
		return -EFBIG;
	}
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return 0;
}

enum outcome { OUT_OK, OUT_RETRY, OUT_DROP, OUT_SPLIT };

/* One attempt at @b. *ret_fail: the reason when not OUT_OK; *ret_retry_s: a Retry-After. */
static enum outcome send_batch(struct exporter *e, const struct exporter_opts *o, struct batch *b,
			       enum exporter_fail *ret_fail, uint64_t *ret_retry_s)
{
	struct curl_slist *h = NULL;
	curl_mime *mime = NULL;
	struct sbuf url = SBUF_INIT;
	char secret[SECRET_MAX], hdr[SECRET_MAX + 64];
	long code = 0;
	size_t body_seen = 0;
	CURLcode cr;
	const char *base = b->kind == EXPORTER_OTLP ? o->otlp_endpoint : o->pyroscope_url;
	size_t bl = strlen(base);
	enum outcome out;

	while (bl && base[bl - 1] == '/')
		bl--;
	sbuf_add(&url, base, bl);
	if (b->kind == EXPORTER_OTLP) {
		sbuf_adds(&url, "/v1development/profiles");
		h = curl_slist_append(h, "Content-Type: application/x-protobuf");
		h = curl_slist_append(h, "Content-Encoding: gzip");
	} else {
		curl_mimepart *part;

		sbuf_adds(&url, "/ingest?");
		sbuf_adds(&url, b->query);
		mime = curl_mime_init(e->curl);
		part = curl_mime_addpart(mime);
		curl_mime_name(part, "profile");
		curl_mime_filename(part, "profile.pprof");
		curl_mime_type(part, "application/octet-stream");
		curl_mime_data(part, b->body.buf, b->body.len);
		if (o->pyroscope_tenant[0]) {
			snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", o->pyroscope_tenant);
			h = curl_slist_append(h, hdr);
		}
	}
	h = curl_slist_append(h, "User-Agent: emberd");
	h = curl_slist_append(h, "Expect:");
	if (o->bearer_token_file[0] || o->basic_auth_file[0]) {
		const char *path = o->bearer_token_file[0] ? o->bearer_token_file : o->basic_auth_file;
		int err = read_secret(path, secret, sizeof(secret));

		if (err == -EFBIG && err != e->secret_err) /* said once per change */
			log_warn("export: the credentials in '%s' are longer than %d bytes: sending "
				 "without them", path, SECRET_MAX - 1);
		else if (err && err != e->secret_err)
			log_warn("export: cannot read the credentials in '%s': %s: sending without "
				 "them", path, strerror(-err));
		e->secret_err = err;
		if (!err && o->bearer_token_file[0]) {
			snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", secret);
			h = curl_slist_append(h, hdr);
		} else if (!err) {
			curl_easy_setopt(e->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
			curl_easy_setopt(e->curl, CURLOPT_USERPWD, secret);
		}
	}
	curl_easy_setopt(e->curl, CURLOPT_URL, url.buf);
	curl_easy_setopt(e->curl, CURLOPT_HTTPHEADER, h);
	if (mime) {
		curl_easy_setopt(e->curl, CURLOPT_MIMEPOST, mime);
	} else {
		curl_easy_setopt(e->curl, CURLOPT_POSTFIELDS, b->body.buf);
		curl_easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->body.len);
	}
	curl_easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, (long)o->timeout_ms);
	curl_easy_setopt(e->curl, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)(o->timeout_ms < 5000 ? o->timeout_ms : 5000));
	curl_easy_setopt(e->curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(e->curl, CURLOPT_LOW_SPEED_TIME, 5L);
	curl_easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e->curl, CURLOPT_HEADERDATA, ret_retry_s);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &body_seen);
	curl_easy_setopt(e->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(e->curl, CURLOPT_XFERINFODATA, e);
	curl_easy_setopt(e->curl, CURLOPT_NOPROGRESS, 0L);
	if (o->ca_file[0])
		curl_easy_setopt(e->curl, CURLOPT_CAINFO, o->ca_file);
	if (o->client_cert[0])
		curl_easy_setopt(e->curl, CURLOPT_SSLCERT, o->client_cert);
	if (o->client_key[0])
		curl_easy_setopt(e->curl, CURLOPT_SSLKEY, o->client_key);
	*ret_retry_s = 0;
	cr = curl_easy_perform(e->curl);
	if (cr == CURLE_WRITE_ERROR && body_seen > BODY_MAX) {
		/* the status came before the body: it stands (the rest was not read) */
		pthread_mutex_lock(&e->lock);
		e->st[b->kind].bodies_cut++;
		pthread_mutex_unlock(&e->lock);
		cr = CURLE_OK;
	}
	if (cr == CURLE_OK)
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &code);
	if (cr == CURLE_OPERATION_TIMEDOUT) {
		*ret_fail = EXPORT_FAIL_TIMEOUT;
		out = OUT_RETRY;
	} else if (cr == CURLE_COULDNT_CONNECT || cr == CURLE_COULDNT_RESOLVE_HOST ||
		   cr == CURLE_SEND_ERROR || cr == CURLE_RECV_ERROR || cr == CURLE_GOT_NOTHING) {
		*ret_fail = EXPORT_FAIL_CONNECT;
		out = OUT_RETRY;
	} else if (cr != CURLE_OK) {
		*ret_fail = EXPORT_FAIL_OTHER;
		out = OUT_RETRY;
		if (cr != CURLE_ABORTED_BY_CALLBACK) /* emberd stops */
			log_warn("export: %s: %s", url.buf, curl_easy_strerror(cr));
	} else if (code >= 200 && code < 300) {
		out = OUT_OK;
	} else if (code == 413) {
		*ret_fail = EXPORT_FAIL_TOO_LARGE;
		out = OUT_SPLIT;
	} else if (code == 429) {
		*ret_fail = EXPORT_FAIL_429;
		out = OUT_RETRY;
	} else if (code >= 500) {
		*ret_fail = EXPORT_FAIL_5XX;
		out = OUT_RETRY;
	} else {
		*ret_fail = EXPORT_FAIL_4XX;
		out = OUT_DROP;
		snprintf(b->why, sizeof(b->why), "the receiver answered %ld", code);
	}
	curl_easy_reset(e->curl);
	curl_slist_free_all(h);
	curl_mime_free(mime);
	sbuf_fini(&url);
	return out;
}

static uint64_t jitter(struct exporter *e, uint64_t ns, unsigned int pct)
{
	double r = (double)rand_r(&e->seed) / RAND_MAX * 2.0 - 1.0;

	return (uint64_t)((double)ns * (1.0 + r * pct / 100.0));
}

/* Sends the head batch if it is due. true: something was attempted. */
static bool send_due(struct exporter *e)
{
	struct exporter_opts o;
	enum exporter_fail why = EXPORT_FAIL_OTHER;
	uint64_t retry_s = 0, now = mono_ns(), back;
	struct batch *b;
	enum outcome out;

	pthread_mutex_lock(&e->lock);
	b = e->head;
	if (!b || b->next_try_ns > now) {
		pthread_mutex_unlock(&e->lock);
		return false;
	}
	b = queue_pop(e);
	o = e->o;
	pthread_mutex_unlock(&e->lock);
	if (!(b->kind == EXPORTER_OTLP ? o.otlp_endpoint : o.pyroscope_url)[0]) {
		batch_free(b); /* turned off by a reload */
		return true;
	}
	out = send_batch(e, &o, b, &why, &retry_s);
	pthread_mutex_lock(&e->lock);
	switch (out) {
	case OUT_OK:
		e->st[b->kind].requests++;
		e->st[b->kind].samples += b->samples;
		e->st[b->kind].bytes += b->body.len;
		e->st[b->kind].last_success_ns = real_ns();
		batch_free(b);
		break;
	case OUT_SPLIT: {
		struct batch *x = batch_new(b->kind), *y = batch_new(b->kind);
		size_t nr, ns;

		e->st[b->kind].failed[why]++;
		if (b->kind == EXPORTER_OTLP && x && y &&
		    !otlp_split(b->body.buf, b->body.len, &x->body, &y->body)) {
			e->st[b->kind].splits++;
			x->samples = !otlp_count(x->body.buf, x->body.len, &nr, &ns) ? ns : 0;
			y->samples = b->samples - x->samples;
			/* in order, at the head */
			y->next = e->head;
			e->head = y;
			if (!e->tail)
				e->tail = y;
			e->queued_bytes += y->body.len;
			queue_unpop(e, x);
			batch_free(b);
		} else {
			drop_note(e, b->kind, b->samples,
				  "the receiver refuses the message (413) and it cannot be split");
			batch_free(x);
			batch_free(y);
			e->st[b->kind].dropped++;
			e->st[b->kind].dropped_samples += b->samples;
			batch_free(b);
		}
		break;
	}
	case OUT_DROP:
		e->st[b->kind].failed[why]++;
		e->st[b->kind].dropped++;
		e->st[b->kind].dropped_samples += b->samples;
		drop_note(e, b->kind, b->samples, b->why);
		batch_free(b);
		break;
	case OUT_RETRY:
		e->st[b->kind].failed[why]++;
		e->st[b->kind].retries++;
		back = NSEC << (b->attempts < 10 ? b->attempts : 10);
		if (back > o.retry_max_ms * MSEC)
			back = o.retry_max_ms * MSEC;
		back = jitter(e, back, 20);
		if (retry_s)
			back = (retry_s < 3600 ? retry_s : 3600) * NSEC;
		b->attempts++;
		b->next_try_ns = mono_ns() + back;
		queue_unpop(e, b);
		break;
	}
	queue_gauges(e);
	pthread_mutex_unlock(&e->lock);
	return true;
}

static uint64_t interval_ns(const struct exporter_opts *o, enum exporter_kind k)
{
	return (k == EXPORTER_OTLP ? o->otlp_interval_ms : o->pyroscope_interval_ms) * MSEC;
}

static bool enabled(const struct exporter_opts *o, enum exporter_kind k)
{
	return (k == EXPORTER_OTLP ? o->otlp_endpoint : o->pyroscope_url)[0] != '\0';
}

static void *run(void *arg)
{
	struct exporter *e = arg;
	struct timespec ts;
	uint64_t now, wake;
	int k;

	/* background work, as the HTTP renders: niced below the drain thread (http_render.c) */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 10);

	pthread_mutex_lock(&e->lock);
	while (!e->stop) {
		struct exporter_opts o = e->o;

		now = mono_ns();
		for (k = 0; k < EXPORTER_KINDS; k++) {
			if (!enabled(&o, (enum exporter_kind)k))
				continue;
			if (!e->next_round_ns[k])
				e->next_round_ns[k] = now + jitter(e, interval_ns(&o, k), 10);
			if (now >= e->next_round_ns[k]) {
				e->next_round_ns[k] = now + jitter(e, interval_ns(&o, k), 10);
				pthread_mutex_unlock(&e->lock);
				round_run(e, (enum exporter_kind)k);
				pthread_mutex_lock(&e->lock);
			}
		}
		pthread_mutex_unlock(&e->lock);
		while (!__atomic_load_n(&e->stop, __ATOMIC_RELAXED) && send_due(e))
			;
		pthread_mutex_lock(&e->lock);
		if (e->stop)
			break;
		drop_flush(e);
		/* sleep to the next round or the head's retry, 1 s at most */
		now = mono_ns();
		wake = now + NSEC;
		for (k = 0; k < EXPORTER_KINDS; k++)
			if (enabled(&e->o, (enum exporter_kind)k) && e->next_round_ns[k] < wake)
				wake = e->next_round_ns[k];
		if (e->head && e->head->next_try_ns < wake)
			wake = e->head->next_try_ns;
		if (wake > now) {
			uint64_t rt = clock_ns(CLOCK_MONOTONIC) + (wake - now);

			ts.tv_sec = (time_t)(rt / NSEC);
			ts.tv_nsec = (long)(rt % NSEC);
			(void)pthread_cond_timedwait(&e->cond, &e->lock, &ts);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* --- lifetime ----------------------------------------------------------------------------- */

struct exporter *exporter__new(struct store *store, struct identity *id,
			       struct proc_tracker *procs, const struct exporter_opts *o)
{
	struct exporter *e = calloc(1, sizeof(*e));
	pthread_condattr_t ca;
	int r;

	if (!e)
		return NULL;
	e->store = store;
	e->id = id;
	e->o = *o;
	e->seed = (unsigned int)(mono_ns() ^ (uint64_t)getpid());
	/* the first round starts here: every sample appended from now on is exported */
	store__cursor_end(store, &e->cursor[EXPORTER_OTLP]);
	e->cursor[EXPORTER_PYROSCOPE] = e->cursor[EXPORTER_OTLP];
	pthread_mutex_init(&e->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&e->cond, &ca);
	pthread_condattr_destroy(&ca);
	e->curl = curl_easy_init();
	e->fl = frameloc__new(procs, NULL);
	if (e->fl)
		frameloc__set_share(e->fl, o->share); /* before its thread */
	if (!e->curl || !e->fl) {
		exporter__free(e);
		errno = ENOMEM;
		return NULL;
	}
	r = pthread_create(&e->thread, NULL, run, e);
	if (r) {
		exporter__free(e);
		errno = r;
		return NULL;
	}
	e->started = true;
	(void)pthread_setname_np(e->thread, "emberd-export"); /* its CPU in /proc: benchmarks */
	return e;
}

void exporter__free(struct exporter *e)
{
	struct batch *b;

	if (!e)
		return;
	if (e->started) {
		pthread_mutex_lock(&e->lock);
		__atomic_store_n(&e->stop, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&e->cond);
		pthread_mutex_unlock(&e->lock);
		pthread_join(e->thread, NULL);
	}
	while ((b = queue_pop(e)))
		batch_free(b);
	if (e->curl)
		curl_easy_cleanup(e->curl);
	frameloc__free(e->fl);
	free(e->locs);
	pthread_cond_destroy(&e->cond);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

int exporter__set_opts(struct exporter *e, const struct exporter_opts *o)
{
	int k;

	pthread_mutex_lock(&e->lock);
	for (k = 0; k < EXPORTER_KINDS; k++)
		if (interval_ns(o, (enum exporter_kind)k) != interval_ns(&e->o, (enum exporter_kind)k) ||
		    enabled(o, (enum exporter_kind)k) != enabled(&e->o, (enum exporter_kind)k)) {
			e->next_round_ns[k] = 0;
			if (!enabled(&e->o, (enum exporter_kind)k)) /* turned on: from now */
				store__cursor_end(e->store, &e->cursor[k]);
		}
	e->o = *o;
	pthread_cond_signal(&e->cond);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

void exporter__stats(struct exporter *e, struct exporter_stats *ret)
{
	int k;

	pthread_mutex_lock(&e->lock);
	for (k = 0; k < EXPORTER_KINDS; k++) {
		ret[k] = e->st[k];
		ret[k].enabled = enabled(&e->o, (enum exporter_kind)k);
	}
	pthread_mutex_unlock(&e->lock);
}

static bool url_ok(const char *u)
{
	return !strncmp(u, "http://", 7) ? u[7] != '\0' : !strncmp(u, "https://", 8) && u[8];
}

int exporter_check_opts(const struct exporter_opts *o, char *err, size_t errlen)
{
	const char *files[] = { o->basic_auth_file, o->bearer_token_file, o->ca_file,
				o->client_cert, o->client_key };
	size_t i;

	if (o->otlp_endpoint[0] && !url_ok(o->otlp_endpoint)) {
		snprintf(err, errlen, "export.otlp_endpoint: '%s' is not an http:// or https:// URL",
			 o->otlp_endpoint);
		return -EINVAL;
	}
	if (o->pyroscope_url[0] && !url_ok(o->pyroscope_url)) {
		snprintf(err, errlen, "export.pyroscope_url: '%s' is not an http:// or https:// URL",
			 o->pyroscope_url);
		return -EINVAL;
	}
	if (!o->client_cert[0] != !o->client_key[0]) {
		snprintf(err, errlen, "export.client_cert and export.client_key go together");
		return -EINVAL;
	}
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (files[i][0] && access(files[i], R_OK)) {
			snprintf(err, errlen, "export: cannot read '%s': %s", files[i],
				 strerror(errno));
			return -EINVAL;
		}
	}
	return 0;
}
