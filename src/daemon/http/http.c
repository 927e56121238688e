// SPDX-License-Identifier: MIT
#include "ember/daemon/http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>
#include <zlib.h>

#include "ember/core/base/log.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/clock.h"
#include "http_internal.h"

/*
 * The built-in routes. ADD ROUTES HERE: one row per endpoint, { method, path, prefix?, handler,
 * ctx, cheap? } (cheap: answered on MHD's threads, see struct http_route); declare the handler in
 * your module's header. Routes added at run time with
 * http_server__add_route() are matched first. A path that matches some row under another method
 * is a 405 with an Allow header; no match at all is a 404.
 */
static const struct http_route http_builtin_routes[] = {
	{ "GET", "/healthz", false, http_handle_healthz, NULL, true },
	{ "GET", "/api/v1/stats", false, http_handle_stats, NULL, true },
	{ "GET", "/api/v1/folded", false, http_handle_folded, NULL, false },
	{ "GET", "/api/v1/flamegraph.svg", false, http_handle_flamegraph, NULL, false },
	{ "GET", "/api/v1/heatmap", false, http_handle_heatmap, NULL, false },
	{ "GET", "/api/v1/heatmap.svg", false, http_handle_heatmap_svg, NULL, false },
	{ "GET", "/api/v1/samples", false, http_handle_samples, NULL, false },
	{ "GET", "/api/v1/diff.svg", false, http_handle_diff_svg, NULL, false },
	{ "GET", "/api/v1/top", false, http_handle_top, NULL, false },
	{ "GET", "/api/v1/sandwich", false, http_handle_sandwich, NULL, false },
	{ "GET", "/api/v1/sandwich.svg", false, http_handle_sandwich_svg, NULL, false },
	{ "GET", "/api/v1/diff.folded", false, http_handle_diff_folded, NULL, false },
	{ "GET", "/api/v1/compare", false, http_handle_compare, NULL, false },
	{ "GET", "/api/v1/captures", false, http_handle_captures_list, NULL, true },
	{ "POST", "/api/v1/captures", false, http_handle_captures_post, NULL, false },
	{ "GET", "/api/v1/captures/", true, http_handle_capture_get, NULL, false },
	{ "DELETE", "/api/v1/captures/", true, http_handle_capture_delete, NULL, true },
	{ "GET", "/", false, http_handle_asset, NULL, true },
	{ "GET", "/assets/", true, http_handle_asset, NULL, true },
};

#define NR_BUILTIN (sizeof(http_builtin_routes) / sizeof(http_builtin_routes[0]))

/* At stop, the time given to the responses in flight (the waiting profiles) to go out. */
#define STOP_DRAIN_NS (1000 * 1000000LL)

int64_t http_now_ns(void)
{
	return (int64_t)real_ns();
}

void http_config_init(struct http_config *c)
{
	*c = (struct http_config){
		.listen = "127.0.0.1:8080",
		.max_connections = 64,
		.threads = 2,
		.timeout_s = 30,
		.default_range_s = 60,
		.max_range_s = 7 * 86400,
		.max_response_bytes = 256ULL << 20,
		.max_body_bytes = 64 << 10,
		.max_captures = 16,
		.max_capture_bytes = 256ULL << 20,
		.max_capture_s = 600,
		.max_request_bytes = 64 << 10,
		.max_connections_per_ip = 32,
		.reserved_connections = 16,
		.request_timeout_s = 10,
		.render_threads = 2,
		.render_queue = 16,
		.response_memory_bytes = 128ULL << 20,
	};
}

struct http_server *http_server__new(const struct http_config *c, struct store *live,
				     struct recording *replay)
{
	struct http_server *s;

	if (!c || (!live) == (!replay)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *c;
	s->cfg.listen[sizeof(s->cfg.listen) - 1] = '\0';
	if (!s->cfg.threads)
		s->cfg.threads = 1;
	s->src = (struct http_source){ .store = live, .rec = replay };
	s->started_ns = http_now_ns();
	if (!s->cfg.render_threads)
		s->cfg.render_threads = 1;
	s->next_capture_id = 1;
	s->wake_fd = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->pub_lock, NULL);
	pthread_mutex_init(&s->jobs_lock, NULL);
	pthread_cond_init(&s->jobs_cond, NULL);
	http_auth_init(s);
	http_cache_init(s);
	http_conn_init(s);
	return s;
}

