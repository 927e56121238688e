// SPDX-License-Identifier: MIT
#include "ember/daemon/elf/keysort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SMALL 32 /* below this, insertion sort */

struct order {
	size_t key_off;
	keysort_tie_fn tie;
	void *ctx;
};

static uint64_t key_at(const char *rec, size_t key_off)
{
	uint64_t k;

	memcpy(&k, rec + key_off, sizeof(k));
	return k;
}

static int cmp_full(const void *a, const void *b, void *arg)
{
	const struct order *o = arg;
	uint64_t ka = key_at(a, o->key_off), kb = key_at(b, o->key_off);

	if (ka != kb)
		return (ka > kb) - (ka < kb);
	return o->tie ? o->tie(a, b, o->ctx) : 0;
}

/* One record: a constant size lets the compiler copy it inline (the symbol tables' are 32) */
static inline void copy_rec(char *dst, const char *src, size_t size)
{
	switch (size) {
	case 16:
		memcpy(dst, src, 16);
		break;
	case 24:
		memcpy(dst, src, 24);
		break;
	case 32:
		memcpy(dst, src, 32);
		break;
	case 40:
		memcpy(dst, src, 40);
		break;
	default:
		memcpy(dst, src, size);
	}
}

/* Stable insertion sort of a few records; @tmp holds one record. */
static void insertion(char *base, size_t n, size_t size, const struct order *o, char *tmp)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && cmp_full(base + (j - 1) * size, base + i * size, (void *)o) > 0;
		     j--)
			;
		if (j == i)
			continue;
		memcpy(tmp, base + i * size, size);
		memmove(base + (j + 1) * size, base + j * size, (i - j) * size);
		memcpy(base + j * size, tmp, size);
	}
}

void keysort(void *base, size_t n, size_t size, size_t key_off, keysort_tie_fn tie, void *ctx)
{
	struct order o = { key_off, tie, ctx };
	size_t (*count)[256], i, b, run;
	char *src = base, *dst, *scratch;

	if (n < 2)
		return;
	scratch = n <= SIZE_MAX / size ? malloc(n * size) : NULL;
	count = calloc(8, sizeof(*count));
	if (!scratch || !count) {
		free(scratch);
		free(count);
		qsort_r(base, n, size, cmp_full, &o);
		return;
	}
	if (n < SMALL) {
		insertion(base, n, size, &o, scratch);
		goto out;
	}
	/* one pass for the eight byte histograms; a byte equal in every key needs no pass */
	for (i = 0; i < n; i++) {
		uint64_t k = key_at(src + i * size, key_off);

		for (b = 0; b < 8; b++)
			count[b][(k >> (8 * b)) & 0xff]++;
	}
	dst = scratch;
	for (b = 0; b < 8; b++) {
		size_t sum = 0, c, d;
		uint64_t first = key_at(src, key_off);

		if (count[b][(first >> (8 * b)) & 0xff] == n)
			continue;
		for (d = 0; d < 256; d++) {
			c = count[b][d];
			count[b][d] = sum;
			sum += c;
		}
		/* least significant byte first, each pass stable: equal keys keep their order */
		for (i = 0; i < n; i++) {
			const char *rec = src + i * size;

			d = (key_at(rec, key_off) >> (8 * b)) & 0xff;
			copy_rec(dst + count[b][d]++ * size, rec, size);
		}
		dst = src;
		src = src == (char *)base ? scratch : base;
	}
	if (src != (char *)base)
		memcpy(base, src, n * size);
	if (!tie)
		goto out;
	/* runs of equal keys in the comparator's order */
	for (i = 0; i < n; i += run) {
		uint64_t k = key_at((char *)base + i * size, key_off);

		for (run = 1; i + run < n && key_at((char *)base + (i + run) * size, key_off) == k;
		     run++)
			;
		if (run == 1)
			continue;
		if (run < SMALL)
			insertion((char *)base + i * size, run, size, &o, scratch);
		else
			qsort_r((char *)base + i * size, run, size, cmp_full, &o);
	}
out:
	free(scratch);
	free(count);
}
