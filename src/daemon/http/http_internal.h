/* SPDX-License-Identifier: MIT */
/*
 * Shared by the http*.c files of emberd only (not a public contract): the server object, the
 * data sources, the captures and the handlers of the built-in routes.
 */
#ifndef EMBER_HTTP_INTERNAL_H
#define EMBER_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "ember/core/base/sbuf.h"

#include "ember/daemon/http/http.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/symbols/symbolizer.h"

struct MHD_Daemon;
struct MHD_Connection;
struct MHD_Response;
struct heatmap;
struct http_conn;
struct http_body;

/* What a query reads: the live store or a (frozen) recording. Both borrowed. */
struct http_source {
	struct store *store;
	const struct recording *rec;
	struct identity *identity; /* the live store's workloads (container=, ...); NULL: none */
	struct store *offcpu; /* off-CPU events (event=offcpu); NULL: off */
	struct store *wakeup; /* ... their wakers (event=wakeup) */
	struct store *chain;  /* ... wakees with their wakers on top (event=chain) */
	uint64_t cpu_us, offcpu_us; /* event=wall: a sample's and a quantum's microseconds */
	/* memory and I/O events (event=pagefault ...), by enum memio_store; NULL: off; and what
	 * one record stands for, in the store's unit (memio_sink_unit()) */
	struct store *memio[MEMIO_STORE_NR];
	uint64_t memio_quantum[MEMIO_STORE_NR];
	char pmc_why[192]; /* event=cycles|instructions: why not ("" until probed) */
};

/* The memio store event @q reads (weight=latency: the latency store); -1: not a memio event. */
int http_memio_index(const struct query_common *q);
/* Why event=@q->event cannot be answered here (its section off, no hardware counters), or NULL. */
const char *http_event_unavailable(const struct http_source *src, const struct query_common *q);

/*
 * The store @q reads (event=): the live store, or the off-CPU, wakeup or chain store; NULL for
 * event=wall (two stores: the callers weigh them) and for off-CPU events with [offcpu] off.
 * Borrowed from @src.
 */
struct store *http_source_store(const struct http_source *src, const struct query_common *q);

/*
 * The query's workload parameters as the store's identity hooks on @f, with @idf as their state
 * (it must outlive the query). Without identity (a replay) a workload filter selects nothing and
 * group_by groups nothing.
 */
struct store_filter;
struct identity_filter;
void http_identity_filter(const struct http_source *src, const struct query_common *q,
			  struct store_filter *f, struct identity_filter *idf);

enum capture_state { CAPTURE_RUNNING = 0, CAPTURE_DONE, CAPTURE_FAILED };

struct capture {
	uint32_t id;
	enum capture_state state;
	int64_t created_ns, start_ns, end_ns;
	int64_t seconds_ns; /* as asked: 0.1 s is 0.1 s */
	uint64_t frequency_hz;
	int64_t pid;
	int event;		/* enum query_event: which store the window is cut from */
	bool frequency_applied;	/* a second sampler ran at frequency_hz */
	bool truncated;		/* hit the memory cap: partial */
	int sampler_handle;	/* from the capture hooks, -1 without */
	struct recording *rec;	/* owned; NULL while running */
	double idle;		/* of its samples, the idle task's (hidden unless idle=1) */
	char error[96];
	struct capture *next;	/* list, oldest first */
};

struct http_server {
	struct http_config cfg;
	struct http_source src;
	struct MHD_Daemon *mhd;
	uint16_t port;
	int64_t started_ns;	/* CLOCK_REALTIME at new() */
	uint64_t heap_start_bytes; /* atomic: the heap at start the parts did not hold */
	uint64_t render_bytes;	/* atomic: the names and profiles renders hold (strtab charges) */

	struct http_route *extra_routes;	/* added with http_server__add_route() */
	size_t nr_extra_routes;
	struct http_owned {
		void *obj;
		void (*free_fn)(void *);
	} * owned; /* http_server__own() */
	size_t nr_owned;

	http_stats_fn stats_fn;
	struct liveness *live;	/* the drain's heartbeat; NULL: replay (always ok) */
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

	struct identity *identity; /* workloads for container=, service=, unit=, group_by= */
	pthread_mutex_t lock;	/* guards the captures */
	struct capture *captures;
	uint32_t next_capture_id;
	uint64_t captures_evicted;

	/* counters for /api/v1/stats */
	atomic_ullong requests, responses_2xx, responses_4xx, responses_5xx, bytes_out, gzipped;
	atomic_ullong responses_aborted;

