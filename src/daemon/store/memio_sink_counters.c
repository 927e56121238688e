// SPDX-License-Identifier: MIT
/* struct memio_sink_stats described once (core/base/counters.h): the stored side of "memio" in
 * /api/v1/stats. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/store/memio_sink.h"

static const char *store_name(unsigned int i)
{
	return memio_sink_type((enum memio_store)i);
}

#define ARR(f)                                                                                     \
	.off = offsetof(struct memio_sink_stats, f), .value = COUNTER_U64, .nr = MEMIO_STORE_NR,   \
	.name = store_name, .array_label = "kind"

const struct counter_desc memio_sink_counters[] = {
	{ .key = "stored_events",
	  .metric = "ember_memio_stored_events_total",
	  .type = COUNTER_COUNTER,
	  .help = "Memory and I/O events stored, by kind.",
	  ARR(events) },
	{ .key = "stored_quanta",
	  .metric = "ember_memio_stored_quanta_total",
	  .type = COUNTER_COUNTER,
	  .help = "Records stored (one per quantum of weight), by kind.",
	  ARR(quanta) },
	{ .key = "capped_weight",
	  .metric = "ember_memio_capped_weight_total",
	  .type = COUNTER_COUNTER,
	  .help = "Weight not stored: one event's records capped, by kind.",
	  ARR(capped) },
};
const size_t memio_sink_counters_n = COUNTERS_N(memio_sink_counters);
