// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/gzip.h"

#include "helpers.h"

/* @n bytes of text that compresses (repeated words) mixed with noise from @seed */
static char *make_text(size_t n, uint64_t seed)
{
	static const char *const words[] = { "main;", "burn_a ", "libc.so.6", "12\n", "[k]" };
	char *t = malloc(n + 1);
	size_t i = 0;

	assert_non_null(t);
	while (i < n) {
		uint64_t r = helpers_xorshift64(&seed);
		const char *w = words[r % 5];
		size_t k;

		if (r & 0x100) { /* a noise byte */
			t[i++] = (char)(r >> 16);
			continue;
		}
		for (k = 0; w[k] && i < n; k++)
			t[i++] = w[k];
	}
	t[n] = '\0';
	return t;
}

static void round_trip_sizes(void **state)
{
	static const size_t sizes[] = { 0, 1, 100, 65536, 300000, 3u << 20 };
	size_t i;
	int level;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (level = 0; level <= 9; level += 9) {
			char *t = make_text(sizes[i], i + 1);
			struct sbuf z = SBUF_INIT, back = SBUF_INIT;

			assert_int_equal(gzip_compress(t, sizes[i], level, &z), 0);
			assert_true(z.len >= 18); /* header + trailer */
			assert_int_equal((unsigned char)z.buf[0], 0x1f);
			assert_int_equal((unsigned char)z.buf[1], 0x8b);
			assert_int_equal(z.buf[z.len], '\0');
			assert_int_equal(gzip_inflate(z.buf, z.len, sizes[i], &back, NULL), 0);
			assert_int_equal(back.len, sizes[i]);
			assert_memory_equal(back.buf, t, sizes[i]);
			assert_int_equal(back.buf[back.len], '\0');
			sbuf_fini(&z);
			sbuf_fini(&back);
			free(t);
		}
	}
}

/* compress appends after what the buffer holds; inflate too */
static void appends(void **state)
{
	struct sbuf z = SBUF_INIT, back = SBUF_INIT;

	(void)state;
	sbuf_adds(&z, "PREFIX");
	assert_int_equal(gzip_compress("hello", 5, 6, &z), 0);
	assert_memory_equal(z.buf, "PREFIX", 6);
	sbuf_adds(&back, "x:");
	assert_int_equal(gzip_inflate(z.buf + 6, z.len - 6, 5, &back, NULL), 0);
	assert_string_equal(back.buf, "x:hello");
	sbuf_fini(&z);
	sbuf_fini(&back);
}

/* two members one after another read as their concatenation, as gunzip does */
static void members(void **state)
{
	struct sbuf z = SBUF_INIT, back = SBUF_INIT;

	(void)state;
	assert_int_equal(gzip_compress("first,", 6, 1, &z), 0);
	assert_int_equal(gzip_compress("second", 6, 9, &z), 0);
	assert_int_equal(gzip_inflate(z.buf, z.len, 100, &back, NULL), 0);
	assert_string_equal(back.buf, "first,second");
	sbuf_fini(&z);
	sbuf_fini(&back);
}

/* the limit is on the inflated bytes: max passes, max - 1 is -E2BIG */
static void limit(void **state)
{
	char *t = make_text(1u << 20, 7);
	struct sbuf z = SBUF_INIT, back = SBUF_INIT;

	(void)state;
	assert_int_equal(gzip_compress(t, 1u << 20, 0, &z), 0);
	assert_int_equal(gzip_inflate(z.buf, z.len, 1u << 20, &back, NULL), 0);
	sbuf_reset(&back);
	assert_int_equal(gzip_inflate(z.buf, z.len, (1u << 20) - 1, &back, NULL), -E2BIG);
	sbuf_fini(&z);
	sbuf_fini(&back);
	free(t);
}

/* a bomb: 64 MiB of zeros in ~64 KiB, refused at the limit without inflating it all */
static void bomb(void **state)
{
	size_t n = 64u << 20;
	char *zeros = calloc(1, n);
	struct sbuf z = SBUF_INIT, back = SBUF_INIT;

	(void)state;
	assert_non_null(zeros);
	assert_int_equal(gzip_compress(zeros, n, 9, &z), 0);
	assert_true(z.len < (1u << 20));
	assert_int_equal(gzip_inflate(z.buf, z.len, 1u << 20, &back, NULL), -E2BIG);
	assert_true(back.len < (2u << 20)); /* stopped within a step of the limit */
	sbuf_fini(&z);
	sbuf_fini(&back);
	free(zeros);
}

static void truncated_and_corrupt(void **state)
{
	char *t = make_text(200000, 3);
	struct sbuf z = SBUF_INIT, back = SBUF_INIT;
	const char *why = NULL;
	size_t cut;

	(void)state;
	assert_int_equal(gzip_compress(t, 200000, 6, &z), 0);
	for (cut = 1; cut < z.len; cut += z.len / 7 + 1) {
		why = NULL;
		sbuf_reset(&back);
		assert_int_equal(gzip_inflate(z.buf, cut, 200000, &back, &why), -EINVAL);
		assert_non_null(why);
	}
	sbuf_reset(&back);
	why = NULL;
	assert_int_equal(gzip_inflate(z.buf, z.len - 3, 200000, &back, &why), -EINVAL);
	assert_string_equal(why, "truncated gzip stream");
	/* a flipped byte in the deflate data, or the CRC: corrupt */
	z.buf[z.len - 6] ^= 0x5a;
	sbuf_reset(&back);
	why = NULL;
	assert_int_equal(gzip_inflate(z.buf, z.len, 200000, &back, &why), -EINVAL);
	assert_string_equal(why, "corrupt gzip stream");
	/* not compressed at all */
	sbuf_reset(&back);
	why = NULL;
	assert_int_equal(gzip_inflate("plain text", 10, 100, &back, &why), -EINVAL);
	assert_string_equal(why, "corrupt gzip stream");
	/* trailing garbage after a whole member */
	z.buf[z.len - 6] ^= 0x5a;
	sbuf_add(&z, "junkjunkjunk", 12);
	sbuf_reset(&back);
	why = NULL;
	assert_int_equal(gzip_inflate(z.buf, z.len, 200000, &back, &why), -EINVAL);
	assert_non_null(why);
	sbuf_fini(&z);
	sbuf_fini(&back);
	free(t);
}

static void bad_level(void **state)
{
	struct sbuf z = SBUF_INIT;

	(void)state;
	assert_int_equal(gzip_compress("x", 1, 10, &z), -EINVAL);
	assert_int_equal(gzip_compress("x", 1, -2, &z), -EINVAL);
	assert_int_equal(z.len, 0);
	sbuf_fini(&z);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_sizes), cmocka_unit_test(appends),
		cmocka_unit_test(members),	     cmocka_unit_test(limit),
		cmocka_unit_test(bomb),		     cmocka_unit_test(truncated_and_corrupt),
		cmocka_unit_test(bad_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
