/* SPDX-License-Identifier: MIT */
/*
 * capture: the second samplers of emberd's ad hoc captures (POST /api/v1/captures with a
 * frequency or a pid). Each capture gets its own sampler (bpf/sampler.bpf.c loaded again, with
 * its own frequency and tgid filter), attached when the capture starts, drained on the daemon's
 * tick, its stacks named by the daemon's symbolizer and kept in the capture's own recording
 * (never in the live store). When its time is up the sampler is stopped, drained to the end and
 * freed; the HTTP server takes the frozen recording through the capture hooks (http.h).
 *
 * Threads: the hooks run on HTTP threads; capture_mgr__tick() on the main thread (the only one
 * that uses the symbolizer). A mutex inside guards the list.
 */
#ifndef EMBER_CAPTURE_H
#define EMBER_CAPTURE_H

#include <stdint.h>

struct ember_config;
struct http_server;
struct strtab;
struct symbolizer;

/* Capture samplers running at once; a capture over this falls back to the live store. */
#define CAPTURE_MAX_SAMPLERS 4
/* Highest capture frequency: this or the daemon's own, whichever is higher (then capped). */
#define CAPTURE_MAX_HZ 999

struct capture_mgr; /* opaque */

/*
 * @cfg, @sym and @names (the symbolizer's strtab) are borrowed and must outlive the manager.
 * Sets the capture hooks of @srv. NULL + errno on failure. Free it after the server.
 */
struct capture_mgr *capture_mgr__new(const struct ember_config *cfg, struct symbolizer *sym,
				     struct strtab *names, struct http_server *srv);
/* Stops and frees every capture sampler and recording still held. NULL is a no-op. */
void capture_mgr__free(struct capture_mgr *m);

/* Main thread, each tick: drains the running capture samplers, finishes those whose time is up. */
void capture_mgr__tick(struct capture_mgr *m);

#endif
