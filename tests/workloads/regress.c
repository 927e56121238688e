// SPDX-License-Identifier: MIT
/*
 * regress: the experiment of Tornetta, "On the Algebraic Properties of Flame Graphs" (section 4),
 * in C. main -> c -> b -> a, where a() burns 200 ms of CPU in the baseline; in the "regressed"
 * build (REGRESSION set in the environment, as in the paper, or --regressed) a() burns 150 ms
 * and a start-up function, startup(), burns an extra 100 ms first. Profiling both ways many
 * times and running `ember stat compare` must find exactly these two stacks.
 *
 * The burns count CPU time of this thread (CLOCK_THREAD_CPUTIME_ID), not wall time, so that a
 * busy machine stretches a run but does not change its samples. The spinning is inlined into
 * a() and startup() so that they are the leaf frames; the clock is read about once per
 * millisecond of spinning so that the syscall's own samples stay negligible.
 *
 * Usage: regress [--regressed] [--iterations N] [--scale F]   (F multiplies every burn)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double scale = 1.0;
static volatile double sink;

static inline double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Spins for @ms of CPU time; inlined into its caller, which is then the sampled leaf. */
static inline __attribute__((always_inline)) void burn_ms(double ms)
{
	static unsigned long chunk = 1000;
	double start = cpu_ms(), now = start, last = start, x = sink;
	unsigned long i;

	ms *= scale;
	while (now - start < ms) {
		for (i = 0; i < chunk; i++)
			x = x * 0.999999 + 1.0;
		now = cpu_ms();
		/* aim at one clock read per ~1 ms of spinning */
		if (now - last < 0.5 && chunk < (1ul << 30))
			chunk *= 2;
		last = now;
	}
	sink = x;
}

__attribute__((noinline)) void startup(void)
{
	burn_ms(100);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void a(bool regressed)
{
	burn_ms(regressed ? 150 : 200);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void b(bool regressed)
{
	a(regressed);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void c(bool regressed)
{
	b(regressed);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *env = getenv("REGRESSION");
	bool regressed = env && *env && strcmp(env, "0");
	long iterations = 1, n;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--regressed")) {
			regressed = true;
		} else if (!strcmp(argv[i], "--iterations") && i + 1 < argc) {
			iterations = strtol(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
			scale = strtod(argv[++i], NULL);
		} else {
			fprintf(stderr, "usage: regress [--regressed] [--iterations N] [--scale F]\n");
			return 2;
		}
	}
	if (regressed)
		startup();
	for (n = 0; n < iterations; n++)
		c(regressed);
	return 0;
}
