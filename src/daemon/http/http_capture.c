// SPDX-License-Identifier: MIT
/*
 * Ad hoc captures: POST /api/v1/captures starts one (seconds, frequency, pid). With the capture
 * manager (a second sampler, src/daemon/ingest/capture.c) and a frequency or pid, the capture
 * samples on its own and hands over its recording when done; otherwise, when its time is up, its
 * samples are cut out of the live store. Either way the server owns the recording, so that it
 * outlives the store's retention until it is deleted or evicted by the count/memory caps.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "ember/core/base/log.h"
#include "ember/core/model/idle.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/timeexpr.h"
#include "ember/daemon/ingest/capture.h"
#include "http_internal.h"

#define NS 1000000000LL
/* The daemon appends to the store once per tick: wait this long past a capture's end before
 * cutting it out, so that its last samples have arrived. */
#define CAPTURE_GRACE_NS (1500 * 1000000LL)
#define CAPTURE_DEFAULT_S 10
/*
 * Captures wait, past the grace, until the live store holds a sample taken after their end (the
 * drain delivers the ring in order: every record of the window is in its store then), at most
 * this long past their end (sampling stopped: cut with what there is). Off-CPU first: beside two
 * CPU burners the fixed grace cut a 2 s capture with 491 of its ~1900 ms. CPU too: on a loaded
 * host the store's newest sample was over 4 s old, and a 1 s capture cut at the grace came out
 * empty ("no samples in the window") or short, with nothing saying so.
 */
#define CAPTURE_MAX_WAIT_NS (10 * NS)

/* Whether the store has caught up with capture @c's end (see CAPTURE_MAX_WAIT_NS). */
static bool caught_up(struct http_server *srv, const struct capture *c, int64_t now)
{
	int64_t first, last;

	if (now >= c->end_ns + CAPTURE_MAX_WAIT_NS)
		return true;
	return !http_source_bounds(&srv->src, &first, &last) && last >= c->end_ns + NS / 5;
}

/* Lives in the capture list; refs > 0 while a handler reads it or the tick fills it. */
struct capture_ref {
	struct capture c;
	unsigned int refs;	/* the list holds one */
	bool finishing;
};

#define REF(cp) ((struct capture_ref *)(cp))

static void capture_free(struct capture *c)
{
	if (!c)
		return;
	recording__free(c->rec);
	free(REF(c));
}

/* Under srv->lock. */
static void capture_put_locked(struct capture *c)
{
	if (--REF(c)->refs == 0)
		capture_free(c);
}

static void capture_put(struct http_server *srv, struct capture *c)
{
	pthread_mutex_lock(&srv->lock);
	capture_put_locked(c);
	pthread_mutex_unlock(&srv->lock);
}

/* Unlinks @c from the list (under srv->lock) and drops the list's reference. */
static void capture_unlink_locked(struct http_server *srv, struct capture *c)
{
	struct capture **pp;

	for (pp = &srv->captures; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			c->next = NULL;
			if (c->state == CAPTURE_RUNNING && c->sampler_handle >= 0 &&
			    srv->capture_mgr) {
				capture_mgr__stop(srv->capture_mgr, c->sampler_handle);
				c->sampler_handle = -1;
			}
			capture_put_locked(c);
			return;
		}
	}
}

void http_captures_free(struct http_server *srv)
{
	pthread_mutex_lock(&srv->lock);
	while (srv->captures)
		capture_unlink_locked(srv, srv->captures);
	pthread_mutex_unlock(&srv->lock);
}

static size_t captures_bytes_locked(const struct http_server *srv)
{
	const struct capture *c;
	size_t n = 0;

	for (c = srv->captures; c; c = c->next)
		if (c->rec)
			n += recording__mem_bytes(c->rec);
	return n;
}

