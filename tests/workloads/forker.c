// SPDX-License-Identifier: MIT
/*
 * forker: a forking server's shape: the parent spins WARM milliseconds of CPU in
 * warm() (it gets sampled and listed for the walker meanwhile), then forks N children one after
 * the other, each of which names itself "forkchild" and spins MS milliseconds in main() -> work()
 * -> step() without exec, then exits. Built -O2 -fomit-frame-pointer: a child's stacks reach main
 * only through unwind tables, which the walker has from the child's first instruction only if it
 * was listed at its fork (a copy of its parent's list).
 *
 * usage: forker [N [MS [WARM]]]   (defaults 50, 30, 300)
 */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

__attribute__((noinline)) static void warm(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		step();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50, i;
	double ms = argc > 2 ? atof(argv[2]) : 30, warm_ms = argc > 3 ? atof(argv[3]) : 300;
	pid_t pid;

	warm(warm_ms);
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			prctl(PR_SET_NAME, "forkchild");
			work(ms);
			_exit(0);
		}
		if (waitpid(pid, NULL, 0) < 0)
			return 1;
	}
	return 0;
}
