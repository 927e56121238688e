/* SPDX-License-Identifier: MIT */
/*
 * capture: the second samplers of emberd's ad hoc captures (POST /api/v1/captures with a
 * frequency or a pid). Each capture gets its own sampler (bpf/sampler.bpf.c loaded again, with
 * its own frequency and tgid filter), attached when the capture starts, drained on the daemon's
 * tick, its groups named by the daemon's ingest (the same naming, markers and [filter] as the
 * live store's) and kept in the capture's own recording (never in the live store). When its time
 * is up the sampler is stopped, drained to the end and freed; the HTTP server takes the frozen
 * recording (capture_mgr__take()).
 *
 * Threads: start, take and stop run on HTTP threads; capture_mgr__tick() on the worker (the
 * only one that uses the ingest and the symbolizer). A mutex inside guards the list.
 */
#ifndef EMBER_CAPTURE_H
#define EMBER_CAPTURE_H

#include <stdint.h>

#include <stdbool.h>
#include <stddef.h>

struct ember_config;
struct ingest;
struct sampler;
struct recording;
struct symbolizer;

/* Capture samplers running at once; a capture over this falls back to the live store. */
#define CAPTURE_MAX_SAMPLERS 4
/* Highest capture frequency: this or the daemon's own, whichever is higher (then capped). */
#define CAPTURE_MAX_HZ 999

struct capture_mgr; /* opaque */

/*
 * @cfg, @in (the daemon's ingest), @sym (its symbolizer: new processes' mappings) and @live (its
 * sampler, whose unwind tables the captures' samplers read; may be NULL) are borrowed and must
 * outlive the manager. NULL + errno on failure. Free it after the HTTP server.
 */
struct capture_mgr *capture_mgr__new(const struct ember_config *cfg, struct ingest *in,
				     struct symbolizer *sym, const struct sampler *live);
/* Stops and frees every capture sampler and recording still held. NULL is a no-op. */
void capture_mgr__free(struct capture_mgr *m);

/* Main thread, each tick: drains the running capture samplers, finishes those whose time is up. */
void capture_mgr__tick(struct capture_mgr *m);

/*
 * Any thread: samples @pid (< 0: every process) at @frequency_hz (0: the daemon's; capped at
 * CAPTURE_MAX_HZ or the daemon's) for @duration_ns, into at most @max_bytes. A handle >= 0 with
 * the frequency applied and the Unix time sampling started, or -errno (-EBUSY: too many).
 */
int capture_mgr__start(struct capture_mgr *m, uint64_t frequency_hz, int64_t pid,
		       int64_t duration_ns, size_t max_bytes, uint64_t *ret_frequency_hz,
		       int64_t *ret_start_ns);
/*
 * Once the time is up and every sample is in: 0 and the frozen recording (the caller owns it;
 * *@ret_truncated when @max_bytes cut it short); -EAGAIN: not yet; other -errno: failed, the
 * reason in @err. The handle is gone after any return but -EAGAIN.
 */
int capture_mgr__take(struct capture_mgr *m, int handle, struct recording **ret,
		      bool *ret_truncated, char *err, size_t errlen);
/* The capture was deleted (or the server stops): ends the sampling, frees everything. */
void capture_mgr__stop(struct capture_mgr *m, int handle);

#endif
