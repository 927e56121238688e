// SPDX-License-Identifier: MIT
/* procfs: the one builder of /proc/PID paths, on a fake proc root: the files read whole and
 * bounded, a symbolic link in place of a text file refused, a FIFO never blocks, the executable
 * a regular file, " (deleted)" dropped, a gone pid told from an unreadable one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/daemon/proc/procfs.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkd(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void lnk(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	char p[256];

	snprintf(root, sizeof(root), "/tmp/ember-procfs.XXXXXX");
	assert_non_null(mkdtemp(root));
	mkd("10");
	put("10/stat", "10 (a) b) R 1 2 3");
	put("10/status", "Name:\ta\nNSpid:\t10\t3\n");
	put("10/cgroup", "0::/system.slice/x.service\n");
	put("10/exe.file", "\x7f"
			   "ELF");
	lnk("exe.file", "10/exe");
	mkd("10/rootdir");
	lnk("rootdir", "10/root");
	mkd("11");
	lnk("../10/stat", "11/stat"); /* a link where a text file is: refused */
	lnk("/nonexistent/bin/app (deleted)", "11/exe");
	snprintf(p, sizeof(p), "%s/11/cgroup", root);
	assert_int_equal(mkfifo(p, 0600), 0); /* a FIFO: never blocks */
	mkd("12");
	lnk(".", "12/exe"); /* a directory as the executable */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_read(void **state)
{
	char *buf = NULL;
	size_t cap = 0, len;

	assert_int_equal(procfs_read(root, 10, PROCFS_STAT, &buf, &cap, 4096, &len), 0);
	assert_string_equal(buf, "10 (a) b) R 1 2 3");
	assert_int_equal(procfs_read(root, 10, PROCFS_STATUS, &buf, &cap, 4096, &len), 0);
	assert_non_null(strstr(buf, "NSpid:\t10\t3"));
	assert_int_equal(procfs_read(root, 10, PROCFS_CGROUP, &buf, &cap, 4, &len), -EFBIG);
	assert_int_equal(len, 4);
	assert_string_equal(buf, "0::/");
	assert_int_equal(procfs_read(root, 11, PROCFS_STAT, &buf, &cap, 4096, &len), -ELOOP);
	assert_int_equal(procfs_read(root, 99, PROCFS_STAT, &buf, &cap, 4096, &len), -ENOENT);
	/* a FIFO with no writer: opened non-blocking, read as empty, never waited on */
	assert_int_equal(procfs_read(root, 11, PROCFS_CGROUP, &buf, &cap, 4096, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(procfs_open(root, 10, (enum procfs_file)42), -EINVAL);
	free(buf);
}

static void test_exists_owner(void **state)
{
	uid_t uid = 12345;

	assert_int_equal(procfs_exists(root, 10), 1);
	assert_int_equal(procfs_exists(root, 99), 0);
	assert_int_equal(procfs_owner(root, 10, &uid), 0);
	assert_int_equal(uid, getuid());
	assert_int_equal(procfs_owner(root, 99, &uid), -ENOENT);
}

static void test_exe(void **state)
{
	char path[256], want[256];
	struct stat st;
	int fd;

	snprintf(want, sizeof(want), "exe.file");
	assert_int_equal(procfs_exe_path(root, 10, path, sizeof(path)), (ssize_t)strlen(want));
	assert_string_equal(path, want);
	assert_int_equal(procfs_exe_path(root, 11, path, sizeof(path)), 20);
	assert_string_equal(path, "/nonexistent/bin/app");	 /* " (deleted)" dropped */
	assert_int_equal(procfs_exe_path(root, 11, path, 5), 4); /* cut, NUL-terminated */
	assert_string_equal(path, "/non");
	assert_int_equal(procfs_exe_stat(root, 10, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	fd = procfs_open_exe(root, 10);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(procfs_open_exe(root, 12), -EINVAL); /* not a regular file */
	assert_int_equal(procfs_open_exe(root, 11), -ENOENT);
	fd = procfs_open_root(root, 10);
	assert_true(fd >= 0);
	close(fd);
	assert_true(procfs_open_root(root, 12) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_exists_owner),
		cmocka_unit_test(test_exe),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
