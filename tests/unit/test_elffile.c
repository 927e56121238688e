// SPDX-License-Identifier: MIT
/*
 * elffile: a file's headers read in one pass and found again in the file cache by every
 * reader (no second read of the same file), read again when the file changed in place; the
 * facts themselves against binutils (build-id, symbol table, unwind sections, load segments) on
 * the workload binary, its stripped copy and a file that is not ELF; the debug file by build-id:
 * found in the second of two dirs, never one whose own build-id differs, never through a link.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>

#include "ember/daemon/elf/elffile.h"
#include "ember/daemon/elf/filecache.h"

#include "helpers.h"

static char bin[PATH_MAX - 128];
static char tmpdir[64];

/* The build-id binutils sees, as hex ("" when none). */
static void readelf_build_id(const char *path, char *ret, size_t cap)
{
	char cmd[PATH_MAX + 128];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -n %s | awk '/Build ID:/{print $3; exit}'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(ret, (int)cap, f))
		ret[0] = '\0';
	ret[strcspn(ret, "\n")] = '\0';
	pclose(f);
}

static void hex(const uint8_t *b, size_t n, char *ret)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(ret + 2 * i, "%02x", b[i]);
	ret[2 * n] = '\0';
}

/* elffile_facts() of @path through @fc; returns what it returned. */
static int facts_of(struct filecache *fc, const char *path, struct elffile_facts *f,
		    struct filecache_id *id)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	r = elffile_facts(fc, fd, &st, f, id);
	close(fd);
	return r;
}

static void test_facts(void **state)
{
	char want[160], got[160], path[256], cmd[3 * PATH_MAX];
	struct elffile_facts f;
	struct filecache_id id;
	unsigned int i, nx = 0;

	(void)state;
	readelf_build_id(bin, want, sizeof(want));
	assert_true(strlen(want) >= 16); /* the toolchain writes one */
	assert_int_equal(facts_of(NULL, bin, &f, &id), 1);
	assert_int_equal(f.err, 0);
	assert_int_equal(f.machine, EM_X86_64);
	hex(f.build_id, f.build_id_len, got);
	assert_string_equal(got, want);
	assert_int_equal(id.build_id_len, f.build_id_len); /* the key every reader shares */
	assert_true(f.has_symtab);
	assert_true(f.has_eh_frame);
	assert_true(f.load.n >= 2);
	for (i = 0; i < f.load.n; i++)
		nx += f.load.segs[i].x;
	assert_int_equal(nx, 1);

	/* stripped: no .symtab, the same build-id and .eh_frame */
	snprintf(path, sizeof(path), "%s/stripped", tmpdir);
	snprintf(cmd, sizeof(cmd), "strip --strip-all -o %s %s", path, bin);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(facts_of(NULL, path, &f, NULL), 1);
	assert_int_equal(f.err, 0);
	assert_false(f.has_symtab);
	assert_true(f.has_eh_frame);
	hex(f.build_id, f.build_id_len, got);
	assert_string_equal(got, want);

	/* not ELF */
	snprintf(path, sizeof(path), "%s/text", tmpdir);
	assert_int_equal(helpers_write_file(path, "#!/bin/sh\necho not elf\n", 0755), 0);
	assert_int_equal(facts_of(NULL, path, &f, NULL), 1);
	assert_int_equal(f.err, -ENOEXEC);
	assert_int_equal(f.build_id_len, 0);
	assert_int_equal(f.load.n, 0);
}

