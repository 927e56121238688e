/* SPDX-License-Identifier: MIT */
/*
 * keysort: sorting records by an unsigned 64-bit key (an address) with a radix sort, ties put in
 * order by a comparator. The symbol tables (ELF, /proc/kallsyms, perf-map files) have tens of
 * thousands of entries: qsort's comparisons were most of emberd's instructions at start-up.
 */
#ifndef EMBER_KEYSORT_H
#define EMBER_KEYSORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Orders two records with equal keys: <0, 0, >0 as for qsort_r. */
typedef int (*keysort_tie_fn)(const void *a, const void *b, void *ctx);

/*
 * Sorts @n records of @size bytes at @base by the uint64_t at byte @key_off of each, ascending;
 * records with equal keys by @tie (NULL: kept in their order). If the scratch copy (n * size
 * bytes) cannot be allocated, falls back to qsort_r with the same order, so the result never
 * depends on memory (with a NULL @tie, equal keys then may change order).
 */
void keysort(void *base, size_t n, size_t size, size_t key_off, keysort_tie_fn tie, void *ctx);

/*
 * In @n records sorted by the uint64_t at byte @key_off (as keysort leaves them): the index of
 * the first whose key is above @key, @n if none; the record before it, if any, is the last
 * with a key <= @key (the symbol an address falls in). Inline: the lookups of every frame.
 */
static inline size_t keysort_upper(const void *base, size_t n, size_t size, size_t key_off,
				   uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
