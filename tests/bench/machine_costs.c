// SPDX-License-Identifier: MIT
/*
 * What the kernel's basic operations cost on this machine, the ones a new process makes emberd
 * pay (a drain wake-up is a context switch and a few system calls; a worker hand-off another
 * switch; a maps read system calls; a fresh buffer page faults): the median of 7 rounds of
 *   syscall   getppid(), 200,000 times                       ns per call
 *   switch    two threads handing a byte back and forth over two pipes, pinned to one CPU,
 *             20,000 round trips                              us per switch (a round trip is two)
 *   fault     touching each page of a fresh 32 MB mapping     ns per page fault
 *   fork      fork() + _exit() + waitpid(), 200 times         us per process
 * Printed as one line, "# machine: syscall N ns, switch N us, fault N ns, fork+exit N us", so
 * that a per-new-process figure from another machine can be read against these: a guest whose
 * every kernel entry takes a page-table switch (pti=on) or traps to the hypervisor pays several
 * times the same instructions' cost (docs/benchmarks.md).
 * usage: machine_costs
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 7

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return v[ROUNDS / 2];
}

static double syscall_ns(void)
{
	const int n = 200000;
	double t = now_ns();

	for (int i = 0; i < n; i++)
		(void)syscall(SYS_getppid);
	return (now_ns() - t) / n;
}

static int ping[2], pong[2];
#define TRIPS 20000

static void pin0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	(void)sched_setaffinity(0, sizeof(set), &set);
}

static void *echo(void *arg)
{
	char c;

	(void)arg;
	pin0();
	for (int i = 0; i < TRIPS; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

static double switch_us(void)
{
	pthread_t th;
	char c = 'x';
	double t;

	if (pipe(ping) || pipe(pong))
		return -1;
	pin0();
	if (pthread_create(&th, NULL, echo, NULL))
		return -1;
	t = now_ns();
	for (int i = 0; i < TRIPS; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			break;
	t = now_ns() - t;
	pthread_join(th, NULL);
	close(ping[0]), close(ping[1]), close(pong[0]), close(pong[1]);
	/* a round trip: two switches and four system calls; the calls' own cost taken out */
	return (t / TRIPS - 4 * syscall_ns()) / 2 / 1000;
}

static double fault_ns(void)
{
	const size_t len = 32u << 20, page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t;

	if (p == MAP_FAILED)
		return -1;
	t = now_ns();
	for (size_t i = 0; i < len; i += page)
		p[i] = 1;
	t = now_ns() - t;
	munmap(p, len);
	return t / (len / page);
}

static double fork_us(void)
{
	const int n = 200;
	double t = now_ns();

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return -1;
	}
	return (now_ns() - t) / n / 1000;
}

int main(void)
{
	double s[ROUNDS], w[ROUNDS], f[ROUNDS], k[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		s[r] = syscall_ns();
		w[r] = switch_us();
		f[r] = fault_ns();
		k[r] = fork_us();
	}
	printf("# machine: syscall %.0f ns, switch %.1f us, fault %.0f ns, fork+exit %.0f us "
	       "(median of %d rounds)\n",
	       median(s), median(w), median(f), median(k), ROUNDS);
	return 0;
}