static void test_read_once(void **state)
{
	struct filecache *fc = filecache__new(NULL);
	char path[256], cmd[3 * PATH_MAX];
	struct elffile_facts a, b;
	struct filecache_id ida, idb;
	struct filecache_stats st;

	(void)state;
	assert_non_null(fc);
	snprintf(path, sizeof(path), "%s/copy", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", bin, path);
	assert_int_equal(system(cmd), 0);
	/* the first reader reads it; the second (another open of the same file) does not */
	assert_int_equal(facts_of(fc, path, &a, &ida), 1);
	assert_int_equal(facts_of(fc, path, &b, &idb), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_true(filecache_id_same_file(&ida, &idb));
	assert_int_equal(idb.build_id_len, a.build_id_len); /* a hit carries the build-id too */
	assert_memory_equal(idb.build_id, a.build_id, a.build_id_len);
	filecache__stats(fc, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 1);

	/* changed in place (same inode, stripped: another size): read again, its own facts */
	snprintf(cmd, sizeof(cmd), "strip --strip-all %s -o %s.s && cat %s.s > %s", path, path,
		 path, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(facts_of(fc, path, &b, NULL), 1);
	assert_true(a.has_symtab);
	assert_false(b.has_symtab);
	filecache__stats(fc, &st);
	assert_int_equal(st.changed, 1);
	filecache__free(fc);
}

static void test_debug(void **state)
{
	char cmd[4 * PATH_MAX], dirs[256], want[160], got[160], link[PATH_MAX];
	struct elffile_facts f, df;
	const char *dir = NULL;
	size_t dlen = 0;
	uint64_t refused = 0;
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(facts_of(NULL, bin, &f, NULL), 1);
	hex(f.build_id, f.build_id_len, want);
	/* the second dir holds it; the first holds another file under its name */
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p %s/d1/.build-id/%.2s %s/d2/.build-id/%.2s; "
		 "objcopy --only-keep-debug %s %s/d2/.build-id/%.2s/%s.debug; "
		 "cp /bin/true %s/d1/.build-id/%.2s/%s.debug",
		 tmpdir, want, tmpdir, want, bin, tmpdir, want, want + 2, tmpdir, want, want + 2);
	assert_int_equal(system(cmd), 0);
	snprintf(dirs, sizeof(dirs), "%s/d1:%s/d2", tmpdir, tmpdir);
	fd = elffile_open_debug(dirs, f.build_id, f.build_id_len, &st, &dir, &dlen, &refused);
	assert_true(fd >= 0);
	assert_int_equal(refused, 1); /* /bin/true's build-id is another */
	assert_non_null(dir);
	snprintf(got, sizeof(got), "%.*s", (int)dlen, dir);
	snprintf(link, sizeof(link), "%s/d2", tmpdir);
	assert_string_equal(got, link);
	assert_int_equal(elffile_facts(NULL, fd, &st, &df, NULL), 1);
	hex(df.build_id, df.build_id_len, got);
	assert_string_equal(got, want);
	assert_false(df.has_eh_frame); /* a debug file's .eh_frame holds no bytes */
	close(fd);

	/* only the wrong one: none */
	snprintf(dirs, sizeof(dirs), "%s/d1", tmpdir);
	refused = 0;
	assert_int_equal(
	    elffile_open_debug(dirs, f.build_id, f.build_id_len, NULL, NULL, NULL, &refused),
	    -ENOENT);
	assert_int_equal(refused, 1);

	/* a dir reached through a symbolic link: refused */
	snprintf(cmd, sizeof(cmd), "ln -s %s/d2 %s/via", tmpdir, tmpdir);
	assert_int_equal(system(cmd), 0);
	snprintf(dirs, sizeof(dirs), "%s/via", tmpdir);
	refused = 0;
	assert_int_equal(
	    elffile_open_debug(dirs, f.build_id, f.build_id_len, NULL, NULL, NULL, &refused),
	    -ENOENT);
	assert_int_equal(refused, 1);
	/* too short a build-id asks nothing */
	assert_int_equal(elffile_open_debug(NULL, f.build_id, 1, NULL, NULL, NULL, NULL), -ENOENT);
}

static int setup(void **state)
{
	const char *out = getenv("OUTPUT");

	(void)state;
	snprintf(bin, sizeof(bin), "%s/workloads/symbols", out && *out ? out : "build");
	if (access(bin, X_OK)) {
		fprintf(stderr, "missing %s (make workloads)\n", bin);
		return -1;
	}
	return helpers_tmpdir_new(tmpdir, sizeof(tmpdir), "elffile");
}

static int teardown(void **state)
{
	(void)state;
	return helpers_tmpdir_rm(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_facts),
		cmocka_unit_test(test_read_once),
		cmocka_unit_test(test_debug),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
