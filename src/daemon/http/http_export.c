// SPDX-License-Identifier: MIT
/* http_export: /debug/pprof/profile (pprof) and /metrics (Prometheus) for emberd. */
#include "ember/daemon/http/http_export.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/daemon/http/http.h"
#include "ember/core/base/heap.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/daemon/http/metrics.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/store/store.h"
#include "ember/core/base/strtab.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/core/base/version.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/export/identity.h"
#include "http_internal.h"

/* The exporter of one server: the routes' ctx, owned by the server once registered. */
struct http_export {
	struct metrics *m;
	uint64_t freq_hz;
	atomic_int waiters;
};

/* Latency buckets: from a cached /metrics (sub-ms) to a blocking 60 s capture. */
static const double latency_buckets[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
					  0.25,	 0.5,	 1,	2.5,  5,    10,	  30,	60 };

static const struct family_def {
	const char *name;
	enum metric_type type;
	const char *help;
} families[] = {
	{ "ember_build_info", METRIC_GAUGE, "emberd's version (the value is always 1)." },
	{ "ember_samples_total", METRIC_COUNTER, "Samples taken by the BPF program, all CPUs." },
	{ "ember_cpu_samples_total", METRIC_COUNTER,
	  "Samples stored, by CPU (\"unknown\": delivered without a time record)." },
	{ "ember_idle_samples_total", METRIC_COUNTER, "Samples of the idle task." },
	{ "ember_delivered_samples_total", METRIC_COUNTER, "Samples drained and stored." },
	{ "ember_lost_samples_total", METRIC_COUNTER, "Samples drained but not delivered." },
	{ "ember_stack_errors_total", METRIC_COUNTER,
	  "Stacks not taken, by stack (kernel, user) and error (efault: no stack of that kind; "
	  "other)." },
	{ "ember_sampler_events_total", METRIC_COUNTER,
	  "Sampler losses and fallbacks: ring buffer drops (samples lost in BPF), records of a "
	  "bad size, records over the pending bound, exec and exit notifications." },
	{ "ember_sampler_drains_total", METRIC_COUNTER, "Drains of the ring buffer." },
	{ "ember_ring_bytes_total", METRIC_COUNTER,
	  "Bytes of sample records written to the ring buffer (whole stacks)." },
	{ "ember_bpf_calls_total", METRIC_COUNTER,
	  "bpf() system calls emberd made after start-up (the kernel skips the sampling program "
	  "on a CPU while one runs)." },
	{ "ember_bpf_calls_per_second", METRIC_GAUGE,
	  "bpf() system calls per second over the last 10 s or so." },
	{ "ember_sampler_drain_seconds_total", METRIC_COUNTER, "Time spent draining." },
	{ "ember_sampler_cpus", METRIC_GAUGE, "CPUs the sampler is attached to." },
	{ "ember_symbolized_frames_total", METRIC_COUNTER, "Frames symbolized, by kind." },
	{ "ember_unresolved_frames_total", METRIC_COUNTER,
	  "Frames without a symbol, by kind (kernel, user)." },
	{ "ember_unresolved_frames_ratio", METRIC_GAUGE,
	  "Share of frames without a symbol since start, by kind." },
	{ "ember_symbol_cache_entries", METRIC_GAUGE,
	  "Entries in the symbolizer caches (pid, elf, elf_symbols, perfmap_symbols, kallsyms, "
	  "kernel_functions)." },
	{ "ember_symbol_cache_lookups_total", METRIC_COUNTER,
	  "Symbolizer cache lookups, by cache and result (hit, miss)." },
	{ "ember_symbol_cache_hit_ratio", METRIC_GAUGE, "Symbolizer cache hit rate since start." },
	{ "ember_symbol_cache_evictions_total", METRIC_COUNTER,
	  "Symbolizer cache entries dropped by their bound." },
	{ "ember_symbol_cache_bytes", METRIC_GAUGE, "Memory held by the symbolizer caches." },
	{ "ember_mapped_files_opened_total", METRIC_COUNTER,
	  "Files profiled processes map, opened by the one safe way, by route" },
	{ "ember_mapped_files_refused_total", METRIC_COUNTER,
	  "Files profiled processes map, refused by reason (symlink, not regular, another inode...)" },
	{ "ember_elf_refused_total", METRIC_COUNTER,
	  "ELF files not read, by reason (too_big: a bound; short_read: shrank; debug_file: "
	  "a debug file not root's, behind a link, or of another CRC)" },
	{ "ember_perfmap_skipped_total", METRIC_COUNTER,
	  "Perf-map files not read, by reason (missing, not_regular, too_big, owner, error)." },
	{ "ember_perfmap_bad_lines_total", METRIC_COUNTER, "Malformed perf-map lines skipped." },
	{ "ember_symbolizer_process_events_total", METRIC_COUNTER,
	  "Processes whose cached state was dropped: pid reused, exec, gone; maps read errors." },
	{ "ember_store_bytes", METRIC_GAUGE, "Memory held by the sample store." },
	{ "ember_store_max_bytes", METRIC_GAUGE, "The store's memory limit." },
	{ "ember_store_retention_seconds", METRIC_GAUGE, "The store's retention by time." },
	{ "ember_store_span_seconds", METRIC_GAUGE,
	  "Time between the oldest and the newest sample held." },
	{ "ember_store_oldest_sample_timestamp_seconds", METRIC_GAUGE,
	  "Unix time of the oldest sample held." },
	{ "ember_store_samples", METRIC_GAUGE, "Samples held by the store." },
	{ "ember_store_interned", METRIC_GAUGE, "Interned frames, stacks and contexts." },
	{ "ember_store_appended_samples_total", METRIC_COUNTER, "Samples appended to the store." },
	{ "ember_store_evicted_samples_total", METRIC_COUNTER,
	  "Samples evicted from the store, by reason (time, memory)." },
	{ "ember_store_dropped_samples_total", METRIC_COUNTER,
	  "Samples that could not be stored (out of memory)." },
	{ "ember_last_drain_age_seconds", METRIC_GAUGE,
	  "Seconds since the drain thread last drained the samples (-1: never)." },
	{ "ember_newest_sample_age_seconds", METRIC_GAUGE,
	  "Seconds since the newest sample drained was taken (-1: none yet)." },
	{ "ember_stalled", METRIC_GAUGE,
	  "1 while /healthz answers 503: the drain stalled or samples stopped arriving." },
	{ "ember_store_escaped_comms_total", METRIC_COUNTER,
	  "Samples whose process name held ';' or control bytes, escaped as a frame name." },
	{ "ember_heap_in_use_bytes", METRIC_GAUGE,
	  "Heap bytes allocated and in use (glibc mallinfo2: every arena, mmapped chunks too)." },
	{ "ember_heap_free_bytes", METRIC_GAUGE,
	  "Heap bytes freed but kept by malloc (resident until trimmed)." },
	{ "ember_heap_trims_total", METRIC_COUNTER,
	  "Times the worker gave malloc's free pages back to the kernel (malloc_trim)." },
	{ "ember_heap_trimmed_bytes_total", METRIC_COUNTER,
	  "Resident bytes those trims gave back." },
	{ "ember_http_requests_total", METRIC_COUNTER, "HTTP requests, by endpoint and status." },
	{ "ember_http_response_bytes_total", METRIC_COUNTER,
	  "HTTP response body bytes sent (responses taken to the end)." },
	{ "ember_http_responses_aborted_total", METRIC_COUNTER,
	  "HTTP responses the client did not take to the end." },
	{ "ember_http_connections", METRIC_GAUGE,
	  "HTTP connections, by state (open: all of them; busy: serving a request)." },
	{ "ember_http_connections_closed_total", METRIC_COUNTER,
	  "HTTP connections closed by emberd, by reason (timeout: no whole request within "
	  "http.request_timeout; pressure: idle when the connection limits were reached)." },
	{ "ember_http_renders", METRIC_GAUGE,
	  "Renders now, by state (running, queued, waiting: for the clock, pprof's wait=1)." },
	{ "ember_http_renders_total", METRIC_COUNTER, "Renders started." },
	{ "ember_http_renders_cancelled_total", METRIC_COUNTER,
	  "Renders stopped or dropped because their client had gone." },
	{ "ember_http_rejected_total", METRIC_COUNTER,
	  "Requests answered 503 by a bound, by reason (renders: render queue full; memory: "
	  "http.response_memory in use; connections: beyond the connection limits; stopping)." },
	{ "ember_http_response_memory_bytes", METRIC_GAUGE,
	  "Memory of response bodies: being rendered, cached or sent." },
	{ "ember_http_response_memory_max_bytes", METRIC_GAUGE,
	  "The bound on it (http.response_memory)." },
	{ "ember_bpf_run_time_seconds_total", METRIC_COUNTER,
	  "CPU time spent in ember's BPF programs (kernel.bpf_stats_enabled=1)." },
	{ "ember_bpf_runs_total", METRIC_COUNTER, "Runs of ember's BPF programs." },
	{ "ember_unwind_rows", METRIC_GAUGE,
	  "Rows of the unwind tables the BPF walker reads, by state (used, capacity)." },
	{ "ember_unwind_bytes", METRIC_GAUGE, "Kernel memory of the unwind tables' rows array." },
	{ "ember_unwind_tables", METRIC_GAUGE,
	  "Files with unwind tables (rows), or known to have none (empty: frame pointers)." },
	{ "ember_unwind_processes", METRIC_GAUGE,
	  "Processes the walker knows (listed), or waiting for their tables (pending)." },
	{ "ember_unwind_builds_total", METRIC_COUNTER, "Unwind tables compiled from CFI." },
	{ "ember_debuginfod_requests_total", METRIC_COUNTER,
	  "Debug files asked of debuginfod (DEBUGINFOD_URLS), by result: fetched, cached, not_found, timeout, error, skipped (backing off)." },
	{ "ember_debuginfod_fetched_bytes_total", METRIC_COUNTER, "Bytes of debug files fetched." },
	{ "ember_debuginfod_evictions_total", METRIC_COUNTER,
	  "Debug files removed from the cache folder to keep it under symbols.debuginfod_cache_size." },
	{ "ember_debuginfod_cache_bytes", METRIC_GAUGE, "Bytes of the debug files in the cache folder." },
	{ "ember_debuginfod_fetch_seconds_total", METRIC_COUNTER, "Worker time spent fetching." },
	{ "ember_user_walk_stops_total", METRIC_COUNTER,
	  "User stack walks cut short ([truncated]), by why: no_table, no_row, no_rule, unmapped, unreadable, depth, loop, other." },
	{ "ember_process_tracker_processes", METRIC_GAUGE,
	  "Processes whose mappings the process tracker holds." },
	{ "ember_process_tracker_mappings", METRIC_GAUGE, "Mappings it holds, all processes." },
	{ "ember_process_tracker_memory_bytes", METRIC_GAUGE, "Their memory." },
	{ "ember_process_tracker_reads_total", METRIC_COUNTER,
	  "Mappings read, one per event (exec, first sample, refresh), by way (procmap_query, maps_text)." },
	{ "ember_process_tracker_events_total", METRIC_COUNTER,
	  "Process tracker events: event, reused (a read shared), stale (gone: the last read used), read_error, exit, swept, not_kept." },
	{ "ember_unwind_build_seconds_total", METRIC_COUNTER, "Time spent compiling them." },
	{ "ember_python_processes", METRIC_GAUGE,
	  "CPython processes whose Python frames are read, or of a version ember does not know "
	  "(unsupported: native frames only)." },
	{ "ember_python_samples_total", METRIC_COUNTER,
	  "Samples of CPython processes: with Python frames, or of an unsupported version." },
	{ "ember_python_frames_total", METRIC_COUNTER,
	  "Python frames named, or unknown (code object gone, changed or unreadable)." },
	{ "ember_python_events_total", METRIC_COUNTER,
	  "Python frame events: processes examined and failures, name records and losses, code "
	  "objects read, cache evictions, stacks aligned, walks without a thread state, cut short "
	  "or stopped at a bad frame, thread searches." },
	{ "ember_unwind_events_total", METRIC_COUNTER,
	  "Unwind table events: build failures, tables shared by build-id, evictions, tables too "
	  "big, processes not listed (map full), mappings past the list's size, maps errors." },
};

