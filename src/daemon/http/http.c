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
 * The built-in routes. ADD ROUTES HERE: one row per endpoint, { method, path, prefix?, handler };
 * declare the handler in your module's header. Routes added at run time with
 * http_server__add_route() are matched first. A path that matches some row under another method
 * is a 405 with an Allow header; no match at all is a 404.
 */
static const struct http_route http_builtin_routes[] = {
	{ "GET", "/healthz", false, http_handle_healthz, NULL },
	{ "GET", "/api/v1/stats", false, http_handle_stats, NULL },
	{ "GET", "/api/v1/folded", false, http_handle_folded, NULL },
	{ "GET", "/api/v1/flamegraph.svg", false, http_handle_flamegraph, NULL },
	{ "GET", "/api/v1/heatmap", false, http_handle_heatmap, NULL },
	{ "GET", "/api/v1/heatmap.svg", false, http_handle_heatmap_svg, NULL },
	{ "GET", "/api/v1/samples", false, http_handle_samples, NULL },
	{ "GET", "/api/v1/diff.svg", false, http_handle_diff_svg, NULL },
	{ "GET", "/api/v1/diff.folded", false, http_handle_diff_folded, NULL },
	{ "GET", "/api/v1/compare", false, http_handle_compare, NULL },
	{ "GET", "/api/v1/captures", false, http_handle_captures_list, NULL },
	{ "POST", "/api/v1/captures", false, http_handle_captures_post, NULL },
	{ "GET", "/api/v1/captures/", true, http_handle_capture_get, NULL },
	{ "DELETE", "/api/v1/captures/", true, http_handle_capture_delete, NULL },
	{ "GET", "/", false, http_handle_asset, NULL },
	{ "GET", "/assets/", true, http_handle_asset, NULL },
};

#define NR_BUILTIN (sizeof(http_builtin_routes) / sizeof(http_builtin_routes[0]))

/* Bodies smaller than this are sent as they are: gzip's header would eat the gain. */
#define GZIP_MIN_BYTES 512

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
	s->next_capture_id = 1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->pub_lock, NULL);
	http_auth_init(s);
	http_cache_init(s);
	return s;
}

void http_server__free(struct http_server *s)
{
	if (!s)
		return;
	if (s->mhd)
		MHD_stop_daemon(s->mhd);
	http_captures_free(s);
	http_cache_fini(s);
	http_auth_fini(s);
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

void http_server__set_captures(struct http_server *s, struct capture_mgr *m)
{
	s->capture_mgr = m;
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

static enum MHD_Result mhd_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct parse_ctx *pc = cls;

	(void)kind;
	return take_pair(key, value ? value : "", pc) ? MHD_NO : MHD_YES;
}

int http_request__parse(struct http_request *req, struct query_common *q, int64_t default_range_ns,
			http_param_fn fn, void *ctx, struct http_response *resp)
{
	struct parse_ctx pc = { .req = req, .q = q, .fn = fn, .fn_ctx = ctx };
	struct http_config *c = &req->srv->cfg;
	int r;

	MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, mhd_arg, &pc);
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
	}
	if (pc.rc) {
		http_response__error(resp, pc.err.status ? pc.err.status : 400, pc.err.param,
				     pc.err.reason ? pc.err.reason : "invalid request");
		return -EINVAL;
	}
	return 0;
}

/* --- MHD glue -------------------------------------------------------------------------------- */

static bool accepts_gzip(struct MHD_Connection *conn)
{
	const char *ae =
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *p;

	if (!ae)
		return false;
	for (p = ae; (p = strcasestr(p, "gzip")); p += 4) {
		const char *q = p + 4;

		if (p > ae && p[-1] != ' ' && p[-1] != ',')
			continue;
		while (*q == ' ')
			q++;
		/* "gzip;q=0" refuses it */
		if (*q == ';') {
			q++;
			while (*q == ' ')
				q++;
			if (!strncmp(q, "q=0", 3) &&
			    (q[3] == '\0' || q[3] == ',' || q[3] == ' ' ||
			     (q[3] == '.' && strspn(q + 4, "0") == strcspn(q + 4, ", "))))
				return false;
		}
		return true;
	}
	return false;
}

