// SPDX-License-Identifier: MIT
/*
 * The runtime-introspection read (built and run by bench_rtintro.sh) of FILE (a Node binary),
 * as emberd does once per file when a Node process is first sampled, ROUNDS times in one
 * process: the file's image as the symbolizer reads it to name the process's native frames
 * (elfsym__open(), which emberd pays for any sampled Node, reader or not), then the V8 reader's
 * own work on that image (rtintro_v8_read_image(): the v8dbg_ constants' bytes). Prints each
 * round's CPU time in ms ("round N image_ms S reader_ms R") and what was read ("symbols N",
 * "major N"). The first round is what a daemon pays (its heap fresh); the later ones show the
 * reading itself, the heap warm.
 * Usage: bench_rtintro FILE ROUNDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "ember/daemon/elf/elfsym.h"
#include "ember/daemon/elf/rtintro.h"

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 3;

	if (argc < 2 || rounds < 1) {
		fprintf(stderr, "usage: bench_rtintro FILE ROUNDS\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		struct rtintro_stats st = { 0 };
		struct rtintro_v8 v;
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		double t0;
		int r;

		if (fd < 0) {
			perror(argv[1]);
			return 1;
		}
		struct elfsym_opts eo = { .max_symbols = 1u << 22, .max_section_bytes = 1ull << 30 };
		struct elfsym *es;
		double t1;

		t0 = cpu_ms();
		es = elfsym__open(fd, &eo);
		t1 = cpu_ms();
		r = es ? rtintro_v8_read_image(fd, es, &v, &st) : -1;
		printf("round %d image_ms %.1f reader_ms %.2f\n", i + 1, t1 - t0, cpu_ms() - t1);
		elfsym__free(es);
		close(fd);
		if (r) {
			fprintf(stderr, "%s: no V8 facts read (%d)\n", argv[1], r);
			return 1;
		}
		if (!i)
			printf("symbols %u\nmajor %d\n", v.n_symbols, v.major);
	}
	return 0;
}
