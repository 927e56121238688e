// SPDX-License-Identifier: MIT
/*
 * Process churn at a fixed rate: starts CMD [ARG...] RATE times a second for SECONDS (posix_spawn,
 * no shell, their stdout to /dev/null), reaps the children as they exit, and prints "started N
 * failed F" at the end. For the churn benchmark (tests/bench/bench_churn.sh) and the
 * short-lived process tests. CMD is a path (no PATH search).
 *
 * usage: spawn RATE SECONDS CMD [ARG...]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reap(int flags, long *running)
{
	while (*running > 0 && waitpid(-1, NULL, flags) > 0)
		(*running)--;
}

int main(int argc, char **argv)
{
	double rate, seconds, t0, next;
	long started = 0, failed = 0, running = 0;
	posix_spawn_file_actions_t fa;
	struct timespec ts;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: spawn RATE SECONDS CMD [ARG...]\n");
		return 2;
	}
	rate = atof(argv[1]);
	seconds = atof(argv[2]);
	if (rate <= 0 || seconds <= 0) {
		fprintf(stderr, "spawn: RATE and SECONDS must be positive\n");
		return 2;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = now();
	next = t0;
	while (next < t0 + seconds) {
		double d = next - now();

		if (d > 0) {
			ts.tv_sec = (time_t)d;
			ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		if (posix_spawn(&pid, argv[3], &fa, NULL, argv + 3, environ) == 0) {
			started++;
			running++;
		} else {
			failed++;
		}
		reap(WNOHANG, &running);
		next += 1.0 / rate;
	}
	reap(0, &running);
	printf("started %ld failed %ld\n", started, failed);
	return failed ? 1 : 0;
}