/* Evicts the oldest finished captures while over the memory cap (never @keep). */
static void enforce_memory_cap_locked(struct http_server *srv, const struct capture *keep)
{
	struct capture *c, *victim;

	while (captures_bytes_locked(srv) > srv->cfg.max_capture_bytes) {
		victim = NULL;
		for (c = srv->captures; c && !victim; c = c->next)
			if (c != keep && c->state != CAPTURE_RUNNING && !REF(c)->finishing)
				victim = c;
		if (!victim)
			return;
		log_info("http: evicting capture %u (memory cap)", victim->id);
		capture_unlink_locked(srv, victim);
		srv->captures_evicted++;
	}
}

struct copy_ctx {
	struct recording *rec;
	struct sbuf tmp;
	bool truncated;
};

static int copy_sample(const struct store_sample_view *v, void *ctx)
{
	struct copy_ctx *cc = ctx;
	size_t i;
	int err;

	sbuf_reset(&cc->tmp);
	for (i = 0; i < v->nr_frames; i++) {
		if (i)
			sbuf_addc(&cc->tmp, ';');
		sbuf_adds(&cc->tmp, v->frames[i]);
	}
	if (sbuf_error(&cc->tmp))
		return -ENOMEM;
	err = recording__add(cc->rec, (int64_t)v->time_ns, (int32_t)v->pid, (int32_t)v->tid,
			     v->comm, cc->tmp.buf ? cc->tmp.buf : "", cc->tmp.len, 1);
	if (err == -E2BIG) {
		cc->truncated = true;
		return 1; /* stop: the memory cap is reached */
	}
	return err;
}

/* event= values of captures; wall is two stores and is not captured */
static const char *event_name(int e)
{
	switch (e) {
	case QUERY_EVENT_OFFCPU:
		return "offcpu";
	case QUERY_EVENT_WAKEUP:
		return "wakeup";
	case QUERY_EVENT_CHAIN:
		return "chain";
	case QUERY_EVENT_PAGEFAULT:
		return "pagefault";
	case QUERY_EVENT_VMGROW:
		return "vmgrow";
	case QUERY_EVENT_BLOCKIO:
		return "blockio";
	case QUERY_EVENT_MALLOC:
		return "malloc";
	default:
		return "cpu";
	}
}

/*
 * A capture that got no sample has failed, with the reason ("done, 0 samples" looked
 * like an idle program while sampling had stopped): its recording is dropped.
 */
static int count_idle(const struct rec_sample *s, void *ctx)
{
	double *idle = ctx;

	/* the one idle rule (idle.h), as the capture's views apply it */
	if (idle_task(s->pid, s->comm, strlen(s->comm)) && idle_stack_text(s->stack, s->stack_len))
		*idle += s->count;
	return 0;
}

static void fail_if_empty(struct capture *c)
{
	/* the idle samples it holds: its list entry says them apart, as its graph hides them
	 * unless idle=1 (a list saying 658 beside a graph of 290 looked like a loss) */
	if (c->state == CAPTURE_DONE && c->rec)
		(void)recording__for_each(c->rec, INT64_MIN, INT64_MAX, count_idle, &c->idle);
	if (c->state != CAPTURE_DONE || !c->rec || recording__nr_samples(c->rec))
		return;
	if (c->event != QUERY_EVENT_CPU)
		snprintf(c->error, sizeof(c->error),
			 "no %s events in the window: nothing recorded blocked, or sampling stopped",
			 event_name(c->event));
	else if (c->pid >= 0)
		snprintf(c->error, sizeof(c->error),
			 "no samples: pid %lld was not on a CPU, or sampling stopped (/healthz)",
			 (long long)c->pid);
	else
		snprintf(c->error, sizeof(c->error),
			 "no samples in the window: sampling stopped (see /healthz)");
	recording__free(c->rec);
	c->rec = NULL;
	c->state = CAPTURE_FAILED;
}

