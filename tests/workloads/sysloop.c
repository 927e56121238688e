// SPDX-License-Identifier: MIT
/*
 * sysloop: a syscall-heavy workload. main -> write_loop() writes 4 KiB blocks to /dev/null and
 * reads /dev/zero in a loop, so most of its CPU time is in the kernel, under its user frames.
 *
 * usage: sysloop SECONDS     prints "ready PID" once started.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[65536];

static __attribute__((noinline)) void write_loop(int out, int in, double seconds)
{
	struct timespec ts;
	double end, t;
	unsigned long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + seconds;
	for (;;) {
		if (write(out, buf, sizeof(buf)) < 0 || read(in, buf, sizeof(buf)) < 0)
			exit(1);
		if ((++n & 255) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
			if (t >= end)
				break;
		}
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int in = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (out < 0 || in < 0 || seconds <= 0) {
		fprintf(stderr, "usage: sysloop SECONDS\n");
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	write_loop(out, in, seconds);
	return 0;
}