/* Gzips @in into a new malloc'ed buffer. NULL on failure (the caller sends it plain). */
static char *gzip_buf(const char *in, size_t len, size_t *ret_len)
{
	z_stream zs = { 0 };
	uLong bound;
	char *out;

	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	bound = deflateBound(&zs, (uLong)len) + 32;
	out = malloc(bound);
	if (!out) {
		deflateEnd(&zs);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&zs);
		free(out);
		return NULL;
	}
	*ret_len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static bool compressible(const char *ct)
{
	return ct &&
	       (!strncmp(ct, "text/", 5) || !strncmp(ct, "application/json", 16) ||
		!strncmp(ct, "image/svg+xml", 13) || !strncmp(ct, "application/javascript", 22));
}

static enum MHD_Result queue_body(struct http_request *req, int status, char *body, size_t len,
				  bool gz, const char *content_type, const char *cache_control,
				  const char *disposition, const char *location, const char *allow);

static enum MHD_Result send_response(struct http_request *req, struct http_response *resp,
				     const char *allow)
{
	struct http_server *srv = req->srv;
	size_t len = 0, zlen;
	char *body, *z;
	bool gz = false;

	if (sbuf_error(&resp->body)) {
		http_response__error(resp, 503, NULL, "out of memory");
		if (sbuf_error(&resp->body))
			resp->body.err = 0; /* the error body itself is tiny: retry once */
	}
	if (resp->body.len > srv->cfg.max_response_bytes)
		http_response__error(resp, 413, NULL, "response exceeds the configured size limit");
	body = sbuf_detach(&resp->body, &len);
	if (!body) {
		body = strdup("{\"error\": \"out of memory\", \"status\": 503}\n");
		resp->status = 503;
		if (!body)
			return MHD_NO;
		len = strlen(body);
	}
	if (!resp->no_gzip && len >= GZIP_MIN_BYTES && compressible(resp->content_type) &&
	    accepts_gzip(req->conn)) {
		z = gzip_buf(body, len, &zlen);
		if (z) {
			free(body);
			body = z;
			len = zlen;
			gz = true;
			srv->gzipped++;
		}
	}
	if (req->cache_key) {
		http_cache_fill(srv, req->cache_key, resp, body, len, gz);
		free(req->cache_key);
		req->cache_key = NULL;
	}
	return queue_body(req, resp->status, body, len, gz, resp->content_type, resp->cache_control,
			  resp->disposition, resp->location, allow);
}

