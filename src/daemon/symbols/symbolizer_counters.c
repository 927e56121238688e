// SPDX-License-Identifier: MIT
/*
 * struct symbolizer_stats described once (core/base/counters.h): "symbols" and "debuginfod" in
 * /api/v1/stats, the ember_symbol*, ember_elf_*, ember_perfmap_* and ember_debuginfod_*
 * families. A new counter: a field, one row here. ("unresolved_files" is a list: http_setup.c.)
 */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/symbols/symbolizer.h"

#define F(f) .off = offsetof(struct symbolizer_stats, f)
#define U64(f) F(f), .value = COUNTER_U64
#define FN(f) .value = COUNTER_FN, .fn = f
#define ENTRIES(c) .metric = "ember_symbol_cache_entries", .label = "cache", .label_value = c
#define LOOKUPS(c, r)                                                                          \
	.metric = "ember_symbol_cache_lookups_total", .label = "cache", .label_value = c,      \
	.label2 = "result", .label2_value = r
#define RATIO(c) .metric = "ember_symbol_cache_hit_ratio", .label = "cache", .label_value = c
#define EVICTIONS(c)                                                                           \
	.metric = "ember_symbol_cache_evictions_total", .label = "cache", .label_value = c
#define ELF_REFUSED(r) .metric = "ember_elf_refused_total", .label = "reason", .label_value = r
#define PROC_EVENT(e)                                                                          \
	.metric = "ember_symbolizer_process_events_total", .label = "event", .label_value = e

static double frames(const void *p)
{
	const struct symbolizer_stats *y = p;

	return (double)(y->kernel_frames + y->user_frames);
}

static double unresolved(const void *p)
{
	const struct symbolizer_stats *y = p;

	return (double)(y->kernel_unresolved + y->user_unresolved);
}

static double unresolved_share(const void *p)
{
	return frames(p) ? unresolved(p) / frames(p) : 0.0;
}

static double kernel_ratio(const void *p)
{
	const struct symbolizer_stats *y = p;

	return y->kernel_frames ? (double)y->kernel_unresolved / (double)y->kernel_frames : 0;
}

static double user_ratio(const void *p)
{
	const struct symbolizer_stats *y = p;

	return y->user_frames ? (double)y->user_unresolved / (double)y->user_frames : 0;
}

static double ratio(uint64_t hits, uint64_t misses)
{
	return hits + misses ? (double)hits / (double)(hits + misses) : 0;
}

static double pid_ratio(const void *p)
{
	const struct symbolizer_stats *y = p;

	return ratio(y->pid_hits, y->pid_misses);
}

static double elf_hits(const void *p)
{
	const struct symbolizer_stats *y = p;

	return (double)(y->elf_hits + y->elf_buildid_hits);
}

static double elf_ratio(const void *p)
{
	const struct symbolizer_stats *y = p;

	return ratio(y->elf_hits + y->elf_buildid_hits, y->elf_misses);
}

static const char *kernel_source(const void *p)
{
	return ((const struct symbolizer_stats *)p)->kernel_resolver ? "bpf" : "kallsyms";
}

static const char *perfmap_skip_name(unsigned int i)
{
	static const char *const names[] = { "missing", "not_regular", "too_big", "owner",
					     "error",	"stale" };

	return i < COUNTERS_N(names) ? names[i] : "?";
}

