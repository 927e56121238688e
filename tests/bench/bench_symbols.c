// SPDX-License-Identifier: MIT
/*
 * The symbolizer benchmark (built and run by bench_symbols.sh): resolves the addresses in FILE
 * (one hex address per line) in the live process PID, as leaf frames, then
 *  - cold: the first pass (reads /proc/PID/maps, opens and sorts every image's symbols);
 *  - warm: PASSES more passes (caches hot: what the daemon does on every drain), ns per frame;
 * and writes the frames of the first pass to OUT ("function;inlined_[i]", one address a line)
 * for the comparison with eu-addr2line. Prints "key value" lines.
 * Usage: bench_symbols PID FILE PASSES OUT [inline]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/core/base/strtab.h"
#include "ember/daemon/symbols/symbolizer.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct symbolizer_opts o = SYMBOLIZER_OPTS_DEFAULT;
	struct symbolizer_stats ss;
	struct strtab *st = strtab__new();
	struct symbolizer *s;
	uint64_t *ips = NULL;
	uint32_t ids[16];
	size_t n = 0, cap = 0, i;
	unsigned long pid, passes, p;
	double t0, cold, warm;
	char line[64];
	FILE *f, *out;

	if (argc < 5) {
		fprintf(stderr, "usage: bench_symbols PID FILE PASSES OUT [inline]\n");
		return 2;
	}
	pid = strtoul(argv[1], NULL, 10);
	passes = strtoul(argv[3], NULL, 10);
	o.inline_frames = argc > 5 && !strcmp(argv[5], "inline");
	f = fopen(argv[2], "r");
	out = fopen(argv[4], "w");
	if (!f || !out || !st)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			ips = realloc(ips, cap * sizeof(*ips));
			if (!ips)
				return 1;
		}
		ips[n++] = strtoull(line, NULL, 16);
	}
	fclose(f);
	s = symbolizer__new(&o, st);
	if (!s)
		return 1;
	t0 = now();
	for (i = 0; i < n; i++) {
		int k = symbolizer__user(s, (uint32_t)pid, &ips[i], 1, ids, 16);

		int j;

		/* root first: the function, then the functions inlined into it, innermost last */
		for (j = 0; j < k; j++)
			fprintf(out, "%s%s", j ? ";" : "", strtab__str(st, ids[j]));
		fprintf(out, "%s\n", k > 0 ? "" : "?");
	}
	cold = now() - t0;
	fclose(out);
	t0 = now();
	for (p = 0; p < passes; p++)
		for (i = 0; i < n; i++)
			(void)symbolizer__user(s, (uint32_t)pid, &ips[i], 1, ids, 16);
	warm = now() - t0;
	symbolizer__stats(s, &ss);
	printf("addresses %zu\n", n);
	printf("cold_ms %.2f\n", cold * 1e3);
	printf("cold_us_per_frame %.3f\n", cold * 1e6 / (double)n);
	printf("warm_ns_per_frame %.1f\n", passes ? warm * 1e9 / ((double)n * passes) : 0.0);
	printf("unresolved_share %.4f\n", (double)ss.user_unresolved / (double)ss.user_frames);
	printf("elfs %llu symbols %llu mem_bytes %llu\n", (unsigned long long)ss.elfs_cached,
	       (unsigned long long)ss.elf_symbols, (unsigned long long)ss.mem_bytes);
	symbolizer__free(s);
	strtab__free(st);
	free(ips);
	return 0;
}