struct metrics *ember_metrics__new(void)
{
	struct metrics *m = metrics__new();
	const char *const version[] = { "version", EMBER_VERSION, NULL };
	size_t i;
	int f;

	if (!m)
		return NULL;
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (metrics__family(m, families[i].name, families[i].type, families[i].help, NULL,
				    0) < 0)
			goto fail;
	f = metrics__family(m, "ember_http_request_duration_seconds", METRIC_HISTOGRAM,
			    "HTTP request latency, by endpoint.", latency_buckets,
			    sizeof(latency_buckets) / sizeof(latency_buckets[0]));
	if (f < 0)
		goto fail;
	f = metrics__family(m, "ember_build_info", METRIC_GAUGE, "", NULL, 0);
	if (f < 0 || metrics__set(m, f, version, 1) < 0)
		goto fail;
	return m;
fail:
	metrics__free(m);
	errno = ENOMEM;
	return NULL;
}

/* The id of a declared family (declaring is idempotent); -errno if it was never declared. */
static int fam(struct metrics *m, const char *name, enum metric_type type)
{
	return metrics__family(m, name, type, "", NULL, 0);
}

static void set1(struct metrics *m, const char *name, enum metric_type type, const char *k,
		 const char *v, double value)
{
	const char *const labels[] = { k, v, NULL };
	int f = fam(m, name, type);

	if (f >= 0)
		(void)metrics__set(m, f, k ? labels : NULL, value);
}

