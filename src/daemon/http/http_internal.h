/* SPDX-License-Identifier: MIT */
/*
 * Shared by the http*.c files of emberd only (not a public contract): the server object, the
 * data sources, the captures and the handlers of the built-in routes.
 */
#ifndef EMBER_HTTP_INTERNAL_H
#define EMBER_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "ember/daemon/http/http.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/symbols/symbolizer.h"

struct MHD_Daemon;
struct MHD_Connection;
struct heatmap;

/* What a query reads: the live store or a (frozen) recording. Both borrowed. */
struct http_source {
	struct store *store;
	const struct recording *rec;
};

enum capture_state { CAPTURE_RUNNING = 0, CAPTURE_DONE, CAPTURE_FAILED };

struct capture {
	uint32_t id;
	enum capture_state state;
	int64_t created_ns, start_ns, end_ns;
	uint64_t seconds, frequency_hz;
	int64_t pid;
	bool frequency_applied;	/* a second sampler ran at frequency_hz */
	bool truncated;		/* hit the memory cap: partial */
	int sampler_handle;	/* from the capture hooks, -1 without */
	struct recording *rec;	/* owned; NULL while running */
	char error[96];
	struct capture *next;	/* list, oldest first */
};

struct http_server {
	struct http_config cfg;
	struct http_source src;
	struct MHD_Daemon *mhd;
	uint16_t port;
	int64_t started_ns;	/* CLOCK_REALTIME at new() */

	struct http_route *extra_routes;	/* added with http_server__add_route() */
	size_t nr_extra_routes;
	struct http_owned {
		void *obj;
		void (*free_fn)(void *);
	} * owned; /* http_server__own() */
	size_t nr_owned;

	http_stats_fn stats_fn;
	void *stats_ctx;
	struct capture_mgr *capture_mgr; /* second samplers; NULL: windows of the store */
	http_observe_fn observe_fn;
	void *observe_ctx;

	/* http_auth.c: the bearer token */
	pthread_rwlock_t auth_lock;
	char auth_token[EMBER_TOKEN_MAX + 1];
	size_t auth_len;
	atomic_ullong auth_fails;

	/* the main loop's counters, copied each tick (http_server__publish()) */
	pthread_mutex_t pub_lock;
	bool pub_have;
	struct http_published pub;
	uint64_t pub_at_ns; /* CLOCK_MONOTONIC of the copy */

	pthread_mutex_t lock;	/* guards the captures */
	struct capture *captures;
	uint32_t next_capture_id;
	uint64_t captures_evicted;

	/* counters for /api/v1/stats */
	atomic_ullong requests, responses_2xx, responses_4xx, responses_5xx, bytes_out, gzipped;

	/* http_cache.c: rendered responses shared by identical requests */
	pthread_mutex_t cache_lock;
	pthread_cond_t cache_cond;
	struct http_cache_entry *cache;
	atomic_ullong cache_hits, cache_misses;
};

struct http_request {
	struct http_server *srv;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *suffix;
	int64_t now_ns;
	int64_t default_range_ns;	/* 0: the server's; a capture's length for captures */
	bool unlimited_range;		/* heat maps: bounded by their cell count instead */
	char *body;		/* POST body (urlencoded form), NUL-terminated; owned */
	size_t body_len;
	bool body_too_large;
	bool head;		/* a HEAD request served by a GET route */
	const char *route;	/* the matched route's path (static), NULL: none; for metrics */
	void *route_ctx;	/* the matched route's ctx */
	int64_t start_ns;	/* when the request arrived; for the latency histogram */
	char *cache_key;	/* owned; set when this request fills a cache entry */
};

/* The micro-cache (http_cache.c). */
struct http_cached {
	char *body;		/* malloc'ed copy, the caller frees it */
	size_t len;
	bool gz;
	const char *content_type, *cache_control;
	char disposition[160];
};
void http_cache_init(struct http_server *s);
void http_cache_fini(struct http_server *s);
/*
 * 1: a hit in @ret. 0: a miss, and the caller must render and then call http_cache_fill() with
 * the same key (waiters are blocked on it). -errno: do not use the cache for this request.
 */
