// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ember/core/base/heap.h"

/* under ASan, malloc is the sanitizer's: glibc's arenas, mallinfo2 and malloc_trim see none of it */
#if defined(__SANITIZE_ADDRESS__)
#define GLIBC_MALLOC 0
#else
#define GLIBC_MALLOC 1
#endif

#if GLIBC_MALLOC
#define NBLOCKS 16384
#define BLOCK	4000 /* under mmap's threshold: chunks of the main arena */

/*
 * 64 MiB in small chunks, then all freed but one in 64, which keeps malloc from giving the
 * space back by shrinking its top: the free pages stay resident until heap_trim().
 */
static void **fragment(void)
{
	void **blocks = calloc(NBLOCKS, sizeof(*blocks));
	int i;

	assert_non_null(blocks);
	for (i = 0; i < NBLOCKS; i++) {
		blocks[i] = malloc(BLOCK);
		assert_non_null(blocks[i]);
		memset(blocks[i], 0x5a, BLOCK);
	}
	for (i = 0; i < NBLOCKS; i++)
		if (i % 64) {
			free(blocks[i]);
			blocks[i] = NULL;
		}
	return blocks;
}

static void release(void **blocks)
{
	int i;

	for (i = 0; i < NBLOCKS; i++)
		free(blocks[i]);
	free(blocks);
}

static void test_trim_gives_free_pages_back(void **state)
{
	struct heap_stats a, b;
	void **blocks;
	uint64_t gave;

	(void)state;
	blocks = fragment();
	heap_stats(&a);
	assert_true(a.free_bytes > 32u << 20);
	gave = heap_trim(1000000000000ULL, 8u << 20);
	heap_stats(&b);
	/* most of the ~63 MiB free were whole pages: given back, and counted */
	assert_true(gave > 32u << 20);
	assert_int_equal(b.trims, a.trims + 1);
	assert_true(b.trimmed_bytes >= a.trimmed_bytes + gave);
	release(blocks);
}

static void test_trim_at_most_once_a_second(void **state)
{
	void **blocks;
	struct heap_stats a, b;

	(void)state;
	blocks = fragment();
	heap_stats(&a);
	/* 0.5 s after the last trim (the test above, at t = 1000 s): not yet */
	assert_int_equal(heap_trim(1000500000000ULL, 8u << 20), 0);
	heap_stats(&b);
	assert_int_equal(b.trims, a.trims);
	/* a second later: trims */
	assert_true(heap_trim(1001000000000ULL, 8u << 20) > 0);
	release(blocks);
}

#endif

static void test_no_trim_when_little_is_free(void **state)
{
	struct heap_stats a, b;

	(void)state;
	/* whatever is free now is below a 1 TiB floor */
	heap_stats(&a);
	assert_int_equal(heap_trim(2000000000000ULL, 1ULL << 40), 0);
	heap_stats(&b);
	assert_int_equal(b.trims, a.trims);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#if GLIBC_MALLOC /* under ASan only the floor: the sanitizer's allocator has no arenas to trim */
		cmocka_unit_test(test_trim_gives_free_pages_back),
		cmocka_unit_test(test_trim_at_most_once_a_second),
#endif
		cmocka_unit_test(test_no_trim_when_little_is_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
