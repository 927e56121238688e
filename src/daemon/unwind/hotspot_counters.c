// SPDX-License-Identifier: MIT
/* struct hotspot_stats described once (core/base/counters.h): "hotspot" in /api/v1/stats, the
 * ember_hotspot_* families. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/unwind/hotspot.h"

#define F(f) .off = offsetof(struct hotspot_stats, f)
#define U64(f) F(f), .value = COUNTER_U64
#define MS(f) U64(f), .unit = "ns", .json_scale = 1e-6, .json_fmt = "%.1f"
#define US(f) U64(f), .unit = "ns", .json_scale = 1e-3, .json_fmt = "%.2f"
#define EVENTS "ember_hotspot_events_total"
#define EVENT(v) .metric = EVENTS, .label = "event", .label_value = v
#define FRAMES "ember_hotspot_frames_total"
#define KIND(v) .metric = FRAMES, .label = "kind", .label_value = v
#define REFUSED "ember_hotspot_refused_total"
#define REASON(v) .metric = REFUSED, .label = "reason", .label_value = v

const struct counter_desc hotspot_counters[] = {
	{ .key = "mem_bytes", U64(mem_bytes), .unit = "bytes" },
	{ .key = "procs", U64(procs), .unit = "processes", .metric = "ember_hotspot_processes",
	  .type = COUNTER_GAUGE,
	  .help = "HotSpot JVMs whose Java frames are read, or whose libjvm data is missing or of "
		  "a layout ember does not read (unsupported: native frames only).",
	  .label = "state", .label_value = "read" },
	{ .key = "procs_unsupported", U64(procs_unsupported), .unit = "processes",
	  .metric = "ember_hotspot_processes", .label = "state", .label_value = "unsupported" },
	{ .key = "procs_dropped", U64(procs_dropped), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "HotSpot events: processes dropped (tables full), examined, examined before "
		  "their code cache was set up, methods read and compiled methods checked again, "
		  "name caches emptied, pcs in a code heap without a code blob.",
	  .label = "event", .label_value = "process_dropped" },
	{ .key = "detections", U64(detections), EVENT("detection") },
	{ .key = "detect_ms", MS(detect_ns) },
	{ .key = "not_ready", U64(not_ready), EVENT("not_ready") },
	{ .key = "names", U64(names), EVENT("name_read") },
	{ .key = "name_rechecks", U64(name_rechecks), EVENT("name_recheck") },
	{ .key = "name_evictions", U64(name_evictions), EVENT("name_eviction") },
	{ .key = "frames", U64(frames), .metric = FRAMES, .type = COUNTER_COUNTER,
	  .help = "Java frames named by their method, stubs named by their code blob, frames "
		  "whose method could not be read (named [hotspot <kind>]).",
	  .label = "kind", .label_value = "named" },
	{ .key = "frames_stub", U64(frames_stub), KIND("stub") },
	{ .key = "frames_unnamed", U64(frames_unnamed), KIND("unnamed") },
	{ .key = "inline_frames", U64(inline_frames), KIND("inlined") },
	{ .key = "inline_unreadable", U64(inline_unreadable), EVENT("inline_unreadable") },
	{ .key = "lines", U64(lines), EVENT("line_read") },
	{ .key = "lines_unknown", U64(lines_unknown), EVENT("line_unknown") },
	{ .key = "refused_missing", U64(reasons[RTI_MISSING]), .metric = REFUSED,
	  .type = COUNTER_COUNTER,
	  .help = "libjvm.so files or JVMs refused, by reason: vmStructs items missing, a value "
		  "out of range, a JDK whose layout the walk does not know, code heaps unreadable "
		  "or out of bounds, a layout or pointer the running VM contradicts, not ELF.",
	  .label = "reason", .label_value = "missing" },
	{ .key = "refused_bad_value", U64(reasons[RTI_BAD_VALUE]), REASON("bad_value") },
	{ .key = "refused_bad_layout", U64(reasons[RTI_BAD_LAYOUT]), REASON("bad_layout") },
	{ .key = "refused_bad_pointer", U64(reasons[RTI_BAD_POINTER]), REASON("bad_pointer") },
	{ .key = "refused_not_elf", U64(reasons[RTI_NOT_ELF]), REASON("not_elf") },
	{ .key = "refused_too_many", U64(reasons[RTI_TOO_MANY]), REASON("too_many") },
	{ .key = "refused_version", U64(bad_version), REASON("version") },
	{ .key = "refused_heaps", U64(bad_heaps), REASON("code_heaps") },
	{ .key = "walks", U64(bpf.walks) },
	{ .key = "walk_ms", MS(bpf.walk_ns) },
	{ .key = "walk_mean_us", US(walk_ns_per_walk) },
	{ .key = "walk_interpreted", U64(bpf.interp), .metric = "ember_hotspot_walk_frames_total",
	  .type = COUNTER_COUNTER,
	  .help = "Frames the BPF walk stepped in JVMs' code heaps, by kind; pcs whose code blob "
		  "was not found; blobs or frames unreadable or out of bounds (the walk stopped).",
	  .label = "kind", .label_value = "interpreted" },
	{ .key = "walk_compiled", U64(bpf.compiled), .metric = "ember_hotspot_walk_frames_total",
	  .label = "kind", .label_value = "compiled" },
	{ .key = "walk_stubs", U64(bpf.stubs), .metric = "ember_hotspot_walk_frames_total",
	  .label = "kind", .label_value = "stub" },
	{ .key = "walk_no_blob", U64(bpf.no_blob), .metric = "ember_hotspot_walk_frames_total",
	  .label = "kind", .label_value = "no_blob" },
	{ .key = "walk_bad", U64(bpf.bad), .metric = "ember_hotspot_walk_frames_total",
	  .label = "kind", .label_value = "bad" },
};
const size_t hotspot_counters_n = COUNTERS_N(hotspot_counters);
