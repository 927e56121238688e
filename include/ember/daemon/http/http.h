/* SPDX-License-Identifier: MIT */
/*
 * http: emberd's HTTP API and dashboard (libmicrohttpd glue). Routes map a method and a path
 * (exact, or a prefix ending in '/') to a handler; handlers validate the query (query.h), copy
 * what they need out of the data source, render with the core (folded, flamegraph, heatmap,
 * samples) into an sbuf, and the server hands the body to MHD (gzip when the client accepts
 * it, Cache-Control, error bodies as JSON). docs/http-api.md lists every endpoint.
 *
 * The data source is either the live store (sampling) or a recording (emberd --replay): both
 * borrowed, both must outlive the server. Ad hoc captures (/api/v1/captures) are recordings the
 * server owns: filled by their own sampler through the capture hooks (below), or cut out of the
 * live store when their time is up (see http_server__tick()).
 *
 * ADDING AN ENDPOINT from another module (one line each):
 *   1. write a handler `int my_handler(struct http_server *srv, struct http_request *req,
 *      struct http_response *resp)` in your own file, declared in your header;
 *   2. either add a row { "GET", "/api/v1/thing", false, my_handler, NULL, false } to the table
 *      `http_builtin_routes[]` in src/daemon/http/http.c (marked "ADD ROUTES HERE"), or call
 *      http_server__add_route() before http_server__start() with your state in the route's ctx
 *      (as http_export.c does).
 * A handler parses its parameters with http_request__parse() (common range and filters plus
 * its own keys through a callback), gets data with http_server__query_profile(), fills @resp
 * (status 200 by default, body in resp->body) and returns 0, or calls http_response__error()
 * for bad input. A negative return is an internal error: 503 for -ENOMEM, 500 otherwise.
 *
 * Threads: MHD runs its own threads (http_config.threads), which only parse requests, answer the
 * cheap routes (struct http_route.cheap: /healthz, /metrics, stats, the dashboard's files) and
 * send responses; every other handler runs in the render pool (http_config.render_threads) while
 * MHD suspends its connection, so that a flood of expensive requests never delays the liveness
 * probe. Handlers may run concurrently: they keep state in the request and take the store's lock
 * only through the store API.
 *
 * Bounds (docs/security.md lists what each one answers): connections (in all, per client
 * address, a reserve for the cheap routes), the time to deliver a request, renders at once and
 * waiting, the memory of response bodies (being rendered, cached or sent: identical responses
 * share one body), and a render stops when its client has gone (http_request__cancelled()).
 */
#ifndef EMBER_HTTP_H
#define EMBER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/model/query.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/unwind/python.h"
#include "ember/daemon/unwind/hotspot.h"
#include "ember/daemon/unwind/v8.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/unwind.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/store/memio_sink.h"
#include "ember/daemon/store/offcpu_sink.h"
#include "ember/core/base/counters.h"

struct store;
struct recording;
struct profile;
struct strtab;

struct http_config {
	char listen[128];		/* "ADDR:PORT" or "[v6]:PORT"; port 0: any free port */
	unsigned int max_connections;	/* MHD_OPTION_CONNECTION_LIMIT; default 64 */
	unsigned int threads;		/* MHD thread pool size; default 2 */
	unsigned int timeout_s;		/* idle connection timeout; default 30 */
	uint64_t default_range_s;	/* range when from/to are absent; default 60 */
	uint64_t max_range_s;		/* 413 past this; default 7 days */
	uint64_t max_response_bytes;	/* 413 when a body would be bigger; default 256 MiB */
	uint64_t max_body_bytes;	/* request bodies (POST); default 64 KiB */
	unsigned int max_captures;	/* kept at once (oldest finished ones evicted); default 16 */
	uint64_t max_capture_bytes;	/* memory of all captures; default 256 MiB */
	uint64_t max_capture_s;		/* longest capture; default 600 */
	uint64_t max_request_bytes;	/* request line + headers (MHD memory limit); 64 KiB */
	unsigned int max_connections_per_ip; /* per client address; default 32 */
	unsigned int reserved_connections; /* beyond the limits, for the cheap routes; default 16 */
	unsigned int request_timeout_s;	   /* to deliver a whole request (TLS handshake, headers,
					    * body) from connect or from the previous response; 10 */
	unsigned int render_threads;	   /* renders at once (the render pool); default 2 */
	unsigned int render_queue;	   /* renders waiting for a thread, then 503; default 16 */
	uint64_t response_memory_bytes;	   /* bodies rendered, cached or being sent, then 503;
					    * default 128 MiB */
	const char *tls_cert_pem;	/* PEM; borrowed, must outlive the server; NULL: plain */
	const char *tls_key_pem;	/* PEM key for tls_cert_pem; borrowed likewise */
};