/* Cuts the capture's window out of the store (no server lock held). */
static void capture_fill(struct http_server *srv, struct capture *c)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct copy_ctx cc = { .tmp = SBUF_INIT };
	int err;

	cc.rec = recording__new(srv->cfg.max_capture_bytes);
	if (!cc.rec) {
		snprintf(c->error, sizeof(c->error), "out of memory");
		c->state = CAPTURE_FAILED;
		return;
	}
	f.from_ns = (uint64_t)c->start_ns;
	f.to_ns = (uint64_t)c->end_ns;
	f.pid = c->pid;
	f.include_idle = true; /* kept: queries on the capture filter it out by default */
	f.root = STORE_ROOT_COMM;
	{
		struct query_common q = { .event = (enum query_event)c->event };

		err = store__foreach_sample(http_source_store(&srv->src, &q), &f, 0, copy_sample,
					    &cc);
	}
	sbuf_fini(&cc.tmp);
	if (err < 0) {
		recording__free(cc.rec);
		snprintf(c->error, sizeof(c->error), "copying from the store failed: %s",
			 strerror(-err));
		c->state = CAPTURE_FAILED;
		return;
	}
	(void)recording__freeze(cc.rec);
	c->truncated = cc.truncated;
	c->rec = cc.rec;
	c->state = CAPTURE_DONE;
	fail_if_empty(c);
}

/* Collects the recordings of due captures that run their own sampler (under srv->lock). */
static void take_sampled_locked(struct http_server *srv, int64_t now)
{
	struct capture *c, *done = NULL;
	struct recording *rec;
	bool truncated;
	int r;

	for (c = srv->captures; c; c = c->next) {
		if (c->state != CAPTURE_RUNNING || c->sampler_handle < 0 || now < c->end_ns)
			continue;
		rec = NULL;
		truncated = false;
		r = capture_mgr__take(srv->capture_mgr, c->sampler_handle, &rec, &truncated,
				      c->error, sizeof(c->error));
		if (r == -EAGAIN)
			continue; /* the daemon's next tick drains its last samples */
		c->sampler_handle = -1;
		if (r < 0 || !rec) {
			if (!c->error[0])
				snprintf(c->error, sizeof(c->error), "capture sampler failed: %s",
					 strerror(r < 0 ? -r : EIO));
			c->state = CAPTURE_FAILED;
			continue;
		}
		c->rec = rec;
		c->truncated = truncated;
		c->state = CAPTURE_DONE;
		fail_if_empty(c);
		if (c->state == CAPTURE_DONE)
			done = c;
	}
	if (done)
		enforce_memory_cap_locked(srv, done);
}

void http_captures_tick(struct http_server *srv)
{
	struct capture *c;
	int64_t now;

	if (!srv->src.store)
		return;
	if (srv->capture_mgr) {
		pthread_mutex_lock(&srv->lock);
		take_sampled_locked(srv, http_now_ns());
		pthread_mutex_unlock(&srv->lock);
	}
	for (;;) {
		now = http_now_ns();
		pthread_mutex_lock(&srv->lock);
		for (c = srv->captures; c; c = c->next)
			if (c->state == CAPTURE_RUNNING && !REF(c)->finishing &&
			    c->sampler_handle < 0 && now >= c->end_ns + CAPTURE_GRACE_NS &&
			    caught_up(srv, c, now))
				break;
		if (c) {
			REF(c)->finishing = true;
			REF(c)->refs++;
		}
		pthread_mutex_unlock(&srv->lock);
		if (!c)
			return;
		capture_fill(srv, c);
		pthread_mutex_lock(&srv->lock);
		REF(c)->finishing = false;
		enforce_memory_cap_locked(srv, c);
		capture_put_locked(c);
		pthread_mutex_unlock(&srv->lock);
	}
}

static const char *state_name(enum capture_state s)
{
	switch (s) {
	case CAPTURE_RUNNING:
		return "running";
	case CAPTURE_DONE:
		return "done";
	case CAPTURE_FAILED:
		return "failed";
	}
	return "unknown";
}

static void json_secs(struct sbuf *sb, const char *key, int64_t ns)
{
	sbuf_addf(sb, "\"%s\": %lld.%03lld, ", key, (long long)(ns / NS),
		  (long long)((ns % NS) / 1000000));
}

