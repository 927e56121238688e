// SPDX-License-Identifier: MIT
/* struct filecache_stats described once (core/base/counters.h): "file_cache" in /api/v1/stats
 * (the daemon's one cache, whoever uses it), the ember_file_cache_* families. A new counter: a
 * field, one row. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/elf/filecache.h"

#define U64(f) .off = offsetof(struct filecache_stats, f), .value = COUNTER_U64
#define EVENTS "ember_file_cache_events_total"
#define EVENT(v) .metric = EVENTS, .label = "event", .label_value = v

const struct counter_desc filecache_counters[] = {
	{ .key = "files", U64(files), .unit = "files", .metric = "ember_file_cache_files",
	  .type = COUNTER_GAUGE,
	  .help = "Mapped files whose facts emberd keeps, shared by every process mapping them "
		  "([files] max_files)." },
	{ .key = "bytes", U64(bytes), .unit = "bytes", .metric = "ember_file_cache_bytes",
	  .type = COUNTER_GAUGE,
	  .help = "Bytes those facts and their entries hold ([files] max_memory)." },
	{ .key = "hits", U64(hits), .metric = EVENTS, .type = COUNTER_COUNTER,
	  .help = "File cache events: lookups that found a file's facts (hit) or not (miss), "
		  "hits on another file of the same build-id and size (shared), "
		  "entries dropped because the file under that device and inode changed, "
		  "evicted for room, facts refused as larger than the whole cache.",
	  .label = "event", .label_value = "hit" },
	{ .key = "misses", U64(misses), EVENT("miss") },
	{ .key = "shared", U64(shared), EVENT("shared") },
	{ .key = "changed", U64(changed), EVENT("changed") },
	{ .key = "evictions", U64(evictions), EVENT("eviction") },
	{ .key = "refused", U64(refused), EVENT("refused") },
};
const size_t filecache_counters_n = COUNTERS_N(filecache_counters);