static void set2(struct metrics *m, const char *name, const char *k1, const char *v1,
		 const char *k2, const char *v2, double value)
{
	const char *const labels[] = { k1, v1, k2, v2, NULL };
	int f = fam(m, name, METRIC_COUNTER);

	if (f >= 0)
		(void)metrics__set(m, f, labels, value);
}

void ember_metrics_store(struct metrics *m, const struct store_stats *st)
{
	set1(m, "ember_store_bytes", METRIC_GAUGE, NULL, NULL, (double)st->bytes);
	set1(m, "ember_store_max_bytes", METRIC_GAUGE, NULL, NULL, (double)st->max_bytes);
	set1(m, "ember_store_retention_seconds", METRIC_GAUGE, NULL, NULL,
	     (double)st->retention_s);
	set1(m, "ember_store_samples", METRIC_GAUGE, NULL, NULL, (double)st->samples);
	set1(m, "ember_store_span_seconds", METRIC_GAUGE, NULL, NULL,
	     st->samples ? (double)(st->newest_ns - st->oldest_ns) / 1e9 : 0);
	if (st->oldest_ns)
		set1(m, "ember_store_oldest_sample_timestamp_seconds", METRIC_GAUGE, NULL, NULL,
		     (double)st->oldest_ns / 1e9);
	set1(m, "ember_store_interned", METRIC_GAUGE, "kind", "frames", (double)st->frames);
	set1(m, "ember_store_interned", METRIC_GAUGE, "kind", "stacks", (double)st->stacks);
	set1(m, "ember_store_interned", METRIC_GAUGE, "kind", "contexts", (double)st->contexts);
	set1(m, "ember_store_appended_samples_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->appended);
	set1(m, "ember_store_evicted_samples_total", METRIC_COUNTER, "reason", "time",
	     (double)st->evicted_time);
	set1(m, "ember_store_evicted_samples_total", METRIC_COUNTER, "reason", "memory",
	     (double)st->evicted_memory);
	set1(m, "ember_store_dropped_samples_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->dropped);
	set1(m, "ember_store_escaped_comms_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->comms_escaped);
}

static void cache(struct metrics *m, const char *name, uint64_t entries, uint64_t hits,
		  uint64_t misses, uint64_t evictions)
{
	set1(m, "ember_symbol_cache_entries", METRIC_GAUGE, "cache", name, (double)entries);
	set2(m, "ember_symbol_cache_lookups_total", "cache", name, "result", "hit", (double)hits);
	set2(m, "ember_symbol_cache_lookups_total", "cache", name, "result", "miss",
	     (double)misses);
	set1(m, "ember_symbol_cache_hit_ratio", METRIC_GAUGE, "cache", name,
	     hits + misses ? (double)hits / (double)(hits + misses) : 0);
	set1(m, "ember_symbol_cache_evictions_total", METRIC_COUNTER, "cache", name,
	     (double)evictions);
}

void ember_metrics_procs(struct metrics *m, const struct proc_tracker_stats *st)
{
	set1(m, "ember_process_tracker_processes", METRIC_GAUGE, NULL, NULL, (double)st->procs);
	set1(m, "ember_process_tracker_mappings", METRIC_GAUGE, NULL, NULL, (double)st->mappings);
	set1(m, "ember_process_tracker_memory_bytes", METRIC_GAUGE, NULL, NULL,
	     (double)st->mem_bytes);
	set1(m, "ember_process_tracker_reads_total", METRIC_COUNTER, "way", "procmap_query",
	     (double)st->query_reads);
	set1(m, "ember_process_tracker_reads_total", METRIC_COUNTER, "way", "maps_text",
	     (double)st->text_reads);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "event",
	     (double)st->events);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "reused",
	     (double)st->reused);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "stale",
	     (double)st->stale_used);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "read_error",
	     (double)st->read_errors);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "exec",
	     (double)st->execs);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "exec_gone",
	     (double)st->execs_gone);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "fork",
	     (double)st->forks);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "fork_gone",
	     (double)st->forks_gone);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "fork_copy",
	     (double)st->fork_copies);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "fork_list",
	     (double)st->fork_lists);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "exit",
	     (double)st->exits);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "swept",
	     (double)st->swept);
	set1(m, "ember_process_tracker_events_total", METRIC_COUNTER, "kind", "not_kept",
	     (double)st->not_kept);
}

void ember_metrics_unwind(struct metrics *m, const struct unwind_stats *st)
{
	set1(m, "ember_unwind_rows", METRIC_GAUGE, "state", "used", (double)st->rows_used);
	set1(m, "ember_unwind_rows", METRIC_GAUGE, "state", "capacity",
	     (double)st->rows_capacity);
	set1(m, "ember_unwind_bytes", METRIC_GAUGE, NULL, NULL, (double)st->bytes);
	set1(m, "ember_unwind_tables", METRIC_GAUGE, "kind", "rows", (double)st->tables);
	set1(m, "ember_unwind_tables", METRIC_GAUGE, "kind", "empty", (double)st->tables_empty);
	set1(m, "ember_unwind_processes", METRIC_GAUGE, "state", "listed", (double)st->procs);
	set1(m, "ember_unwind_processes", METRIC_GAUGE, "state", "pending",
	     (double)st->procs_pending);
	set1(m, "ember_unwind_builds_total", METRIC_COUNTER, NULL, NULL, (double)st->builds);
	set1(m, "ember_unwind_build_seconds_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->build_ns / 1e9);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "build_failure",
	     (double)st->build_failures);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "shared_by_build_id",
	     (double)st->build_shared);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "eviction",
	     (double)st->evictions);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "refused",
	     (double)st->refused);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "too_big",
	     (double)st->too_big);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "process_dropped",
	     (double)st->procs_dropped);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "maps_overflow",
	     (double)st->maps_overflow);
	set1(m, "ember_unwind_events_total", METRIC_COUNTER, "event", "maps_error",
	     (double)st->maps_errors);
}

