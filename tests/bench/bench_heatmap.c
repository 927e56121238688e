// SPDX-License-Identifier: MIT
/*
 * The flame scope scale benchmark (built and run by bench_heatmap.sh): one hour of samples from a
 * 128-CPU host at 99 Hz (45.6 M samples) held in a struct samples in memory, then
 *  - the heat map of the hour (1 s x 50 rows of 20 ms, idle excluded), median of N runs;
 *  - the profile of a 10 s range at random offsets, median of N runs;
 *  - memory per stored sample (samples__mem_bytes, and the process's RSS growth).
 * Prints "key value" lines. Usage: bench_heatmap [HOURS_FRACTION] (1 = the full hour).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/core/render/heatmap.h"
#include "ember/core/render/heatmap_samples.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/samples.h"
#include "ember/core/base/strtab.h"

#define NS 1000000000ULL
#define CPUS 128
#define HZ 99
#define STACKS 20000
#define FRAMES 3000

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * CPU time of this thread: on the shared, oversubscribed test machines wall-clock time mostly
 * measures the scheduler. Wall time is printed too (*_wall_ms).
 */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	fclose(f);
	return kb;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	double fraction = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t seconds = (uint64_t)(3600 * fraction), ticks = seconds * HZ, k, start;
	struct strtab *st = strtab__new();
	struct samples *s = samples__new(st);
	uint32_t frames[40], *ids = malloc(STACKS * sizeof(*ids));
	struct samples_filter f;
	struct heatmap_opts o;
	struct heatmap hm;
	double t0, w0, t[41], w[41];
	long rss0, rss1;
	char name[64];
	int i, runs = 11;

	if (!s || !ids)
		return 1;
	/* stacks: a process root frame, then 8..32 frames from a pool; 1 in 4 is an idle stack */
	for (i = 0; i < STACKS; i++) {
		size_t d = 8 + next_rand() % 25, j;
		int n;

		if (i % 4 == 0) {
			frames[0] = (uint32_t)strtab__intern(st, "swapper", 7);
			frames[1] = (uint32_t)strtab__intern(st, "cpu_startup_entry", 17);
			frames[2] = (uint32_t)strtab__intern(st, "do_idle", 7);
			d = 3 + (size_t)(i % 3);
			for (j = 3; j < d; j++) {
				n = snprintf(name, sizeof(name), "idle_helper_%d", (int)j);
				frames[j] = (uint32_t)strtab__intern(st, name, (size_t)n);
			}
		} else {
			n = snprintf(name, sizeof(name), "proc%d-%d/%d", i % 50, 1000 + i % 50,
				     2000 + i % 400);
			frames[0] = (uint32_t)strtab__intern(st, name, (size_t)n);
			for (j = 1; j < d; j++) {
				n = snprintf(name, sizeof(name), "function_%d", (int)(next_rand() % FRAMES));
				frames[j] = (uint32_t)strtab__intern(st, name, (size_t)n);
			}
		}
		ids[i] = (uint32_t)samples__intern(s, frames, d);
	}
	rss0 = rss_kb();
	t0 = now_ms();
	w0 = wall_ms();
	start = 1712345678ULL * NS;
	/* each CPU samples every 1/99 s, CPU c offset by c * 78 us: times come in order */
	for (k = 0; k < ticks; k++) {
		uint64_t base = start + k * NS / HZ;

		for (i = 0; i < CPUS; i++) {
			uint64_t r = next_rand();
			/* skewed: a few hot stacks, a long tail */
			uint32_t sid = ids[(r & 1) ? (r >> 8) % 64 : (r >> 8) % STACKS];

			if (samples__add(s, base + (uint64_t)i * 78125, sid, 1))
				return 1;
		}
	}
	printf("mem_bytes_per_sample_before_shrink %.2f\n",
	       (double)samples__mem_bytes(s) / (double)samples__nr(s));
	samples__shrink(s);
	rss1 = rss_kb();
	printf("samples %zu\n", samples__nr(s));
	printf("stacks %zu\n", samples__nr_stacks(s));
	printf("build_ms %.1f\n", now_ms() - t0);
	printf("build_wall_ms %.1f\n", wall_ms() - w0);
	printf("mem_bytes_per_sample %.2f\n",
	       (double)samples__mem_bytes(s) / (double)samples__nr(s));
	printf("rss_bytes_per_sample %.2f\n", (double)(rss1 - rss0) * 1024 / (double)samples__nr(s));
	printf("strtab_bytes %zu\n", strtab__mem_bytes(st));

	/* the heat map of the hour: default arrangement, idle excluded */
	samples_filter_init(&f);
	heatmap_opts_init(&o);
	if (heatmap_opts_fit(&o, samples__first_ns(s), samples__last_ns(s)))
		return 1;
	for (i = 0; i < runs; i++) {
		if (heatmap_init(&hm, &o))
			return 1;
		t0 = now_ms();
		w0 = wall_ms();
		if (heatmap_add_samples(&hm, s, &f))
			return 1;
		t[i] = now_ms() - t0;
		w[i] = wall_ms() - w0;
		if (i == runs - 1)
			printf("heatmap_total %.0f columns %u\n", hm.total, hm.o.columns);
		heatmap_fini(&hm);
	}
	printf("heatmap_ms %.2f\n", median(t, runs));
	printf("heatmap_wall_ms %.2f\n", median(w, runs));
	/* with idle included (no filter at all: the unfiltered path) */
	f.include_idle = true;
	for (i = 0; i < runs; i++) {
		if (heatmap_init(&hm, &o))
			return 1;
		t0 = now_ms();
		if (heatmap_add_samples(&hm, s, &f))
			return 1;
		t[i] = now_ms() - t0;
		heatmap_fini(&hm);
	}
	printf("heatmap_all_ms %.2f\n", median(t, runs));
	/* the hour as one column of 60 one-minute rows */
	f.include_idle = false;
	o.column_ns = 3600 * NS;
	o.rows = 60;
	if (heatmap_opts_fit(&o, samples__first_ns(s), samples__last_ns(s)))
		return 1;
	for (i = 0; i < runs; i++) {
		if (heatmap_init(&hm, &o))
			return 1;
		t0 = now_ms();
		if (heatmap_add_samples(&hm, s, &f))
			return 1;
		t[i] = now_ms() - t0;
		heatmap_fini(&hm);
	}
	printf("heatmap_hour_rows_ms %.2f\n", median(t, runs));

	/* 10 s range profiles at random offsets */
	runs = 41;
	for (i = 0; i < runs; i++) {
		struct profile *p = profile__new(st);
		uint64_t a = start + (next_rand() % (seconds > 10 ? seconds - 10 : 1)) * NS +
			     next_rand() % NS;
		int n;

		t0 = now_ms();
		w0 = wall_ms();
		n = samples__range_profile(s, a, a + 10 * NS, &f, p);
		t[i] = now_ms() - t0;
		w[i] = wall_ms() - w0;
		if (n <= 0)
			return 1;
		if (i == 0)
			printf("range_samples %d range_stacks %zu\n", n, profile__nr_stacks(p));
		profile__free(p);
	}
	printf("range10s_ms %.2f\n", median(t, runs));
	printf("range10s_wall_ms %.2f\n", median(w, runs));
	samples__free(s);
	strtab__free(st);
	free(ids);
	return 0;
}
