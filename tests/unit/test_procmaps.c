// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "ember/core/base/parse.h"
#include "ember/daemon/proc/procmaps.h"

static const struct {
	const char *line;
	int ret;
	uint64_t start, end, pgoff, inode;
	bool x, deleted;
	enum procmaps_kind kind;
	const char *path;
} cases[] = {
	{ "55d0c2a00000-55d0c2a21000 r-xp 00002000 fd:01 1835012                    /usr/bin/burn",
	  0, 0x55d0c2a00000, 0x55d0c2a21000, 0x2000, 1835012, true, false, PROCMAPS_FILE,
	  "/usr/bin/burn" },
	{ "7f1c2a000000-7f1c2a021000 rwxp 00000000 00:00 0 ", 0, 0x7f1c2a000000, 0x7f1c2a021000,
	  0, 0, true, false, PROCMAPS_ANON, "" },
	{ "7f1c2a000000-7f1c2a021000 rwxp 00000000 00:00 0", 0, 0x7f1c2a000000, 0x7f1c2a021000,
	  0, 0, true, false, PROCMAPS_ANON, "" },
	{ "7f1c2b000000-7f1c2b001000 r-xp 00001000 08:01 42   /tmp/my lib.so (deleted)", 0,
	  0x7f1c2b000000, 0x7f1c2b001000, 0x1000, 42, true, true, PROCMAPS_FILE, "/tmp/my lib.so" },
	{ "7ffd5e1f0000-7ffd5e1f2000 r-xp 00000000 00:00 0                          [vdso]", 0,
	  0x7ffd5e1f0000, 0x7ffd5e1f2000, 0, 0, true, false, PROCMAPS_VDSO, "[vdso]" },
	{ "7ffd5e100000-7ffd5e121000 rw-p 00000000 00:00 0                          [stack]", 0,
	  0x7ffd5e100000, 0x7ffd5e121000, 0, 0, false, false, PROCMAPS_SPECIAL, "[stack]" },
	{ "7f0000000000-7f0000001000 r-xp 00000000 00:00 0   [anon:v8 code]", 0, 0x7f0000000000,
	  0x7f0000001000, 0, 0, true, false, PROCMAPS_ANON, "[anon:v8 code]" },
	{ "7f0000000000-7f0000001000 r-xs 00000000 00:05 7   /memfd:jit (deleted)", 0,
	  0x7f0000000000, 0x7f0000001000, 0, 7, true, true, PROCMAPS_FILE, "/memfd:jit" },
	{ "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]", 0,
	  0xffffffffff600000, 0xffffffffff601000, 0, 0, true, false, PROCMAPS_SPECIAL,
	  "[vsyscall]" },
	{ "1000-2000 r-xp 0 103:02 18446744073709551615 /x\r", 0, 0x1000, 0x2000, 0, UINT64_MAX,
	  true, false, PROCMAPS_FILE, "/x" },
	/* malformed */
	{ .line = "", .ret = -EINVAL },
	{ .line = "1000 r-xp 0 00:00 0", .ret = -EINVAL },			  /* no end */
	{ .line = "2000-1000 r-xp 0 00:00 0", .ret = -EINVAL },		  /* end before start */
	{ .line = "1000-2000 rxp 0 00:00 0", .ret = -EINVAL },			  /* bad perms */
	{ .line = "1000-2000 r-xq 0 00:00 0", .ret = -EINVAL },		  /* bad sharing flag */
	{ .line = "1000-2000 r-xp zz 00:00 0", .ret = -EINVAL },		  /* bad offset */
	{ .line = "1000-2000 r-xp 0 0000 0", .ret = -EINVAL },			  /* bad device */
	{ .line = "1000-2000 r-xp 0 00:00 x", .ret = -EINVAL },		  /* bad inode */
	{ .line = "1000-2000 r-xp 0 00:00 184467440737095516160 /x", .ret = -EINVAL }, /* inode overflow */
	{ .line = "10000000000000000-2 r-xp 0 00:00 0", .ret = -EINVAL },	  /* 17 hex digits */
	{ .line = "1000-2000 r-xp 0 00:00 0junk", .ret = -EINVAL },
};

static void test_lines(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct procmaps_entry e;
		struct parse_error pe = { 0 };
		int r = procmaps_parse_line(cases[i].line, strlen(cases[i].line), &e, &pe);

		print_message("case %zu: %s\n", i, cases[i].line);
		assert_int_equal(r, cases[i].ret);
		if (r) {
			assert_non_null(pe.reason);
			assert_true(pe.col >= 1);
			continue;
		}
		assert_int_equal(e.start, cases[i].start);
		assert_int_equal(e.end, cases[i].end);
		assert_int_equal(e.pgoff, cases[i].pgoff);
		assert_int_equal(e.inode, cases[i].inode);
		assert_int_equal(e.x, cases[i].x);
		assert_int_equal(e.deleted, cases[i].deleted);
		assert_int_equal(e.kind, cases[i].kind);
		assert_int_equal(e.path_len, strlen(cases[i].path));
		assert_memory_equal(e.path, cases[i].path, e.path_len);
	}
}

static int count_x(const struct procmaps_entry *e, void *ctx)
{
	int *n = ctx;

	if (e->x)
		(*n)++;
	return 0;
}

static int stop_at_second(const struct procmaps_entry *e, void *ctx)
{
	int *n = ctx;

	return ++*n == 2 ? 42 : 0;
}

static void test_whole_text(void **state)
{
	static const char text[] =
		"55d0c2a00000-55d0c2a21000 r-xp 00002000 fd:01 1835012 /usr/bin/burn\n"
		"garbage line\n"
		"\n"
		"55d0c2c00000-55d0c2c21000 rw-p 00002000 fd:01 1835012 /usr/bin/burn\n"
		"7f1c2a000000-7f1c2a021000 r-xp 00000000 00:00 0"; /* no final newline */
	unsigned long bad = 0;
	int n = 0;

	assert_int_equal(procmaps_parse(text, strlen(text), count_x, &n, &bad), 0);
	assert_int_equal(n, 2);
	assert_int_equal(bad, 1);
	n = 0;
	assert_int_equal(procmaps_parse(text, strlen(text), stop_at_second, &n, NULL), 42);
}

static void test_basename(void **state)
{
	static const char line[] = "1000-2000 r-xp 0 08:01 5 /usr/lib/x86_64-linux-gnu/libc.so.6";
	struct procmaps_entry e;
	const char *b;
	size_t n;

	assert_int_equal(procmaps_parse_line(line, strlen(line), &e, NULL), 0);
	b = procmaps_basename(&e, &n);
	assert_int_equal(n, 9);
	assert_memory_equal(b, "libc.so.6", 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_whole_text),
		cmocka_unit_test(test_basename),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
