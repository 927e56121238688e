// SPDX-License-Identifier: MIT
/*
 * symbols: a workload with known function names for the symbolization tests. It burns CPU in
 * noinline functions under main, one of which contains an always-inlined helper, and prints
 * where its functions are so that a test can resolve them in the live process:
 *
 *   symbols_leaf 0x55d0c2a01139
 *   symbols_outer 0x55d0c2a01160
 *   symbols_inline_call 0x55d0c2a011a4   (a return address inside the inlined helper)
 *   ready
 *
 * Tests copy it, strip it and move its debug info elsewhere (objcopy --only-keep-debug).
 *   symbols [--seconds N]     (default: until killed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;
static void *volatile inline_ret;

__attribute__((noinline)) void symbols_probe(void)
{
	inline_ret = __builtin_return_address(0);
}

__attribute__((noinline)) void symbols_store(uint64_t x)
{
	sink += x;
}

/* Not a leaf (it calls symbols_store): gcc then keeps its frame pointer, so stacks sampled in
 * its loop walk up through symbols_outer. */
__attribute__((noinline)) uint64_t symbols_leaf(uint64_t n)
{
	uint64_t i, x = n;

	for (i = 0; i < 200000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	symbols_store(x);
	return x;
}

/* Inlined into symbols_outer: DWARF records it as an inlined subroutine. */
static inline __attribute__((always_inline)) uint64_t symbols_inlined(uint64_t n)
{
	symbols_probe();
	return symbols_leaf(n ^ 0x5a5a) + 1;
}

__attribute__((noinline)) uint64_t symbols_outer(uint64_t n)
{
	return symbols_inlined(n) + symbols_leaf(n);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = -1, t0;
	uint64_t n = 0;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: symbols [--seconds N]\n");
			return 2;
		}
	}
	symbols_outer(0); /* sets inline_ret */
	printf("symbols_leaf %p\nsymbols_outer %p\nsymbols_inline_call %p\nready\n",
	       (void *)symbols_leaf, (void *)symbols_outer, inline_ret);
	fflush(stdout);
	t0 = now();
	while (seconds < 0 || now() - t0 < seconds)
		n += symbols_outer(n);
	return (int)(n & 1);
}