/* The exporters' counters: ember_export_*{exporter="otlp"|"pyroscope"}. */
static void ember_metrics_export(struct metrics *m, const struct exporter_stats *st)
{
	static const char *const names[EXPORTER_KINDS] = { "otlp", "pyroscope" };
	static const struct {
		const char *name, *help;
		enum metric_type type;
	} fams[] = {
		{ "ember_export_requests_total", "Requests the receiver accepted (2xx)",
		  METRIC_COUNTER },
		{ "ember_export_samples_total", "Samples in accepted requests", METRIC_COUNTER },
		{ "ember_export_bytes_total", "Bytes on the wire (bodies) of accepted requests",
		  METRIC_COUNTER },
		{ "ember_export_failures_total", "Attempts that failed, by reason", METRIC_COUNTER },
		{ "ember_export_queued_batches", "Batches waiting in the delivery queue",
		  METRIC_GAUGE },
		{ "ember_export_queued_bytes", "Bytes waiting in the delivery queue", METRIC_GAUGE },
		{ "ember_export_dropped_samples_total", "Samples dropped (queue full, rejected)",
		  METRIC_COUNTER },
		{ "ember_export_last_success_seconds", "Unix time of the last accepted request",
		  METRIC_GAUGE },
		{ "ember_export_retries_total", "Attempts retried", METRIC_COUNTER },
	};
	int fam[9], k, x;

	for (k = 0; k < 9; k++)
		fam[k] = metrics__family(m, fams[k].name, fams[k].type, fams[k].help, NULL, 0);
	for (k = 0; k < EXPORTER_KINDS; k++) {
		const char *l[] = { "exporter", names[k], NULL, NULL, NULL };
		const struct exporter_stats *e = &st[k];

		if (!e->enabled)
			continue;
		(void)metrics__set(m, fam[0], l, (double)e->requests);
		(void)metrics__set(m, fam[1], l, (double)e->samples);
		(void)metrics__set(m, fam[2], l, (double)e->bytes);
		for (x = 0; x < EXPORT_FAILS; x++) {
			l[2] = "reason";
			l[3] = exporter_fail_names[x];
			(void)metrics__set(m, fam[3], l, (double)e->failed[x]);
		}
		l[2] = NULL;
		(void)metrics__set(m, fam[4], l, (double)e->queued);
		(void)metrics__set(m, fam[5], l, (double)e->queued_bytes);
		(void)metrics__set(m, fam[6], l, (double)e->dropped_samples);
		(void)metrics__set(m, fam[7], l, (double)e->last_success_ns / 1e9);
		(void)metrics__set(m, fam[8], l, (double)e->retries);
	}
}

void ember_metrics_python(struct metrics *m, const struct python_stats *st)
{
	static const struct {
		const char *event;
		size_t off;
	} ev[] = {
		{ "detection", offsetof(struct python_stats, detections) },
		{ "detect_error", offsetof(struct python_stats, detect_errors) },
		{ "process_dropped", offsetof(struct python_stats, procs_dropped) },
		{ "name_record", offsetof(struct python_stats, names) },
		{ "name_drop", offsetof(struct python_stats, bpf.name_drops) },
		{ "code_read", offsetof(struct python_stats, code_reads) },
		{ "code_eviction", offsetof(struct python_stats, code_evictions) },
		{ "merged_aligned", offsetof(struct python_stats, merged_aligned) },
		{ "no_thread", offsetof(struct python_stats, bpf.no_thread) },
		{ "walk_truncated", offsetof(struct python_stats, bpf.truncated) },
		{ "bad_frame", offsetof(struct python_stats, bpf.bad_frames) },
		{ "thread_search", offsetof(struct python_stats, bpf.searches) },
	};
	size_t i;

	set1(m, "ember_python_processes", METRIC_GAUGE, "state", "read", (double)st->procs);
	set1(m, "ember_python_processes", METRIC_GAUGE, "state", "unsupported",
	     (double)st->procs_unsupported);
	set1(m, "ember_python_samples_total", METRIC_COUNTER, "kind", "python",
	     (double)st->samples);
	set1(m, "ember_python_samples_total", METRIC_COUNTER, "kind", "unsupported",
	     (double)st->samples_unsupported);
	set1(m, "ember_python_frames_total", METRIC_COUNTER, "kind", "named", (double)st->frames);
	set1(m, "ember_python_frames_total", METRIC_COUNTER, "kind", "unknown",
	     (double)st->frames_unknown);
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		uint64_t v;

		memcpy(&v, (const char *)st + ev[i].off, sizeof(v));
		set1(m, "ember_python_events_total", METRIC_COUNTER, "event", ev[i].event,
		     (double)v);
	}
}

static void ember_metrics_mapfiles(struct metrics *m, const struct mapfile_stats *f)
{
	int i;

	set1(m, "ember_mapped_files_opened_total", METRIC_COUNTER, "via", "map_files",
	     (double)f->via_map_files);
	set1(m, "ember_mapped_files_opened_total", METRIC_COUNTER, "via", "root",
	     (double)f->via_root);
	for (i = 0; i < MAPFILE__NR; i++)
		set1(m, "ember_mapped_files_refused_total", METRIC_COUNTER, "reason",
		     mapfile_refusal_name(i), (double)f->refused[i]);
}

