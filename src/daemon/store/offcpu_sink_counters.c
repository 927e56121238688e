// SPDX-License-Identifier: MIT
/* struct offcpu_sink_stats described once (core/base/counters.h): the stored side of "offcpu" in
 * /api/v1/stats. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/store/offcpu_sink.h"

#define U64(f) .off = offsetof(struct offcpu_sink_stats, f), .value = COUNTER_U64

const struct counter_desc offcpu_sink_counters[] = {
	{ .key = "stored_events", U64(events) },
	{ .key = "stored_quanta", U64(quanta) },
	{ .key = "stored_wakers", U64(wakeup_events) },
	{ .key = "stored_waker_quanta", U64(wakeup_quanta) },
	{ .key = "chain_nowaker_quanta", U64(chain_nowaker) },
	{ .key = "chain_dropped_quanta", U64(chain_dropped) },
	{ .key = "clamped_quanta", U64(clamped) },
	/* what a store's share of the bound took from its past: a range before its oldest quantum
	 * is partly gone there, and the three stores keep different spans */
	{ .key = "evicted_quanta", U64(evicted[0]) },
	{ .key = "waker_evicted_quanta", U64(evicted[1]) },
	{ .key = "chain_evicted_quanta", U64(evicted[2]) },
	{ .key = "bytes", U64(bytes), .unit = "bytes", .metric = "ember_offcpu_store_bytes",
	  .type = COUNTER_GAUGE, .help = "Memory of the three off-CPU stores" },
	{ .key = "memory_limit", U64(max_bytes), .unit = "bytes",
	  .metric = "ember_offcpu_store_max_bytes", .type = COUNTER_GAUGE,
	  .help = "offcpu.memory_limit: the three off-CPU stores' one bound" },
};
const size_t offcpu_sink_counters_n = COUNTERS_N(offcpu_sink_counters);