const struct counter_desc symbolizer_counters[] = {
	{ .key = "frames", FN(frames) },
	{ .key = "unresolved", FN(unresolved) },
	{ .key = "unresolved_share", FN(unresolved_share), .json_fmt = "%.4f" },
	{ .key = "kernel_frames", U64(kernel_frames), .metric = "ember_symbolized_frames_total",
	  .type = COUNTER_COUNTER, .help = "Frames symbolized, by kind.", .label = "kind",
	  .label_value = "kernel", .flags = COUNTER_NO_JSON },
	{ .key = "user_frames", U64(user_frames), .metric = "ember_symbolized_frames_total",
	  .label = "kind", .label_value = "user", .flags = COUNTER_NO_JSON },
	{ .key = "kernel_unresolved", U64(kernel_unresolved),
	  .metric = "ember_unresolved_frames_total", .type = COUNTER_COUNTER,
	  .help = "Frames without a symbol, by kind (kernel, user).", .label = "kind",
	  .label_value = "kernel" },
	{ .key = "user_unresolved", U64(user_unresolved), .metric = "ember_unresolved_frames_total",
	  .label = "kind", .label_value = "user" },
	{ .key = "kernel_unresolved_ratio", FN(kernel_ratio),
	  .metric = "ember_unresolved_frames_ratio", .type = COUNTER_GAUGE,
	  .help = "Share of frames without a symbol since start, by kind.", .label = "kind",
	  .label_value = "kernel", .flags = COUNTER_NO_JSON },
	{ .key = "user_unresolved_ratio", FN(user_ratio), .metric = "ember_unresolved_frames_ratio",
	  .label = "kind", .label_value = "user", .flags = COUNTER_NO_JSON },
	{ .key = "user_no_mapping", U64(user_no_mapping) },
	{ .key = "jit_frames", U64(jit_frames) },
	{ .key = "pids_cached", U64(pids_cached), ENTRIES("pid"), .type = COUNTER_GAUGE,
	  .help = "Entries in the symbolizer caches (pid, elf, elf_symbols, perfmap_symbols, "
		  "kallsyms, kernel_functions)." },
	{ .key = "pid_hits", U64(pid_hits), LOOKUPS("pid", "hit"), .type = COUNTER_COUNTER,
	  .help = "Symbolizer cache lookups, by cache and result (hit, miss).",
	  .flags = COUNTER_NO_JSON },
	{ .key = "pid_misses", U64(pid_misses), LOOKUPS("pid", "miss"), .flags = COUNTER_NO_JSON },
	{ .key = "pid_hit_ratio", FN(pid_ratio), RATIO("pid"), .type = COUNTER_GAUGE,
	  .help = "Symbolizer cache hit rate since start.", .flags = COUNTER_NO_JSON },
	{ .key = "pid_evictions", U64(pid_evictions), EVICTIONS("pid"), .type = COUNTER_COUNTER,
	  .help = "Symbolizer cache entries dropped by their bound." },
	{ .key = "elfs_cached", U64(elfs_cached), ENTRIES("elf") },
	{ .key = "elf_hits", FN(elf_hits), LOOKUPS("elf", "hit"), .flags = COUNTER_NO_JSON },
	{ .key = "elf_misses", U64(elf_misses), LOOKUPS("elf", "miss"), .flags = COUNTER_NO_JSON },
	{ .key = "elf_hit_ratio", FN(elf_ratio), RATIO("elf"), .flags = COUNTER_NO_JSON },
	{ .key = "elf_evictions", U64(elf_evictions), EVICTIONS("elf") },
	{ .key = "elf_symbols", U64(elf_symbols), ENTRIES("elf_symbols") },
	{ .key = "perfmap_symbols", U64(perfmap_symbols), ENTRIES("perfmap_symbols") },
	{ .key = "perfmap_bytes", U64(perfmap_bytes), .unit = "bytes",
	  .metric = "ember_perfmap_bytes", .type = COUNTER_GAUGE,
	  .help = "Bytes of the JIT symbols held (entries and names, all perf maps)" },
	{ .key = "kallsyms_symbols", U64(kallsyms_symbols), ENTRIES("kallsyms") },
	{ .key = "kernel_functions", U64(kernel_functions), ENTRIES("kernel_functions") },
	{ .key = "kallsyms_loads", U64(kallsyms_loads) },
	{ .key = "kernel_source", .value = COUNTER_STR, .str = kernel_source },
	{ .key = "kernel_lookups", U64(kernel_lookups) },
	{ .key = "mem_bytes", U64(mem_bytes), .unit = "bytes", .metric = "ember_symbol_cache_bytes",
	  .type = COUNTER_GAUGE, .help = "Memory held by the symbolizer caches." },
	{ .key = "names_bytes", U64(names_bytes), .unit = "bytes", .metric = "ember_names_bytes",
	  .type = COUNTER_GAUGE,
	  .help = "Bytes of the frame names' table (symbols.max_names_memory bounds it)." },
	{ .key = "names_refused", U64(names_refused), .metric = "ember_names_refused_total",
	  .type = COUNTER_COUNTER,
	  .help = "New frame names past symbols.max_names_memory, named \"[name refused]\"." },
	{ .key = "names_renewals", U64(names_renewals), .metric = "ember_names_renewals_total",
	  .type = COUNTER_COUNTER,
	  .help = "Times the frame names' table started over with the names still in use." },
	{ .key = "pid_reuses", U64(pid_reuses), PROC_EVENT("pid_reuse"), .type = COUNTER_COUNTER,
	  .help = "Processes whose cached state was dropped: pid reused, exec, gone; maps read "
		  "errors; born_from_fork: a new state's start taken from its fork's event (no "
		  "/proc/PID/stat read)." },
	{ .key = "pid_execs", U64(pid_execs), PROC_EVENT("exec") },
	{ .key = "pid_gone", U64(pid_gone), PROC_EVENT("gone") },
	{ .key = "pid_born_from_fork", U64(pid_born_from_fork), PROC_EVENT("born_from_fork") },
	{ .key = "pid_before_exec", U64(pid_before_exec), PROC_EVENT("before_exec") },
	{ .key = "maps_errors", U64(maps_errors), PROC_EVENT("maps_error") },
	{ .key = "elf_errors", U64(elf_errors) },
	{ .key = "elf_headers_read", U64(elf_headers_read) },
	{ .key = "elf_unreachable", U64(elf_unreachable) },
	{ .key = "perfmap_loads", U64(perfmap_loads) },
	{ .key = "perfmap_bad_lines", U64(perfmap_bad_lines),
	  .metric = "ember_perfmap_bad_lines_total", .type = COUNTER_COUNTER,
	  .help = "Malformed perf-map lines skipped." },
	/* perfmap_skip_missing .. perfmap_skip_stale: six uint64_t in a row */
	{ .key = "perfmap_skipped", U64(perfmap_skip_missing), .nr = 6, .name = perfmap_skip_name,
	  .array_label = "reason", .metric = "ember_perfmap_skipped_total",
	  .type = COUNTER_COUNTER,
	  .help = "Perf-map files not read, by reason (missing, not_regular, too_big, owner, "
		  "error, stale)." },
	{ .key = "elf_too_big", U64(elf_too_big), ELF_REFUSED("too_big"), .type = COUNTER_COUNTER,
	  .help = "ELF files not read, by reason (too_big: a bound; short_read: shrank; "
		  "debug_file: a debug file not root's, behind a link, or of another CRC)" },
	{ .key = "elf_short_reads", U64(elf_short_reads), ELF_REFUSED("short_read") },
	{ .key = "elf_debug_refused", U64(elf_debug_refused), ELF_REFUSED("debug_file") },
	{ .key = "elf_changed", U64(elf_changed), ELF_REFUSED("changed") },
	{ .key = "elf_mem_evictions", U64(elf_mem_evictions) },
	{ .key = "elf_lent", U64(elf_lent) },
	{ .key = "elf_mem_refused", U64(elf_mem_refused), ELF_REFUSED("memory") },
	{ .key = "kallsyms_restricted", F(kallsyms_restricted), .value = COUNTER_BOOL },
};
const size_t symbolizer_counters_n = COUNTERS_N(symbolizer_counters);