	/* http_cache.c: rendered responses shared by identical requests */
	pthread_mutex_t cache_lock;
	struct http_cache_entry *cache;
	atomic_ullong cache_hits, cache_misses;

	/* http_body.c: the memory of response bodies, charged against cfg.response_memory_bytes */
	atomic_ullong resp_bytes, resp_bytes_peak;

	/* http_render.c: the render pool, the requests it has suspended, and their watcher */
	pthread_mutex_t jobs_lock;
	pthread_cond_t jobs_cond;		      /* workers wait for a job */
	struct http_request *queue_head, *queue_tail; /* waiting for a worker */
	struct http_request *deferred;		      /* waiting for the clock */
	struct http_request *watched;		      /* suspended, peer not seen gone */
	unsigned int nr_queued, nr_running, nr_deferred;
	bool pool_closed; /* no new jobs: stopping */
	pthread_t *workers;
	unsigned int nr_workers;
	pthread_t watcher;
	bool watcher_started;
	int wake_fd; /* eventfd: wakes the watcher */
	atomic_bool stopping;
	atomic_uint in_flight; /* answers resumed while stopping, not completed */
	uint64_t next_req_id;
	atomic_ullong renders, renders_cancelled;
	atomic_ullong rejected_renders, rejected_memory, rejected_conns, rejected_stopping;

	/* http_conn.c: every connection, oldest first, with its address and state */
	pthread_mutex_t conn_lock;
	struct http_conn *conns_head, *conns_tail;
	unsigned int nr_conns, nr_busy;
	atomic_ullong conns_accepted, evicted_timeout, evicted_pressure;
};

/*
 * What a request is answered with: a rendered body (shared: the micro-cache and every request
 * answered from it hold references) and its headers. status 0: no answer (the client has gone).
 */
struct http_answer {
	int status;
	struct http_body *body; /* a reference; NULL: empty */
	bool gz;
	const char *content_type, *cache_control; /* static */
	char disposition[160];
	char location[96];
	unsigned int retry_after_s;
};

/* Where a suspended request is (http_render.c); every field below is under jobs_lock. */
enum http_req_phase {
	REQ_INLINE = 0, /* on an MHD thread, not suspended */
	REQ_QUEUED,	/* waiting for a worker */
	REQ_RUNNING,	/* a worker runs its handler */
	REQ_DEFERRED,	/* waiting for the clock (http_request__call_again_at()) */
	REQ_WAITING,	/* waiting for an identical request's render (micro-cache) */
	REQ_DONE,	/* answered (or not: gone), about to be resumed */
};

struct http_request {
	struct http_server *srv;
	struct MHD_Connection *conn;
	const char *method;
	const char *path;
	const char *suffix;
	int64_t now_ns;
	int64_t default_range_ns;	/* 0: the server's; a capture's length for captures */
	int default_event;		/* enum query_event without event=: a capture's kind */
	bool unlimited_range;		/* heat maps: bounded by their cell count instead */
	char *body;		/* POST body (urlencoded form), NUL-terminated; owned */
	size_t body_len;
	bool body_too_large;
	bool head;		/* a HEAD request served by a GET route */
	const char *route;	/* the matched route's path (static), NULL: none; for metrics */
	void *route_ctx;	/* the matched route's ctx */
	int64_t start_ns;	/* when the request arrived; for the latency histogram */
	char *cache_key;	/* owned; set when this request fills a cache entry */

	const struct http_source *src; /* what the query reads; NULL: the server's (captures set it) */
	const struct http_route *rt; /* the matched route */
	struct http_conn *hc;	     /* its connection's entry (http_conn.c), NULL: untracked */
	uint64_t id;		     /* unique: the watcher's check that it is the same request */
	int fd;			     /* the connection's socket (the watcher polls it) */
	bool gzip_ok;		     /* the client accepts gzip */
	bool suspended;		     /* MHD_suspend_connection() was called (and not resumed) */
	bool queued_answer;	     /* MHD_queue_response() succeeded */
	bool stop_answer;	     /* resumed with an answer while stopping: in_flight */
	bool retry;		     /* resumed to look up the micro-cache again */
	bool answered;		     /* @ans holds the answer to queue when resumed */
	struct http_answer ans;
	size_t sent_len; /* the answer's body length, counted when completed */

