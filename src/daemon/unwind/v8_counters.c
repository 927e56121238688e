// SPDX-License-Identifier: MIT
/* struct v8_stats described once (core/base/counters.h): "v8" in /api/v1/stats, the ember_v8_*
 * families. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/unwind/v8.h"

#define F(f) .off = offsetof(struct v8_stats, f)
#define U64(f) F(f), .value = COUNTER_U64
#define MS(f) U64(f), .unit = "ns", .json_scale = 1e-6, .json_fmt = "%.1f"
#define US(f) U64(f), .unit = "ns", .json_scale = 1e-3, .json_fmt = "%.2f"
#define EVENTS "ember_v8_events_total"
#define EVENT(v) .metric = EVENTS, .label = "event", .label_value = v
#define REFUSED "ember_v8_binaries_refused_total"
#define REASON(v) .metric = REFUSED, .label = "reason", .label_value = v

const struct counter_desc v8_counters[] = {
	{ .key = "mem_bytes", U64(mem_bytes), .unit = "bytes" },
	{ .key = "procs", U64(procs), .unit = "processes", .metric = "ember_v8_processes",
	  .type = COUNTER_GAUGE,
	  .help = "Node (V8) processes whose JavaScript frames are read, or whose binary's v8dbg_ "
		  "data is missing or inconsistent (unsupported: native frames only).",
	  .label = "state", .label_value = "read" },
	{ .key = "procs_unsupported", U64(procs_unsupported), .unit = "processes",
	  .metric = "ember_v8_processes", .label = "state", .label_value = "unsupported" },
	{ .key = "procs_dropped", U64(procs_dropped), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "V8 frame events: processes dropped (tables full), examined, names read and "
		  "checked again, name caches emptied, names with and without their function's "
		  "line, scripts' sources read for their lines (or not: unreadable, or over the "
		  "characters a window allows), frames typed (markers) "
		  "or not JavaScript, frames without room in the stack.",
	  .label = "event", .label_value = "process_dropped" },
	{ .key = "detections", U64(detections), EVENT("detection") },
	{ .key = "detect_ms", MS(detect_ns) },
	{ .key = "frames", U64(frames), .metric = "ember_v8_frames_total", .type = COUNTER_COUNTER,
	  .help = "JavaScript frames named by their function, or left with their native name "
		  "(the SharedFunctionInfo unreadable, moved or not one).",
	  .label = "kind", .label_value = "named" },
	{ .key = "frames_unnamed", U64(frames_unnamed), .metric = "ember_v8_frames_total",
	  .label = "kind", .label_value = "native" },
	{ .key = "frames_builtin", U64(frames_builtin), .metric = "ember_v8_frames_total",
	  .label = "kind", .label_value = "builtin" },
	{ .key = "names", U64(names), EVENT("name_read") },
	{ .key = "name_rechecks", U64(name_rechecks), EVENT("name_recheck") },
	{ .key = "name_read_errors", U64(name_read_errors), EVENT("name_read_error") },
	{ .key = "name_evictions", U64(name_evictions), EVENT("name_eviction") },
	{ .key = "lines", U64(lines), EVENT("line") },
	{ .key = "lines_unknown", U64(lines_unknown), EVENT("line_unknown") },
	{ .key = "line_sources", U64(line_sources), EVENT("line_source") },
	{ .key = "line_sources_unread", U64(line_sources_unread), EVENT("line_source_unread") },
	{ .key = "line_sources_deferred", U64(line_sources_deferred),
	  EVENT("line_source_deferred") },
	{ .key = "line_read_ms", MS(line_read_ns) },
	{ .key = "inline_frames", U64(inline_frames), .metric = "ember_v8_frames_total",
	  .label = "kind", .label_value = "inlined" },
	{ .key = "inline_unreadable", U64(inline_unreadable), EVENT("inline_unreadable") },
	{ .key = "inline_other_root", U64(inline_other_root), EVENT("inline_other_root") },
	{ .key = "inline_scans", U64(inline_scans), EVENT("code_scan") },
	{ .key = "inline_scan_misses", U64(inline_scan_misses), EVENT("code_scan_miss") },
	{ .key = "inline_scan_pages", U64(inline_scan_pages), EVENT("code_scan_page") },
	{ .key = "inline_scans_deferred", U64(inline_scans_deferred), EVENT("code_scan_deferred") },
	{ .key = "inline_layouts_refused", U64(inline_layouts_refused),
	  EVENT("inline_layout_refused") },
	{ .key = "refused_missing", U64(reasons[RTI_MISSING]), .metric = REFUSED,
	  .type = COUNTER_COUNTER,
	  .help = "node/libnode.so files refused, by reason: v8dbg_ items missing, a value out of "
		  "range or a layout ember does not read (compressed pointers), not ELF, too many "
		  "symbols.",
	  .label = "reason", .label_value = "missing" },
	{ .key = "refused_bad_value", U64(reasons[RTI_BAD_VALUE]), REASON("bad_value") },
	{ .key = "refused_not_elf", U64(reasons[RTI_NOT_ELF]), REASON("not_elf") },
	{ .key = "refused_too_many", U64(reasons[RTI_TOO_MANY]), REASON("too_many") },
	{ .key = "walks", U64(bpf.walks) },
	{ .key = "walk_ms", MS(bpf.walk_ns) },
	{ .key = "walk_mean_us", US(walk_ns_per_walk) },
	{ .key = "checks", U64(bpf.checks) },
	{ .key = "walk_frames", U64(bpf.frames) },
	{ .key = "markers", U64(bpf.markers), EVENT("typed_frame") },
	{ .key = "not_js", U64(bpf.not_js), EVENT("not_js") },
	{ .key = "no_room", U64(bpf.no_room), EVENT("no_room") },
};
const size_t v8_counters_n = COUNTERS_N(v8_counters);
