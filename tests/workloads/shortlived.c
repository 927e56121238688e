// SPDX-License-Identifier: MIT
/*
 * shortlived: a process that lives a few milliseconds, as a build's or a script's children do:
 * main() -> work() -> step() spin for MS milliseconds of CPU (default 30), then it exits. Built
 * -O2 -fomit-frame-pointer, as distributions build: its stacks reach main only through the
 * unwind tables, which emberd must have ready within the process's short life.
 *
 * usage: shortlived [MS]
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void step(void)
{
	unsigned long i;

	for (i = 0; i < 20000; i++)
		sink += i * i;
}

__attribute__((noinline)) static void work(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		step();
}

int main(int argc, char **argv)
{
	work(argc > 1 ? atof(argv[1]) : 30);
	return 0;
}