	/* http_render.c, under jobs_lock */
	enum http_req_phase phase;
	atomic_bool cancelled;		    /* the client has gone */
	bool in_watch;			    /* on srv->watched */
	struct http_request *next;	    /* queue, deferred list or cache waiters */
	struct http_request *wprev, *wnext; /* srv->watched */
	size_t charged;			    /* response memory charged for resp.body (its growth) */
	struct sbuf_watch body_watch;	    /* resp.body's: budget, size limit, cancellation */
	int64_t defer_until_ns;		    /* http_request__call_again_at() */
	bool defer_armed;		    /* the handler asked to be called again */
	bool deferred_call;		    /* this call is the one it asked for */
	void *state;
	void (*state_free)(void *);
};

/* http_body.c: response bodies, shared by reference, and the response memory budget. */
/*
 * Charges @n bytes of response memory: true, or false when they would pass
 * cfg.response_memory_bytes (nothing charged then); @force charges anyway (small bodies that
 * must go out: errors, health).
 */
bool http_mem_charge(struct http_server *s, size_t n, bool force);
void http_mem_uncharge(struct http_server *s, size_t n);
/*
 * A body over @data (malloc'ed, taken in every case; @charged bytes of it already charged, and
 * uncharged when the last reference goes). One reference; NULL (data freed, uncharged) on ENOMEM.
 */
struct http_body *http_body_new(struct http_server *s, char *data, size_t len, size_t charged);
struct http_body *http_body_ref(struct http_body *b);
void http_body_unref(struct http_body *b); /* NULL is a no-op */
size_t http_body_len(const struct http_body *b);
/* An MHD response over the body, holding a reference of its own (no copy). NULL on ENOMEM. */
struct MHD_Response *http_body_response(struct http_body *b);

/* Copies @a into @ret, with a reference of its own to the body. */
void http_answer_copy(struct http_answer *ret, const struct http_answer *a);
/* Drops the body's reference; the answer is empty afterwards. */
void http_answer_fini(struct http_answer *a);

/*
 * The micro-cache (http_cache.c). A lookup for @key is a hit (HTTP_CACHE_HIT: a copy of the
 * answer in @ret, the caller finis it), a pending render of the same key (HTTP_CACHE_WAIT: @req
 * is queued on it; the caller suspends it until http_cache_fill() hands it back), or a miss
 * (HTTP_CACHE_MISS: the caller renders and must call http_cache_fill() with the key). -errno:
 * do not cache this request.
 */
enum { HTTP_CACHE_MISS = 0, HTTP_CACHE_HIT = 1, HTTP_CACHE_WAIT = 2 };
void http_cache_init(struct http_server *s);
void http_cache_fini(struct http_server *s);
int http_cache_lookup(struct http_server *s, const char *key, struct http_request *req,
		      struct http_answer *ret);
/*
 * Completes the render of @key: @a (NULL: the renderer's client went away) is kept for the next
 * identical requests when @keep and the cache was not flushed meanwhile. Returns the requests
 * that waited (linked by ->next), for the caller to resume, answered with @a, or, when
 * *@ret_retry (no answer, or one from before a flush), to look the cache up again.
 */
struct http_request *http_cache_fill(struct http_server *s, const char *key,
				     const struct http_answer *a, bool keep, bool *ret_retry);
/* Drops every cached response (a reload changed what they depend on); those being rendered are
 * not kept. */
void http_cache_flush(struct http_server *s);
/* Bytes of the bodies the cache holds. */
uint64_t http_cache_bytes(struct http_server *s);

/*
 * http_render.c: the render pool. Started and stopped with the server; http_render_stop()
 * answers or cancels every suspended request (so that MHD can stop) within about a second.
 */
int http_render_start(struct http_server *s);
void http_render_stop(struct http_server *s);
/*
 * On an MHD thread, for a request whose route is not cheap: suspends the connection and queues
 * the request for a worker (true), or returns false with the 503 to answer inline in @ret
 * (queue full, response memory exhausted, stopping).
 */
bool http_render_submit(struct http_server *s, struct http_request *req, struct http_answer *ret);
/* Hands a suspended @req back to MHD (answered, or not: gone; or to retry), without any lock:
 * it may be freed at once. */
void http_render_resume(struct http_server *s, struct http_request *req);
/* Suspends @req, waiting on a pending cache entry (HTTP_CACHE_WAIT; called by the lookup under
 * cache_lock: the order is cache_lock -> jobs_lock). */
void http_render_wait(struct http_server *s, struct http_request *req);
/*
 * Turns a handler's result into an answer (errors mapped, gzip when the client takes it, the
 * body shared), for the workers and for the cheap routes inline. @err is the handler's return.
 */
