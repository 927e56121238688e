/* SPDX-License-Identifier: MIT */
/*
 * http_export: emberd's endpoints for other tools.
 *
 *   GET /debug/pprof/profile?seconds=N[&wait=1]   gzip-compressed pprof profile (pprof.h), Go's
 *       convention, so that `go tool pprof http://HOST:PORT/debug/pprof/profile`, Parca and
 *       Grafana Pyroscope can scrape ember. seconds (1..max range, default 30) is the last N
 *       seconds of the store; wait=1 blocks until N more seconds have been sampled and returns
 *       those (live only; at most EXPORT_MAX_WAITERS at once). The common filters (pid, tid,
 *       comm, kernel, user, idle) and from/to apply as on /api/v1/folded. Every sample has a
 *       comm label (its root frame); labels=pid,tid (live only) adds per-sample pid and/or
 *       tid labels, off by default because backends may index labels (cardinality).
 *   GET /metrics   the Prometheus text exposition (metrics.h) of the daemon's health.
 *
 * The metrics registry is filled from three sides: http_export__collect_store() and the HTTP
 * counters at scrape time, http_export__observe() per request (latency histogram, requests by
 * endpoint and status), and the daemon's main loop through the ember_metrics_*() setters for
 * what only it sees (sampler, symbolizer, BPF). Everything is thread-safe.
 */
#ifndef EMBER_HTTP_EXPORT_H
#define EMBER_HTTP_EXPORT_H

#include <stddef.h>
#include <stdint.h>

struct http_server;
struct metrics;
struct sampler_stats;
struct store_stats;
struct symbolizer_stats;

#define EXPORT_DEFAULT_SECONDS 30
#define EXPORT_MAX_WAITERS 1	/* blocking captures at once: each holds an HTTP thread */

/*
 * Creates the metrics registry (ember_metrics__new()), adds the two routes to @srv (before
 * http_server__start()) and keeps @freq_hz (the sampling frequency: pprof's period). One
 * exporter per process: the routes' handlers find it through a static pointer. Returns 0,
 * -EBUSY (already registered, or the server is started) or -ENOMEM.
 */
int http_export__register(struct http_server *srv, uint64_t freq_hz);
/* Frees the registry; call after http_server__free(). No-op when not registered. */
void http_export__unregister(void);
/* The registry, for the daemon's ember_metrics_*() calls; NULL when not registered. */
struct metrics *http_export__metrics(void);

/*
 * The registry with ember's metric families declared (names and help in http_export.c).
 * NULL + errno; free with metrics__free().
 */
struct metrics *ember_metrics__new(void);

/* Per request, from the HTTP server once the response is queued: @route is the matched route's
 * path ("other" for a 404). No-op before http_export__register(). */
void http_export__observe(const char *route, int status, double seconds);

/*
 * Main thread, for each batch appended to the store: tallies the samples per CPU for
 * ember_cpu_samples_total{cpu} (the sampler reports only their sum). Cheap (one atomic add per
 * sample); CPUs past EXPORT_MAX_CPUS and untimed samples (cpu UINT32_MAX) count as "unknown".
 * Works before registration too.
 */
struct store_sample;
#define EXPORT_MAX_CPUS 1024
void http_export__count_samples(const struct store_sample *batch, size_t n);

/* Setters for the daemon's main loop; counters take totals since start (they only grow). */
void ember_metrics_store(struct metrics *m, const struct store_stats *st);
void ember_metrics_symbolizer(struct metrics *m, const struct symbolizer_stats *st);
/* Samples, losses, stack errors, drains, CPUs and the BPF program's run time. */
void ember_metrics_sampler(struct metrics *m, const struct sampler_stats *st);

#endif
