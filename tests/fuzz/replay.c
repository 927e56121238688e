// SPDX-License-Identifier: MIT
/*
 * A main() for a fuzz target without libFuzzer: runs LLVMFuzzerTestOneInput once over each file
 * named on the command line, or over each file of a directory named there (in name order, not
 * recursive). `make test` links the targets with this and the sanitized (ASan + UBSan) build to
 * replay their seed corpora: the same inputs and the same sanitizers as libFuzzer's `-runs=0`,
 * without a third, coverage-instrumented build of every source (`make fuzz` keeps that one).
 * Arguments that start with '-' (libFuzzer's flags) are ignored. Exits 1 when a file cannot be
 * read or nothing was replayed; a finding aborts the process, as under libFuzzer.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REPLAY_MAX_INPUT (64u << 20) /* a seed larger than this is a mistake, not an input */

static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > REPLAY_MAX_INPUT) {
		fprintf(stderr, "replay: %s: not a regular file of at most %u bytes\n", path,
			REPLAY_MAX_INPUT);
		close(fd);
		return -1;
	}
	/* one byte more than asked for, so that an empty input still has a valid pointer */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		fprintf(stderr, "replay: %s: short read (%zu of %lld bytes)\n", path, got,
			(long long)st.st_size);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the regular files of DIR, each replayed; returns how many, or -1 */
static long replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	long done = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **grown = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof(*names));
			if (!grown)
				break;
			names = grown;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= sizeof(path) ||
		    replay_file(path) < 0)
			done = -1;
		else if (done >= 0)
			done++;
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	long total = 0;
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (argv[i][0] == '-')
			continue;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			long n = replay_dir(argv[i]);
			if (n < 0)
				rc = 1;
			else
				total += n;
			printf("replayed %ld inputs from %s\n", n < 0 ? 0 : n, argv[i]);
		} else if (replay_file(argv[i]) < 0) {
			rc = 1;
		} else {
			total++;
		}
	}
	if (total == 0) {
		fprintf(stderr, "replay: no input replayed\n");
		rc = 1;
	}
	return rc;
}
