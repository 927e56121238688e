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
 *   2. either add a row { "GET", "/api/v1/thing", false, my_handler } to the table
 *      `http_builtin_routes[]` in src/daemon/http/http.c (marked "ADD ROUTES HERE"), or call
 *      http_server__add_route() before http_server__start() (e.g. from main.c).
 * A handler parses its parameters with http_request__parse() (common range and filters plus
 * its own keys through a callback), gets data with http_server__query_profile(), fills @resp
 * (status 200 by default, body in resp->body) and returns 0, or calls http_response__error()
 * for bad input. A negative return is an internal error: 503 for -ENOMEM, 500 otherwise.
 *
 * Threads: MHD runs its own threads (http_config.threads); handlers may run concurrently, so
 * they keep state in the request and take the store's lock only through the store API.
 */
#ifndef EMBER_HTTP_H
#define EMBER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/model/query.h"
#include "ember/core/base/sbuf.h"

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
};

typedef int (*http_handler_fn)(struct http_server *srv, struct http_request *req,
			       struct http_response *resp);

struct http_route {
	const char *method;	/* "GET", "POST", "DELETE"; GET routes also answer HEAD */
	const char *path;	/* exact, or a prefix when @prefix (ends with '/') */
	bool prefix;
	http_handler_fn fn;
};

/*
 * @live or @replay (exactly one) is borrowed and must outlive the server. The config is
 * copied. NULL + errno (EINVAL, ENOMEM). Free with http_server__free().
 */
struct http_server *http_server__new(const struct http_config *c, struct store *live,
				     struct recording *replay);
/* Stops the server if it runs and frees everything (captures too). NULL is a no-op. */
void http_server__free(struct http_server *s);

/* Adds a route (the struct is copied; strings borrowed, normally static). Before start only:
 * 0, -EBUSY after start, -ENOMEM. Added routes are matched before the built-in ones. */
int http_server__add_route(struct http_server *s, const struct http_route *r);

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

/*
 * Ad hoc captures with their own sampling (frequency, pid): when the daemon can run a second
 * sampler (src/daemon/ingest/capture.c), it sets these hooks and a capture's samples go into its own
 * recording, not the live store. Without hooks, or when start fails, a capture is a
 * time-bounded window of the live store at the daemon's frequency (its JSON says
 * "frequency_applied": false). All three are called from any thread, under the server's lock.
 *
 * start: sample @pid (< 0: every process) at @frequency_hz (0: the daemon's) for @duration_ns,
 *   into at most @max_bytes; a handle >= 0 with the frequency applied (it may be capped) and
 *   the Unix time sampling started, or -errno.
 * take: once the time is up and every sample is in: 0 and the frozen recording (the caller owns
 *   it; *ret_truncated when @max_bytes cut it short); -EAGAIN: not yet; other -errno: failed,
 *   reason in @err. The handle is gone after any return but -EAGAIN.
 * stop: the capture was deleted (or the server stops): end the sampling, free everything.
 */
struct recording;
struct http_capture_hooks {
	int (*start)(void *ctx, uint64_t frequency_hz, int64_t pid, int64_t duration_ns,
		     size_t max_bytes, uint64_t *ret_frequency_hz, int64_t *ret_start_ns);
	int (*take)(void *ctx, int handle, struct recording **ret, bool *ret_truncated, char *err,
		    size_t errlen);
	void (*stop)(void *ctx, int handle);
	void *ctx;
};
void http_server__set_capture_hooks(struct http_server *s, const struct http_capture_hooks *h);

/* --- for handlers ---------------------------------------------------------------------------- */

const char *http_request__method(const struct http_request *req);
const char *http_request__path(const struct http_request *req);
/* The part of the path after a prefix route's prefix ("" for exact routes). */
const char *http_request__suffix(const struct http_request *req);
/* The clock the source is on (Unix time live; the end of the recording in replay). */
int64_t http_request__now_ns(const struct http_request *req);

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

/*
 * Creates and starts the server on @cfg->listen: over @store when @nfiles is 0, otherwise over
 * a recording loaded from @files (`emberd --replay`; *ret_rec receives it, the caller frees it
 * with recording__free() after http_server__free()). Logs what failed. 0 or -errno.
 */
int emberd_http_setup(const struct ember_config *cfg, struct store *store, char **files,
		      int nfiles, struct http_server **ret_srv, struct recording **ret_rec);

struct sampler_stats;
struct symbolizer_stats;
/*
 * Main thread, once per tick: copies the sampler's and symbolizer's counters for
 * /api/v1/stats ("sampler" and "symbols": loss counters, unresolved share, cache sizes).
 */
void emberd_http_publish(const struct sampler_stats *sa, const struct symbolizer_stats *sy);
/* The last published copy (any thread; /metrics applies it at scrape time); false: none yet. */
bool emberd_http_published(struct sampler_stats *sa, struct symbolizer_stats *sy);

#endif
