/* SPDX-License-Identifier: MIT */
/*
 * dbgfetch: debug files fetched from debuginfod servers (DEBUGINFOD_URLS, as perf and gdb read
 * it; elfutils' libdebuginfod) for the files whose symbols or CFI are missing (stripped, no
 * local debug file), kept on disk in a folder laid out as a debug dir
 * (DIR/.build-id/xx/rest.debug), which the symbolizer and the unwinder search like
 * /usr/lib/debug. Each fetch is time-limited; a build-id that could not be fetched is not asked
 * again for a while (retry_s), nor is any after a timeout or a connection error (30 s); the
 * folder is kept under a size bound, least recently used first.
 *
 * Blocking (network): called only where files are read, on the worker, never on the drain.
 * Thread-safe (one lock: fetches are serialised). Non-logging.
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
};

struct dbgfetch_stats {
	uint64_t fetches; /* debug files fetched and stored */
	uint64_t fetched_bytes;
	uint64_t cached;      /* asked for, already in the folder */
	uint64_t not_found;   /* no server has it */
	uint64_t timeouts;    /* stopped at timeout_ms */
	uint64_t errors;      /* other failures: connection refused, a bad file, no room */
	uint64_t skipped;     /* not asked: failed less than retry_s ago, or the server was
				 unreachable less than 30 s ago */
	uint64_t evictions;   /* files removed for the size bound */
	uint64_t cache_bytes; /* gauge: the folder's size after the last store */
	uint64_t fetch_ns;    /* time spent fetching */
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
 * Makes sure the debug file of build-id @bid (@len bytes) is in the folder: 1 fetched now, 0
 * already there, or -errno: -ENOENT no server has it, -ETIMEDOUT, -EAGAIN (failed lately: not
 * asked), -EINVAL (a build-id of under 2 bytes), others. Blocks up to timeout_ms.
 */
int dbgfetch__fetch(struct dbgfetch *f, const uint8_t *bid, size_t len);

void dbgfetch__stats(struct dbgfetch *f, struct dbgfetch_stats *ret);

#endif
