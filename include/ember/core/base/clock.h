/* SPDX-License-Identifier: MIT */
/* clock: a clock's time in nanoseconds, the one helper for every module that reads one. */
#ifndef EMBER_CLOCK_H
#define EMBER_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL

/* @id's time in ns (CLOCK_MONOTONIC, CLOCK_REALTIME, ...); 0 if the clock cannot be read. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

#endif