/* Hands @body (malloc'ed; always taken) to MHD with the headers. */
static enum MHD_Result queue_body(struct http_request *req, int status, char *body, size_t len,
				  bool gz, const char *content_type, const char *cache_control,
				  const char *disposition, const char *location, const char *allow)
{
	struct http_server *srv = req->srv;
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				content_type ? content_type : "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
				cache_control ? cache_control : "no-cache");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (disposition && disposition[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disposition);
	if (location && location[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, location);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(req->conn, (unsigned int)status, r);
	MHD_destroy_response(r);
	if (status < 300)
		srv->responses_2xx++;
	else if (status < 500)
		srv->responses_4xx++;
	else
		srv->responses_5xx++;
	srv->bytes_out += len;
	if (srv->observe_fn)
		srv->observe_fn(srv->observe_ctx, req->route ? req->route : "other", status,
				(double)(http_now_ns() - req->start_ns) / 1e9);
	return ret;
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

static enum MHD_Result key_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			       const char *value)
{
	struct sbuf *sb = cls;

	(void)kind;
	/* JSON-quoted: the escaping makes the key injective, whatever the decoded bytes are */
	sbuf_addc(sb, '"');
	sbuf_add_json(sb, key, strlen(key));
	sbuf_adds(sb, value ? "\":\"" : "\":null,");
	if (value) {
		sbuf_add_json(sb, value, strlen(value));
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
	MHD_get_connection_values(req->conn, MHD_GET_ARGUMENT_KIND, key_arg, &sb);
	sbuf_adds(&sb, accepts_gzip(req->conn) ? "|gzip" : "|plain");
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct http_request *req = *con_cls;
	struct http_response resp = { .status = 200, .body = SBUF_INIT };
	const struct http_route *rt;
	char allow[96];
	enum MHD_Result ret;
	int err;

	(void)version;
	if (!req) {
		/* bearer token (http_auth.c): on the headers, before any body is read and before
		 * routing, so that nothing is learnt or buffered without it */
		if (!http_server__auth_check(
			srv, url,
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION)))
			return (enum MHD_Result)http_auth_deny(conn);
		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		req->srv = srv;
		req->conn = conn;
		req->start_ns = http_now_ns();
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

	req->method = method;
	req->path = url;
	req->head = !strcmp(method, "HEAD");
	req->now_ns = http_source_now(&srv->src);
	rt = find_route(srv, method, url, allow, sizeof(allow));
	req->route = rt ? rt->path : NULL;
	req->route_ctx = rt ? rt->ctx : NULL;
	if (!rt) {
		if (allow[0]) {
			http_response__error(&resp, 405, NULL, "method not allowed");
			return send_response(req, &resp, allow);
		}
		http_response__error(&resp, 404, NULL, "no such endpoint");
		return send_response(req, &resp, NULL);
	}
	if (req->body_too_large) {
		http_response__error(&resp, 413, NULL, "request body exceeds the configured limit");
		return send_response(req, &resp, NULL);
	}
	if (req->body) {
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_TYPE);

		if (ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33)) {
			http_response__error(
			    &resp, 415, NULL,
			    "request bodies must be application/x-www-form-urlencoded");
			return send_response(req, &resp, NULL);
		}
	}
	req->suffix = rt->prefix ? url + strlen(rt->path) : "";
	resp.content_type = "application/json";
	if (!req->body && cacheable(method, url)) {
		struct http_cached hit;
		char *key = cache_key(req);

		if (key) {
			int c = http_cache_lookup(srv, key, &hit);

			if (c == 1) {
				free(key);
				return queue_body(req, 200, hit.body, hit.len, hit.gz,
						  hit.content_type, hit.cache_control,
						  hit.disposition, NULL, NULL);
			}
			if (c == 0)
				req->cache_key = key; /* filled by send_response() */
			else
				free(key);
		}
	}
	err = rt->fn(srv, req, &resp);
	if (err < 0) {
		log_debug("http: %s %s failed: %s", method, url, strerror(-err));
		if (err == -ENOMEM)
			http_response__error(&resp, 503, NULL, "out of memory");
		else if (err == -E2BIG)
			http_response__error(&resp, 413, NULL,
					     "response exceeds the configured size limit");
		else
			http_response__error(&resp, 500, NULL, strerror(-err));
	}
	ret = send_response(req, &resp, NULL);
	sbuf_fini(&resp.body);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_request *req = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (req) {
		if (req->cache_key) /* never answered: release whoever waits for this render */
			http_cache_fill(req->srv, req->cache_key, NULL, NULL, 0, false);
		free(req->cache_key);
		free(req->body);
		free(req);
		*con_cls = NULL;
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
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
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
	errno = 0;
	s->mhd = MHD_start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_LIMIT,
	    s->cfg.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)s->cfg.max_request_bytes, MHD_OPTION_ARRAY,
	    tls, MHD_OPTION_THREAD_POOL_SIZE, s->cfg.threads > 1 ? s->cfg.threads : 0,
	    MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
	if (!s->mhd)
		return errno ? -errno : -EADDRINUSE;
	info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	return 0;
}