/* Under srv->lock (reads fields the tick writes). */
static void capture_json_locked(const struct capture *c, int64_t now, struct sbuf *sb)
{
	double progress;

	sbuf_addf(sb, "{\"id\": %u, \"state\": \"%s\", ", c->id, state_name(c->state));
	if (c->pid >= 0)
		sbuf_addf(sb, "\"pid\": %lld, ", (long long)c->pid);
	else
		sbuf_adds(sb, "\"pid\": null, ");
	/* the duration asked for, fraction included (it used to be rounded up: 0.1 gave 1) */
	sbuf_adds(sb, "\"seconds\": ");
	sbuf_add_count(sb, (double)c->seconds_ns / 1e9);
	sbuf_adds(sb, ", ");
	if (c->frequency_hz)
		sbuf_addf(sb, "\"frequency\": %llu, ", (unsigned long long)c->frequency_hz);
	else
		sbuf_adds(sb, "\"frequency\": null, ");
	sbuf_addf(sb, "\"frequency_applied\": %s, ", c->frequency_applied ? "true" : "false");
	sbuf_addf(sb, "\"event\": \"%s\", ", event_name(c->event));
	json_secs(sb, "created", c->created_ns);
	json_secs(sb, "start", c->start_ns);
	json_secs(sb, "end", c->end_ns);
	if (c->state != CAPTURE_RUNNING)
		progress = 1;
	else if (now <= c->start_ns)
		progress = 0;
	else
		progress = (double)(now - c->start_ns) / (double)(c->end_ns - c->start_ns);
	sbuf_addf(sb, "\"progress\": %.3f, ", progress > 1 ? 1.0 : progress);
	if (c->rec)
		sbuf_addf(sb, "\"samples\": %.17g, \"idle_samples\": %.17g, \"stacks\": %zu, "
			  "\"bytes\": %zu, ",
			  recording__total(c->rec), c->idle, recording__nr_stacks(c->rec),
			  recording__mem_bytes(c->rec));
	sbuf_addf(sb, "\"truncated\": %s, ", c->truncated ? "true" : "false");
	if (c->error[0]) {
		sbuf_adds(sb, "\"error\": \"");
		sbuf_add_json(sb, c->error, strlen(c->error));
		sbuf_adds(sb, "\", ");
	}
	sbuf_addf(sb,
		  "\"urls\": {\"self\": \"/api/v1/captures/%u\", \"folded\": "
		  "\"/api/v1/captures/%u/folded\", \"flamegraph\": "
		  "\"/api/v1/captures/%u/flamegraph.svg\", \"samples\": "
		  "\"/api/v1/captures/%u/samples\", \"heatmap\": \"/api/v1/captures/%u/heatmap\"}}",
		  c->id, c->id, c->id, c->id, c->id);
}

size_t http_captures_bytes(struct http_server *srv)
{
	size_t n;

	pthread_mutex_lock(&srv->lock);
	n = captures_bytes_locked(srv);
	pthread_mutex_unlock(&srv->lock);
	return n;
}

void http_captures_stats(struct http_server *srv, struct sbuf *json)
{
	const struct capture *c;
	unsigned int n = 0, running = 0;

	pthread_mutex_lock(&srv->lock);
	for (c = srv->captures; c; c = c->next) {
		n++;
		running += c->state == CAPTURE_RUNNING;
	}
	sbuf_addf(json,
		  "\"captures\": {\"count\": %u, \"running\": %u, \"bytes\": %zu, \"evicted\": "
		  "%llu, \"max_count\": %u, \"max_bytes\": %llu}, ",
		  n, running, captures_bytes_locked(srv), (unsigned long long)srv->captures_evicted,
		  srv->cfg.max_captures, (unsigned long long)srv->cfg.max_capture_bytes);
	pthread_mutex_unlock(&srv->lock);
}

int http_handle_captures_list(struct http_server *srv, struct http_request *req,
			      struct http_response *resp)
{
	const struct capture *c;
	int64_t now = http_now_ns();

