// SPDX-License-Identifier: MIT
/*
 * nofp: burn's known shares in a program built as distributions build theirs, -O2 without frame
 * pointers (the Makefile's WORKLOAD_nofp_CFLAGS): only an unwinder that reads the call frame
 * information walks its stacks. Each round main() calls work(), which calls nofp_a, nofp_b and
 * nofp_c with 5 : 3 : 2 units of the same loop: 50% / 30% / 20% of the process's CPU time, in
 * leaf functions that keep no frame pointer. Units are calibrated to ~50 ms (see burn.c).
 *
 * usage: nofp SECONDS   (default 10 s). Prints "ready PID" on stdout once started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT_MS 50

static volatile unsigned long sink;
static unsigned long unit = 200000;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* each one runs its own loop (no shared leaf) and writes the result out, so nothing is folded
 * away; noinline keeps them functions of their own, as in the stacks the test expects */
__attribute__((noinline)) void nofp_a(unsigned long n)
{
	unsigned long x = sink, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void nofp_b(unsigned long n)
{
	unsigned long x = sink, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void nofp_c(unsigned long n)
{
	unsigned long x = sink, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void work(void)
{
	nofp_a(5 * unit);
	nofp_b(3 * unit);
	nofp_c(2 * unit);
	sink++; /* not a tail call: work stays on the stack under nofp_c */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, t0, end;
	unsigned long n = 0;

	if (seconds <= 0) {
		fprintf(stderr, "usage: nofp SECONDS\n");
		return 2;
	}
	t0 = now();
	do {
		nofp_a(100000);
		n += 100000;
	} while (now() - t0 < 0.02);
	unit = (unsigned long)((double)n / (now() - t0) * UNIT_MS / 1000.0);
	if (unit < 1000)
		unit = 1000;
	printf("ready %d\n", 0 + (int)getpid());
	fflush(stdout);
	end = now() + seconds;
	do
		work();
	while (now() < end);
	/* the CPU time it got: what a sampler at F Hz should have of it (F x this) */
	{
		struct timespec ts;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		printf("cpu %.3f\n", (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	}
	return 0;
}
