/* SPDX-License-Identifier: MIT */
/*
 * dbgfetch: debug files fetched from debuginfod servers (DEBUGINFOD_URLS, as perf and gdb read
 * it; elfutils' libdebuginfod) for the files whose symbols or CFI are missing (stripped, no
 * local debug file), kept on disk in a folder laid out as a debug dir
 * (DIR/.build-id/xx/rest.debug), which the symbolizer and the unwinder search like
 * /usr/lib/debug.
 *
 * A request never waits for the network: it is answered from the folder, or queued for the
 * fetcher's own threads (a bounded queue, a bounded number of fetches at once, each
 * time-limited, and a bound on the fetch time spent per minute), or refused (counted). A
 * build-id that could not be fetched is not asked again for retry_s (the negative cache), nor
 * is any after a timeout or a connection error (30 s). The folder is kept under a size bound,
 * least recently used first, and what each miss leaves in libdebuginfod's own cache (a folder
 * per build-id) is removed, counted.
 *
 * Thread-safe; starts threads of its own (joined by dbgfetch__free). Non-logging.
 */
#ifndef EMBER_DBGFETCH_H
#define EMBER_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

struct dbgfetch_opts {
	const char *cache_dir; /* created (0700, root's) if missing; must not be a link */
	uint64_t max_bytes;    /* the folder's bound: least recently used files go first */
	uint32_t timeout_ms;   /* one fetch's bound, connection and transfer */
	uint32_t retry_s;      /* a failed build-id is not asked again before; 0: 300 s */
	uint32_t threads;      /* fetches at once; 0: 2 */
	uint32_t max_queue;    /* build-ids waiting; past it a request is refused; 0: 64 */
	uint32_t budget_ms;    /* fetch time (all threads) per minute; past it requests are
				  refused until the minute is over; 0: 30 s */
};

struct dbgfetch_stats {
	uint64_t fetches; /* debug files fetched and stored */
	uint64_t fetched_bytes;
	uint64_t cached;      /* asked for, already in the folder */
	uint64_t not_found;   /* no server has it */
	uint64_t timeouts;    /* stopped at timeout_ms */
	uint64_t errors;      /* other failures: connection refused, a bad file, no room */
	uint64_t skipped;     /* not asked: the server was unreachable less than 30 s ago */
	uint64_t negative_hits; /* not asked: the build-id failed less than retry_s ago */
	uint64_t queued;      /* requests queued for the fetcher's threads */
	uint64_t pending_hits; /* requests for a build-id already queued or being fetched */
	uint64_t refused_queue;	 /* refused: the queue was full */
	uint64_t refused_budget; /* refused: the minute's fetch time was spent */
	uint64_t queue_len;   /* gauge: waiting now */
	uint64_t in_flight;   /* gauge: being fetched now */
	uint64_t evictions;   /* files removed for the size bound */
	uint64_t cache_bytes; /* gauge: the folder's size after the last store */
	uint64_t client_dirs; /* gauge: libdebuginfod's folders left (per build-id asked) */
	uint64_t client_dirs_removed; /* ... removed: a miss's at once, stale ones by the sweep */
	uint64_t fetch_ns;    /* time spent fetching (the fetcher's threads) */
};

struct dbgfetch; /* opaque */

/*
 * NULL + errno: ENOENT when DEBUGINFOD_URLS is unset or empty (nothing to fetch from), ENOTDIR
 * or EPERM when the cache folder is unusable (not a directory, a link, not root's), ENOMEM.
 * Free with dbgfetch__free().
 */
struct dbgfetch *dbgfetch__new(const struct dbgfetch_opts *o);
/*
 * symbols.debuginfod of @c (dbgfetch_config.c): the fetcher, with @dirs set to symbols.debug_dirs
 * and its folder ("a:b:folder"), logged; NULL when it is off, DEBUGINFOD_URLS unset, or its
 * folder unusable (a warning).
 */
struct ember_config;
struct dbgfetch *dbgfetch__from_config(const struct ember_config *c, char *dirs, size_t dirs_len);
void dbgfetch__free(struct dbgfetch *f); /* NULL is a no-op */

/* The folder to search as a debug dir: borrowed, valid until dbgfetch__free(). */
const char *dbgfetch__dir(const struct dbgfetch *f);

/*
 * Asks for the debug file of build-id @bid (@len bytes), never waiting on the network: 0 it is
 * in the folder; 1 queued now, or queued or being fetched already (see dbgfetch__done_seq);
 * -EAGAIN failed lately or the server unreachable (not asked); -ENOBUFS the queue is full,
 * -EBUSY the minute's fetch time is spent (refused: ask again later); -EINVAL a build-id of
 * under 2 bytes.
 */
int dbgfetch__request(struct dbgfetch *f, const uint8_t *bid, size_t len);

/* A count that grows as fetches end (found or not) and as a spent budget's minute ends: a
 * caller holding requests that were pending or refused asks again when it has changed. */
uint64_t dbgfetch__done_seq(struct dbgfetch *f);

/* Waits until nothing is queued or being fetched, up to @timeout_ms. 0 or -ETIMEDOUT. */
int dbgfetch__settle(struct dbgfetch *f, uint32_t timeout_ms);

void dbgfetch__stats(struct dbgfetch *f, struct dbgfetch_stats *ret);

#endif