void http_server__free(struct http_server *s)
{
	int64_t deadline;

	if (!s)
		return;
	/* every suspended request answered or dropped (MHD must not stop with one), the waiting
	 * profiles answered with what there is; then a second at most for those answers to go
	 * out (not for responses that were being sent already: a client that does not read them
	 * would hold the stop) */
	http_render_stop(s);
	if (s->mhd) {
		deadline = (int64_t)mono_ns() + STOP_DRAIN_NS;
		while (atomic_load(&s->in_flight) && (int64_t)mono_ns() < deadline)
			(void)nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		MHD_stop_daemon(s->mhd);
	}
	http_captures_free(s);
	http_cache_fini(s);
	http_conn_fini(s);
	http_auth_fini(s);
	pthread_cond_destroy(&s->jobs_cond);
	pthread_mutex_destroy(&s->jobs_lock);
	while (s->nr_owned--)
		s->owned[s->nr_owned].free_fn(s->owned[s->nr_owned].obj);
	free(s->owned);
	free(s->extra_routes);
	pthread_mutex_destroy(&s->pub_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int http_server__add_route(struct http_server *s, const struct http_route *r)
{
	struct http_route *n;

	if (s->mhd)
		return -EBUSY;
	n = realloc(s->extra_routes, (s->nr_extra_routes + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	n[s->nr_extra_routes++] = *r;
	s->extra_routes = n;
	return 0;
}

int http_server__own(struct http_server *s, void *obj, void (*free_fn)(void *))
{
	struct http_owned *n = realloc(s->owned, (s->nr_owned + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	n[s->nr_owned++] = (struct http_owned){ .obj = obj, .free_fn = free_fn };
	s->owned = n;
	return 0;
}

void http_server__set_stats_hook(struct http_server *s, http_stats_fn fn, void *ctx)
{
	s->stats_fn = fn;
	s->stats_ctx = ctx;
}

void http_server__set_liveness(struct http_server *s, struct liveness *l)
{
	s->live = l;
}

struct liveness *http_server__liveness(const struct http_server *s)
{
	return s->live;
}

void http_server__set_captures(struct http_server *s, struct capture_mgr *m)
{
	s->capture_mgr = m;
}

void http_server__set_identity(struct http_server *s, struct identity *id)
{
	s->identity = id;
	s->src.identity = id;
}

void http_server__set_observer(struct http_server *s, http_observe_fn fn, void *ctx)
{
	s->observe_fn = fn;
	s->observe_ctx = ctx;
}

void http_server__set_limits(struct http_server *s, uint64_t max_range_s,
			     uint64_t max_response_bytes, uint64_t max_body_bytes)
{
	/* read by MHD's threads without a lock: single aligned stores */
	__atomic_store_n(&s->cfg.max_range_s, max_range_s, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cfg.max_response_bytes, max_response_bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cfg.max_body_bytes, max_body_bytes, __ATOMIC_RELAXED);
	/* cached answers were rendered under the old limits */
	http_cache_flush(s);
}

void http_server__flush_cache(struct http_server *s)
{
	http_cache_flush(s);
}

void http_server__set_offcpu(struct http_server *s, const struct offcpu_sink *k,
			     uint64_t quantum_us, uint64_t freq_hz)
{
	offcpu_sink__stores(k, &s->src.offcpu, &s->src.wakeup, &s->src.chain);
	s->src.offcpu_us = quantum_us;
	s->src.cpu_us = freq_hz ? 1000000 / freq_hz : 0;
}

void http_server__set_pmc(struct http_server *s, const char *why)
{
	snprintf(s->src.pmc_why, sizeof(s->src.pmc_why), "%s", why);
}

void http_server__set_memio(struct http_server *s, const struct memio_sink *k)
{
	int i;

	for (i = 0; i < MEMIO_STORE_NR; i++) {
		s->src.memio[i] = memio_sink__store(k, (enum memio_store)i);
		s->src.memio_quantum[i] = memio_sink__quantum(k, (enum memio_store)i);
	}
}

struct store *http_server__store(const struct http_server *s)
{
	return s->src.store;
}

const struct http_config *http_server__config(const struct http_server *s)
{
	return &s->cfg;
}

uint64_t http_server__bytes_out(const struct http_server *s)
{
	return atomic_load(&s->bytes_out);
}

void http_server__load_stats(struct http_server *s, struct http_load_stats *ret)
{
	unsigned int conns, busy;

	http_conn_counts(s, &conns, &busy);
	pthread_mutex_lock(&s->jobs_lock);
	*ret = (struct http_load_stats){
		.connections = conns,
		.busy_connections = busy,
		.accepted = s->conns_accepted,
		.evicted_timeout = s->evicted_timeout,
		.evicted_pressure = s->evicted_pressure,
		.renders = s->renders,
		.renders_cancelled = s->renders_cancelled,
		.renders_running = s->nr_running,
		.renders_queued = s->nr_queued,
		.renders_waiting = s->nr_deferred,
		.rejected_renders = s->rejected_renders,
		.rejected_memory = s->rejected_memory,
		.rejected_connections = s->rejected_conns,
		.rejected_stopping = s->rejected_stopping,
		.response_bytes = s->resp_bytes,
		.response_bytes_peak = s->resp_bytes_peak,
		.response_memory_bytes = s->cfg.response_memory_bytes,
		.responses_aborted = s->responses_aborted,
	};
	pthread_mutex_unlock(&s->jobs_lock);
}

void http_server__publish(struct http_server *s, const struct http_published *p)
{
	pthread_mutex_lock(&s->pub_lock);
	s->pub = *p;
	s->pub_at_ns = mono_ns();
	s->pub_have = true;
	pthread_mutex_unlock(&s->pub_lock);
}

uint64_t http_server__published_at(struct http_server *s)
{
	uint64_t t;

	pthread_mutex_lock(&s->pub_lock);
	t = s->pub_at_ns;
	pthread_mutex_unlock(&s->pub_lock);
	return t;
}

bool http_server__published(struct http_server *s, struct http_published *ret)
{
	bool have;

	pthread_mutex_lock(&s->pub_lock);
	have = s->pub_have;
	if (have)
		*ret = s->pub;
	pthread_mutex_unlock(&s->pub_lock);
	return have;
}

bool http_server__is_replay(const struct http_server *s)
{
	return s->src.rec != NULL;
}

uint16_t http_server__port(const struct http_server *s)
{
	return s->port;
}

void http_server__tick(struct http_server *s)
{
	http_captures_tick(s);
}

struct profile *http_server__query_profile(struct http_server *s, const struct query_common *q,
					   struct strtab *st)
{
	return http_source_profile(&s->src, q, st);
}

void *http_request__route_ctx(const struct http_request *req)
{
	return req->route_ctx;
}

const char *http_request__method(const struct http_request *req)
{
	return req->method;
}

const char *http_request__path(const struct http_request *req)
{
	return req->path;
}

const char *http_request__suffix(const struct http_request *req)
{
	return req->suffix;
}

int64_t http_request__now_ns(const struct http_request *req)
{
	return req->now_ns;
}

void http_response__error(struct http_response *resp, int status, const char *param,
			  const char *reason)
{
	sbuf_reset(&resp->body);
	resp->status = status;
	resp->content_type = "application/json";
	resp->cache_control = "no-store";
	resp->disposition[0] = '\0';
	sbuf_adds(&resp->body, "{\"error\": \"");
	sbuf_add_json(&resp->body, reason, strlen(reason));
	sbuf_adds(&resp->body, "\"");
	if (param && *param) {
		sbuf_adds(&resp->body, ", \"param\": \"");
		sbuf_add_json(&resp->body, param, strlen(param));
		sbuf_adds(&resp->body, "\"");
	}
	sbuf_addf(&resp->body, ", \"status\": %d}\n", status);
}

/* --- parameters ------------------------------------------------------------------------------ */

struct parse_ctx {
	struct http_request *req;
	struct query_common *q;
	http_param_fn fn;
	void *fn_ctx;
	struct query_error err;
	int rc; /* first failure */
	unsigned int npairs;
};

static int take_pair(const char *key, const char *value, void *ctx)
{
	struct parse_ctx *pc = ctx;
	int r = 0;

	if (++pc->npairs > QUERY_MAX_PAIRS) {
		pc->err = (struct query_error){ .reason = "too many parameters", .status = 400 };
		return pc->rc = -EINVAL;
	}
	if (strlen(value) > QUERY_MAX_VALUE) {
		pc->err = (struct query_error){ .reason = "value too long", .status = 400 };
		snprintf(pc->err.param, sizeof(pc->err.param), "%.63s", key);
		return pc->rc = -EINVAL;
	}
	if (pc->q)
		r = query_common_set(pc->q, key, value, pc->req->now_ns, &pc->err);
	if (r == 0 && pc->fn)
		r = pc->fn(key, value, pc->fn_ctx, &pc->err);
	if (r == 0) {
		pc->err = (struct query_error){ .reason = "unknown parameter", .status = 400 };
		snprintf(pc->err.param, sizeof(pc->err.param), "%.63s", key);
		r = -EINVAL;
	}
	if (r < 0) {
		if (!pc->err.status)
			pc->err.status = 400;
		if (!pc->err.reason)
			pc->err.reason = "invalid value";
		return pc->rc = r;
	}
	return 0;
}

static enum MHD_Result mhd_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			       const char *value, size_t value_size)
{
	struct parse_ctx *pc = cls;

	(void)kind;
	/* MHD decodes %00 into the value: as a C string it would end there and, say, comm=%00
	 * would select everything. A NUL byte is a bad value, as in a POST body. */
	if (strlen(key) != key_size || (value && strlen(value) != value_size)) {
		pc->err = (struct query_error){ .reason = "NUL byte", .status = 400 };
		snprintf(pc->err.param, sizeof(pc->err.param), "%.63s", key);
		pc->rc = -EINVAL;
		return MHD_NO;
	}
	return take_pair(key, value ? value : "", pc) ? MHD_NO : MHD_YES;
}

int http_request__parse(struct http_request *req, struct query_common *q, int64_t default_range_ns,
			http_param_fn fn, void *ctx, struct http_response *resp)
{
	struct parse_ctx pc = { .req = req, .q = q, .fn = fn, .fn_ctx = ctx };
	struct http_config *c = &req->srv->cfg;
	int r;

	if (q)
		q->event = (enum query_event)req->default_event;
	MHD_get_connection_values_n(req->conn, MHD_GET_ARGUMENT_KIND, mhd_arg, &pc);
	if (!pc.rc && req->body && req->body_len) {
		r = query_urlencoded_parse(req->body, req->body_len, take_pair, &pc, &pc.err);
		if (r < 0 && !pc.rc) {
			pc.rc = r;
			if (!pc.err.status)
				pc.err.status = 400;
		}
	}
	if (!default_range_ns)
		default_range_ns = req->default_range_ns;
	if (!pc.rc && q) {
		if (q->kernel == QUERY_FLAG_OFF && q->user == QUERY_FLAG_OFF) {
			pc.err =
			    (struct query_error){ .param = "user",
						  .reason = "kernel=0 and user=0 leave no frames",
						  .status = 400 };
			pc.rc = -EINVAL;
		} else {
			pc.rc = query_common_finish(
			    q, req->now_ns,
			    default_range_ns ? default_range_ns
					     : (int64_t)c->default_range_s * 1000000000LL,
			    req->unlimited_range ? 0 : (int64_t)c->max_range_s * 1000000000LL,
			    &pc.err);
		}
		if (!pc.rc)
			pc.rc = http_source_check(&req->srv->src, req->src ? req->src : &req->srv->src,
						  q, &pc.err);
	}
	if (!pc.rc && q && q->event != QUERY_EVENT_CPU && !req->srv->src.rec) {
		const char *why = http_event_unavailable(&req->srv->src, q);

		if (why) {
			pc.err = (struct query_error){ .param = "event", .reason = why, .status = 409 };
			pc.rc = -EINVAL;
		}
	}
	if (pc.rc) {
		http_response__error(resp, pc.err.status ? pc.err.status : 400, pc.err.param,
				     pc.err.reason ? pc.err.reason : "invalid request");
		return -EINVAL;
	}
	return 0;
}

/* --- MHD glue -------------------------------------------------------------------------------- */

/* Queues @a (its body shared, not copied) with the headers. */
static enum MHD_Result queue_answer(struct http_request *req, const struct http_answer *a,
				    const char *allow)
{
	struct http_server *srv = req->srv;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char retry[16];

	r = http_body_response(a->body);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				a->content_type ? a->content_type : "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
				a->cache_control ? a->cache_control : "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (a->gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (a->disposition[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, a->disposition);
	if (a->location[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, a->location);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (a->retry_after_s) {
		/* a bound said no: the connection goes too, its slot is what is short (300
		 * clients answered 503 and kept alive held MHD's limits for a second) */
		snprintf(retry, sizeof(retry), "%u", a->retry_after_s);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, retry);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	}
	ret = MHD_queue_response(req->conn, (unsigned int)a->status, r);
	MHD_destroy_response(r);
	if (ret == MHD_YES && !req->queued_answer) {
		req->queued_answer = true;
		req->sent_len = req->head ? 0 : http_body_len(a->body);
	}
	if (a->status < 300)
		srv->responses_2xx++;
	else if (a->status < 500)
		srv->responses_4xx++;
	else
		srv->responses_5xx++;
	if (srv->observe_fn)
		srv->observe_fn(srv->observe_ctx, req->route ? req->route : "other", a->status,
				(double)(http_now_ns() - req->start_ns) / 1e9);
	return ret;
}

/* Queues the answer of a handler run inline (a cheap route, or an error before routing). */
static enum MHD_Result answer_inline(struct http_request *req, struct http_response *resp, int err,
				     const char *allow)
{
	struct http_answer a;
	enum MHD_Result ret;

	http_render_finish(req->srv, req, resp, err, &a);
	sbuf_fini(&resp->body);
	ret = queue_answer(req, &a, allow);
	http_answer_fini(&a);
	return ret;
}

static enum MHD_Result answer_error(struct http_request *req, int status, const char *reason,
				    const char *allow)
{
	struct http_response resp = { .body = SBUF_INIT };

	http_response__error(&resp, status, NULL, reason);
	return answer_inline(req, &resp, 0, allow);
}

/* The data endpoints whose GET responses the micro-cache may share. */
static bool cacheable(const char *method, const char *path)
{
	static const char *const paths[] = { "/api/v1/folded",	"/api/v1/flamegraph.svg",
					     "/api/v1/heatmap", "/api/v1/heatmap.svg",
					     "/api/v1/samples", "/api/v1/diff.svg" };
	size_t i;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return false;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!strcmp(path, paths[i]))
			return true;
	return false;
}

static enum MHD_Result key_arg(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
			       const char *value, size_t value_size)
{
	struct sbuf *sb = cls;

	(void)kind;
	/* JSON-quoted with their lengths: the escaping makes the key injective, whatever the
	 * decoded bytes are (NUL included: such a request is a 400 that must not hit an entry) */
	sbuf_addc(sb, '"');
	sbuf_add_json(sb, key, key_size);
	sbuf_adds(sb, value ? "\":\"" : "\":null,");
	if (value) {
		sbuf_add_json(sb, value, value_size);
		sbuf_adds(sb, "\",");
	}
	return MHD_YES;
}

/* "path?k=v..." plus the encoding; NULL when the request cannot be cached. */
static char *cache_key(struct http_request *req)
{
	struct sbuf sb = SBUF_INIT;

	sbuf_adds(&sb, req->path);
	sbuf_addc(&sb, '?');
	MHD_get_connection_values_n(req->conn, MHD_GET_ARGUMENT_KIND, key_arg, &sb);
	sbuf_adds(&sb, req->gzip_ok ? "|gzip" : "|plain");
	if (sbuf_error(&sb) || sb.len > 4096) {
		sbuf_fini(&sb);
		return NULL;
	}
	return sbuf_detach(&sb, NULL);
}

static bool route_matches_path(const struct http_route *rt, const char *path)
{
	if (rt->prefix)
		return !strncmp(path, rt->path, strlen(rt->path)) && path[strlen(rt->path)];
	return !strcmp(path, rt->path);
}

static const struct http_route *route_at(const struct http_server *s, size_t i)
{
	return i < s->nr_extra_routes ? &s->extra_routes[i]
				      : &http_builtin_routes[i - s->nr_extra_routes];
}

/* Finds the route; on a miss fills @allow (405) or leaves it empty (404). */
static const struct http_route *find_route(const struct http_server *s, const char *method,
					   const char *path, char *allow, size_t allow_size)
{
	size_t i, n = s->nr_extra_routes + NR_BUILTIN;
	bool head = !strcmp(method, "HEAD");

	allow[0] = '\0';
	for (i = 0; i < n; i++) {
		const struct http_route *rt = route_at(s, i);

		if (!route_matches_path(rt, path))
			continue;
		if (!strcmp(rt->method, method) || (head && !strcmp(rt->method, "GET")))
			return rt;
		if (!strstr(allow, rt->method)) {
			size_t l = strlen(allow);

			snprintf(allow + l, allow_size - l, "%s%s%s", l ? ", " : "", rt->method,
				 !strcmp(rt->method, "GET") ? ", HEAD" : "");
		}
	}
	return NULL;
}

/*
 * The requests that waited for @key's render, when it could not happen (503 at submit, or the
 * request never answered): they get @a, or look the cache up again when @a is NULL.
 */
static void release_waiters(struct http_server *srv, const char *key, const struct http_answer *a)
{
	struct http_request *w, *wn;
	bool retry;

	w = http_cache_fill(srv, key, a, false, &retry);
	for (; w; w = wn) {
		wn = w->next;
		w->next = NULL;
		pthread_mutex_lock(&srv->jobs_lock);
		w->phase = REQ_DONE;
		if (w->in_watch) { /* off the watcher's set before it goes back to MHD */
			if (w->wprev)
				w->wprev->wnext = w->wnext;
			else
				srv->watched = w->wnext;
			if (w->wnext)
				w->wnext->wprev = w->wprev;
			w->in_watch = false;
		}
		pthread_mutex_unlock(&srv->jobs_lock);
		if (retry) {
			w->retry = true;
		} else {
			http_answer_copy(&w->ans, a);
			w->answered = true;
		}
		http_render_resume(srv, w);
	}
}

/*
 * A request of a route that renders: from the micro-cache when an identical one was answered
 * or is being rendered, otherwise queued for the render pool (the connection suspended).
 */
static enum MHD_Result dispatch_render(struct http_request *req)
{
	struct http_server *srv = req->srv;
	struct http_answer a = { 0 };
	enum MHD_Result ret;
	char *key;
	int c;

	if (!req->body && cacheable(req->method, req->path) && (key = cache_key(req))) {
		c = http_cache_lookup(srv, key, req, &a);
		if (c == HTTP_CACHE_HIT) {
			free(key);
			ret = queue_answer(req, &a, NULL);
			http_answer_fini(&a);
			return ret;
		}
		if (c == HTTP_CACHE_WAIT) { /* suspended by the lookup, answered with the render */
			free(key);
			return MHD_YES;
		}
		if (c == HTTP_CACHE_MISS)
			req->cache_key = key; /* filled when rendered */
		else
			free(key);
	}
	if (http_render_submit(srv, req, &a))
		return MHD_YES;
	if (req->cache_key) {
		release_waiters(srv, req->cache_key, &a);
		free(req->cache_key);
		req->cache_key = NULL;
	}
	ret = queue_answer(req, &a, NULL);
	http_answer_fini(&a);
	return ret;
}

static bool has_body(struct MHD_Connection *conn)
{
	const char *cl =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	return (cl && strcmp(cl, "0")) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct http_request *req = *con_cls;
	struct http_response resp = { .status = 200, .body = SBUF_INIT };
	const union MHD_ConnectionInfo *ci;
	const struct http_route *rt;
	char allow[96];
	int err;

	(void)version;
	if (!req) {
		/* bearer token (http_auth.c): on the headers, before any body is read and before
		 * routing, so that nothing is learnt or buffered without it (the connection stays
		 * idle for http_conn.c: no request of its own is under way) */
		if (!http_server__auth_check(
			srv, url,
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION)))
			return (enum MHD_Result)http_auth_deny(conn);
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		if (ci && ci->socket_context)
			http_conn_busy(srv, ci->socket_context, has_body(conn));
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->srv = srv;
		req->conn = conn;
		req->start_ns = http_now_ns();
		req->hc = ci ? ci->socket_context : NULL;
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		req->fd = ci ? ci->connect_fd : -1;
		req->gzip_ok = http_accepts_gzip(conn);
		*con_cls = req;
		srv->requests++;
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (!req->body_too_large && req->body_len + n <= srv->cfg.max_body_bytes) {
			char *nb = realloc(req->body, req->body_len + n + 1);

			if (!nb)
				return MHD_NO;
			memcpy(nb + req->body_len, upload_data, n);
			req->body = nb;
			req->body_len += n;
			nb[req->body_len] = '\0';
		} else {
			req->body_too_large = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	/* resumed by the render pool: with the answer, to look the cache up again, or with
	 * nothing (the client has gone: close) */
	if (req->answered)
		return queue_answer(req, &req->ans, NULL);
	if (req->retry) {
		req->retry = false;
		if (http_server__stopping(srv))
			return answer_error(req, 503, "emberd is stopping", NULL);
		return dispatch_render(req);
	}
	if (req->phase == REQ_DONE)
		return MHD_NO;

	http_conn_busy(srv, req->hc, false); /* the body, if any, is in */
	req->method = method;
	req->path = url;
	req->head = !strcmp(method, "HEAD");
	req->now_ns = http_source_now(&srv->src);
	rt = find_route(srv, method, url, allow, sizeof(allow));
	req->rt = rt;
	req->route = rt ? rt->path : NULL;
	req->route_ctx = rt ? rt->ctx : NULL;
	if (!rt) {
		if (allow[0])
			return answer_error(req, 405, "method not allowed", allow);
		return answer_error(req, 404, "no such endpoint", NULL);
	}
	if (req->body_too_large)
		return answer_error(req, 413, "request body exceeds the configured limit", NULL);
	if (req->body) {
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);

		if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33))
			return answer_error(
			    req, 415, "request bodies must be application/x-www-form-urlencoded",
			    NULL);
	}
	req->suffix = rt->prefix ? url + strlen(rt->path) : "";
	if (!rt->cheap) {
		/* busy connections fill the limits: this one is in the reserve, kept for the
		 * liveness probe and the metrics */
		if (http_conn_over_budget(srv, req->hc)) {
			struct http_answer a;
			enum MHD_Result ret;

			srv->rejected_conns++;
			http_answer_error(srv, &a, 503, "too many connections: retry later", 1);
			ret = queue_answer(req, &a, NULL);
			http_answer_fini(&a);
			return ret;
		}
		if (http_server__stopping(srv))
			return answer_error(req, 503, "emberd is stopping", NULL);
		return dispatch_render(req);
	}
	resp.content_type = "application/json";
	err = rt->fn(srv, req, &resp);
	return answer_inline(req, &resp, err, NULL);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	(void)cls;
	(void)conn;
	if (!req)
		return;
	if (req->cache_key) /* never answered: whoever waits for this render looks again */
		release_waiters(req->srv, req->cache_key, NULL);
	if (req->stop_answer) /* answered while stopping: the stop waited for it */
		atomic_fetch_sub(&req->srv->in_flight, 1);
	if (req->queued_answer) {
		if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
			req->srv->bytes_out += req->sent_len;
		else
			req->srv->responses_aborted++;
	}
	http_conn_idle(req->srv, req->hc);
	if (req->state_free)
		req->state_free(req->state);
	http_answer_fini(&req->ans);
	free(req->cache_key);
	free(req->body);
	free(req);
	*con_cls = NULL;
}

/* MHD_OPTION_NOTIFY_CONNECTION: every connection's life, for http_conn.c. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;
	const union MHD_ConnectionInfo *fd, *addr;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		*socket_context =
		    fd ? http_conn_started(srv, fd->connect_fd, addr ? addr->client_addr : NULL)
		       : NULL;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		http_conn_closed(srv, *socket_context);
		*socket_context = NULL;
	}
}

static void __attribute__((format(printf, 2, 0))) mhd_log(void *cls, const char *fmt, va_list ap)
{
	/* clients control what MHD complains about (bad TLS handshakes, malformed requests): at
	 * most 10 lines per 10 s window, and a count of the rest, so the journal cannot be flooded
	 */
	static atomic_llong window;
	static atomic_uint in_window, suppressed;
	long long now = (long long)(http_now_ns() / 10000000000LL);
	char buf[256];
	size_t n;
	unsigned int dropped;

	(void)cls;
	if (atomic_exchange(&window, now) != now) {
		in_window = 0;
		dropped = atomic_exchange(&suppressed, 0);
		if (dropped)
			log_warn("http: %u more server messages suppressed", dropped);
	}
	if (++in_window > 10) {
		suppressed++;
		return;
	}
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_warn("http: %s", buf);
}

/* "ADDR:PORT" / "[ADDR]:PORT" -> sockaddr. 0 or -EINVAL. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *ret_len, bool *v6)
{
	char host[64];
	const char *colon, *h = s;
	size_t hl;
	char *end;
	unsigned long port;

	if (s[0] == '[') {
		const char *rb = strchr(s, ']');

		if (!rb || rb[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port > 65535)
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*in);
		*v6 = false;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*in6);
		*v6 = true;
		return 0;
	}
	return -EINVAL;
}

int http_server__start(struct http_server *s)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	const union MHD_DaemonInfo *info;
	/* suspend/resume: the render pool answers from its own threads */
	unsigned int flags =
	    MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[3] = { { MHD_OPTION_END, 0, NULL } }; /* TLS: security.c */
	bool v6;
	int err;

	if (s->mhd)
		return -EBUSY;
	err = parse_listen(s->cfg.listen, &ss, &sl, &v6);
	if (err)
		return err;
	if (v6)
		flags |= MHD_USE_IPv6;
	if (s->cfg.tls_cert_pem && s->cfg.tls_key_pem) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
			return -EPROTONOSUPPORT;
		flags |= MHD_USE_TLS;
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						  (void *)s->cfg.tls_cert_pem };
		tls[1] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						  (void *)s->cfg.tls_key_pem };
		tls[2] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	}
	if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
		flags |= MHD_USE_EPOLL;
	else
		flags |= MHD_USE_POLL;
	err = http_render_start(s);
	if (err) {
		http_render_stop(s);
		return err;
	}
	/*
	 * MHD's limits are backstops well above ours (8 x in all, 16 x per address, plus the
	 * reserve): http_conn.c closes idle connections over ours (past twice ours whatever they
	 * are) and keeps requests beyond them to the cheap routes. But MHD counts a closed
	 * connection until its thread has seen it go, and under a flood of new connections from one
	 * address (2000 clients reconnecting as soon as they are closed: ~5000 a second) that lag
	 * is a hundred connections or more: with MHD's per-address limit at 4 x ours it refused 3
	 * liveness probes of 97 from the flooding address, at 8 x none over plain HTTP; over TLS
	 * (MHD's threads slower to see a connection go) 8 x still refused about one probe in 77 in
	 * some fresh-clone runs (an EOF 5 ms into the handshake): 16 x now, and 8 x in all (each of
	 * the two threads' share of the connection limit was 136, near the 128 of ours plus the
	 * closed ones not yet seen); and at its connection limit a thread stops accepting (new
	 * clients then wait in the listen queue behind the flood). 528 file descriptors at the
	 * defaults, within systemd's default soft limit of 1024.
	 * A connection that has sent nothing costs MHD little (its request memory is mapped
	 * lazily). (Each of MHD's threads gets its share of the connection limit.)
	 */
	errno = 0;
	s->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
	    8 * s->cfg.max_connections + s->cfg.reserved_connections,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    16 * s->cfg.max_connections_per_ip + s->cfg.reserved_connections,
	    MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
	    (size_t)s->cfg.max_request_bytes, MHD_OPTION_ARRAY, tls, MHD_OPTION_THREAD_POOL_SIZE,
	    s->cfg.threads > 1 ? s->cfg.threads : 0, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_END);
	if (!s->mhd) {
		err = errno ? -errno : -EADDRINUSE;
		http_render_stop(s);
		return err;
	}
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	return 0;
}
