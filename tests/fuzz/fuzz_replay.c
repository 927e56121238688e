// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: emberd --replay's loader over arbitrary file contents (perf script text,
 * ember-samples, gzip of either, or junk): format detection, the root-frame pid/tid split, the
 * recording and a query over it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ember/core/model/recording.h"
#include "ember/daemon/ingest/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(const struct rec_sample *s, void *ctx)
{
	double *total = ctx;

	*total += s->count + (double)s->stack_len + (double)s->pid;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct replay_stats st = { 0 };
	struct recording *r;
	char path[64], err[256];
	double total = 0;
	int fd;

	fd = memfd_create("replay", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = recording__new(8 << 20);
	if (r && replay_load_file(r, path, &st, err, sizeof(err)) == 0) {
		(void)recording__freeze(r);
		(void)recording__for_each(r, INT64_MIN, INT64_MAX, count, &total);
	}
	recording__free(r);
	close(fd);
	return 0;
}
