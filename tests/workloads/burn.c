// SPDX-License-Identifier: MIT
/*
 * burn: a CPU burner with known shares. Each round main() calls burn_a, burn_b and burn_c with
 * 6 : 3 : 1 units of the same arithmetic loop, so whatever the scheduler does, 60% / 30% / 10%
 * of the process's CPU time is spent in them (main's own share is a few instructions per round).
 *
 * A unit is calibrated to ~50 ms, so a round (500 ms) is much longer than a 99 Hz sampling
 * period: periodic sampling then measures the shares almost exactly (the error is a fraction
 * of a sample per function boundary), where short rounds would alias with the sampling period.
 * Only whole rounds run, so the shares hold for any run length.
 *
 * usage: burn SECONDS [THREADS [UNIT_MS]]   (default 10 s, 1 thread, 50 ms units; each thread
 *        runs the same rounds). A shorter unit suits a short window at a high frequency: a
 *        window must hold many whole rounds for the shares to show in it.
 * Prints "ready PID" on stdout once started.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double unit_ms = 50;

static unsigned long unit = 200000; /* loop iterations per unit; calibrated in main() */
static volatile unsigned long sink;

/*
 * GCC sets up no frame in a leaf function even with -fno-omit-frame-pointer, and a frame-pointer
 * unwinder then skips the leaf's caller. Each burn_* ends with this call so that it is no leaf
 * and keeps its frame: stacks read main;rounds;burn_a.
 */
static __attribute__((noinline)) void store(unsigned long x)
{
	sink = x;
}
static double seconds = 10;

static __attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long x = sink, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* each burn_* runs its loop itself (no shared leaf), so stacks end in the function named */
static __attribute__((noinline)) void burn_a(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 6 * unit; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	store(x);
}

static __attribute__((noinline)) void burn_b(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 3 * unit; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	store(x);
}

static __attribute__((noinline)) void burn_c(void)
{
	unsigned long x = sink, i;

	for (i = 0; i < 1 * unit; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	store(x);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void *rounds(void *arg)
{
	double end = now() + seconds;
	unsigned long r = 0;

	while (r++ == 0 || now() < end) {
		burn_a();
		burn_b();
		burn_c();
	}
	return arg;
}

int main(int argc, char **argv)
{
	int threads = 1, i;
	pthread_t t[64];

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		unit_ms = atof(argv[3]);
	if (seconds <= 0 || threads < 1 || threads > 64 || unit_ms < 0.1 || unit_ms > 1000) {
		fprintf(stderr, "usage: burn SECONDS [THREADS<=64 [UNIT_MS 0.1-1000]]\n");
		return 2;
	}
	{
		/* iterations per unit_ms: time 20 ms worth of spinning */
		double t0 = now(), t;
		unsigned long n = 0;

		do {
			spin(100000);
			n += 100000;
			t = now();
		} while (t - t0 < 0.02);
		unit = (unsigned long)((double)n / (t - t0) * unit_ms / 1000.0);
		if (unit < 1000)
			unit = 1000;
		if (seconds < 2) /* short runs (pid tests) still want several rounds */
			unit = unit * (unsigned long)(seconds * 1000) / 2000 + 1000;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, rounds, NULL);
	rounds(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
