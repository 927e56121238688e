// SPDX-License-Identifier: MIT
/* struct proc_tracker_stats described once (core/base/counters.h): "processes" in /api/v1/stats,
 * the ember_process_tracker_* families. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/proc/proctrack.h"

#define U64(f) .off = offsetof(struct proc_tracker_stats, f), .value = COUNTER_U64
#define EVENTS "ember_process_tracker_events_total"
#define READS "ember_process_tracker_reads_total"
#define IDENT "ember_process_tracker_identities_total"

const struct counter_desc proc_tracker_counters[] = {
	{ .key = "procmap_query", .off = offsetof(struct proc_tracker_stats, procmap_query),
	  .value = COUNTER_BOOL },
	{ .key = "procs", U64(procs), .unit = "processes",
	  .metric = "ember_process_tracker_processes", .type = COUNTER_GAUGE,
	  .help = "Processes whose mappings the process tracker holds." },
	{ .key = "mappings", U64(mappings), .metric = "ember_process_tracker_mappings",
	  .type = COUNTER_GAUGE, .help = "Mappings it holds, all processes." },
	{ .key = "mem_bytes", U64(mem_bytes), .unit = "bytes",
	  .metric = "ember_process_tracker_memory_bytes", .type = COUNTER_GAUGE,
	  .help = "Their memory: the table, a read's scratch and every snapshot of mappings "
		  "alive (snapshot_bytes)." },
	{ .key = "snapshot_bytes", U64(snapshot_bytes), .unit = "bytes" },
	{ .key = "names_share_max", U64(names_share_max), .unit = "bytes",
	  .metric = "ember_process_names_share_max_bytes", .type = COUNTER_GAUGE,
	  .help = "The largest share of the frame names' table one process brought in since the "
		  "table last started over (symbols.max_names_share bounds it)." },
	{ .key = "names_refused", U64(names_refused), .metric = "ember_process_names_refused_total",
	  .type = COUNTER_COUNTER,
	  .help = "New frame names refused because their process had its share of the table "
		  "(symbols.max_names_share), named \"[name refused]\"." },
	{ .key = "names_unowned", U64(names_unowned) },
	{ .key = "reads", U64(reads) },
	{ .key = "query_reads", U64(query_reads), .metric = READS, .type = COUNTER_COUNTER,
	  .help = "Mappings read, one per event (exec, first sample, refresh), by way "
		  "(procmap_query, maps_text).",
	  .label = "way", .label_value = "procmap_query" },
	{ .key = "text_reads", U64(text_reads), .metric = READS, .label = "way",
	  .label_value = "maps_text" },
	{ .key = "query_ioctls", U64(query_ioctls) },
	{ .key = "read_errors", U64(read_errors), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "Process tracker events: event, reused (a read shared), stale (gone: the last "
		  "read used), exec_image_used (gone before any read: named from the exec's image "
		  "as the kernel told it), image_reread (a runtime reader's snapshot was of an "
		  "image the process left: read again), exe_read and exe_reused (the executable's "
		  "identity stat'ed, or answered from the last stat for another reader), exe_path "
		  "(the executable's path from the mappings, no readlink), "
		  "read_error, exec, exec_image (with that image), "
		  "exec_gone (exited in the same batch: not read), "
		  "fork, fork_gone, fork_copy, fork_list, fork_parent_read (an unknown parent "
		  "read once), fork_copy_filled (a fork's copy lacking the libraries made whole "
		  "from its parent when a sample was named by it), first_sample_forked (a fork's first sample named from its fork's "
		  "copy: no read), gone_known (a process whose exit was told: no /proc work), exit, swept, not_kept.",
	  .label = "kind", .label_value = "read_error" },
	{ .key = "reused", U64(reused), .metric = EVENTS, .label = "kind", .label_value = "reused" },
	{ .key = "stale_used", U64(stale_used), .metric = EVENTS, .label = "kind",
	  .label_value = "stale" },
	{ .key = "exec_image_used", U64(exec_image_used), .metric = EVENTS, .label = "kind",
	  .label_value = "exec_image_used" },
	{ .key = "image_rereads", U64(image_rereads), .metric = EVENTS, .label = "kind",
	  .label_value = "image_reread" },
	{ .key = "exe_reads", U64(exe_reads), .metric = EVENTS, .label = "kind",
	  .label_value = "exe_read" },
	{ .key = "exe_reused", U64(exe_reused), .metric = EVENTS, .label = "kind",
	  .label_value = "exe_reused" },
	{ .key = "exe_paths", U64(exe_paths), .metric = EVENTS, .label = "kind",
	  .label_value = "exe_path" },
	{ .key = "cgroup_reads", U64(cgroup_reads), .metric = EVENTS, .label = "kind",
	  .label_value = "cgroup_read" },
	{ .key = "exec_images", U64(exec_images), .metric = EVENTS, .label = "kind",
	  .label_value = "exec_image" },
	{ .key = "events", U64(events), .metric = EVENTS, .label = "kind", .label_value = "event" },
	{ .key = "execs", U64(execs), .metric = EVENTS, .label = "kind", .label_value = "exec" },
	{ .key = "execs_gone", U64(execs_gone), .metric = EVENTS, .label = "kind",
	  .label_value = "exec_gone" },
	{ .key = "forks", U64(forks), .metric = EVENTS, .label = "kind", .label_value = "fork" },
	{ .key = "forks_gone", U64(forks_gone), .metric = EVENTS, .label = "kind",
	  .label_value = "fork_gone" },
	{ .key = "fork_copies", U64(fork_copies), .metric = EVENTS, .label = "kind",
	  .label_value = "fork_copy" },
	{ .key = "fork_lists", U64(fork_lists), .metric = EVENTS, .label = "kind",
	  .label_value = "fork_list" },
	{ .key = "fork_parent_reads", U64(fork_parent_reads), .metric = EVENTS, .label = "kind",
	  .label_value = "fork_parent_read" },
	{ .key = "fork_copies_filled", U64(fork_copies_filled), .metric = EVENTS, .label = "kind",
	  .label_value = "fork_copy_filled" },
	{ .key = "gone_known", U64(gone_known), .metric = EVENTS, .label = "kind",
	  .label_value = "gone_known" },
	{ .key = "first_sample_forked", U64(first_sample_forked), .metric = EVENTS,
	  .label = "kind", .label_value = "first_sample_forked" },
	{ .key = "exits", U64(exits), .metric = EVENTS, .label = "kind", .label_value = "exit" },
	{ .key = "swept", U64(swept), .metric = EVENTS, .label = "kind", .label_value = "swept" },
	{ .key = "not_kept", U64(not_kept), .metric = EVENTS, .label = "kind",
	  .label_value = "not_kept" },
	{ .key = "ext_ended", U64(ext_ended), .metric = EVENTS, .label = "kind",
	  .label_value = "ext_ended" },
	{ .key = "ext_swept", U64(ext_swept), .metric = EVENTS, .label = "kind",
	  .label_value = "ext_swept" },
	{ .key = "ident_checks", U64(ident_checks), .metric = IDENT, .type = COUNTER_COUNTER,
	  .help = "Mappings' file identities asked of the process tracker, by result: checked "
		  "(one mapfile_stat per mapping per read), reused (answered from that read's "
		  "check), failed (gone or refused: not kept).",
	  .label = "result", .label_value = "checked" },
	{ .key = "ident_reused", U64(ident_reused), .metric = IDENT, .label = "result",
	  .label_value = "reused" },
	{ .key = "ident_failed", U64(ident_failed), .metric = IDENT, .label = "result",
	  .label_value = "failed" },
};
const size_t proc_tracker_counters_n = COUNTERS_N(proc_tracker_counters);
