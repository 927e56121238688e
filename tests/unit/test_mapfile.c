// SPDX-License-Identifier: MIT
/* proc/mapfile: the one way a mapped file is opened; what it refuses and counts. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "ember/daemon/proc/mapfile.h"

#define FAKE_PID 4200001

static char tmpdir[64], proc[128], root[256];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char p[PATH_MAX];

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_mapfile.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	snprintf(proc, sizeof(proc), "%s/proc", tmpdir);
	snprintf(root, sizeof(root), "%s/croot", tmpdir);
	snprintf(p, sizeof(p), "%s/%d", proc, FAKE_PID);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(p, sizeof(p), "%s/lib", root);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/%d/root", proc, FAKE_PID);
	assert_int_equal(symlink(root, p), 0); /* as /proc/PID/root is */
	put("/lib/good.so", "ELF, pretend");
	put("/lib/other.so", "another file");
	snprintf(p, sizeof(p), "%s/lib/link.so", root);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	snprintf(p, sizeof(p), "%s/dirlink", root);
	assert_int_equal(symlink("lib", p), 0);
	snprintf(p, sizeof(p), "%s/lib/fifo.so", root);
	assert_int_equal(mkfifo(p, 0600), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

/* A want for @rel inside the fake root, with the identity of the file at @as (NULL: @rel). */
static struct mapfile_want want(const char *rel, const char *as)
{
	char p[PATH_MAX];
	struct stat st = { 0 };

	snprintf(p, sizeof(p), "%s%s", root, as ? as : rel);
	(void)lstat(p, &st);
	return (struct mapfile_want){ .pid = FAKE_PID, .path = rel, .path_len = strlen(rel),
				      .dev_major = major(st.st_dev),
				      .dev_minor = minor(st.st_dev), .ino = st.st_ino };
}

static void test_paths(void **state)
{
	static const struct {
		const char *path, *as;
		int ret;
		enum mapfile_refusal why;
	} cases[] = {
		{ "/lib/good.so", NULL, 0, 0 },
		{ "/lib/link.so", "/lib/good.so", -ELOOP, MAPFILE_SYMLINK },	/* to /etc/passwd */
		{ "/dirlink/good.so", "/lib/good.so", -ELOOP, MAPFILE_SYMLINK }, /* a link on the way */
		{ "/lib/fifo.so", NULL, -EINVAL, MAPFILE_NOT_REGULAR },	 /* never blocks */
		{ "/lib/other.so", "/lib/good.so", -ESTALE, MAPFILE_IDENTITY }, /* another inode */
		{ "/../../../lib/good.so", NULL, 0, 0 },	/* ".." stops at the process's root */
		{ "/lib/gone.so", "/lib/good.so", -ENOENT, MAPFILE_GONE },
	};
	struct mapfile_stats st = { 0 };
	struct stat sb;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mapfile_want w = want(cases[i].path, cases[i].as);
		uint64_t before = st.refused[cases[i].why];
		int fd;

		if (cases[i].ret == 0 && !strncmp(cases[i].path, "/../", 4))
			w = want(cases[i].path, "/lib/good.so");
		fd = mapfile_open(proc, &w, &st, &sb);
		if (cases[i].ret == 0) {
			assert_true(fd >= 0);
			assert_true(S_ISREG(sb.st_mode));
			assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK),
					 O_RDONLY | O_NONBLOCK);
			assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
			close(fd);
		} else {
			if (fd != cases[i].ret)
				print_error("case %zu: %s: %d\n", i, cases[i].path, fd);
			assert_int_equal(fd, cases[i].ret);
			assert_int_equal(st.refused[cases[i].why], before + 1);
		}
	}
	assert_int_equal(st.opened, 2);
	assert_int_equal(st.via_root, 2);
}

/*
 * An exec's executable the kernel told of, its process gone (no /proc/PID at all): the exec's
 * path in emberd's own tree, only with the kernel's device and inode, never through a link;
 * without exec_path the same want finds nothing.
 */
