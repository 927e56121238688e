// SPDX-License-Identifier: MIT
/* dbgfetch: what it needs before asking (DEBUGINFOD_URLS, a folder of its own), what it answers
 * from the folder, and how it stops asking an unreachable server. test_debuginfod.sh covers a
 * real server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/daemon/elf/dbgfetch.h"

#include "helpers.h"

static const uint8_t bid1[] = { 0xab, 0x01, 0x02, 0x03 };
static const uint8_t bid2[] = { 0xcd, 0x04, 0x05, 0x06 };
static const uint8_t bid3[] = { 0xef, 0x07, 0x08, 0x09 };

static void test_needs_urls(void **state)
{
	char dir[256], cache[300];
	struct dbgfetch_opts o = { .cache_dir = cache, .max_bytes = 1 << 20, .timeout_ms = 500 };

	(void)state;
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "dbgfetch"), 0);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	unsetenv("DEBUGINFOD_URLS");
	errno = 0;
	assert_null(dbgfetch__new(&o));
	assert_int_equal(errno, ENOENT);
	setenv("DEBUGINFOD_URLS", "  ", 1); /* blank: none either */
	assert_null(dbgfetch__new(&o));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(access(cache, F_OK), -1); /* nothing created */
	helpers_tmpdir_rm(dir);
}

static void test_folder_checked(void **state)
{
	char dir[256], cache[300], target[400];
	struct dbgfetch_opts o = { .cache_dir = cache, .max_bytes = 1 << 20, .timeout_ms = 500 };

	(void)state;
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "dbgfetch"), 0);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	/* a link in its place: refused */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	assert_int_equal(mkdir(target, 0700), 0);
	snprintf(cache, sizeof(cache), "%s/link", dir);
	assert_int_equal(symlink(target, cache), 0);
	assert_null(dbgfetch__new(&o));
	assert_int_equal(errno, ENOTDIR);
	/* others may write in it: refused */
	snprintf(cache, sizeof(cache), "%s/open", dir);
	assert_int_equal(mkdir(cache, 0777), 0);
	assert_int_equal(chmod(cache, 0777), 0);
	assert_null(dbgfetch__new(&o));
	assert_int_equal(errno, EPERM);
	/* missing parents are made */
	snprintf(cache, sizeof(cache), "%s/a/b/cache", dir);
	struct dbgfetch *f = dbgfetch__new(&o);
	assert_non_null(f);
	assert_string_equal(dbgfetch__dir(f), cache);
	snprintf(target, sizeof(target), "%s/.build-id", cache);
	assert_int_equal(access(target, F_OK), 0);
	dbgfetch__free(f);
	helpers_tmpdir_rm(dir);
}

static void test_cached_and_unreachable(void **state)
{
	char dir[256], cache[300], path[400];
	struct dbgfetch_opts o = { .cache_dir = cache, .max_bytes = 1 << 20, .timeout_ms = 2000 };
	struct dbgfetch_stats st;
	struct dbgfetch *f;
	uint64_t seq;
	int r;

	(void)state;
	assert_int_equal(helpers_tmpdir_new(dir, sizeof(dir), "dbgfetch"), 0);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	/* nothing listens on port 1: every connection is refused */
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
	f = dbgfetch__new(&o);
	assert_non_null(f);
	assert_int_equal(dbgfetch__request(f, bid1, 1), -EINVAL); /* too short a build-id */
	/* in the folder already: answered from it, no server asked */
	snprintf(path, sizeof(path), "%s/.build-id/ab", cache);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/.build-id/ab/010203.debug", cache);
	assert_int_equal(helpers_write_file(path, "x", 0400), 0);
	assert_int_equal(dbgfetch__request(f, bid1, sizeof(bid1)), 0);
	dbgfetch__stats(f, &st);
	assert_int_equal(st.cached, 1);
	assert_int_equal(st.fetches + st.errors + st.not_found + st.timeouts, 0);
	/* not there: queued, never waited for; asked again while queued or fetched, not queued
	 * twice */
	seq = dbgfetch__done_seq(f);
	assert_int_equal(dbgfetch__request(f, bid2, sizeof(bid2)), 1);
	r = dbgfetch__request(f, bid2, sizeof(bid2));
	assert_true(r == 1 || r == -EAGAIN); /* pending, or already failed */
	assert_int_equal(dbgfetch__settle(f, 5000), 0);
	assert_true(dbgfetch__done_seq(f) > seq);
	/* the server's refusal counted, and then no server is asked for a while, for this
	 * build-id (the negative cache) or another (the server is down) */
	dbgfetch__stats(f, &st);
	assert_int_equal(st.errors + st.timeouts + st.not_found, 1);
	assert_int_equal(st.queued, 1);
	assert_int_equal(dbgfetch__request(f, bid2, sizeof(bid2)), -EAGAIN);
	assert_int_equal(dbgfetch__request(f, bid3, sizeof(bid3)), -EAGAIN);
	dbgfetch__stats(f, &st);
	assert_int_equal(st.negative_hits, r == -EAGAIN ? 2 : 1);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.queue_len + st.in_flight, 0);
	assert_int_equal(st.client_dirs, 0); /* the miss left no folder of libdebuginfod's */
	/* nothing stored for it */
	snprintf(path, sizeof(path), "%s/.build-id/cd/040506.debug", cache);
	assert_int_equal(access(path, F_OK), -1);
	dbgfetch__free(f);
	helpers_tmpdir_rm(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_needs_urls),
		cmocka_unit_test(test_folder_checked),
		cmocka_unit_test(test_cached_and_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