/* The defaults above, listen "127.0.0.1:8080". */
void http_config_init(struct http_config *c);

struct http_server; /* opaque */
struct http_request; /* opaque: valid during the handler call */

struct http_response {
	int status;			/* default 200 */
	const char *content_type;	/* static; default "application/json" */
	const char *cache_control;	/* static; default chosen from the route */
	char disposition[160];		/* Content-Disposition, "" for none */
	char location[96];		/* Location (201), "" for none */
	struct sbuf body;
	bool no_gzip;			/* set for bodies already compressed */
	unsigned int retry_after_s;	/* Retry-After (503), 0 for none */
};

typedef int (*http_handler_fn)(struct http_server *srv, struct http_request *req,
			       struct http_response *resp);

struct http_route {
	const char *method;	/* "GET", "POST", "DELETE"; GET routes also answer HEAD */
	const char *path;	/* exact, or a prefix when @prefix (ends with '/') */
	bool prefix;
	http_handler_fn fn;
	void *ctx; /* the handler's: http_request__route_ctx() */
	/*
	 * Answered on MHD's own threads, never queued, and even from a connection in the reserve:
	 * only for handlers that never block and whose answer is small (health, counters, static
	 * files). Others (the default) render in the render pool.
	 */
	bool cheap;
};

/*
 * @live or @replay (exactly one) is borrowed and must outlive the server. The config is
 * copied. NULL + errno (EINVAL, ENOMEM). Free with http_server__free().
 */
struct http_server *http_server__new(const struct http_config *c, struct store *live,
				     struct recording *replay);
/*
 * Stops the server if it runs and frees everything (captures too), within about a second
 * whatever is in flight: renders stop at their next checkpoint (their clients get 503), the
 * requests waiting for the clock (pprof's wait=1) are answered at once with what there is, and
 * those answers get a second to go out. The store must still be there. NULL is a no-op.
 */
void http_server__free(struct http_server *s);

/* Adds a route (the struct is copied; strings borrowed, normally static). Before start only:
 * 0, -EBUSY after start, -ENOMEM. Added routes are matched before the built-in ones. */
int http_server__add_route(struct http_server *s, const struct http_route *r);

/* The server owns @obj from now on and calls @free_fn(@obj) in http_server__free(), after MHD's
 * threads are stopped (a route's ctx, say). 0 or -ENOMEM (@obj not owned then). */
int http_server__own(struct http_server *s, void *obj, void (*free_fn)(void *));

/* Binds the listen address and starts MHD. 0 or -errno (-EADDRINUSE, -EINVAL bad address...). */
int http_server__start(struct http_server *s);
/* The bound port (useful with port 0). */
uint16_t http_server__port(const struct http_server *s);

/*
 * Periodic work, from the daemon's loop (safe from any thread): finishes captures whose time
 * is up (copying their samples out of the store) and evicts over the caps. Requests do it too.
 */
void http_server__tick(struct http_server *s);

/*
 * Extra fields for /api/v1/stats from modules the server does not know (sampler loss counters,
 * symbolizer caches): @fn appends `"name": value` members, each followed by ",", to @json.
 * Called from MHD threads: it must be thread-safe. Set before start.
 */
typedef void (*http_stats_fn)(struct sbuf *json, void *ctx);
void http_server__set_stats_hook(struct http_server *s, http_stats_fn fn, void *ctx);
/* /healthz answers 503 with the reason, and /api/v1/stats and /metrics report the ages, from
 * @l (borrowed, must outlive the server; read without a lock). */
struct liveness;
void http_server__set_liveness(struct http_server *s, struct liveness *l);
struct liveness *http_server__liveness(const struct http_server *s);