void ember_metrics_symbolizer(struct metrics *m, const struct symbolizer_stats *st)
{
	set1(m, "ember_symbolized_frames_total", METRIC_COUNTER, "kind", "kernel",
	     (double)st->kernel_frames);
	set1(m, "ember_symbolized_frames_total", METRIC_COUNTER, "kind", "user",
	     (double)st->user_frames);
	set1(m, "ember_unresolved_frames_total", METRIC_COUNTER, "kind", "kernel",
	     (double)st->kernel_unresolved);
	set1(m, "ember_unresolved_frames_total", METRIC_COUNTER, "kind", "user",
	     (double)st->user_unresolved);
	set1(m, "ember_unresolved_frames_ratio", METRIC_GAUGE, "kind", "kernel",
	     st->kernel_frames ? (double)st->kernel_unresolved / (double)st->kernel_frames : 0);
	set1(m, "ember_unresolved_frames_ratio", METRIC_GAUGE, "kind", "user",
	     st->user_frames ? (double)st->user_unresolved / (double)st->user_frames : 0);
	cache(m, "pid", st->pids_cached, st->pid_hits, st->pid_misses, st->pid_evictions);
	cache(m, "elf", st->elfs_cached, st->elf_hits + st->elf_buildid_hits, st->elf_misses,
	      st->elf_evictions);
	set1(m, "ember_symbol_cache_entries", METRIC_GAUGE, "cache", "elf_symbols",
	     (double)st->elf_symbols);
	set1(m, "ember_symbol_cache_entries", METRIC_GAUGE, "cache", "perfmap_symbols",
	     (double)st->perfmap_symbols);
	set1(m, "ember_symbol_cache_entries", METRIC_GAUGE, "cache", "kallsyms",
	     (double)st->kallsyms_symbols);
	set1(m, "ember_symbol_cache_entries", METRIC_GAUGE, "cache", "kernel_functions",
	     (double)st->kernel_functions);
	set1(m, "ember_symbol_cache_bytes", METRIC_GAUGE, NULL, NULL, (double)st->mem_bytes);
	set1(m, "ember_elf_refused_total", METRIC_COUNTER, "reason", "too_big",
	     (double)st->elf_too_big);
	set1(m, "ember_elf_refused_total", METRIC_COUNTER, "reason", "short_read",
	     (double)st->elf_short_reads);
	set1(m, "ember_elf_refused_total", METRIC_COUNTER, "reason", "debug_file",
	     (double)st->elf_debug_refused);
	set1(m, "ember_elf_refused_total", METRIC_COUNTER, "reason", "changed",
	     (double)st->elf_changed);
	set1(m, "ember_elf_refused_total", METRIC_COUNTER, "reason", "memory",
	     (double)st->elf_mem_refused);
	if (st->debuginfod) {
		static const struct {
			const char *result;
			size_t off;
		} fetches[] = {
			{ "fetched", offsetof(struct dbgfetch_stats, fetches) },
			{ "cached", offsetof(struct dbgfetch_stats, cached) },
			{ "not_found", offsetof(struct dbgfetch_stats, not_found) },
			{ "timeout", offsetof(struct dbgfetch_stats, timeouts) },
			{ "error", offsetof(struct dbgfetch_stats, errors) },
			{ "skipped", offsetof(struct dbgfetch_stats, skipped) },
		};
		size_t k;

		for (k = 0; k < sizeof(fetches) / sizeof(fetches[0]); k++)
			set1(m, "ember_debuginfod_requests_total", METRIC_COUNTER, "result",
			     fetches[k].result,
			     (double)*(const uint64_t *)((const char *)&st->fetch + fetches[k].off));
		set1(m, "ember_debuginfod_fetched_bytes_total", METRIC_COUNTER, NULL, NULL,
		     (double)st->fetch.fetched_bytes);
		set1(m, "ember_debuginfod_evictions_total", METRIC_COUNTER, NULL, NULL,
		     (double)st->fetch.evictions);
		set1(m, "ember_debuginfod_cache_bytes", METRIC_GAUGE, NULL, NULL,
		     (double)st->fetch.cache_bytes);
		set1(m, "ember_debuginfod_fetch_seconds_total", METRIC_COUNTER, NULL, NULL,
		     (double)st->fetch.fetch_ns / 1e9);
	}
	set1(m, "ember_perfmap_skipped_total", METRIC_COUNTER, "reason", "missing",
	     (double)st->perfmap_skip_missing);
	set1(m, "ember_perfmap_skipped_total", METRIC_COUNTER, "reason", "not_regular",
	     (double)st->perfmap_skip_not_regular);
	set1(m, "ember_perfmap_skipped_total", METRIC_COUNTER, "reason", "too_big",
	     (double)st->perfmap_skip_too_big);
	set1(m, "ember_perfmap_skipped_total", METRIC_COUNTER, "reason", "owner",
	     (double)st->perfmap_skip_owner);
	set1(m, "ember_perfmap_skipped_total", METRIC_COUNTER, "reason", "error",
	     (double)st->perfmap_skip_error);
	set1(m, "ember_perfmap_bad_lines_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->perfmap_bad_lines);
	set1(m, "ember_symbolizer_process_events_total", METRIC_COUNTER, "event", "pid_reuse",
	     (double)st->pid_reuses);
	set1(m, "ember_symbolizer_process_events_total", METRIC_COUNTER, "event", "exec",
	     (double)st->pid_execs);
	set1(m, "ember_symbolizer_process_events_total", METRIC_COUNTER, "event", "gone",
	     (double)st->pid_gone);
	set1(m, "ember_symbolizer_process_events_total", METRIC_COUNTER, "event", "maps_error",
	     (double)st->maps_errors);
}

void ember_metrics_sampler(struct metrics *m, const struct sampler_stats *st)
{
	static const struct {
		const char *stack, *error;
		size_t off;
	} stack_errors[] = {
		{ "kernel", "efault", offsetof(struct sampler_stats, kern_efault) },
		{ "user", "efault", offsetof(struct sampler_stats, user_efault) },
		{ "kernel", "other", offsetof(struct sampler_stats, kern_other) },
		{ "user", "other", offsetof(struct sampler_stats, user_other) },
	};
	static const struct {
		const char *kind;
		size_t off;
	} events[] = {
		{ "ringbuf_drops", offsetof(struct sampler_stats, ringbuf_drops) },
		{ "bad_records", offsetof(struct sampler_stats, bad_records) },
		{ "pending_drops", offsetof(struct sampler_stats, pending_drops) },
		{ "execs", offsetof(struct sampler_stats, execs) },
		{ "exec_drops", offsetof(struct sampler_stats, exec_drops) },
		{ "exits", offsetof(struct sampler_stats, exits) },
		{ "exit_drops", offsetof(struct sampler_stats, exit_drops) },
		{ "forks", offsetof(struct sampler_stats, forks) },
		{ "fork_drops", offsetof(struct sampler_stats, fork_drops) },
		{ "lost_in_bpf", offsetof(struct sampler_stats, lost_in_bpf) },
		{ "user_fp_walks", offsetof(struct sampler_stats, user_fp_walks) },
		{ "user_truncated", offsetof(struct sampler_stats, user_truncated) },
	};
	size_t i;

#define FIELD(off) ((double)*(const uint64_t *)((const char *)st + (off)))
	set1(m, "ember_samples_total", METRIC_COUNTER, NULL, NULL, (double)st->samples);
	set1(m, "ember_idle_samples_total", METRIC_COUNTER, NULL, NULL, (double)st->idle);
	set1(m, "ember_delivered_samples_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->delivered);
	set1(m, "ember_lost_samples_total", METRIC_COUNTER, NULL, NULL, (double)st->lost);
	for (i = 0; i < sizeof(stack_errors) / sizeof(stack_errors[0]); i++)
		set2(m, "ember_stack_errors_total", "stack", stack_errors[i].stack, "error",
		     stack_errors[i].error, FIELD(stack_errors[i].off));
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		set1(m, "ember_sampler_events_total", METRIC_COUNTER, "kind", events[i].kind,
		     FIELD(events[i].off));
#undef FIELD
	for (i = 0; i < SAMPLER_STOP_REASONS; i++)
		set1(m, "ember_user_walk_stops_total", METRIC_COUNTER, "reason",
		     sampler_stop_name((unsigned int)i), (double)st->user_stops[i]);
	set1(m, "ember_sampler_drains_total", METRIC_COUNTER, NULL, NULL, (double)st->drains);
	set1(m, "ember_sampler_drain_seconds_total", METRIC_COUNTER, NULL, NULL,
	     (double)st->drain_ns_total / 1e9);
	set1(m, "ember_sampler_cpus", METRIC_GAUGE, NULL, NULL, (double)st->cpus_attached);
	set1(m, "ember_ring_bytes_total", METRIC_COUNTER, NULL, NULL, (double)st->ring_bytes);
	set1(m, "ember_bpf_calls_total", METRIC_COUNTER, NULL, NULL, (double)st->bpf_calls);
	set1(m, "ember_bpf_calls_per_second", METRIC_GAUGE, NULL, NULL, st->bpf_calls_per_s);
	set1(m, "ember_bpf_run_time_seconds_total", METRIC_COUNTER, "prog", "profiler",
	     (double)st->prog_run_ns / 1e9);
	set1(m, "ember_bpf_runs_total", METRIC_COUNTER, "prog", "profiler",
	     (double)st->prog_run_cnt);
}

/* Copies the store's per-CPU tallies into the registry (at scrape time). */
static void collect_cpu_samples(struct metrics *m, struct store *store)
{
	uint64_t counts[STORE_MAX_CPUS], unknown;
	size_t n = store__cpu_samples(store, counts, STORE_MAX_CPUS, &unknown), cpu;
	char c[16];

	if (n > STORE_MAX_CPUS)
		n = STORE_MAX_CPUS;
	for (cpu = 0; cpu < n; cpu++) {
		snprintf(c, sizeof(c), "%zu", cpu);
		set1(m, "ember_cpu_samples_total", METRIC_COUNTER, "cpu", c, (double)counts[cpu]);
	}
	if (unknown)
		set1(m, "ember_cpu_samples_total", METRIC_COUNTER, "cpu", "unknown",
		     (double)unknown);
}

/* The bounds of the HTTP server at work (http.h: struct http_load_stats). */
static void collect_http_load(struct metrics *m, struct http_server *srv)
{
	static const char *const rejected[] = { "renders", "memory", "connections", "stopping" };
	struct http_load_stats l;
	const uint64_t *rej[4];
	size_t i;

	http_server__load_stats(srv, &l);
	rej[0] = &l.rejected_renders;
	rej[1] = &l.rejected_memory;
	rej[2] = &l.rejected_connections;
	rej[3] = &l.rejected_stopping;
	set1(m, "ember_http_responses_aborted_total", METRIC_COUNTER, NULL, NULL,
	     (double)l.responses_aborted);
	set1(m, "ember_http_connections", METRIC_GAUGE, "state", "open", (double)l.connections);
	set1(m, "ember_http_connections", METRIC_GAUGE, "state", "busy",
	     (double)l.busy_connections);
	set1(m, "ember_http_connections_closed_total", METRIC_COUNTER, "reason", "timeout",
	     (double)l.evicted_timeout);
	set1(m, "ember_http_connections_closed_total", METRIC_COUNTER, "reason", "pressure",
	     (double)l.evicted_pressure);
	set1(m, "ember_http_renders", METRIC_GAUGE, "state", "running", (double)l.renders_running);
	set1(m, "ember_http_renders", METRIC_GAUGE, "state", "queued", (double)l.renders_queued);
	set1(m, "ember_http_renders", METRIC_GAUGE, "state", "waiting", (double)l.renders_waiting);
	set1(m, "ember_http_renders_total", METRIC_COUNTER, NULL, NULL, (double)l.renders);
	set1(m, "ember_http_renders_cancelled_total", METRIC_COUNTER, NULL, NULL,
	     (double)l.renders_cancelled);
	for (i = 0; i < 4; i++)
		set1(m, "ember_http_rejected_total", METRIC_COUNTER, "reason", rejected[i],
		     (double)*rej[i]);
	set1(m, "ember_http_response_memory_bytes", METRIC_GAUGE, NULL, NULL,
	     (double)l.response_bytes);
	set1(m, "ember_http_response_memory_max_bytes", METRIC_GAUGE, NULL, NULL,
	     (double)l.response_memory_bytes);
}

/* The server's observer: per response, the request counters and the latency histogram. */
static void observe(void *ctx, const char *route, int status, double seconds)
{
	struct http_export *x = ctx;
	struct metrics *m = x->m;
	char st[8];
	int f;

	snprintf(st, sizeof(st), "%d", status);
	f = fam(m, "ember_http_requests_total", METRIC_COUNTER);
	if (f >= 0) {
		const char *const labels[] = { "endpoint", route, "status", st, NULL };

		(void)metrics__add(m, f, labels, 1);
	}
	f = metrics__family(m, "ember_http_request_duration_seconds", METRIC_HISTOGRAM, "",
			    latency_buckets, sizeof(latency_buckets) / sizeof(latency_buckets[0]));
	if (f >= 0) {
		const char *const labels[] = { "endpoint", route, NULL };

		(void)metrics__observe(m, f, labels, seconds < 0 ? 0 : seconds);
	}
}

/* ------------------------------------------------------------------------------------------ */
/* GET /debug/pprof/profile */

struct pprof_params {
	uint64_t seconds;	/* 0: not given */
	bool wait;
	bool label_pid, label_tid;	/* labels=pid,tid: per sample (live store only) */
};

static int pprof_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct pprof_params *pp = ctx;
	char *end;
	unsigned long long v;

	if (!strcmp(key, "seconds")) {
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno || end == value || *end || value[0] == '-' || v == 0) {
			snprintf(err->param, sizeof(err->param), "%s", key);
			err->reason = "seconds must be a whole number of seconds >= 1";
			err->status = 400;
			return -EINVAL;
		}
		pp->seconds = v;
		return 1;
	}
	if (!strcmp(key, "labels")) {
		const char *t = value;

		pp->label_pid = pp->label_tid = false;
		while (*t) {
			size_t n = strcspn(t, ",");

			if (n == 3 && !strncmp(t, "pid", 3)) {
				pp->label_pid = true;
			} else if (n == 3 && !strncmp(t, "tid", 3)) {
				pp->label_tid = true;
			} else if (n != 0) {
				snprintf(err->param, sizeof(err->param), "%s", key);
				err->reason = "labels takes a comma-separated list of pid, tid";
				err->status = 400;
				return -EINVAL;
			}
			t += n + (t[n] == ',');
		}
		return 1;
	}
	if (!strcmp(key, "wait")) {
		if (strcmp(value, "0") && strcmp(value, "1")) {
			snprintf(err->param, sizeof(err->param), "%s", key);
			err->reason = "wait must be 0 or 1";
			err->status = 400;
			return -EINVAL;
		}
		pp->wait = value[0] == '1';
		return 1;
	}
	return 0;
}