int http_cache_lookup(struct http_server *s, const char *key, struct http_cached *ret);
/* The final body (gzipped or not) of a miss; non-200 or @body NULL releases the waiters. */
void http_cache_fill(struct http_server *s, const char *key, const struct http_response *resp,
		     const char *body, size_t len, bool gz);

/* Drops every cached response (a reload changed what they depend on); those being rendered are
 * not kept. */
void http_cache_flush(struct http_server *s);

/* The bearer token's state (http_auth.c). */
void http_auth_init(struct http_server *s);
void http_auth_fini(struct http_server *s);
/* Queues the 401 response (WWW-Authenticate: Bearer, no detail). Returns an enum MHD_Result. */
int http_auth_deny(struct MHD_Connection *conn);

/* Realtime clock in ns. */
int64_t http_now_ns(void);


/* The source's "now": the wall clock live; the last sample + 1 ns for a recording. */
int64_t http_source_now(const struct http_source *src);
/* First/last sample time of the source; -ENODATA when empty. */
int http_source_bounds(const struct http_source *src, int64_t *ret_first, int64_t *ret_last);
/* NULL + errno. */
struct profile *http_source_profile(const struct http_source *src, const struct query_common *q,
				    struct strtab *st);
/* Adds the matching samples to @hm. 0 or -errno. */
int http_source_heatmap(const struct http_source *src, const struct query_common *q,
			struct heatmap *hm);
/* "ember-samples v1" text; -E2BIG past @max_bytes. */
int http_source_samples(const struct http_source *src, const struct query_common *q,
			struct sbuf *sb, uint64_t max_bytes);

/* Handlers of the built-in routes (http_api.c, http_capture.c, http_dashboard.c). */
int http_handle_healthz(struct http_server *srv, struct http_request *req,
			struct http_response *resp);
int http_handle_stats(struct http_server *srv, struct http_request *req,
		      struct http_response *resp);
int http_handle_folded(struct http_server *srv, struct http_request *req,
		       struct http_response *resp);
int http_handle_flamegraph(struct http_server *srv, struct http_request *req,
			   struct http_response *resp);
int http_handle_heatmap(struct http_server *srv, struct http_request *req,
			struct http_response *resp);
int http_handle_heatmap_svg(struct http_server *srv, struct http_request *req,
			    struct http_response *resp);
int http_handle_samples(struct http_server *srv, struct http_request *req,
			struct http_response *resp);
int http_handle_diff_svg(struct http_server *srv, struct http_request *req,
			 struct http_response *resp);
/* http_diff.c: /api/v1/diff.folded and /api/v1/compare (Hotelling T^2 between two ranges). */
int http_handle_diff_folded(struct http_server *srv, struct http_request *req,
			    struct http_response *resp);
int http_handle_compare(struct http_server *srv, struct http_request *req,
			struct http_response *resp);
int http_handle_captures_list(struct http_server *srv, struct http_request *req,
			      struct http_response *resp);
int http_handle_captures_post(struct http_server *srv, struct http_request *req,
			      struct http_response *resp);
int http_handle_capture_get(struct http_server *srv, struct http_request *req,
			    struct http_response *resp);
int http_handle_capture_delete(struct http_server *srv, struct http_request *req,
			       struct http_response *resp);
int http_handle_asset(struct http_server *srv, struct http_request *req,
		      struct http_response *resp);

/* Data endpoints over a given source (the server's, or a capture's). */
int http_serve_folded(struct http_server *srv, const struct http_source *src,
		      struct http_request *req, struct http_response *resp);
int http_serve_flamegraph(struct http_server *srv, const struct http_source *src,
			  struct http_request *req, struct http_response *resp);
int http_serve_samples(struct http_server *srv, const struct http_source *src,
		       struct http_request *req, struct http_response *resp);
int http_serve_heatmap(struct http_server *srv, const struct http_source *src,
		       struct http_request *req, struct http_response *resp, bool svg);

/* Captures: finishing and freeing (http_capture.c). */
void http_captures_tick(struct http_server *srv);
void http_captures_free(struct http_server *srv);
void http_captures_stats(struct http_server *srv, struct sbuf *json);

#endif
