// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/parse.h"
#include "ember/daemon/symbols/perfmap.h"

static const struct {
	const char *line;
	int ret;
	uint64_t start, size;
	const char *name;
} cases[] = {
	{ "7f3a1c000000 40 jit_alpha", 0, 0x7f3a1c000000, 0x40, "jit_alpha" },
	{ "0x7f3a1c000000 0x40 jit_alpha", 0, 0x7f3a1c000000, 0x40, "jit_alpha" },
	{ "0X10 0Xa LazyCompile:~foo /app/x.js:12", 0, 0x10, 0xa, "LazyCompile:~foo /app/x.js:12" },
	{ "10\ta\tname with\ttab", 0, 0x10, 0xa, "name with\ttab" },
	{ "10  a   padded  \r", 0, 0x10, 0xa, "padded" },
	{ "fffffffffffffffe 1 last", 0, UINT64_MAX - 1, 1, "last" },
	{ "10 a Lcom/x;.run(I)V", 0, 0x10, 0xa, "Lcom/x;.run(I)V" },
	/* malformed */
	{ .line = "", .ret = -EINVAL },
	{ .line = "zz 10 bad", .ret = -EINVAL },
	{ .line = "10 zz bad", .ret = -EINVAL },
	{ .line = "10 20", .ret = -EINVAL },		     /* no name */
	{ .line = "10 20 ", .ret = -EINVAL },		     /* blank name */
	{ .line = "10 0 zero", .ret = -EINVAL },	     /* zero size */
	{ .line = "ffffffffffffffff 2 wraps", .ret = -EINVAL },
	{ .line = "10000000000000000 1 long", .ret = -EINVAL }, /* 17 digits */
	{ .line = "0x 10 bare_prefix", .ret = -EINVAL },
	{ .line = "10,20 x", .ret = -EINVAL },
};

static void test_lines(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct perfmap_entry e;
		struct parse_error pe = { 0 };
		int r = perfmap_parse_line(cases[i].line, strlen(cases[i].line), &e, &pe);

		print_message("case %zu: %s\n", i, cases[i].line);
		assert_int_equal(r, cases[i].ret);
		if (r) {
			assert_non_null(pe.reason);
			continue;
		}
		assert_int_equal(e.start, cases[i].start);
		assert_int_equal(e.size, cases[i].size);
		assert_int_equal(e.name_len, strlen(cases[i].name));
		assert_memory_equal(e.name, cases[i].name, e.name_len);
	}
}

static const char *name_at(struct perfmap *pm, uint64_t addr)
{
	int idx = perfmap__lookup(pm, addr);

	return idx < 0 ? NULL : perfmap__name(pm, idx, NULL);
}

static void test_table_grows(void **state)
{
	static const char part1[] = "1000 100 a\nbad line\n2000 10 b\n30";
	static const char part2[] = "00 10 c\n";
	struct perfmap *pm = perfmap__new();
	unsigned long bad = 0;
	size_t used;
	char buf[128];
	int idx;

	assert_non_null(pm);
	assert_int_equal(perfmap__add_text(pm, part1, strlen(part1), &used, &bad), 0);
	assert_int_equal(used, strlen(part1) - 2); /* "30" waits for its newline */
	assert_int_equal(bad, 1);
	assert_int_equal(perfmap__count(pm), 2);
	assert_string_equal(name_at(pm, 0x1000), "a");
	assert_string_equal(name_at(pm, 0x10ff), "a");
	assert_null(name_at(pm, 0x1100));
	assert_null(name_at(pm, 0xfff));
	assert_null(name_at(pm, 0x3005));
	idx = perfmap__lookup(pm, 0x2004);
	perfmap__set_cookie(pm, idx, 77);
	/* the unconsumed tail, then the rest */
	snprintf(buf, sizeof(buf), "%s%s", part1 + used, part2);
	assert_int_equal(perfmap__add_text(pm, buf, strlen(buf), &used, &bad), 0);
	assert_int_equal(used, strlen(buf));
	assert_string_equal(name_at(pm, 0x3005), "c");
	/* cookies survive re-sorting */
	assert_int_equal(perfmap__cookie(pm, perfmap__lookup(pm, 0x2004)), 77);
	assert_true(perfmap__mem_bytes(pm) > 0);
	perfmap__free(pm);
	perfmap__free(NULL);
}

/* A process sizes its perf map: past the bound, lines are consumed and not added (-E2BIG). */
static void test_max_entries(void **state)
{
	static const char text[] = "1000 10 a\n2000 10 b\n3000 10 c\n4000 10 d\n";
	struct perfmap *pm = perfmap__new();
	size_t used = 0;

	(void)state;
	assert_non_null(pm);
	perfmap__set_max_entries(pm, 2);
	assert_int_equal(perfmap__add_text(pm, text, sizeof(text) - 1, &used, NULL), -E2BIG);
	assert_int_equal(used, sizeof(text) - 1);
	assert_int_equal(perfmap__count(pm), 2);
	assert_true(perfmap__lookup(pm, 0x1005) >= 0);
	assert_int_equal(perfmap__lookup(pm, 0x3005), -ENOENT);
	perfmap__free(pm);
}

/* A bound in bytes: long names fill it long before an entry bound would */
static void test_max_bytes(void **state)
{
	struct perfmap *pm = perfmap__new();
	char line[4200], name[4001];
	size_t used = 0, i;

	(void)state;
	assert_non_null(pm);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	perfmap__set_max_bytes(pm, 3 * 4096);
	for (i = 0; i < 10; i++) {
		int n = snprintf(line, sizeof(line), "%zx 10 %s\n", 0x1000 + i * 0x10, name);
		int r = perfmap__add_text(pm, line, (size_t)n, &used, NULL);

		assert_int_equal(r, i < 3 ? 0 : -E2BIG);
		assert_int_equal(used, (size_t)n);
	}
	assert_int_equal(perfmap__count(pm), 3);
	assert_true(perfmap__data_bytes(pm) <= 3 * 4096);
	assert_true(perfmap__lookup(pm, 0x1025) >= 0);
	assert_int_equal(perfmap__lookup(pm, 0x1035), -ENOENT);
	perfmap__free(pm);
}

static void test_overlap_latest_wins(void **state)
{
	static const char text[] = "1000 1000 old_big\n1800 10 newer_small\n1000 100 newest\n";
	struct perfmap *pm = perfmap__new();
	size_t used;

	assert_int_equal(perfmap__add_text(pm, text, strlen(text), &used, NULL), 0);
	assert_string_equal(name_at(pm, 0x1000), "newest");
	assert_string_equal(name_at(pm, 0x1805), "newer_small");
	assert_string_equal(name_at(pm, 0x1900), "old_big");
	assert_string_equal(name_at(pm, 0x1fff), "old_big");
	assert_null(name_at(pm, 0x2000));
	perfmap__free(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_table_grows),
		cmocka_unit_test(test_overlap_latest_wins),
		cmocka_unit_test(test_max_entries),
		cmocka_unit_test(test_max_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
