// SPDX-License-Identifier: MIT
/*
 * filecache: facts found again for the same file (device, inode, size, mtime), never for a file
 * replaced at the same path (a new inode) nor for one changed in place (same inode, another size
 * or mtime), and the bounds (files, bytes) with their counters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ember/daemon/elf/filecache.h"

#include "helpers.h"

static char dir[64];

static void id_of_path(const char *path, struct filecache_id *ret)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	filecache_id_of(&st, ret);
}

static void test_same_and_replaced(void **state)
{
	struct filecache *fc = filecache__new(NULL);
	struct filecache_id a, b, c, d;
	struct filecache_stats st;
	char path[PATH_MAX], tmp[PATH_MAX];
	const int *got;
	int v = 42, w = 7;

	(void)state;
	assert_non_null(fc);
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	snprintf(tmp, sizeof(tmp), "%s/lib.so.new", dir);
	assert_int_equal(helpers_write_file(path, "first file", 0644), 0);
	id_of_path(path, &a);
	assert_null(filecache__get(fc, &a, FILECACHE_CPYTHON));
	assert_int_equal(filecache__put(fc, &a, FILECACHE_CPYTHON, &v, sizeof(v)), 0);
	/* a second process's fstat of the same file: the same entry */
	id_of_path(path, &b);
	got = filecache__get(fc, &b, FILECACHE_CPYTHON);
	assert_non_null(got);
	assert_int_equal(*got, 42);
	filecache__stats(fc, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);

	/* replaced at the same path, same size: a new inode, not the old facts */
	assert_int_equal(helpers_write_file(tmp, "other file", 0644), 0);
	assert_int_equal(rename(tmp, path), 0);
	id_of_path(path, &c);
	assert_true(c.ino != a.ino);
	assert_null(filecache__get(fc, &c, FILECACHE_CPYTHON));
	assert_int_equal(filecache__put(fc, &c, FILECACHE_CPYTHON, &w, sizeof(w)), 0);
	assert_int_equal(*(const int *)filecache__get(fc, &c, FILECACHE_CPYTHON), 7);
	assert_int_equal(*(const int *)filecache__get(fc, &a, FILECACHE_CPYTHON), 42);

	/* changed in place (same inode, another size): dropped, counted */
	assert_int_equal(helpers_write_file(path, "other file, longer now", 0644), 0);
	id_of_path(path, &d);
	assert_int_equal(d.ino, c.ino);
	assert_null(filecache__get(fc, &d, FILECACHE_CPYTHON));
	filecache__stats(fc, &st);
	assert_int_equal(st.changed, 1);
	assert_int_equal(st.files, 1); /* a's entry */
	/* and the stale identity does not bring it back */
	assert_null(filecache__get(fc, &c, FILECACHE_CPYTHON));
	filecache__free(fc);
}

static void test_bounds(void **state)
{
	struct filecache_opts o = { .max_files = 4, .max_bytes = 4096 };
	struct filecache *fc = filecache__new(&o);
	struct filecache_id id = { .dev = 1, .size = 10, .mtime_ns = 5 };
	struct filecache_stats st;
	char big[8192] = { 0 };
	uint64_t i;

	(void)state;
	assert_non_null(fc);
	for (i = 1; i <= 10; i++) {
		id.ino = i;
		assert_int_equal(filecache__put(fc, &id, FILECACHE_CPYTHON, &i, sizeof(i)), 0);
		if (i == 2) { /* touched: the most recent, kept past the others */
			id.ino = 1;
			assert_non_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
		}
	}
	filecache__stats(fc, &st);
	assert_int_equal(st.files, 4);
	assert_int_equal(st.evictions, 6);
	id.ino = 10;
	assert_non_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
	id.ino = 3;
	assert_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
	/* bytes: more than the bound alone is refused, counted; large facts push others out */
	id.ino = 99;
	assert_int_equal(filecache__put(fc, &id, FILECACHE_CPYTHON, big, sizeof(big)), -E2BIG);
	assert_int_equal(filecache__put(fc, &id, FILECACHE_CPYTHON, big, 3900), 0);
	filecache__stats(fc, &st);
	assert_int_equal(st.refused, 1);
	assert_true(st.files < 4);
	assert_non_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
	filecache__free(fc);
}

static int setup(void **state)
{
	(void)state;
	return helpers_tmpdir_new(dir, sizeof(dir), "filecache");
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_and_replaced),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
