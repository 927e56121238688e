// SPDX-License-Identifier: MIT
/* struct python_stats described once (core/base/counters.h): "python" in /api/v1/stats, the
 * ember_python_* families. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/unwind/python.h"

#define F(f) .off = offsetof(struct python_stats, f)
#define U64(f) F(f), .value = COUNTER_U64
#define MS(f) U64(f), .unit = "ns", .json_scale = 1e-6, .json_fmt = "%.1f"
#define US(f) U64(f), .unit = "ns", .json_scale = 1e-3, .json_fmt = "%.2f"
#define EVENTS "ember_python_events_total"
#define EVENT(v) .metric = EVENTS, .label = "event", .label_value = v

const struct counter_desc python_counters[] = {
	{ .key = "procs", U64(procs), .unit = "processes", .metric = "ember_python_processes",
	  .type = COUNTER_GAUGE,
	  .help = "CPython processes whose Python frames are read, or of a version ember does not "
		  "know (unsupported: native frames only).",
	  .label = "state", .label_value = "read" },
	{ .key = "procs_unsupported", U64(procs_unsupported), .unit = "processes",
	  .metric = "ember_python_processes", .label = "state", .label_value = "unsupported" },
	{ .key = "procs_dropped", U64(procs_dropped), EVENT("process_dropped") },
	{ .key = "detections", U64(detections), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "Python frame events: processes examined and failures, name records and losses, "
		  "code objects read, cache evictions, stacks aligned, walks without a thread "
		  "state, cut short or stopped at a bad frame, thread searches.",
	  .label = "event", .label_value = "detection" },
	{ .key = "detect_errors", U64(detect_errors), EVENT("detect_error") },
	{ .key = "detect_ms", MS(detect_ns) },
	{ .key = "samples", U64(samples), .metric = "ember_python_samples_total",
	  .type = COUNTER_COUNTER,
	  .help = "Samples of CPython processes: with Python frames, or of an unsupported version.",
	  .label = "kind", .label_value = "python" },
	{ .key = "samples_unsupported", U64(samples_unsupported),
	  .metric = "ember_python_samples_total", .label = "kind", .label_value = "unsupported" },
	{ .key = "frames", U64(frames), .metric = "ember_python_frames_total",
	  .type = COUNTER_COUNTER,
	  .help = "Python frames named, or unknown (code object gone, changed or unreadable).",
	  .label = "kind", .label_value = "named" },
	{ .key = "frames_unknown", U64(frames_unknown), .metric = "ember_python_frames_total",
	  .label = "kind", .label_value = "unknown" },
	{ .key = "names", U64(names), EVENT("name_record") },
	{ .key = "code_reads", U64(code_reads), EVENT("code_read") },
	{ .key = "codes", U64(codes) },
	{ .key = "code_evictions", U64(code_evictions), EVENT("code_eviction") },
	{ .key = "code_bytes", U64(code_bytes), .unit = "bytes", .metric = "ember_python_code_bytes",
	  .type = COUNTER_GAUGE,
	  .help = "Bytes of the cached code objects: their names (as interned), kept strings and "
		  "line tables (python.code_memory)." },
	{ .key = "codes_refused", U64(codes_refused), EVENT("code_refused") },
	{ .key = "codes_renamed", U64(codes_renamed), EVENT("code_renamed") },
	{ .key = "merged", U64(merged) },
	{ .key = "merged_aligned", U64(merged_aligned), EVENT("merged_aligned") },
	{ .key = "lines_unknown", U64(lines_unknown) },
	{ .key = "fsbase_off", F(fsbase_off), .value = COUNTER_I64 },
	{ .key = "fsbase_ms", MS(fsbase_ns) },
	{ .key = "walks", U64(bpf.walks) },
	{ .key = "no_thread", U64(bpf.no_thread), EVENT("no_thread") },
	{ .key = "walk_frames", U64(bpf.frames) },
	{ .key = "truncated", U64(bpf.truncated), EVENT("walk_truncated") },
	{ .key = "bad_frames", U64(bpf.bad_frames), EVENT("bad_frame") },
	{ .key = "searches", U64(bpf.searches), EVENT("thread_search") },
	{ .key = "search_steps", U64(bpf.search_steps) },
	{ .key = "name_records", U64(bpf.names) },
	{ .key = "name_drops", U64(bpf.name_drops), EVENT("name_drop") },
	{ .key = "walk_ms", MS(bpf.walk_ns) },
	{ .key = "merge_ms", MS(merge_ns) },
	{ .key = "names_ms", MS(names_ns) },
	{ .key = "walk_p50_us", US(walk_p50_ns) },
	{ .key = "walk_p90_us", US(walk_p90_ns) },
	{ .key = "walk_p99_us", US(walk_p99_ns) },
};
const size_t python_counters_n = COUNTERS_N(python_counters);