static void test_exec_path(void **state)
{
	static const struct {
		const char *path, *as;
		int ret;
		enum mapfile_refusal why;
	} cases[] = {
		{ "/lib/good.so", NULL, 0, 0 },
		{ "/lib/other.so", "/lib/good.so", -ESTALE, MAPFILE_IDENTITY }, /* another inode */
		{ "/lib/link.so", "/lib/good.so", -ELOOP, MAPFILE_SYMLINK },
		{ "/dirlink/good.so", "/lib/good.so", -ELOOP, MAPFILE_SYMLINK },
		{ "/lib/fifo.so", NULL, -EINVAL, MAPFILE_NOT_REGULAR },
		{ "/lib/gone.so", "/lib/good.so", -ENOENT, MAPFILE_GONE },
	};
	struct mapfile_stats st = { 0 };
	char path[PATH_MAX];
	struct stat sb;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mapfile_want w = want(cases[i].path, cases[i].as);
		uint64_t before = st.refused[cases[i].why];
		int fd;

		/* the path as exec had it: absolute in this tree; the pid has no /proc entry */
		snprintf(path, sizeof(path), "%s%s", root, cases[i].path);
		w.pid = FAKE_PID + 1;
		w.start = 0x400000;
		w.end = 0x401000;
		w.path = path;
		w.path_len = strlen(path);
		fd = mapfile_open(proc, &w, &st, &sb);
		assert_int_equal(fd < 0 ? fd : 0, -ENOENT); /* not told: gone */
		w.exec_path = true;
		fd = mapfile_open(proc, &w, &st, &sb);
		if (cases[i].ret == 0) {
			assert_true(fd >= 0);
			assert_true(S_ISREG(sb.st_mode));
			assert_int_equal(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK),
					 O_RDONLY | O_NONBLOCK);
			close(fd);
		} else {
			if (fd != cases[i].ret)
				print_error("case %zu: %s: %d\n", i, cases[i].path, fd);
			assert_int_equal(fd, cases[i].ret);
			if (cases[i].why != MAPFILE_GONE)
				assert_int_equal(st.refused[cases[i].why], before + 1);
		}
	}
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.via_exec_path, 1);
	assert_int_equal(st.via_root, 0);
}

static void test_changed(void **state)
{
	struct mapfile_want w = want("/lib/good.so", NULL);
	struct mapfile_stats st = { 0 };

	(void)state;
	w.size = 1; /* what a cache saw: another size */
	assert_int_equal(mapfile_open(proc, &w, &st, NULL), -ESTALE);
	assert_int_equal(st.refused[MAPFILE_CHANGED], 1);
	w.ino = 0; /* an anonymous mapping has no file */
	assert_int_equal(mapfile_open(proc, &w, &st, NULL), -EINVAL);
}

/* Our own mapping of a file renamed over by a FIFO: map_files gives the mapped file itself. */
static void test_map_files(void **state)
{
	char p[PATH_MAX], q[PATH_MAX];
	struct mapfile_stats st = { 0 };
	struct mapfile_want w;
	struct stat sb, got;
	void *m;
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/mapped.so", tmpdir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(fstat(fd, &sb), 0);
	close(fd);
	snprintf(q, sizeof(q), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(q, 0600), 0);
	assert_int_equal(rename(q, p), 0); /* the path now names a FIFO */
	w = (struct mapfile_want){ .pid = (uint32_t)getpid(), .start = (uintptr_t)m,
				   .end = (uintptr_t)m + 8192, .path = p, .path_len = strlen(p),
				   .dev_major = major(sb.st_dev), .dev_minor = minor(sb.st_dev),
				   .ino = sb.st_ino };
	fd = mapfile_open("/proc", &w, &st, &got);
	assert_true(fd >= 0);
	assert_int_equal(got.st_ino, sb.st_ino);
	assert_int_equal(got.st_size, 8192);
	assert_int_equal(st.via_map_files, 1);
	close(fd);
	munmap(m, 8192);
}

static void test_trusted(void **state)
{
	char p[PATH_MAX], l[PATH_MAX], d[PATH_MAX];
	int fd;

	(void)state;
	/* root's file in root's directories (a mkdtemp 0700 under sticky /tmp) */
	snprintf(p, sizeof(p), "%s/lib/good.so", root);
	fd = mapfile_open_trusted(p, NULL);
	assert_true(fd >= 0);
	close(fd);
	/* a symlink anywhere on the way */
	snprintf(l, sizeof(l), "%s/lib/link.so", root);
	assert_int_equal(mapfile_open_trusted(l, NULL), -ELOOP);
	snprintf(l, sizeof(l), "%s/dirlink/good.so", root);
	assert_int_equal(mapfile_open_trusted(l, NULL), -ELOOP);
	/* not root's */
	assert_int_equal(chown(p, 65534, 65534), 0);
	assert_int_equal(mapfile_open_trusted(p, NULL), -EPERM);
	assert_int_equal(chown(p, 0, 0), 0);
	/* in a directory others may write */
	snprintf(d, sizeof(d), "%s/lib", root);
	assert_int_equal(chmod(d, 0777), 0);
	assert_int_equal(mapfile_open_trusted(p, NULL), -EPERM);
	assert_int_equal(chmod(d, 0755), 0);
	/* not a regular file */
	snprintf(p, sizeof(p), "%s/lib/fifo.so", root);
	assert_int_equal(mapfile_open_trusted(p, NULL), -EINVAL);
	assert_int_equal(mapfile_open_trusted("relative/path", NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_exec_path),
		cmocka_unit_test(test_changed),
		cmocka_unit_test(test_map_files),
		cmocka_unit_test(test_trusted),
	};

	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root (map_files, chown)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
