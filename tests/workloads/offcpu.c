// SPDX-License-Identifier: MIT
/*
 * offcpu: a thread with known off-CPU shares. The thread "blocker" repeats a cycle:
 * read() of one byte from a pipe that the thread "feeder" writes 6 ms after the cycle began
 * (blocked ~6 ms in pipe_read: ~60 %), nanosleep() of 4 ms (~40 %), then a short spin (~0.2 ms
 * on the CPU). The blocking calls sit in noinline functions wait_pipe() and wait_timer() called
 * from cycle(), so stacks show which is which.
 *
 * usage: offcpu SECONDS   Prints "ready PID TID" on stdout once started; at the end
 * "done TID elapsed_ns cpu_ns pipe_ns timer_ns runq_ns" for the blocker: its elapsed time from its
 * first cycle, its own CPU time (CLOCK_THREAD_CPUTIME_ID), the time spent in wait_pipe() and in
 * wait_timer() (CLOCK_MONOTONIC around the calls: blocked, then waiting for a CPU once woken) and
 * the time it waited for a CPU (/proc/thread-self/schedstat): blocked = elapsed - cpu - runq.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static volatile int stop;
static volatile unsigned long sink;
static uint64_t pipe_ns, timer_ns; /* time spent in wait_pipe(), wait_timer() */

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The kernel's count of this thread's time waiting for a CPU (schedstat's second field). */
static uint64_t runq_wait_ns(void)
{
	unsigned long long cpu = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");

	if (f) {
		if (fscanf(f, "%llu %llu", &cpu, &wait) != 2)
			wait = 0;
		fclose(f);
	}
	return wait;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts))
		;
}

/* the feeder: a byte every 10 ms, 6 ms into each of the blocker's cycles */
static void *feeder(void *arg)
{
	char c = 'x';

	(void)arg;
	pthread_setname_np(pthread_self(), "feeder");
	while (!stop) {
		sleep_ns(6000000);
		if (write(fds[1], &c, 1) != 1)
			break;
		sleep_ns(4200000);
	}
	return NULL;
}

__attribute__((noinline)) static void wait_pipe(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		exit(1);
}

__attribute__((noinline)) static void wait_timer(void)
{
	sleep_ns(4000000);
}

__attribute__((noinline)) static void spin(void)
{
	uint64_t end = now_ns(CLOCK_MONOTONIC) + 200000;

	while (now_ns(CLOCK_MONOTONIC) < end)
		sink++;
}

__attribute__((noinline)) static void cycle(void)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1, t2;

	wait_pipe();
	t1 = now_ns(CLOCK_MONOTONIC);
	wait_timer();
	t2 = now_ns(CLOCK_MONOTONIC);
	pipe_ns += t1 - t0;
	timer_ns += t2 - t1;
	spin();
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	uint64_t t0, end, cpu0, wait0;
	pthread_t th;

	if (pipe(fds))
		return 1;
	pthread_setname_np(pthread_self(), "blocker");
	printf("ready %d %ld\n", getpid(), (long)syscall(SYS_gettid));
	fflush(stdout);
	if (pthread_create(&th, NULL, feeder, NULL))
		return 1;
	t0 = now_ns(CLOCK_MONOTONIC);
	cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	wait0 = runq_wait_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	while (now_ns(CLOCK_MONOTONIC) < end)
		cycle();
	printf("done %ld %llu %llu %llu %llu %llu\n", (long)syscall(SYS_gettid),
	       (unsigned long long)(now_ns(CLOCK_MONOTONIC) - t0),
	       (unsigned long long)(now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0),
	       (unsigned long long)pipe_ns, (unsigned long long)timer_ns,
	       (unsigned long long)(runq_wait_ns() - wait0));
	fflush(stdout);
	stop = 1;
	return 0;
}