/*
 * Ad hoc captures with their own sampling (frequency, pid): when the daemon can run a second
 * sampler (src/daemon/ingest/capture.c), it hands the server its capture manager and a capture's
 * samples go into its own recording, not the live store. Without one, or when a start fails, a
 * capture is a time-bounded window of the live store at the daemon's frequency (its JSON says
 * "frequency_applied": false). @m is borrowed and must outlive the server. Before start.
 */
struct capture_mgr;
/* the off-CPU stores of @k (borrowed, outlives the server: offcpu_sink.h), read by
 * event=offcpu, wakeup, chain and wall, with a quantum's microseconds and the on-CPU sampling
 * frequency (event=wall weighs both in microseconds); without it (the default) they answer
 * empty. Before http_server__start(). */
struct offcpu_sink;
void http_server__set_offcpu(struct http_server *s, const struct offcpu_sink *k,
			     uint64_t quantum_us, uint64_t freq_hz);

void http_server__set_captures(struct http_server *s, struct capture_mgr *m);

/* The memory and I/O stores of @k (borrowed, outlives the server: memio_sink.h), read by
 * event=pagefault, vmgrow, blockio (weight=latency) and malloc; without it they answer 409.
 * Before http_server__start(). */
struct memio_sink;
void http_server__set_memio(struct http_server *s, const struct memio_sink *k);
/* event=cycles and event=instructions answer 409 with @why (the hardware counter probe's
 * reason: sampler_pmc_probe()). */
void http_server__set_pmc(struct http_server *s, const char *why);

/* The workload identity for the container=, service=, unit= and group_by= parameters
 * (borrowed; NULL: those parameters are refused). Before serving. */
struct identity;
void http_server__set_identity(struct http_server *s, struct identity *id);

/*
 * The bearer token (copied; NULL or "" turns authentication off): any thread, at start and on
 * SIGHUP (http_auth.c). 0 or -EINVAL (too long).
 */
int http_server__set_token(struct http_server *s, const char *token);
bool http_server__auth_enabled(struct http_server *s);
/*
 * True when a request for @path with the Authorization header @authorization (may be NULL)
 * may proceed: authentication off, @path is /healthz or the dashboard's page ("/") or static
 * files ("/assets/..."), or "Bearer <token>" matches in constant time. Counts refusals.
 */
bool http_server__auth_check(struct http_server *s, const char *path, const char *authorization);
/* Requests refused with 401 since start. */
uint64_t http_server__auth_failures(struct http_server *s);

/* The live-changeable limits (SIGHUP); any thread. Cached responses are dropped. */
void http_server__set_limits(struct http_server *s, uint64_t max_range_s,
			     uint64_t max_response_bytes, uint64_t max_body_bytes);
/* Drops every cached response (a reload changed what they depend on, e.g. [filter]). */
void http_server__flush_cache(struct http_server *s);

/*
 * Per response, once it is queued: the matched route's path ("other" for none), the status and
 * the time it took. For the exporter's metrics (http_export.c). Set before start.
 */
typedef void (*http_observe_fn)(void *ctx, const char *route, int status, double seconds);
void http_server__set_observer(struct http_server *s, http_observe_fn fn, void *ctx);

/* What the bounds on connections, renders and response memory are doing, for stats and
 * metrics. Any thread. */
struct http_load_stats {
	uint64_t connections;	    /* now */
	uint64_t busy_connections;  /* now, serving a request */
	uint64_t accepted;	    /* connections since start */
	uint64_t evicted_timeout;   /* closed: no whole request within request_timeout */
	uint64_t evicted_pressure;  /* closed: idle when the connection limits were hit */
	uint64_t renders;	    /* started */
	uint64_t renders_cancelled; /* stopped or dropped: their client had gone */
	uint64_t renders_running, renders_queued, renders_waiting; /* now; waiting: the clock */
	uint64_t rejected_renders;	/* 503: the render queue was full */
	uint64_t rejected_memory;	/* 503: response_memory in use */
	uint64_t rejected_connections;	/* 503: beyond the connection limits, not a cheap route */
	uint64_t rejected_stopping;	/* 503: emberd was stopping */
	uint64_t response_bytes;	/* bodies held now */
	uint64_t response_bytes_peak;	/* ... at most */
	uint64_t response_memory_bytes; /* the bound */
	uint64_t responses_aborted;	/* responses the client did not take to the end */
};
void http_server__load_stats(struct http_server *s, struct http_load_stats *ret);

