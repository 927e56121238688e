// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/strtab.h"

static void test_intern_stable_ids(void **state)
{
	struct strtab *st = strtab__new();
	const char *first;
	char name[32];
	int i, id;

	assert_non_null(st);
	assert_int_equal(strtab__intern(st, "main", 4), 0);
	assert_int_equal(strtab__intern(st, "foo", 3), 1);
	assert_int_equal(strtab__intern(st, "mainx", 4), 0); /* only 4 bytes count */
	assert_int_equal(strtab__intern(st, "", 0), 2);	     /* the empty name is a name */
	first = strtab__str(st, 0);
	/* grow far past the initial table and chunk: ids and pointers must not move */
	for (i = 0; i < 200000; i++) {
		int n = snprintf(name, sizeof(name), "fn_%d", i);

		id = strtab__intern(st, name, (size_t)n);
		assert_int_equal(id, i + 3);
	}
	assert_ptr_equal(strtab__str(st, 0), first);
	assert_string_equal(strtab__str(st, 0), "main");
	assert_int_equal(strtab__find(st, "fn_123456", 9), 123456 + 3);
	assert_int_equal(strtab__find(st, "nope", 4), -ENOENT);
	assert_int_equal(strtab__count(st), 200003);
	assert_true(strtab__mem_bytes(st) > 200000 * 8);
	strtab__free(st);
}

static void test_binary_names(void **state)
{
	struct strtab *st = strtab__new();
	char big[300000];
	int a, b, c;

	memset(big, 'x', sizeof(big));
	a = strtab__intern(st, "a\xff b", 4);
	b = strtab__intern(st, big, sizeof(big)); /* larger than a chunk */
	c = strtab__intern(st, "after", 5);
	assert_true(a >= 0 && b > a && c > b);
	assert_int_equal(strtab__len(st, (uint32_t)b), sizeof(big));
	assert_memory_equal(strtab__str(st, (uint32_t)a), "a\xff b", 5);
	assert_string_equal(strtab__str(st, (uint32_t)c), "after");
	assert_int_equal(strtab__intern(st, big, sizeof(big)), b);
	strtab__free(st);
	strtab__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_stable_ids),
		cmocka_unit_test(test_binary_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
