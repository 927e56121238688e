// SPDX-License-Identifier: MIT
/*
 * pingpong: two threads pass a byte back and forth over two pipes (each read() blocks until the
 * other writes: two context switches a round when they share a CPU, two blocked periods a round
 * in any case), for the off-CPU cost benchmark (tests/bench/bench_offcpu.sh). SPIN_NS of busy
 * work per side and round lowers the rate (0: as fast as the pipes go).
 *
 * usage: pingpong SECONDS [SPIN_NS]   Prints "rounds N per_s R" at the end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static uint64_t spin_ns;
static volatile int stop;
static volatile unsigned long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(void)
{
	uint64_t end;

	if (!spin_ns)
		return;
	end = now_ns() + spin_ns;
	while (now_ns() < end)
		sink++;
}

static void *pong(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "pong");
	while (read(ab[0], &c, 1) == 1) {
		spin();
		if (write(ba[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	uint64_t t0, end, n = 0;
	pthread_t th;
	char c = 'x';

	spin_ns = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
	if (pipe(ab) || pipe(ba) || pthread_create(&th, NULL, pong, NULL))
		return 1;
	pthread_setname_np(pthread_self(), "ping");
	t0 = now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while (now_ns() < end) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
		spin();
		n++;
	}
	printf("rounds %llu per_s %.0f\n", (unsigned long long)n, (double)n * 1e9 / (double)(now_ns() - t0));
	close(ab[1]);
	return 0;
}