/*
 * The heap's accounting ("memory" in /api/v1/stats): the bytes each part says it holds (the
 * store, the frame names, the symbols, the mapped files' facts, the processes, the stack cache,
 * Python's code objects, the off-CPU and memory stores, responses, captures), from the last
 * published counters, and what was in use at start beyond them (libraries, BPF objects, fixed
 * tables). http_server__memory_accounted: the parts' sum but the start's. Either thread.
 */
uint64_t http_server__memory_accounted(struct http_server *s);

enum http_memory_part { HTTP_MEM_START, HTTP_MEM_STORE, HTTP_MEM_NAMES, HTTP_MEM_SYMBOLS,
			HTTP_MEM_FILE_CACHE, HTTP_MEM_PROCESSES, HTTP_MEM_STACK_CACHE,
			HTTP_MEM_PYTHON, HTTP_MEM_V8, HTTP_MEM_UNWIND, HTTP_MEM_OFFCPU, HTTP_MEM_MEMIO,
			HTTP_MEM_RESPONSES, HTTP_MEM_RENDERS, HTTP_MEM_CAPTURES, HTTP_MEM__NR };
struct http_memory_stats {
	uint64_t heap_in_use;	/* mallinfo2: as heap.in_use_bytes */
	uint64_t accounted;	/* the parts' sum */
	int64_t unaccounted;	/* heap_in_use - accounted (negative: a part overcounts) */
	uint64_t parts[HTTP_MEM__NR];
};
/* Fills @ret (live only: zeros in replay but the heap). */
void http_server__memory_stats(struct http_server *s, struct http_memory_stats *ret);
/* ... described once (http_counters.c): "memory" in /api/v1/stats, ember_memory_* */
extern const struct counter_desc http_memory_counters[];
extern const size_t http_memory_counters_n;
/* The heap in use at start less what the parts held then (set once, before sampling). */
void http_server__set_heap_start(struct http_server *s, uint64_t bytes);
/* struct http_load_stats described once (http_counters.c, core/base/counters.h) */
extern const struct counter_desc http_load_counters[];
extern const size_t http_load_counters_n;

/* The live store (NULL in replay), the configuration in force, and the body bytes sent. */
struct store *http_server__store(const struct http_server *s);
const struct http_config *http_server__config(const struct http_server *s);
uint64_t http_server__bytes_out(const struct http_server *s);

/*
 * Main thread, once per tick: a copy of the counters only the main loop may read (sampler,
 * symbolizer, ingest, unwind tables, Python frames) for /api/v1/stats and /metrics ("sampler",
 * "symbols", "service", "unwind", "python"). Any thread may read the last copy with
 * http_server__published() (false: none yet).
 */
struct http_published {
	struct sampler_stats sampler;
	struct symbolizer_stats symbols;
	struct ingest_stats ingest;
	struct unwind_stats unwind;
	bool have_unwind;		/* the tables are in use */
	struct proc_tracker_stats procs; /* the process tracker (proc/proctrack.h) */
	struct filecache_stats file_cache; /* the mapped files' facts (elf/filecache.h) */
	struct python_stats python;
	bool have_python; /* Python frames are read ([python] enabled) */
	struct v8_stats v8;
	bool have_v8; /* JavaScript frames are read */
	struct hotspot_stats hotspot;
	bool have_hotspot; /* Java frames are read */
	struct exporter_stats exporters[EXPORTER_KINDS];
	bool have_exporter; /* [export] is on */
	struct identity_stats identity;
	struct sampler_offcpu_stats offcpu; /* off-CPU events (offcpu.attached) */
	struct offcpu_sink_stats offcpu_sink; /* ... what reached its stores */
	struct sampler_memio_stats memio; /* memory and I/O events (memio.attached) */
	struct memio_sink_stats memio_sink; /* ... what reached their stores */
	uint64_t names_bytes; /* the frame names' table, shared by every part */
};
void http_server__publish(struct http_server *s, const struct http_published *p);
bool http_server__published(struct http_server *s, struct http_published *ret);
/* CLOCK_MONOTONIC of the last copy (0: none). */
uint64_t http_server__published_at(struct http_server *s);