void http_render_finish(struct http_server *s, struct http_request *req, struct http_response *resp,
			int err, struct http_answer *ret);
/* Whether the client accepts gzip. */
bool http_accepts_gzip(struct MHD_Connection *conn);
/* Fills @a with a bare error answer (JSON body, no-store). */
void http_answer_error(struct http_server *s, struct http_answer *a, int status, const char *reason,
		       unsigned int retry_after_s);

/*
 * http_conn.c: every connection is tracked from accept to close (MHD_OPTION_NOTIFY_CONNECTION):
 * over the limits (in all, per address) the oldest idle connection is closed; a connection that
 * does not deliver its request within cfg.request_timeout_s is closed; a request is "over
 * budget" (cheap routes only) when the busy connections already fill the limits.
 */
struct sockaddr;
void http_conn_init(struct http_server *s);
void http_conn_fini(struct http_server *s);
/* MHD accepted a connection on @fd from @addr (may be NULL): the entry to give back to the
 * other calls, NULL when out of memory (then untracked). Closes idle ones over the limits. */
struct http_conn *http_conn_started(struct http_server *s, int fd, const struct sockaddr *addr);
/* MHD closed it (after this, its descriptor may be reused). NULL is a no-op. */
void http_conn_closed(struct http_server *s, struct http_conn *hc);
/* A request's headers arrived (busy), it waits for its body (@body), or it completed (idle). */
void http_conn_busy(struct http_server *s, struct http_conn *hc, bool body);
void http_conn_idle(struct http_server *s, struct http_conn *hc);
/* True when this busy connection is beyond the limits: only cheap routes are served. */
bool http_conn_over_budget(struct http_server *s, struct http_conn *hc);
/* Closes the connections past their deadline; from the watcher, about 4 times a second. */
void http_conn_reap(struct http_server *s, int64_t now_mono_ns);
/* Connections now and busy ones. */
void http_conn_counts(struct http_server *s, unsigned int *ret_conns, unsigned int *ret_busy);

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
/*
 * The rules every data route shares, after its parameters parsed (docs/http-api.md "Errors"):
 * off-CPU events without [offcpu] (409, event), a pid or tid with no process and no sample in
 * @src (404), a range that ends before the oldest sample held after evictions (410). 0, or
 * -EINVAL with @err filled. @srv_src: the server's own source (what [offcpu] gave it).
 */
int http_source_check(const struct http_source *srv_src, const struct http_source *src,
		      const struct query_common *q, struct query_error *err);
/* Cache-Control of a data route's answer for @q (replayed data never changes, etc.). */
const char *http_data_cache_control(const struct http_server *srv, const struct query_common *q,
				    int64_t now_ns);
/* A query's failure (errno) as a handler returns it: a pattern's limit or a bad filter stay
 * themselves (400s), anything else is out of memory. */
static inline int http_query_err(int e)
{
	return e == EINVAL || e == QUERY_ECOMM_LIMIT || e == QUERY_EFRAME_LIMIT ? -e : -ENOMEM;
}
/* focus= and ignore= on one stack's frame names: 1 keep, 0 drop, or -errno. */
int http_frames_pass(const struct query_common *q, const char *const *names, size_t n);
/*
 * The history rule alone, for a second range (diff's b_from, b_to): 410 naming @param when
 * [..@to_ns) ends before the oldest sample held after evictions. 0 or -EINVAL with @err filled.
 */
int http_source_check_history(const struct http_source *src, const struct query_common *q,
			      int64_t to_ns, const char *param, struct query_error *err);
/* The reason given when off-CPU events are asked of a daemon without them. */
#define HTTP_OFFCPU_OFF "off-CPU events need [offcpu] enabled = yes in emberd.conf"

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
/* http_views.c: /api/v1/top, /api/v1/sandwich and /api/v1/sandwich.svg. */
int http_handle_top(struct http_server *srv, struct http_request *req,
		    struct http_response *resp);
int http_handle_sandwich(struct http_server *srv, struct http_request *req,
			 struct http_response *resp);
int http_handle_sandwich_svg(struct http_server *srv, struct http_request *req,
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
/* A render's table of names (NULL + errno): it and the profiles on it charge their memory to
 * srv->render_bytes while they live. Free with strtab__free(). */
struct strtab *http_render_strtab(struct http_server *srv);
/* The captures' recordings' memory. */
size_t http_captures_bytes(struct http_server *srv);

#endif