/* A blocking capture (wait=1) between its two calls: the window, and its place in the count. */
struct pprof_wait {
	struct http_export *x;
	int64_t from_ns, to_ns;
};

static void pprof_wait_free(void *p)
{
	struct pprof_wait *pw = p;

	if (pw)
		atomic_fetch_sub(&pw->x->waiters, 1);
	free(pw);
}

/* Most samples a per-sample-labels request walks (under the store's lock). */
#define EXPORT_MAX_LABELLED_SAMPLES (2u << 20)

struct labelled_ctx {
	struct pprof_writer *w;
	const struct pprof_params *pp;
	size_t seen;
	int err;
};

/* Under the store's lock: only copies into the writer. */
static int labelled_sample(const struct store_sample_view *v, void *ctx)
{
	struct labelled_ctx *c = ctx;
	struct pprof_labels lb = { .pid = c->pp->label_pid ? (int64_t)v->pid : -1,
				   .tid = c->pp->label_tid ? (int64_t)v->tid : -1,
				   .comm = v->comm };

	if (++c->seen > EXPORT_MAX_LABELLED_SAMPLES) {
		c->err = -E2BIG;
		return 1;
	}
	c->err = pprof_writer__add(c->w, v->frames, v->nr_frames, 1, &lb);
	return c->err ? 1 : 0;
}

