// SPDX-License-Identifier: MIT
/*
 * Regression tests for what the fuzzers found (docs/reliability.md). Each case is an
 * input that made a sanitizer report; the ASan+UBSan build of this test aborts on any of them.
 *   - fuzz_pprof: a sample without locations (an empty stack) reached hash_bytes(NULL, 0) and
 *     memcmp(..., NULL, 0) in the profile (nonnull arguments), and &locs[0] of a NULL array in
 *     the pprof writer (zero offset applied to a null pointer).
 *   - fuzz_samples: a 42-byte ember-samples line with a count of 1.1e18 was split into 2^32-1
 *     records, 258 million of them (gigabytes, minutes): such a line is now a counted skip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "ember/core/base/hash.h"
#include "ember/core/base/lineread.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/samples.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void test_hash_empty_null(void **state)
{
	(void)state;
	assert_true(hash_bytes(NULL, 0, 7) == hash_bytes("", 0, 7));
	assert_true(hash_bytes(NULL, 0, 7) != hash_bytes(NULL, 0, 8));
}

static void test_profile_empty_stack(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st);

	(void)state;
	assert_non_null(p);
	assert_true(profile__add(p, NULL, 0, 1) >= 0);
	assert_true(profile__add(p, NULL, 0, 2) >= 0); /* found again: the same stack */
	assert_int_equal(profile__nr_stacks(p), 1);
	assert_true(profile__find(p, NULL, 0) >= 0);
	assert_true(profile__count(p, 0) == 3.0);
	profile__free(p);
	strtab__free(st);
}

static void test_pprof_empty_stack_roundtrip(void **state)
{
	struct strtab *st = strtab__new();
	struct profile *p = profile__new(st), *q = profile__new(st);
	struct pprof_read_opts ro = PPROF_READ_OPTS_DEFAULT;
	struct sbuf sb = SBUF_INIT;
	uint32_t f[2];
	double total = 0;
	size_t i;

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	f[0] = (uint32_t)strtab__intern(st, "main", 4);
	f[1] = (uint32_t)strtab__intern(st, "work", 4);
	assert_true(profile__add(p, NULL, 0, 2) >= 0); /* only the empty stack: no location at all */
	assert_int_equal(pprof_write_profile(p, NULL, &sb), 0);
	sbuf_reset(&sb);
	assert_true(profile__add(p, f, 2, 5) >= 0);
	assert_int_equal(pprof_write_profile(p, NULL, &sb), 0);
	assert_int_equal(pprof_read(sb.buf, sb.len, q, &ro, NULL, NULL), 0);
	for (i = 0; i < profile__nr_stacks(q); i++)
		total += profile__count(q, i);
	assert_true(profile__find(q, f, 2) >= 0);
	assert_true(total >= 5.0);
	sbuf_fini(&sb);
	profile__free(p);
	profile__free(q);
	strtab__free(st);
}

static void test_samples_huge_count(void **state)
{
	static const char text[] = "# ember-samples v1\n"
				   "1 a 1111111111111111111\n"	/* skipped */
				   "2 a 5000000000\n";		/* two records */
	struct strtab *st = strtab__new();
	struct samples *s = samples__new(st);
	struct lineread *lr = lineread__new_mem(text, sizeof(text) - 1, 0);
	struct samples_read_stats stats = { 0 };

	(void)state;
	assert_non_null(s);
	assert_non_null(lr);
	assert_int_equal(samples_read(lr, s, NULL, &stats, NULL), 0);
	assert_int_equal(stats.skipped, 1);
	assert_int_equal(stats.records, 1);
	assert_true(samples__total(s) == 5000000000.0);
	assert_int_equal(samples__nr(s), 2);
	lineread__free(lr);
	samples__free(s);
	strtab__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_empty_null),
		cmocka_unit_test(test_profile_empty_stack),
		cmocka_unit_test(test_pprof_empty_stack_roundtrip),
		cmocka_unit_test(test_samples_huge_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
