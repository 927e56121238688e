/* SPDX-License-Identifier: MIT */
/*
 * helpers: what several unit tests need, written once (header-only: each test links only its
 * module). Temporary directories, files, the workloads' folder, a repeatable random sequence.
 */
#ifndef EMBER_TEST_HELPERS_H
#define EMBER_TEST_HELPERS_H

#include <fcntl.h>
#include <ftw.h> /* nftw: _GNU_SOURCE comes from the Makefile */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Creates /tmp/ember-test-@name.XXXXXX into @buf. 0 or -1. */
static inline int helpers_tmpdir_new(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "/tmp/ember-test-%s.XXXXXX", name);
	return mkdtemp(buf) ? 0 : -1;
}

static inline int helpers_rm_one(const char *path, const struct stat *st, int type,
				 struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

/* Removes @dir and everything below it (no shell). 0 or -1. */
static inline int helpers_tmpdir_rm(const char *dir)
{
	if (!dir || !dir[0])
		return 0;
	return nftw(dir, helpers_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes @text into @path (created or truncated) with @mode. 0 or -1. */
static inline int helpers_write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	size_t n = strlen(text);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, text, n) == (ssize_t)n && fchmod(fd, mode) == 0;
	close(fd);
	return ok ? 0 : -1;
}

/* The test workloads' folder: $OUTPUT/workloads (make workloads), "build/workloads" without it. */
static inline const char *helpers_workloads(char *buf, size_t size)
{
	const char *out = getenv("OUTPUT");

	snprintf(buf, size, "%s/workloads", out && *out ? out : "build");
	return buf;
}

/* xorshift64: the same sequence on every run from the same @state (not 0). */
static inline uint64_t helpers_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