/* The store's samples of @q, each with its pid and/or tid label, into @w. 0 or -errno. */
static int add_labelled_samples(const struct http_source *src, const struct query_common *q,
				const struct pprof_params *pp, struct pprof_writer *w)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct labelled_ctx c = { .w = w, .pp = pp };
	struct identity_filter idf;
	struct store *store = http_source_store(src, q);
	int r;

	/* the same filter as /api/v1/folded's (http_api.c) */
	if (q->to_ns <= 0 || q->to_ns <= q->from_ns)
		return 0;
	f.from_ns = q->from_ns > 0 ? (uint64_t)q->from_ns : 1;
	f.to_ns = (uint64_t)q->to_ns;
	f.pid = q->pid;
	f.tid = q->tid;
	f.comm_re = q->has_comm ? q->comm_re : NULL;
	f.kernel = q->kernel != QUERY_FLAG_OFF;
	f.user = q->user != QUERY_FLAG_OFF;
	f.include_idle = q->idle == QUERY_FLAG_ON;
	f.root = STORE_ROOT_COMM;
	http_identity_filter(src, q, &f, &idf);
	r = store__foreach_sample(store, &f, EXPORT_MAX_LABELLED_SAMPLES + 1, labelled_sample, &c);
	if (c.err)
		return c.err;
	return r < 0 ? r : 0;
}

static int handle_pprof(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	struct http_export *x = http_request__route_ctx(req);
	const struct http_config *cfg = http_server__config(srv);
	struct store *store = http_server__store(srv);
	struct pprof_params pp = { 0 };
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	struct pprof_writer *w = NULL;
	const char **names = NULL;
	size_t cap = 0, i, k, depth;
	int64_t max_range_ns = (int64_t)cfg->max_range_s * 1000000000LL;
	struct pprof_wait *pw = http_request__state(req);
	int err = 0;

	query_common_init(&q);
	if (http_request__parse(req, &q, (int64_t)EXPORT_DEFAULT_SECONDS * 1000000000LL,
				pprof_param, &pp, resp) < 0)
		goto out; /* 400 already in resp */
	if (pw) {
		/* the call that wait=1 arranged: its window is over, or emberd is stopping and
		 * the profile is what there is until now */
		int64_t now = (int64_t)real_ns();

		q.from_ns = pw->from_ns;
		q.to_ns = now < pw->to_ns ? now : pw->to_ns;
		pp.wait = false;
		pp.seconds = 0;
	}
	if (pp.seconds && (q.has_from || q.has_to)) {
		http_response__error(resp, 400, "seconds", "give either seconds or from/to");
		goto out;
	}
	if (pp.seconds && pp.seconds > (uint64_t)max_range_ns / 1000000000ULL) {
		http_response__error(resp, 413, "seconds", "range exceeds the configured limit");
		goto out;
	}
	if (pp.wait) {
		if (http_server__is_replay(srv)) {
			http_response__error(resp, 400, "wait", "wait=1 needs a live daemon");
			goto out;
		}
		if (!pp.seconds)
			pp.seconds = EXPORT_DEFAULT_SECONDS;
		if (pp.seconds > cfg->max_capture_s) {
			http_response__error(resp, 413, "seconds",
					     "blocking capture longer than max_capture_s");
			goto out;
		}
		if (atomic_fetch_add(&x->waiters, 1) >= EXPORT_MAX_WAITERS) {
			atomic_fetch_sub(&x->waiters, 1);
			http_response__error(resp, 429, "wait",
					     "another blocking capture is running");
			goto out;
		}
		pw = malloc(sizeof(*pw));
		if (!pw) {
			atomic_fetch_sub(&x->waiters, 1);
			err = -ENOMEM;
			goto out;
		}
		pw->x = x;
		pw->from_ns = (int64_t)real_ns();
		pw->to_ns = pw->from_ns + (int64_t)pp.seconds * 1000000000LL;
		/* samples reach the store on the daemon's tick: one more second; no thread is
		 * held meanwhile, and a stop answers at once (the state is freed either way) */
		err =
		    http_request__call_again_at(req, pw->to_ns + 1000000000LL, pw, pprof_wait_free);
		goto out;
	} else if (pp.seconds) {
		q.to_ns = http_request__now_ns(req);
		q.from_ns = q.to_ns - (int64_t)pp.seconds * 1000000000LL;
	}
	/* issue 30: off-CPU events count quanta of [offcpu] quantum_us, wall microseconds */
	w = pprof_writer__new(&(struct pprof_opts){
	    .freq_hz = x->freq_hz,
	    .time_ns = q.from_ns,
	    .duration_ns = q.to_ns - q.from_ns,
	    .period_ns = q.event == QUERY_EVENT_CPU	 ? 0
			 : q.event == QUERY_EVENT_WALL ? 1000
						       : srv->src.offcpu_us * 1000,
	    .sample_type = q.event == QUERY_EVENT_OFFCPU   ? "off_cpu"
			   : q.event == QUERY_EVENT_WALL   ? "wall"
			   : q.event == QUERY_EVENT_WAKEUP ? "wakeup"
			   : q.event == QUERY_EVENT_CHAIN  ? "chain"
							   : NULL });
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	if (pp.label_pid || pp.label_tid) {
		if (q.event == QUERY_EVENT_WALL) {
			http_response__error(resp, 400, "labels",
					     "per-sample labels are not available with event=wall");
			goto out;
		}
		if (!store) {
			http_response__error(resp, 400, "labels",
					     "per-sample labels need a live daemon");
			goto out;
		}
		err = add_labelled_samples(&srv->src, &q, &pp, w);
		if (err == -E2BIG) {
			http_response__error(resp, 413, "labels",
					     "too many samples for per-sample labels; narrow the range");
			err = 0;
			goto out;
		}
		if (!err)
			err = pprof_writer__finish(w, &resp->body);
		if (err)
			goto out;
		goto done;
	}
	st = strtab__new();
	p = st ? http_server__query_profile(srv, &q, st) : NULL;
	if (!p) {
		err = errno == EINVAL || errno == QUERY_ECOMM_LIMIT ? -errno : -ENOMEM;
		goto out;
	}
	/* the root frame is the comm: a label too; pid and tid when the query selects one */
	for (i = 0; i < profile__nr_stacks(p) && !err; i++) {
		const uint32_t *f = profile__stack(p, i, &depth);
		struct pprof_labels lb = { .pid = q.pid, .tid = q.tid, .comm = NULL };

		if (profile__count(p, i) == 0)
			continue;
		if (depth + 1 > cap) {
			const char **nn = realloc(names, (depth + 1) * sizeof(*nn));

			if (!nn) {
				err = -ENOMEM;
				break;
			}
			names = nn;
			cap = depth + 1;
		}
		for (k = 0; k < depth; k++)
			names[k] = strtab__str(st, f[k]);
		if (depth)
			lb.comm = names[0];
		err = pprof_writer__add(w, names, depth, profile__count(p, i), &lb);
	}
	if (!err)
		err = pprof_writer__finish(w, &resp->body);
	if (err)
		goto out;
done:
	resp->content_type = "application/octet-stream";
	resp->cache_control = "no-store";
	resp->no_gzip = true; /* the profile is gzip-compressed already */
	snprintf(resp->disposition, sizeof(resp->disposition),
		 "attachment; filename=\"ember-%" PRId64 ".pb.gz\"", q.from_ns / 1000000000);
out:
	free(names);
	pprof_writer__free(w);
	profile__free(p);
	strtab__free(st);
	query_common_fini(&q);
	return err;
}

