// SPDX-License-Identifier: MIT
/*
 * struct exporter_stats and struct identity_stats described once (core/base/counters.h): each
 * exporter's object under "export" in /api/v1/stats and its ember_export_* series (labelled
 * exporter="otlp"|"pyroscope" by the caller), and "export.identity". A new counter: a field, one
 * row here.
 */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/export/identity.h"

#define F(f) .off = offsetof(struct exporter_stats, f)
#define U64(f) F(f), .value = COUNTER_U64

const char *const exporter_kind_names[EXPORTER_KINDS] = { "otlp", "pyroscope" };

static const char *fail_name(unsigned int i)
{
	return i < EXPORT_FAILS ? exporter_fail_names[i] : "?";
}

const struct counter_desc exporter_counters[] = {
	{ .key = "enabled", F(enabled), .value = COUNTER_BOOL },
	{ .key = "requests", U64(requests), .metric = "ember_export_requests_total",
	  .type = COUNTER_COUNTER, .help = "Requests the receiver accepted (2xx)" },
	{ .key = "samples", U64(samples), .metric = "ember_export_samples_total",
	  .type = COUNTER_COUNTER, .help = "Samples in accepted requests" },
	{ .key = "bytes", U64(bytes), .unit = "bytes", .metric = "ember_export_bytes_total",
	  .type = COUNTER_COUNTER, .help = "Bytes on the wire (bodies) of accepted requests" },
	{ .key = "retries", U64(retries), .metric = "ember_export_retries_total",
	  .type = COUNTER_COUNTER, .help = "Attempts retried" },
	{ .key = "splits", U64(splits) },
	{ .key = "bodies_cut", U64(bodies_cut), .metric = "ember_export_bodies_cut_total",
	  .type = COUNTER_COUNTER,
	  .help = "Receiver answers whose body passed 64 KiB: the rest not read, the connection closed" },
	{ .key = "queued", U64(queued), .metric = "ember_export_queued_batches",
	  .type = COUNTER_GAUGE, .help = "Batches waiting in the delivery queue" },
	{ .key = "queued_bytes", U64(queued_bytes), .unit = "bytes",
	  .metric = "ember_export_queued_bytes", .type = COUNTER_GAUGE,
	  .help = "Bytes waiting in the delivery queue" },
	{ .key = "queued_samples", U64(queued_samples) },
	{ .key = "dropped", U64(dropped) },
	{ .key = "dropped_samples", U64(dropped_samples),
	  .metric = "ember_export_dropped_samples_total", .type = COUNTER_COUNTER,
	  .help = "Samples dropped (queue full, rejected)" },
	{ .key = "batches", U64(batches) },
	{ .key = "build_ms", U64(build_ns), .unit = "ns", .json_scale = 1e-6, .json_fmt = "%.1f" },
	{ .key = "last_success_ns", U64(last_success_ns), .unit = "ns",
	  .metric = "ember_export_last_success_seconds", .type = COUNTER_GAUGE,
	  .help = "Unix time of the last accepted request", .metric_scale = 1e-9 },
	{ .key = "frames_located", U64(frames_located) },
	{ .key = "frames_unlocated", U64(frames_unlocated) },
	{ .key = "frame_files", U64(frame_files) },
	{ .key = "frame_files_deferred", U64(frame_files_deferred) },
	{ .key = "frame_files_borrowed", U64(frame_files_borrowed) },
	{ .key = "frame_files_unshared", U64(frame_files_unshared) },
	{ .key = "frame_images_kept", U64(frame_images_kept) },
	{ .key = "frame_images_kept_found", U64(frame_images_kept_found) },
	{ .key = "frame_lookups_deferred", U64(frame_procs_deferred) },
	{ .key = "frame_lookups_refused", U64(frame_procs_refused) },
	{ .key = "frame_files_ms", U64(frame_files_ns), .unit = "ns", .json_scale = 1e-6,
	  .json_fmt = "%.1f" },
	{ .key = "failed", U64(failed), .nr = EXPORT_FAILS, .name = fail_name,
	  .array_label = "reason", .metric = "ember_export_failures_total",
	  .type = COUNTER_COUNTER, .help = "Attempts that failed, by reason" },
};
const size_t exporter_counters_n = COUNTERS_N(exporter_counters);

#undef U64
#define U64(f) .off = offsetof(struct identity_stats, f), .value = COUNTER_U64

const struct counter_desc identity_counters[] = {
	{ .key = "cgroups", U64(cgroups) },
	{ .key = "scans", U64(scans) },
	{ .key = "unknown", U64(unknown) },
	{ .key = "processes", U64(procs) },
	{ .key = "process_events", U64(proc_events) },
	{ .key = "stale_images", U64(stale) },
	{ .key = "processes_not_kept", U64(not_kept) },
	{ .key = "regex_errors", U64(regex_errors) },
	{ .key = "cgroups_dropped", U64(dropped) },
	{ .key = "cgroups_refused", U64(refused), .metric = "ember_identity_cgroups_refused_total",
	  .type = COUNTER_COUNTER,
	  .help = "Cgroups found with no room in the identity table (full, or their owner's share)" },
	{ .key = "build_ids_read", U64(build_ids_read) },
	{ .key = "build_ids_borrowed", U64(build_ids_borrowed) },
};
const size_t identity_counters_n = COUNTERS_N(identity_counters);