	if (http_request__parse(req, NULL, 0, NULL, NULL, resp))
		return 0;
	http_captures_tick(srv);
	resp->cache_control = "no-store";
	sbuf_adds(&resp->body, "{\"captures\": [");
	pthread_mutex_lock(&srv->lock);
	for (c = srv->captures; c; c = c->next) {
		capture_json_locked(c, now, &resp->body);
		if (c->next)
			sbuf_adds(&resp->body, ", ");
	}
	pthread_mutex_unlock(&srv->lock);
	sbuf_adds(&resp->body, "]}\n");
	return 0;
}

struct post_params {
	uint64_t max_s;
	int64_t seconds_ns;
	uint64_t frequency;
	int64_t pid;
	int event;
};

static int post_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct post_params *pp = ctx;
	struct parse_error pe;
	uint64_t v;
	int64_t ns;

	if (!strcmp(key, "seconds")) {
		if (timeexpr_parse_duration(value, strlen(value), &ns, &pe) || ns < NS / 10) {
			*err = (struct query_error){ .param = "seconds",
						     .reason = "expected a duration of at least 0.1 s",
						     .status = 400 };
			return -EINVAL;
		}
		if ((uint64_t)ns > pp->max_s * NS) {
			*err = (struct query_error){ .param = "seconds",
						     .reason = "longer than the configured limit",
						     .status = 413 };
			return -E2BIG;
		}
		pp->seconds_ns = ns;
		return 1;
	}
	if (!strcmp(key, "frequency")) {
		if (query_parse_u64(key, value, 1, 10000, &v, err))
			return -EINVAL;
		pp->frequency = v;
		return 1;
	}
	if (!strcmp(key, "event")) {
		if (!strcmp(value, "cpu") || !strcmp(value, "offcpu") || !strcmp(value, "wakeup") ||
		    !strcmp(value, "chain")) {
			pp->event = !strcmp(value, "offcpu")   ? QUERY_EVENT_OFFCPU
				    : !strcmp(value, "wakeup") ? QUERY_EVENT_WAKEUP
				    : !strcmp(value, "chain")  ? QUERY_EVENT_CHAIN
							       : QUERY_EVENT_CPU;
			return 1;
		}
		/* memory and I/O events: a window of their store, as off-CPU events' */
		if (!strcmp(value, "pagefault") || !strcmp(value, "vmgrow") ||
		    !strcmp(value, "blockio") || !strcmp(value, "malloc")) {
			pp->event = value[0] == 'p'   ? QUERY_EVENT_PAGEFAULT
				    : value[0] == 'v' ? QUERY_EVENT_VMGROW
				    : value[0] == 'b' ? QUERY_EVENT_BLOCKIO
						      : QUERY_EVENT_MALLOC;
			return 1;
		}
		*err = (struct query_error){
			.param = "event",
			.reason = "cpu, offcpu, wakeup, chain, pagefault, vmgrow, blockio or malloc "
				  "(wall: capture cpu and offcpu)",
			.status = 400
		};
		return -EINVAL;
	}
	if (!strcmp(key, "pid")) {
		if (query_parse_u64(key, value, 1, 4194304, &v, err))
			return -EINVAL;
		pp->pid = (int64_t)v;
		return 1;
	}
	return 0;
}

int http_handle_captures_post(struct http_server *srv, struct http_request *req,
			      struct http_response *resp)
{
	struct post_params pp = { .max_s = srv->cfg.max_capture_s,
				  .seconds_ns = CAPTURE_DEFAULT_S * NS, .pid = -1 };
	struct capture_ref *cr;
	struct capture *c, *victim, **pp_tail;
	unsigned int n = 0;
	int64_t now = http_now_ns();

