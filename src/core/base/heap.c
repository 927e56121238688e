// SPDX-License-Identifier: MIT
#include <fcntl.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ember/core/base/heap.h"

static uint64_t last_trim_ns, nr_trims, nr_trimmed_bytes;

static void arena_bytes(uint64_t *in_use, uint64_t *free_bytes)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
	struct mallinfo2 mi = mallinfo2();

	*in_use = mi.uordblks + mi.hblkhd;
	*free_bytes = mi.fordblks;
#else
	*in_use = *free_bytes = 0;
#endif
}

/* Resident bytes of this process (/proc/self/statm), 0 when unknown. */
static uint64_t resident_bytes(void)
{
	char buf[128];
	unsigned long long size, res;
	ssize_t n;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

void heap_stats(struct heap_stats *ret)
{
	arena_bytes(&ret->in_use_bytes, &ret->free_bytes);
	ret->trims = __atomic_load_n(&nr_trims, __ATOMIC_RELAXED);
	ret->trimmed_bytes = __atomic_load_n(&nr_trimmed_bytes, __ATOMIC_RELAXED);
}

uint64_t heap_trim(uint64_t now_ns, uint64_t min_free_bytes)
{
	uint64_t last = __atomic_load_n(&last_trim_ns, __ATOMIC_RELAXED), in_use, free_bytes;
	uint64_t before, after, gave = 0;

	if (last && now_ns - last < 1000000000ULL)
		return 0;
	arena_bytes(&in_use, &free_bytes);
	if (free_bytes <= min_free_bytes || free_bytes <= in_use / 8)
		return 0;
	/* one caller at a time: the others see the new time and wait their second */
	if (!__atomic_compare_exchange_n(&last_trim_ns, &last, now_ns, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return 0;
	before = resident_bytes();
	(void)malloc_trim(0);
	after = resident_bytes();
	if (before > after)
		gave = before - after;
	__atomic_add_fetch(&nr_trims, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&nr_trimmed_bytes, gave, __ATOMIC_RELAXED);
	return gave;
}
