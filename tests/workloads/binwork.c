// SPDX-License-Identifier: MIT
/*
 * binwork: nofp's known shares, for building with each toolchain and layout there is
 * (tests/integration/test_binaries.sh: clang + lld, gcc -static, -static-pie, musl-gcc, a
 * stripped copy whose symbols and CFI live only in a debug file) and, with -DBINWORK_LIB
 * -shared, as a library that `binwork --dlopen LIB` loads after it started.
 *
 * Each round work() (or the library's dl_work()) calls three leaf functions with 5 : 3 : 2 units
 * of the same loop: bw_a/bw_b/bw_c (dl_a/dl_b/dl_c) at 50 / 30 / 20 % of the process's CPU.
 * Units are calibrated to ~50 ms at start (see burn.c).
 *
 * usage: binwork SECONDS                 (default 10)
 *        binwork --dlopen LIB SECONDS    sleeps 2 s, dlopen()s LIB, then runs its dl_work()
 * Prints "ready PID" on stdout once started (with --dlopen: once LIB is loaded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define UNIT_MS 50

#ifdef BINWORK_LIB
#define A dl_a
#define B dl_b
#define C dl_c
#define WORK dl_work
#define UNIT dl_unit
#else
#define A bw_a
#define B bw_b
#define C bw_c
#define WORK work
#define UNIT unit
#endif

volatile unsigned long sink_; /* extern: the library and the program each have their own */
unsigned long UNIT = 200000;

/* each one its own loop (nothing shared, nothing folded), results written out */
__attribute__((noinline)) void A(unsigned long n)
{
	unsigned long x = sink_, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink_ = x;
}

__attribute__((noinline)) void B(unsigned long n)
{
	unsigned long x = sink_, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink_ = x;
}

__attribute__((noinline)) void C(unsigned long n)
{
	unsigned long x = sink_, i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink_ = x;
}

__attribute__((noinline)) void WORK(void)
{
	A(5 * UNIT);
	B(3 * UNIT);
	C(2 * UNIT);
	sink_++; /* not a tail call: WORK stays on the stack under C */
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#ifdef BINWORK_LIB
/* The library calibrates itself when loaded. */
__attribute__((constructor)) static void dl_calibrate(void)
#else
static void calibrate(void)
#endif
{
	unsigned long n = 0;
	double t0 = now();

	do {
		A(100000);
		n += 100000;
	} while (now() - t0 < 0.02);
	UNIT = (unsigned long)((double)n / (now() - t0) * UNIT_MS / 1000.0);
	if (UNIT < 1000)
		UNIT = 1000;
}

#ifndef BINWORK_LIB
#include <dlfcn.h>

int main(int argc, char **argv)
{
	void (*run)(void) = work;
	const char *lib = NULL;
	double seconds, end;

	if (argc > 2 && !strcmp(argv[1], "--dlopen")) {
		lib = argv[2];
		argc -= 2;
		argv += 2;
	}
	seconds = argc > 1 ? atof(argv[1]) : 10;
	if (seconds <= 0) {
		fprintf(stderr, "usage: binwork [--dlopen LIB] SECONDS\n");
		return 2;
	}
	if (lib) {
		void *h;

		sleep(2); /* a process the profiler has seen before the library comes */
		h = dlopen(lib, RTLD_NOW);
		run = h ? (void (*)(void))dlsym(h, "dl_work") : NULL;
		if (!run) {
			fprintf(stderr, "binwork: %s: %s\n", lib, dlerror());
			return 1;
		}
	} else {
		calibrate();
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	end = now() + seconds;
	do
		run();
	while (now() < end);
	return 0;
}
#endif
