// SPDX-License-Identifier: MIT
/* struct ingest_stats described once (core/base/counters.h): the exit line's values ([filter]'s
 * count is "service.filtered_samples" in /api/v1/stats). A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/ingest/ingest.h"

#define U64(f) .off = offsetof(struct ingest_stats, f), .value = COUNTER_U64

static double cache_hit_pct(const void *p)
{
	const struct ingest_stats *in = p;

	return in->cache_hits + in->cache_misses
		       ? 100.0 * (double)in->cache_hits / (double)(in->cache_hits + in->cache_misses)
		       : 0.0;
}

const struct counter_desc ingest_counters[] = {
	{ .key = "groups", U64(groups), .flags = COUNTER_NO_JSON },
	{ .key = "filtered", U64(filtered), .unit = "samples", .flags = COUNTER_NO_JSON },
	{ .key = "cache_hits", U64(cache_hits), .flags = COUNTER_NO_JSON },
	{ .key = "cache_misses", U64(cache_misses), .flags = COUNTER_NO_JSON },
	{ .key = "cache_file_hits", U64(cache_file_hits), .flags = COUNTER_NO_JSON },
	{ .key = "cgroup_reads", U64(cgroup_reads), .flags = COUNTER_NO_JSON },
	{ .key = "cgroup_kept", U64(cgroup_kept), .flags = COUNTER_NO_JSON },
	{ .key = "irq_wakers", U64(irq_wakers), .flags = COUNTER_NO_JSON },
	{ .key = "cache_hit_pct", .value = COUNTER_FN, .fn = cache_hit_pct, .unit = "%",
	  .flags = COUNTER_NO_JSON },
};
const size_t ingest_counters_n = COUNTERS_N(ingest_counters);