/* ------------------------------------------------------------------------------------------ */
/* GET /metrics */

static int handle_metrics(struct http_server *srv, struct http_request *req,
			  struct http_response *resp)
{
	struct http_export *x = http_request__route_ctx(req);
	struct store *store = http_server__store(srv);
	struct metrics *m = x->m;
	struct http_published pub;
	int err;

	if (http_request__parse(req, NULL, 0, NULL, NULL, resp) < 0)
		return 0;
	if (store) {
		struct store_stats st;

		store__stats(store, &st);
		ember_metrics_store(m, &st);
		collect_cpu_samples(m, store);
	}
	/* the main loop's counters, as last published (setting them is not done per tick) */
	if (http_server__published(srv, &pub)) {
		ember_metrics_sampler(m, &pub.sampler);
		ember_metrics_symbolizer(m, &pub.symbols);
		{
			struct mapfile_stats f = pub.symbols.files;

			if (pub.have_unwind)
				mapfile_stats_add(&f, &pub.unwind.files);
			if (pub.have_python)
				mapfile_stats_add(&f, &pub.python.files);
			ember_metrics_mapfiles(m, &f);
		}
		ember_metrics_procs(m, &pub.procs);
		if (pub.have_unwind)
			ember_metrics_unwind(m, &pub.unwind);
		if (pub.have_python)
			ember_metrics_python(m, &pub.python);
		if (pub.have_exporter)
			ember_metrics_export(m, pub.exporters);
	}
	{
		struct heap_stats h;

		heap_stats(&h);
		set1(m, "ember_heap_in_use_bytes", METRIC_GAUGE, NULL, NULL,
		     (double)h.in_use_bytes);
		set1(m, "ember_heap_free_bytes", METRIC_GAUGE, NULL, NULL, (double)h.free_bytes);
		set1(m, "ember_heap_trims_total", METRIC_COUNTER, NULL, NULL, (double)h.trims);
		set1(m, "ember_heap_trimmed_bytes_total", METRIC_COUNTER, NULL, NULL,
		     (double)h.trimmed_bytes);
	}
	if (http_server__liveness(srv)) {
		struct liveness_state ls;

		liveness_check(http_server__liveness(srv), mono_ns(), &ls);
		/* -1: never (no drain, no sample yet) */
		set1(m, "ember_last_drain_age_seconds", METRIC_GAUGE, NULL, NULL,
		     ls.last_drain_age_s);
		set1(m, "ember_newest_sample_age_seconds", METRIC_GAUGE, NULL, NULL,
		     ls.newest_sample_age_s);
		set1(m, "ember_stalled", METRIC_GAUGE, NULL, NULL, ls.stalled ? 1.0 : 0.0);
	}
	set1(m, "ember_http_response_bytes_total", METRIC_COUNTER, NULL, NULL,
	     (double)http_server__bytes_out(srv));
	collect_http_load(m, srv);
	err = metrics__render(m, &resp->body);
	resp->content_type = METRICS_CONTENT_TYPE;
	resp->cache_control = "no-store";
	return err;
}

static void export_free(void *ctx)
{
	struct http_export *x = ctx;

	if (!x)
		return;
	metrics__free(x->m);
	free(x);
}

int http_export__register(struct http_server *srv, uint64_t freq_hz)
{
	struct http_route routes[] = {
		{ "GET", "/debug/pprof/profile", false, handle_pprof, NULL, false },
		{ "GET", "/metrics", false, handle_metrics, NULL,
		  true }, /* answers during a flood */
	};
	struct http_export *x = calloc(1, sizeof(*x));
	size_t i;
	int err;

	if (!x)
		return -ENOMEM;
	x->m = ember_metrics__new();
	if (!x->m) {
		free(x);
		return -ENOMEM;
	}
	x->freq_hz = freq_hz;
	atomic_store(&x->waiters, 0);
	err = http_server__own(srv, x, export_free);
	if (err) {
		export_free(x);
		return err;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		routes[i].ctx = x;
		err = http_server__add_route(srv, &routes[i]);
		if (err)
			return err;
	}
	http_server__set_observer(srv, observe, x);
	return 0;
}
