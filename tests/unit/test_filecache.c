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
	assert_int_equal(filecache__put(fc, &id, FILECACHE_CPYTHON, big, 3800), 0); /* and the entry */
	filecache__stats(fc, &st);
	assert_int_equal(st.refused, 1);
	assert_true(st.files < 4);
	assert_non_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
	filecache__free(fc);
}

/* Objects the cache owns: each freed once, by the kind's function, when it goes. */
static int freed[16];

static void obj_free(void *obj, void *ctx)
{
	int *tag = obj;

	assert_ptr_equal(ctx, freed);
	assert_true(*tag >= 0 && *tag < 16);
	freed[*tag]++;
	free(obj);
}

static int *obj_new(int tag)
{
	int *p = malloc(sizeof(*p));

	assert_non_null(p);
	*p = tag;
	return p;
}

static void test_objects(void **state)
{
	struct filecache_opts o = { .max_files = 2, .max_bytes = 8192 };
	struct filecache *fc = filecache__new(&o);
	struct filecache_id id = { .dev = 1, .ino = 1, .size = 10, .mtime_ns = 5 };
	struct filecache_stats st;
	int *kept;

	(void)state;
	assert_non_null(fc);
	memset(freed, 0, sizeof(freed));
	/* no free function: refused, the caller keeps its object */
	kept = obj_new(0);
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, kept, 100), -EINVAL);
	free(kept);
	filecache__set_free(fc, FILECACHE_CPYTHON, obj_free, freed);

	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(1), 100), 0);
	assert_int_equal(*(const int *)filecache__get(fc, &id, FILECACHE_CPYTHON), 1);
	filecache__stats(fc, &st);
	assert_true(st.bytes >= 100);
	/* replaced: the old one freed, once */
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(2), 100), 0);
	assert_int_equal(freed[1], 1);
	/* the file changed under its inode: freed, never handed out */
	id.mtime_ns = 6;
	assert_null(filecache__get(fc, &id, FILECACHE_CPYTHON));
	assert_int_equal(freed[2], 1);
	/* too large alone: refused and freed */
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(3), 9000), -E2BIG);
	assert_int_equal(freed[3], 1);
	/* evicted for room (max_files 2): the least recently used freed */
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(4), 10), 0);
	id.ino = 2;
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(5), 10), 0);
	id.ino = 3;
	assert_int_equal(filecache__put_obj(fc, &id, FILECACHE_CPYTHON, obj_new(6), 10), 0);
	assert_int_equal(freed[4], 1);
	assert_int_equal(freed[5] + freed[6], 0);
	/* and the rest with the cache */
	filecache__free(fc);
	assert_int_equal(freed[5], 1);
	assert_int_equal(freed[6], 1);
	assert_int_equal(freed[1] + freed[2] + freed[3] + freed[4], 4);
}

/*
 * Build-ids: a copy (another inode, same build-id and size) shares what was read from the first,
 * only if root or the same user owns that first; a stripped copy (another size) does not; a file
 * of the same device and inode with another build-id is another file (changed).
 */
static void test_build_id(void **state)
{
	static const uint8_t bid[20] = { 0xab, 0xcd, 1, 2, 3 }, other[20] = { 0xef, 9 };
	struct filecache *fc = filecache__new(NULL);
	struct filecache_id a = { .dev = 8, .ino = 100, .size = 4096, .mtime_ns = 1, .uid = 1000 };
	struct filecache_id copy = a, stripped = a, root = a, forged = a;
	struct filecache_stats st;
	int v = 1, w = 2;

	(void)state;
	assert_non_null(fc);
	filecache_id_set_build_id(&a, bid, sizeof(bid));
	assert_int_equal(filecache__put(fc, &a, FILECACHE_CPYTHON, &v, sizeof(v)), 0);

	copy.ino = 200; /* the same bytes in a container layer, same owner */
	filecache_id_set_build_id(&copy, bid, sizeof(bid));
	assert_int_equal(*(const int *)filecache__get(fc, &copy, FILECACHE_CPYTHON), 1);
	filecache__stats(fc, &st);
	assert_int_equal(st.shared, 1);
	assert_int_equal(st.files, 1); /* served, not copied */
	/* without its build-id read, the copy is only a device and an inode: a miss */
	copy.build_id_len = 0;
	assert_null(filecache__get(fc, &copy, FILECACHE_CPYTHON));

	stripped.ino = 300;
	stripped.size = 1024;
	filecache_id_set_build_id(&stripped, bid, sizeof(bid));
	assert_null(filecache__get(fc, &stripped, FILECACHE_CPYTHON));

	/* another user's file naming user 1000's build-id: not lent */
	forged.ino = 400;
	forged.uid = 1001;
	filecache_id_set_build_id(&forged, bid, sizeof(bid));
	assert_null(filecache__get(fc, &forged, FILECACHE_CPYTHON));
	/* root's file read first may serve a user's copy; a user's may not serve root's */
	root.ino = 500;
	root.uid = 0;
	filecache_id_set_build_id(&root, bid, sizeof(bid));
	assert_null(filecache__get(fc, &root, FILECACHE_CPYTHON));
	assert_int_equal(filecache__put(fc, &root, FILECACHE_CPYTHON, &w, sizeof(w)), 0);
	assert_int_equal(*(const int *)filecache__get(fc, &forged, FILECACHE_CPYTHON), 2);

	/* the same device and inode, size and mtime, another build-id: another file */
	forged = a;
	filecache_id_set_build_id(&forged, other, sizeof(other));
	assert_false(filecache_id_same_file(&a, &forged));
	assert_null(filecache__get(fc, &forged, FILECACHE_CPYTHON));
	filecache__stats(fc, &st);
	assert_int_equal(st.changed, 1);
	/* with no build-id known on one side, device, inode, size and mtime decide */
	forged.build_id_len = 0;
	assert_true(filecache_id_same_file(&a, &forged));
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
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_build_id),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
