// SPDX-License-Identifier: MIT
#include "ember/daemon/ingest/replay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/parse.h"
#include "ember/core/model/recording.h"
#include "ember/core/formats/samples_text.h"

#define REPLAY_MAX_LINE (1u << 20)

struct load_ctx {
	struct recording *rec;
	struct replay_stats *st;
	int err;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "comm-PID" / "comm-PID/TID" root frames: split off the numbers (samples.h's rule). */
static void split_root(const char *root, size_t n, char *comm, size_t comm_size, int32_t *pid,
		       int32_t *tid)
{
	size_t i = n, j, end = n;

	*pid = *tid = -1;
	while (i > 0 && is_digit(root[i - 1]))
		i--;
	if (i < n && i > 0 && root[i - 1] == '/') {
		j = i - 1;
		while (j > 0 && is_digit(root[j - 1]))
			j--;
		if (j < i - 1 && j > 1 && root[j - 1] == '-') {
			*pid = (int32_t)strtol(root + j, NULL, 10);
			*tid = (int32_t)strtol(root + i, NULL, 10);
			end = j - 1;
		}
	} else if (i < n && i > 1 && root[i - 1] == '-') {
		*pid = (int32_t)strtol(root + i, NULL, 10);
		end = i - 1;
	}
	if (end >= comm_size)
		end = comm_size - 1;
	memcpy(comm, root, end);
	comm[end] = '\0';
}

static int on_perf_sample(const struct collapse_sample *s, void *ctx)
{
	struct load_ctx *lc = ctx;
	char comm[64];
	size_t n = s->comm_len < sizeof(comm) - 1 ? s->comm_len : sizeof(comm) - 1;
	uint64_t t;
	int err;

	/* from the text, to the nanosecond (a double of the seconds is not exact) */
	if (!s->time_len || parse_time_ns(s->time_str, s->time_len, &t) || t > INT64_MAX) {
		lc->st->no_time++;
		return 0;
	}
	memcpy(comm, s->comm, n);
	comm[n] = '\0';
	/*
	 * One record is one sample: perf's period (ns of cpu-clock, or cycles) is a weight, and
	 * the store, the heat map and the page count samples (period sums were shown as
	 * samples). The periods are summed apart, for the log.
	 */
	lc->st->period_sum += s->count_f;
	err = recording__add(lc->rec, (int64_t)t, (int32_t)s->pid, (int32_t)s->tid,
			     comm, s->stack, s->stack_len, 1);
	if (err)
		return err;
	lc->st->samples++;
	return 0;
}

static int load_samples(struct lineread *lr, struct load_ctx *lc)
{
	const char *line, *stack;
	size_t len, slen;
	uint64_t t, count;
	int r;

	while ((r = lineread__next(lr, &line, &len)) != 0) {
		const char *semi;
		char comm[64];
		int32_t pid, tid;

		if (r == -E2BIG) {
			lc->st->skipped++;
			continue;
		}
		if (r < 0)
			return r;
		r = samples_parse_line(line, len, &t, &stack, &slen, &count, NULL);
		if (r < 0) {
			lc->st->skipped++;
			continue;
		}
		if (r == 0)
			continue;
		if (t > INT64_MAX) {
			lc->st->skipped++;
			continue;
		}
		semi = memchr(stack, ';', slen);
		split_root(stack, semi ? (size_t)(semi - stack) : slen, comm, sizeof(comm), &pid,
			   &tid);
		r = recording__add(lc->rec, (int64_t)t, pid, tid, comm, stack, slen, (double)count);
		if (r)
			return r;
		lc->st->samples++;
	}
	return 0;
}

/* Reads through zlib (gzip or, transparently, plain text), the peeked head first. */
struct gz_src {
	gzFile gz;
	const char *head;
	size_t head_len, head_off;
};

static ssize_t gz_read(void *ctx, void *buf, size_t n)
{
	struct gz_src *g = ctx;
	int r;

	if (g->head_off < g->head_len) {
		size_t k = g->head_len - g->head_off < n ? g->head_len - g->head_off : n;

		memcpy(buf, g->head + g->head_off, k);
		g->head_off += k;
		return (ssize_t)k;
	}
	r = gzread(g->gz, buf, n > INT32_MAX ? INT32_MAX : (unsigned int)n);
	if (r < 0) {
		int zerr;

		(void)gzerror(g->gz, &zerr);
		return zerr == Z_ERRNO ? -(errno ? errno : EIO) : -EIO;
	}
	return r;
}

int replay_load_file(struct recording *rec, const char *path, struct replay_stats *st, char *err,
		     size_t errlen)
{
	struct load_ctx lc = { .rec = rec, .st = st };
	struct collapse_opts copts = { .format = COLLAPSE_FORMAT_PERF, .kernel = true, .jit = true };
	struct gz_src g = { 0 };
	struct lineread *lr = NULL;
	struct collapse *c = NULL;
	char head[4096];
	size_t hl = 0;
	const char *line, *nl;
	bool is_samples = false;
	int fd, r, n;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : dup(0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(-r));
		return r;
	}
	g.gz = gzdopen(fd, "rb"); /* owns fd from here */
	if (!g.gz) {
		close(fd);
		return -ENOMEM;
	}
	/* peek at the first non-blank line to tell the formats apart; it is replayed to the reader */
	while (hl < sizeof(head) - 1) {
		n = gzread(g.gz, head + hl, (unsigned int)(sizeof(head) - 1 - hl));
		if (n < 0) {
			snprintf(err, errlen, "cannot read '%s': corrupt gzip or read error", path);
			r = -EIO;
			goto out;
		}
		if (n == 0)
			break;
		hl += (size_t)n;
	}
	head[hl] = '\0';
	g.head = head;
	g.head_len = hl;
	line = head;
	while (*line == '\n' || *line == '\r')
		line++;
	nl = memchr(line, '\n', hl - (size_t)(line - head));
	is_samples = samples_detect(line, nl ? (size_t)(nl - line) : hl - (size_t)(line - head));
	lr = lineread__new(gz_read, &g, REPLAY_MAX_LINE);
	if (!lr) {
		r = -ENOMEM;
		goto out;
	}
	if (is_samples) {
		r = load_samples(lr, &lc);
	} else {
		copts.format = collapse_detect(head, hl);
		if (copts.format != COLLAPSE_FORMAT_PERF) {
			snprintf(err, errlen,
				 "'%s' is neither `perf script` output nor ember-samples v1", path);
			r = -EINVAL;
			goto out;
		}
		c = collapse__new(&copts, on_perf_sample, &lc);
		if (!c) {
			r = -ENOMEM;
			goto out;
		}
		r = collapse__read(c, lr, path);
		if (!r)
			r = collapse__finish(c);
		if (!r)
			st->skipped += collapse__stats(c)->skipped + collapse__stats(c)->long_lines;
	}
	if (r == -E2BIG)
		snprintf(err, errlen, "'%s' does not fit in the replay memory limit", path);
	else if (r)
		snprintf(err, errlen, "cannot load '%s': %s", path, strerror(-r));
	else
		st->files++;
out:
	collapse__free(c);
	lineread__free(lr);
	gzclose(g.gz);
	return r;
}

int replay_args_extract(int *argc, char **argv, char ***ret_files)
{
	char **files = NULL;
	int i, o = 1, nf = 0;
	bool in_replay = false;

	files = calloc((size_t)*argc + 1, sizeof(*files));
	if (!files)
		return -ENOMEM;
	for (i = 1; i < *argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--replay")) {
			in_replay = true;
			if (i + 1 >= *argc || (argv[i + 1][0] == '-' && strcmp(argv[i + 1], "-"))) {
				free(files);
				return -EINVAL;
			}
			continue;
		}
		if (!strncmp(a, "--replay=", 9)) {
			if (!a[9]) {
				free(files);
				return -EINVAL;
			}
			files[nf++] = (char *)a + 9;
			in_replay = false;
			continue;
		}
		if (in_replay && (a[0] != '-' || !strcmp(a, "-"))) {
			files[nf++] = argv[i];
			continue;
		}
		in_replay = false;
		argv[o++] = argv[i];
	}
	argv[o] = NULL;
	*argc = o;
	if (!nf) {
		free(files);
		files = NULL;
	}
	*ret_files = files;
	return nf;
}