#define REQUESTS(r)                                                                            \
	.metric = "ember_debuginfod_requests_total", .label = "result", .label_value = r

/* Rendered only while symbolizer_stats.debuginfod (else "debuginfod": null, no series). */
const struct counter_desc symbolizer_debuginfod_counters[] = {
	{ .key = "fetches", U64(fetch.fetches), REQUESTS("fetched"), .type = COUNTER_COUNTER,
	  .help = "Debug files asked of debuginfod (DEBUGINFOD_URLS), by result: fetched, cached, "
		  "not_found, timeout, error, skipped (backing off), negative (failed lately), "
		  "queued, pending (queued already), refused_queue (the queue full), "
		  "refused_budget (the minute's fetch time spent)." },
	{ .key = "fetched_bytes", U64(fetch.fetched_bytes), .unit = "bytes",
	  .metric = "ember_debuginfod_fetched_bytes_total", .type = COUNTER_COUNTER,
	  .help = "Bytes of debug files fetched." },
	{ .key = "cached", U64(fetch.cached), REQUESTS("cached") },
	{ .key = "not_found", U64(fetch.not_found), REQUESTS("not_found") },
	{ .key = "timeouts", U64(fetch.timeouts), REQUESTS("timeout") },
	{ .key = "errors", U64(fetch.errors), REQUESTS("error") },
	{ .key = "skipped", U64(fetch.skipped), REQUESTS("skipped") },
	{ .key = "negative_hits", U64(fetch.negative_hits), REQUESTS("negative") },
	{ .key = "queued", U64(fetch.queued), REQUESTS("queued") },
	{ .key = "pending_hits", U64(fetch.pending_hits), REQUESTS("pending") },
	{ .key = "refused_queue", U64(fetch.refused_queue), REQUESTS("refused_queue") },
	{ .key = "refused_budget", U64(fetch.refused_budget), REQUESTS("refused_budget") },
	{ .key = "queue_len", U64(fetch.queue_len), .metric = "ember_debuginfod_queue_length",
	  .type = COUNTER_GAUGE,
	  .help = "Build-ids waiting for the fetcher's threads (bound: "
		  "symbols.debuginfod_queue)." },
	{ .key = "in_flight", U64(fetch.in_flight), .metric = "ember_debuginfod_in_flight",
	  .type = COUNTER_GAUGE,
	  .help = "Fetches under way (bound: symbols.debuginfod_threads)." },
	{ .key = "client_dirs", U64(fetch.client_dirs), .metric = "ember_debuginfod_client_dirs",
	  .type = COUNTER_GAUGE,
	  .help = "Folders left in libdebuginfod's own cache (one per build-id asked; a miss's "
		  "is removed as the fetch ends)." },
	{ .key = "client_dirs_removed", U64(fetch.client_dirs_removed),
	  .metric = "ember_debuginfod_client_dirs_removed_total", .type = COUNTER_COUNTER,
	  .help = "Folders removed from libdebuginfod's own cache." },
	{ .key = "evictions", U64(fetch.evictions), .metric = "ember_debuginfod_evictions_total",
	  .type = COUNTER_COUNTER,
	  .help = "Debug files removed from the cache folder to keep it under "
		  "symbols.debuginfod_cache_size." },
	{ .key = "cache_bytes", U64(fetch.cache_bytes), .unit = "bytes",
	  .metric = "ember_debuginfod_cache_bytes", .type = COUNTER_GAUGE,
	  .help = "Bytes of the debug files in the cache folder." },
	{ .key = "fetch_ms_total", U64(fetch.fetch_ns), .unit = "ns", .json_scale = 1e-6,
	  .json_fmt = "%.1f", .metric = "ember_debuginfod_fetch_seconds_total",
	  .type = COUNTER_COUNTER,
	  .help = "Time the fetcher's threads spent fetching (bound: symbols.debuginfod_budget a "
		  "minute).",
	  .metric_scale = 1e-9 },
	{ .key = "images_named", U64(elf_debuginfod) },
	{ .key = "images_pending", U64(elf_debug_pending),
	  .metric = "ember_debuginfod_images_pending_total", .type = COUNTER_COUNTER,
	  .help = "Images read while their debug file was being fetched: named from their "
		  ".dynsym meanwhile." },
	{ .key = "images_late", U64(elf_debug_late), .metric = "ember_debuginfod_images_late_total",
	  .type = COUNTER_COUNTER,
	  .help = "Images read again once their debug file came." },
};
const size_t symbolizer_debuginfod_counters_n = COUNTERS_N(symbolizer_debuginfod_counters);
