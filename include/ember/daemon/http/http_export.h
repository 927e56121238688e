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
 * The metrics registry is filled at scrape time from the store, the HTTP counters and the main
 * loop's counters as last published (http_server__publish(): sampler, symbolizer, BPF), and per
 * response through the server's observer (latency histogram, requests by endpoint and status).
 * Everything is thread-safe.
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
#define EXPORT_MAX_WAITERS     1 /* blocking captures at once (they hold no thread meanwhile) */

/*
 * Adds the two routes to @srv (before http_server__start()) with an exporter of their own: the
 * metrics registry (ember_metrics__new()) and @freq_hz (the sampling frequency: pprof's period),
 * owned and freed by the server; the exporter observes every response (request counters and the
 * latency histogram). Returns 0, -EBUSY (the server is started) or -ENOMEM.
 */
int http_export__register(struct http_server *srv, uint64_t freq_hz);

/*
 * The registry with ember's metric families declared (names and help in http_export.c).
 * NULL + errno; free with metrics__free().
 */
struct metrics *ember_metrics__new(void);

/* Setters for the daemon's main loop; counters take totals since start (they only grow). */
void ember_metrics_store(struct metrics *m, const struct store_stats *st);
void ember_metrics_symbolizer(struct metrics *m, const struct symbolizer_stats *st);
struct unwind_stats;
/* The unwind tables: rows used and capacity, tables, processes, builds and their events. */
void ember_metrics_unwind(struct metrics *m, const struct unwind_stats *st);
struct proc_tracker_stats;
/* The process tracker: processes and mappings known, reads by way, events. */
void ember_metrics_procs(struct metrics *m, const struct proc_tracker_stats *st);
struct python_stats;
/* Python frames: processes read and unsupported, samples, frames named and unknown, events. */
void ember_metrics_python(struct metrics *m, const struct python_stats *st);
/* Samples, losses, stack errors, drains, CPUs and the BPF program's run time. */
void ember_metrics_sampler(struct metrics *m, const struct sampler_stats *st);

#endif
