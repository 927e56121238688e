/* SPDX-License-Identifier: MIT */
#ifndef EMBER_CORE_BASE_HEAP_H
#define EMBER_CORE_BASE_HEAP_H

#include <stdint.h>
#include "ember/core/base/counters.h"

/*
 * The process heap (glibc malloc): what is in use and free, and giving free pages back.
 *
 * A long-running daemon whose renders, symbol tables and batches come and go leaves free chunks
 * scattered through malloc's arenas; glibc returns only the top of each heap on its own, so RSS
 * climbed with the free bytes while the bytes in use stayed flat (the 30 s soak: in use 45-50
 * MiB, free 9 -> 38 MiB, RSS 48 -> 83 MiB). heap_trim() gives the whole free pages inside the
 * arenas back to the kernel (malloc_trim(0): MADV_DONTNEED), at most once a second and only
 * when the free bytes are worth it.
 */
struct heap_stats {
	uint64_t in_use_bytes; /* allocated: every arena and the mmapped chunks */
	uint64_t free_bytes;   /* free in the arenas, given back or not */
	uint64_t trims;	       /* heap_trim() calls that trimmed */
	uint64_t trimmed_bytes; /* resident bytes those gave back (RSS before - after) */
};

void heap_stats(struct heap_stats *ret);

/* struct heap_stats described once (heap_counters.c, counters.h) */
extern const struct counter_desc heap_counters[];
extern const size_t heap_counters_n;

/*
 * Trims when a second has passed since the last trim and the free bytes exceed both
 * @min_free_bytes and an eighth of the bytes in use. Returns the resident bytes given back (0
 * when it did not trim). Thread-safe; meant for a housekeeping thread.
 */
uint64_t heap_trim(uint64_t now_ns, uint64_t min_free_bytes);

#endif
