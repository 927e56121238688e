// SPDX-License-Identifier: MIT
/* struct heap_stats described once (counters.h): "heap" in /api/v1/stats, the ember_heap_*
 * families. A new counter: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/core/base/heap.h"

#define U64(f) .off = offsetof(struct heap_stats, f), .value = COUNTER_U64, .unit = "bytes"

const struct counter_desc heap_counters[] = {
	{ .key = "in_use_bytes", U64(in_use_bytes), .metric = "ember_heap_in_use_bytes",
	  .type = COUNTER_GAUGE,
	  .help = "Heap bytes allocated and in use (glibc mallinfo2: every arena, mmapped chunks "
		  "too)." },
	{ .key = "free_bytes", U64(free_bytes), .metric = "ember_heap_free_bytes",
	  .type = COUNTER_GAUGE,
	  .help = "Heap bytes freed but kept by malloc (resident until trimmed)." },
	{ .key = "trims", .off = offsetof(struct heap_stats, trims), .value = COUNTER_U64,
	  .metric = "ember_heap_trims_total", .type = COUNTER_COUNTER,
	  .help = "Times the worker gave malloc's free pages back to the kernel (malloc_trim)." },
	{ .key = "trimmed_bytes", U64(trimmed_bytes), .metric = "ember_heap_trimmed_bytes_total",
	  .type = COUNTER_COUNTER, .help = "Resident bytes those trims gave back." },
};
const size_t heap_counters_n = COUNTERS_N(heap_counters);
