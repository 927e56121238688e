// SPDX-License-Identifier: MIT
/* struct unwind_stats described once (core/base/counters.h): "unwind" in /api/v1/stats, the
 * ember_unwind_* families, the exit line's values. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/unwind/unwind.h"

#define U64(f) .off = offsetof(struct unwind_stats, f), .value = COUNTER_U64
#define EVENTS "ember_unwind_events_total"

static double ready_ms_avg(const void *p)
{
	const struct unwind_stats *w = p;

	return w->ready_count ? (double)w->ready_ns_total / (double)w->ready_count / 1e6 : 0.0;
}

const struct counter_desc unwind_counters[] = {
	{ .key = "rows_capacity", U64(rows_capacity), .unit = "rows", .metric = "ember_unwind_rows",
	  .type = COUNTER_GAUGE,
	  .help = "Elements of the unwind tables' array the BPF walker reads, by state (used: rows, "
		  "index: headers and block indexes, capacity).",
	  .label = "state", .label_value = "capacity" },
	{ .key = "rows_used", U64(rows_used), .unit = "rows", .metric = "ember_unwind_rows",
	  .label = "state", .label_value = "used" },
	{ .key = "index_used", U64(index_used), .unit = "rows", .metric = "ember_unwind_rows",
	  .label = "state", .label_value = "index" },
	{ .key = "bytes", U64(bytes), .unit = "bytes", .metric = "ember_unwind_bytes",
	  .type = COUNTER_GAUGE, .help = "Kernel memory of the unwind tables' rows array." },
	{ .key = "tables", U64(tables), .unit = "files", .metric = "ember_unwind_tables",
	  .type = COUNTER_GAUGE,
	  .help = "Files with unwind tables (rows), or known to have none (empty: frame pointers).",
	  .label = "kind", .label_value = "rows" },
	{ .key = "tables_empty", U64(tables_empty), .unit = "files", .metric = "ember_unwind_tables",
	  .label = "kind", .label_value = "empty" },
	{ .key = "builds", U64(builds), .metric = "ember_unwind_builds_total",
	  .type = COUNTER_COUNTER, .help = "Unwind tables compiled from CFI." },
	{ .key = "build_ms_total", U64(build_ns), .unit = "ns", .json_scale = 1e-6,
	  .json_fmt = "%.1f", .metric = "ember_unwind_build_seconds_total",
	  .type = COUNTER_COUNTER, .help = "Time spent compiling them.", .metric_scale = 1e-9 },
	{ .key = "build_failures", U64(build_failures), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "Unwind table events: build failures, tables shared by build-id, evictions, "
		  "tables too big, processes not listed (map full), mappings past the list's size, "
		  "maps errors.",
	  .label = "event", .label_value = "build_failure" },
	{ .key = "build_shared", U64(build_shared), .metric = EVENTS, .label = "event",
	  .label_value = "shared_by_build_id" },
	{ .key = "headers_read", U64(headers_read), .metric = EVENTS, .label = "event",
	  .label_value = "headers_read" },
	{ .key = "debuginfod", U64(debuginfod) },
	{ .key = "debuginfod_pending", U64(debuginfod_pending) },
	{ .key = "debuginfod_late", U64(debuginfod_late) },
	{ .key = "evictions", U64(evictions), .metric = EVENTS, .label = "event",
	  .label_value = "eviction" },
	{ .key = "refused", U64(refused), .metric = EVENTS, .label = "event",
	  .label_value = "refused" },
	{ .key = "too_big", U64(too_big), .metric = EVENTS, .label = "event",
	  .label_value = "too_big" },
	{ .key = "procs", U64(procs), .unit = "processes", .metric = "ember_unwind_processes",
	  .type = COUNTER_GAUGE,
	  .help = "Processes the walker knows (listed), or waiting for their tables (pending).",
	  .label = "state", .label_value = "listed" },
	{ .key = "procs_pending", U64(procs_pending), .unit = "processes",
	  .metric = "ember_unwind_processes", .label = "state", .label_value = "pending" },
	{ .key = "procs_dropped", U64(procs_dropped), .metric = EVENTS, .label = "event",
	  .label_value = "process_dropped" },
	{ .key = "procs_swept", U64(procs_swept) },
	{ .key = "ended_maps_dropped", U64(ended_maps_dropped), .unit = "processes" },
	{ .key = "dels_skipped", U64(dels_skipped), .unit = "processes" },
	{ .key = "files_changed", U64(files_changed) },
	{ .key = "lists", U64(lists) },
	{ .key = "exec_lists", U64(exec_lists) },
	{ .key = "exec_seeded", U64(exec_seeded) },
	{ .key = "fork_notes_kept", U64(fork_notes_kept) },
	{ .key = "reach_unlisted", U64(reach_unlisted) },
	{ .key = "exec_unbuilt", U64(exec_unbuilt) },
	{ .key = "files_unbuilt", U64(files_unbuilt), .unit = "files",
	  .metric = "ember_unwind_files_unbuilt", .type = COUNTER_GAUGE,
	  .help = "Mapped files listed for the walker that no walk reached yet: no table built, "
		  "frame pointers there." },
	{ .key = "files_published", U64(files_published), .unit = "files",
	  .metric = "ember_unwind_files_published", .type = COUNTER_GAUGE,
	  .help = "Mapped files whose table the BPF walk finds through the kernel's mapping, for "
		  "addresses a process's list lacks (a process not listed yet)." },
	{ .key = "build_asks", U64(build_asks), .metric = EVENTS, .label = "event",
	  .label_value = "build_asked" },
	{ .key = "reach_fp_samples", U64(reach_fp_samples), .unit = "samples",
	  .metric = "ember_unwind_reach_fp_samples_total", .type = COUNTER_COUNTER,
	  .help = "Samples with frames in a listed file whose table was not built yet (frame "
		  "pointers there)." },
	{ .key = "reach_dropped", U64(reach_dropped) },
	{ .key = "maps_overflow", U64(maps_overflow), .metric = EVENTS, .label = "event",
	  .label_value = "maps_overflow" },
	{ .key = "maps_errors", U64(maps_errors), .metric = EVENTS, .label = "event",
	  .label_value = "maps_error" },
	{ .key = "rows_lossy", U64(rows_lossy) },
	{ .key = "ready_ms_avg", .value = COUNTER_FN, .fn = ready_ms_avg, .unit = "ms",
	  .json_fmt = "%.2f" },
};
const size_t unwind_counters_n = COUNTERS_N(unwind_counters);
