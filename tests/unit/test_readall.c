// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/readall.h"

#include "helpers.h"

/* Writes @len bytes of a pattern into @dir/@name; the path into @path. */
static void write_pattern(const char *dir, const char *name, size_t len, char *path, size_t size)
{
	char *text = malloc(len + 1);
	size_t i;

	assert_non_null(text);
	for (i = 0; i < len; i++)
		text[i] = (char)('a' + i % 26);
	text[len] = '\0';
	snprintf(path, size, "%s/%s", dir, name);
	assert_int_equal(helpers_write_file(path, text, 0600), 0);
	free(text);
}

static void check_pattern(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (char)('a' + i % 26))
			fail_msg("byte %zu is %d", i, buf[i]);
	assert_int_equal(buf[len], '\0');
}

/* Sizes around the limit and the growth step: whole up to @max, -EFBIG cut at @max above it. */
static void test_sizes(void **state)
{
	static const size_t sizes[] = { 0, 1, 4095, 65535, 65536, 65537, 200000, 300000, 300001,
					400000 };
	const size_t max = 300000;
	char dir[128], path[256];
	char *buf = NULL;
	size_t cap = 0, len, i;
	int r;

	(void)state;
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "readall"), 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		write_pattern(dir, "f", sizes[i], path, sizeof(path));
		len = 12345;
		r = read_path_all(path, &buf, &cap, max, &len);
		if (sizes[i] <= max) {
			assert_int_equal(r, 0);
			assert_int_equal(len, sizes[i]);
		} else {
			assert_int_equal(r, -EFBIG);
			assert_int_equal(len, max);
		}
		check_pattern(buf, len);
		assert_true(cap > len);
	}
	free(buf);
	assert_int_equal(helpers_tmpdir_rm(dir), 0);
}

/* A buffer allocated beforehand with @max + 2 bytes is used in place, even for a longer file. */
static void test_preallocated_not_moved(void **state)
{
	const size_t max = 4096;
	char dir[128], path[256];
	size_t cap = max + 2, len;
	char *buf = malloc(cap), *before = buf;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "readall"), 0);
	write_pattern(dir, "small", 100, path, sizeof(path));
	assert_int_equal(read_path_all(path, &buf, &cap, max, &len), 0);
	assert_ptr_equal(buf, before);
	assert_int_equal(len, 100);
	write_pattern(dir, "big", 10000, path, sizeof(path));
	assert_int_equal(read_path_all(path, &buf, &cap, max, &len), -EFBIG);
	assert_ptr_equal(buf, before);
	assert_int_equal(cap, max + 2);
	check_pattern(buf, max);
	free(buf);
	assert_int_equal(helpers_tmpdir_rm(dir), 0);
}

/* A pipe delivers in pieces: all of them are read. */
static void test_pipe_pieces(void **state)
{
	char *buf = NULL;
	size_t cap = 0, len;
	int fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], "abc", 3), 3);
	assert_int_equal(write(fds[1], "defg", 4), 4);
	close(fds[1]);
	assert_int_equal(read_fd_all(fds[0], &buf, &cap, 100, &len), 0);
	close(fds[0]);
	assert_int_equal(len, 7);
	assert_string_equal(buf, "abcdefg");
	free(buf);
}

/* Errors: a missing file (open), a directory (read: EISDIR), a limit of 0 with content. */
static void test_errors(void **state)
{
	char dir[128], path[256];
	char *buf = NULL;
	size_t cap = 0, len = 99;

	(void)state;
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "readall"), 0);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(read_path_all(path, &buf, &cap, 100, &len), -ENOENT);
	assert_int_equal(len, 0);
	assert_int_equal(read_path_all(dir, &buf, &cap, 100, &len), -EISDIR);
	write_pattern(dir, "one", 1, path, sizeof(path));
	assert_int_equal(read_path_all(path, &buf, &cap, 0, &len), -EFBIG);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	free(buf);
	assert_int_equal(helpers_tmpdir_rm(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_preallocated_not_moved),
		cmocka_unit_test(test_pipe_pieces),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
