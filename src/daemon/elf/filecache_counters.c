// SPDX-License-Identifier: MIT
/* struct filecache_stats described once (core/base/counters.h): a "file_cache" object in
 * /api/v1/stats (the CPython reader's: "python.file_cache"). A new counter: a field, one row. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/elf/filecache.h"

#define U64(f) .off = offsetof(struct filecache_stats, f), .value = COUNTER_U64

const struct counter_desc filecache_counters[] = {
	{ .key = "files", U64(files), .unit = "files" },
	{ .key = "bytes", U64(bytes), .unit = "bytes" },
	{ .key = "hits", U64(hits) },
	{ .key = "misses", U64(misses) },
	{ .key = "changed", U64(changed) },
	{ .key = "evictions", U64(evictions) },
	{ .key = "refused", U64(refused) },
};
const size_t filecache_counters_n = COUNTERS_N(filecache_counters);