	if (http_request__parse(req, NULL, 0, post_param, &pp, resp))
		return 0;
	if (!srv->src.store) {
		http_response__error(resp, 409, NULL,
				     "captures need live sampling (emberd is replaying files)");
		return 0;
	}
	if (pp.event >= QUERY_EVENT_PAGEFAULT) {
		struct query_common eq = { .event = (enum query_event)pp.event };
		const char *why = http_event_unavailable(&srv->src, &eq);

		if (why) {
			http_response__error(resp, 409, "event", why);
			return 0;
		}
	} else if (pp.event != QUERY_EVENT_CPU && !srv->src.offcpu) {
		http_response__error(resp, 409, "event", HTTP_OFFCPU_OFF);
		return 0;
	}
	if (pp.event != QUERY_EVENT_CPU && pp.frequency) {
		/* off-CPU events come from the daemon's programs: no second sampler to run */
		http_response__error(resp, 400, "frequency",
				     "frequency applies to on-CPU captures only");
		return 0;
	}
	/* a pid that does not exist would only end with 0 samples: said now (EPERM: it exists) */
	if (pp.pid >= 0 && kill((pid_t)pp.pid, 0) && errno == ESRCH) {
		char msg[96];

		/* the words of every route's rule (http_source_check()) */
		snprintf(msg, sizeof(msg), "no process %lld: it is not running and no sample of it is held",
			 (long long)pp.pid);
		http_response__error(resp, 404, "pid", msg);
		return 0;
	}
	http_captures_tick(srv);
	cr = calloc(1, sizeof(*cr));
	if (!cr)
		return -ENOMEM;
	cr->refs = 1;
	c = &cr->c;
	c->state = CAPTURE_RUNNING;
	c->created_ns = c->start_ns = now;
	c->end_ns = now + pp.seconds_ns;
	c->seconds_ns = pp.seconds_ns;
	c->frequency_hz = pp.frequency;
	c->pid = pp.pid;
	c->event = pp.event;
	c->sampler_handle = -1;

	pthread_mutex_lock(&srv->lock);
	for (victim = srv->captures; victim; victim = victim->next)
		n++;
	while (n >= srv->cfg.max_captures) {
		for (victim = srv->captures; victim; victim = victim->next)
			if (victim->state != CAPTURE_RUNNING && !REF(victim)->finishing)
				break;
		if (!victim)
			break;
		log_info("http: evicting capture %u (count cap)", victim->id);
		capture_unlink_locked(srv, victim);
		srv->captures_evicted++;
		n--;
	}
	if (n >= srv->cfg.max_captures) {
		pthread_mutex_unlock(&srv->lock);
		free(cr);
		http_response__error(resp, 429, NULL,
				     "too many captures running (the configured count cap)");
		return 0;
	}
	if (srv->capture_mgr && pp.event == QUERY_EVENT_CPU && (pp.frequency || pp.pid >= 0)) {
		uint64_t freq = 0;
		int64_t start = now;
		int h = capture_mgr__start(srv->capture_mgr, pp.frequency, pp.pid, pp.seconds_ns,
					   (size_t)srv->cfg.max_capture_bytes, &freq, &start);

		if (h >= 0) {
			/* its own sampler: the window starts when it is attached */
			c->sampler_handle = h;
			c->frequency_applied = true;
			c->frequency_hz = freq;
			c->start_ns = start;
			c->end_ns = start + pp.seconds_ns;
		} else {
			snprintf(c->error, sizeof(c->error),
				 "no second sampler (%s): using the daemon's frequency",
				 strerror(-h));
		}
	}
	c->id = srv->next_capture_id++;
	for (pp_tail = &srv->captures; *pp_tail; pp_tail = &(*pp_tail)->next)
		;
	*pp_tail = c;
	resp->status = 201;
	resp->cache_control = "no-store";
	snprintf(resp->location, sizeof(resp->location), "/api/v1/captures/%u", c->id);
	capture_json_locked(c, now, &resp->body);
	pthread_mutex_unlock(&srv->lock);
	sbuf_addc(&resp->body, '\n');
	return 0;
}

/* "ID" or "ID/what" -> the capture (referenced) and what; NULL (404 filled) if none. */
static struct capture *lookup(struct http_server *srv, struct http_request *req,
			      struct http_response *resp, const char **ret_what)
{
	const char *s = http_request__suffix(req);
	struct capture *c;
	char *end;
	unsigned long id;