/* The process's heap as glibc's malloc counts it (mallinfo2(), every arena): bytes allocated and
 * in use (mmapped chunks included), and bytes freed but kept by malloc (what RSS holds beyond
 * the first). Zero without glibc 2.33+, and under ASan (its allocator is not glibc's). Takes each
 * arena's lock while it walks its free lists. */

/* --- for handlers ---------------------------------------------------------------------------- */

const char *http_request__method(const struct http_request *req);
/* The matched route's ctx (struct http_route.ctx). */
void *http_request__route_ctx(const struct http_request *req);
const char *http_request__path(const struct http_request *req);
/* The part of the path after a prefix route's prefix ("" for exact routes). */
const char *http_request__suffix(const struct http_request *req);
/* The clock the source is on (Unix time live; the end of the recording in replay). */
int64_t http_request__now_ns(const struct http_request *req);

/*
 * True once the request's client has gone (its connection closed while the request was
 * rendered) or the server is stopping and the request is not one that waited for the clock:
 * a long handler checks it between its phases and returns -ECANCELED. The response body's
 * appends fail with -ECANCELED by themselves (an sbuf watch) once it is true.
 */
bool http_request__cancelled(const struct http_request *req);

/*
 * For a handler that waits for the clock (/debug/pprof/profile?wait=1): arranges to call the
 * handler again for this request once CLOCK_REALTIME reaches @until_ns, or as soon as the
 * server stops, without holding a thread meanwhile; the handler then returns 0 at once,
 * leaving its response alone. @state (may be NULL; ownership passes to the request) is what
 * http_request__state() gives the second call, and is freed with @free_fn (may be NULL) after
 * it or when the client goes away first. 0, or -EBUSY outside the render pool or on a second
 * call.
 */
int http_request__call_again_at(struct http_request *req, int64_t until_ns, void *state,
				void (*free_fn)(void *));
/* The state given to http_request__call_again_at() on the call it arranged; NULL otherwise. */
void *http_request__state(const struct http_request *req);
/* True once the server is stopping (the second call of a waiting handler may come early). */
bool http_server__stopping(const struct http_server *s);

/*
 * Parameter callback for http_request__parse(): return 1 if the key is yours and valid, 0 if
 * unknown (a 400 "unknown parameter"), or -EINVAL after filling @err (a 400 naming it).
 */
typedef int (*http_param_fn)(const char *key, const char *value, void *ctx,
			     struct query_error *err);

/*
 * Walks every parameter of the URL query and of an urlencoded POST body: the common ones
 * (from, to, pid, tid, comm, kernel, user, idle) into @q when @q is not NULL, every other key
 * to @fn (may be NULL). Then applies the defaults (@default_range_ns; 0: the server's) and the
 * range limit. On bad input it fills @resp with the 400/413 JSON error and returns -EINVAL;
 * the handler then returns 0. @q must be query_common_init()ed; the caller finis it.
 */
int http_request__parse(struct http_request *req, struct query_common *q, int64_t default_range_ns,
			http_param_fn fn, void *ctx, struct http_response *resp);

/* Fills @resp with status and {"error": reason, "param": param} (@param may be NULL). */
void http_response__error(struct http_response *resp, int status, const char *param,
			  const char *reason);

/* True when the server serves a recording (--replay), false when live. */
bool http_server__is_replay(const struct http_server *s);

/*
 * The profile of a range and filters from the server's source (live store or recording),
 * frames interned into @st (caller-owned, must outlive the profile). Root frame: comm.
 * NULL + errno (ENOMEM, EINVAL). Caller frees with profile__free().
 */
struct profile *http_server__query_profile(struct http_server *s, const struct query_common *q,
					   struct strtab *st);

/* --- for emberd's main() (logging) ---------------------------------------------------------- */

struct ember_config;
struct security_files;

/*
 * Creates and starts the server on @cfg->listen with the TLS files and token of @sec (borrowed:
 * must outlive the server): over @store when @nfiles is 0, otherwise over a recording loaded from
 * @files (`emberd --replay`; *ret_rec receives it, the caller frees it with recording__free()
 * after http_server__free()). Adds /metrics and /debug/pprof/profile. Logs what failed. 0 or
 * -errno.
 */
int emberd_http_setup(const struct ember_config *cfg, const struct security_files *sec,
		      struct store *store, char **files, int nfiles, struct http_server **ret_srv,
		      struct recording **ret_rec);

#endif
