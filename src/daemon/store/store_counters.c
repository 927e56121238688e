// SPDX-License-Identifier: MIT
/* struct store_stats described once (core/base/counters.h): "store" in /api/v1/stats (live), the
 * ember_store_* families, the exit line's values. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/store/store.h"

#define U64(f) .off = offsetof(struct store_stats, f), .value = COUNTER_U64
#define INTERNED "ember_store_interned"
#define EVICTED "ember_store_evicted_samples_total"

static double used_share(const void *p)
{
	const struct store_stats *s = p;

	return s->max_bytes ? (double)s->bytes / (double)s->max_bytes : 0.0;
}

static double span_s(const void *p)
{
	const struct store_stats *s = p;

	return s->samples ? (double)(s->newest_ns - s->oldest_ns) / 1e9 : 0;
}

static double record_bytes_per_sample(const void *p)
{
	const struct store_stats *s = p;

	return s->samples ? (double)s->sample_bytes / (double)s->samples : 0.0;
}

const struct counter_desc store_counters[] = {
	{ .key = "samples", U64(samples), .unit = "samples", .metric = "ember_store_samples",
	  .type = COUNTER_GAUGE, .help = "Samples held by the store." },
	{ .key = "appended", U64(appended), .unit = "samples",
	  .metric = "ember_store_appended_samples_total", .type = COUNTER_COUNTER,
	  .help = "Samples appended to the store." },
	{ .key = "evicted_time", U64(evicted_time), .unit = "samples", .metric = EVICTED,
	  .type = COUNTER_COUNTER,
	  .help = "Samples evicted from the store, by reason (time, memory).", .label = "reason",
	  .label_value = "time" },
	{ .key = "evicted_memory", U64(evicted_memory), .unit = "samples", .metric = EVICTED,
	  .label = "reason", .label_value = "memory" },
	{ .key = "dropped", U64(dropped), .unit = "samples",
	  .metric = "ember_store_dropped_samples_total", .type = COUNTER_COUNTER,
	  .help = "Samples that could not be stored (out of memory)." },
	{ .key = "clamped", U64(clamped) },
	{ .key = "comms_escaped", U64(comms_escaped), .unit = "samples",
	  .metric = "ember_store_escaped_comms_total", .type = COUNTER_COUNTER,
	  .help = "Samples whose process name held ';' or control bytes, escaped as a frame "
		  "name." },
	{ .key = "compactions", U64(compactions) },
	{ .key = "frames", U64(frames), .metric = INTERNED, .type = COUNTER_GAUGE,
	  .help = "Interned frames, stacks and contexts.", .label = "kind",
	  .label_value = "frames" },
	{ .key = "stacks", U64(stacks), .metric = INTERNED, .label = "kind",
	  .label_value = "stacks" },
	{ .key = "contexts", U64(contexts), .metric = INTERNED, .label = "kind",
	  .label_value = "contexts" },
	{ .key = "bytes", U64(bytes), .unit = "bytes", .metric = "ember_store_bytes",
	  .type = COUNTER_GAUGE, .help = "Memory held by the sample store." },
	{ .key = "sample_bytes", U64(sample_bytes), .unit = "bytes" },
	{ .key = "record_bytes_per_sample", .value = COUNTER_FN, .fn = record_bytes_per_sample,
	  .unit = "bytes", .flags = COUNTER_NO_JSON },
	{ .key = "max_bytes", U64(max_bytes), .unit = "bytes", .metric = "ember_store_max_bytes",
	  .type = COUNTER_GAUGE, .help = "The store's memory limit." },
	{ .key = "retention_s", U64(retention_s), .unit = "s",
	  .metric = "ember_store_retention_seconds", .type = COUNTER_GAUGE,
	  .help = "The store's retention by time." },
	{ .key = "used_share", .value = COUNTER_FN, .fn = used_share, .json_fmt = "%.4f" },
	{ .key = "span_s", .value = COUNTER_FN, .fn = span_s, .unit = "s",
	  .metric = "ember_store_span_seconds", .type = COUNTER_GAUGE,
	  .help = "Time between the oldest and the newest sample held.",
	  .flags = COUNTER_NO_JSON },
};
const size_t store_counters_n = COUNTERS_N(store_counters);