	if (*s < '1' || *s > '9') {
		http_response__error(resp, 404, NULL, "no such capture");
		return NULL;
	}
	errno = 0;
	id = strtoul(s, &end, 10);
	if (errno || (*end && *end != '/') || id > UINT32_MAX) {
		http_response__error(resp, 404, NULL, "no such capture");
		return NULL;
	}
	*ret_what = *end ? end + 1 : "";
	pthread_mutex_lock(&srv->lock);
	for (c = srv->captures; c; c = c->next)
		if (c->id == id)
			break;
	if (c)
		REF(c)->refs++;
	pthread_mutex_unlock(&srv->lock);
	if (!c)
		http_response__error(resp, 404, NULL, "no such capture");
	return c;
}

int http_handle_capture_get(struct http_server *srv, struct http_request *req,
			    struct http_response *resp)
{
	struct capture *c;
	struct http_source src;
	const char *what;
	int64_t first, last;
	int err = 0;

	http_captures_tick(srv);
	c = lookup(srv, req, resp, &what);
	if (!c)
		return 0;
	if (!*what) {
		if (!http_request__parse(req, NULL, 0, NULL, NULL, resp)) {
			resp->cache_control = "no-store";
			pthread_mutex_lock(&srv->lock);
			capture_json_locked(c, http_now_ns(), &resp->body);
			pthread_mutex_unlock(&srv->lock);
			sbuf_addc(&resp->body, '\n');
		}
		goto out;
	}
	if (strcmp(what, "folded") && strcmp(what, "flamegraph.svg") && strcmp(what, "samples") &&
	    strcmp(what, "heatmap") && strcmp(what, "heatmap.svg")) {
		http_response__error(resp, 404, NULL, "no such capture view");
		goto out;
	}
	if (c->state == CAPTURE_RUNNING) {
		http_response__error(resp, 409, NULL, "the capture is still running");
		goto out;
	}
	if (!c->rec) {
		http_response__error(resp, 410, NULL, c->error[0] ? c->error : "capture failed");
		goto out;
	}
	/* relative times and the default range are the capture's own */
	src = (struct http_source){ .rec = c->rec };
	req->now_ns = c->end_ns;
	req->default_range_ns = c->end_ns - c->start_ns;
	req->default_event = c->event; /* its units and titles (ms), unless event= says */
	req->src = &src;	       /* a pid of the capture's samples is found in them */
	if (!recording__bounds(c->rec, &first, &last) && last >= req->now_ns)
		req->now_ns = last + 1;
	if (!strcmp(what, "folded"))
		err = http_serve_folded(srv, &src, req, resp);
	else if (!strcmp(what, "flamegraph.svg"))
		err = http_serve_flamegraph(srv, &src, req, resp);
	else if (!strcmp(what, "samples"))
		err = http_serve_samples(srv, &src, req, resp);
	else
		err = http_serve_heatmap(srv, &src, req, resp, what[7] == '.');
	/* a finished capture never changes */
	if (resp->status == 200)
		resp->cache_control = "private, max-age=3600";
out:
	capture_put(srv, c);
	return err;
}

int http_handle_capture_delete(struct http_server *srv, struct http_request *req,
			       struct http_response *resp)
{
	struct capture *c;
	const char *what;
	uint32_t id;

	c = lookup(srv, req, resp, &what);
	if (!c)
		return 0;
	if (*what) {
		http_response__error(resp, 405, NULL, "only a whole capture can be deleted");
		capture_put(srv, c);
		return 0;
	}
	id = c->id;
	pthread_mutex_lock(&srv->lock);
	capture_unlink_locked(srv, c);
	capture_put_locked(c);
	pthread_mutex_unlock(&srv->lock);
	resp->cache_control = "no-store";
	sbuf_addf(&resp->body, "{\"id\": %u, \"state\": \"deleted\"}\n", id);
	return 0;
}
