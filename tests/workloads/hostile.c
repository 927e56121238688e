// SPDX-License-Identifier: MIT
/*
 * hostile: what an unprivileged local user does to a profiler that reads its files
 * (tests/integration/test_hostile.sh). Each mode burns CPU in hostile_burn() or in a
 * library's function, so that emberd samples it and looks at its files:
 *
 *   hostile mapfd SECONDS FD...        maps each open FD executable (files the caller opened
 *                                      before covering their directory), then burns
 *   hostile dlcall SECONDS LIB SYMBOL  dlopen()s LIB and calls SYMBOL (void (*)(void)) in a loop
 *   hostile shrink SECONDS FILE BIG SMALL
 *                                      ftruncate()s FILE to BIG and SMALL bytes, over and over
 *
 * Prints "ready" once set up. Exit 0, or 1 with a message.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void hostile_burn(double seconds)
{
	double end = now() + seconds;
	unsigned long i;

	while (now() < end)
		for (i = 0; i < 100000; i++)
			sink += i * i;
}

int main(int argc, char **argv)
{
	double seconds;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: hostile mapfd|dlcall|shrink SECONDS ...\n");
		return 1;
	}
	seconds = atof(argv[2]);
	if (!strcmp(argv[1], "mapfd")) {
		for (i = 3; i < argc; i++) {
			int fd = atoi(argv[i]);
			struct stat st;

			if (fstat(fd, &st) || mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC,
						   MAP_PRIVATE, fd, 0) == MAP_FAILED) {
				perror("hostile: mmap");
				return 1;
			}
		}
		printf("ready\n");
		fflush(stdout);
		hostile_burn(seconds);
		return 0;
	}
	if (!strcmp(argv[1], "dlcall") && argc == 5) {
		void *h = dlopen(argv[3], RTLD_NOW);
		void (*fn)(void);
		double end;

		if (!h || !(fn = (void (*)(void))dlsym(h, argv[4]))) {
			fprintf(stderr, "hostile: %s\n", dlerror());
			return 1;
		}
		printf("ready\n");
		fflush(stdout);
		end = now() + seconds;
		while (now() < end)
			fn();
		return 0;
	}
	if (!strcmp(argv[1], "shrink") && argc == 6) {
		long long big = atoll(argv[4]), small = atoll(argv[5]);
		double end = now() + seconds;

		printf("ready\n");
		fflush(stdout);
		while (now() < end) {
			if (truncate(argv[3], big) || truncate(argv[3], small)) {
				perror("hostile: truncate");
				return 1;
			}
		}
		return 0;
	}
	fprintf(stderr, "hostile: bad arguments\n");
	return 1;
}
