// SPDX-License-Identifier: MIT
#include "ember/core/base/lineread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/base/parse.h"

#define BUF_MIN (256u << 10)

struct lineread {
	lineread_fn fn;
	void *ctx;
	char *buf;
	size_t cap, start, end; /* unread bytes are buf[start, end) */
	size_t max_line;
	unsigned long lineno;
	unsigned long long offset;
	int eof;
	/* for the fd and memory sources */
	int fd;
	const char *mem;
	size_t mem_len, mem_off;
};

static ssize_t read_fd(void *ctx, void *buf, size_t n)
{
	struct lineread *lr = ctx;
	ssize_t r;

	do
		r = read(lr->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

static ssize_t read_mem(void *ctx, void *buf, size_t n)
{
	struct lineread *lr = ctx;
	size_t left = lr->mem_len - lr->mem_off;

	if (n > left)
		n = left;
	memcpy(buf, lr->mem + lr->mem_off, n);
	lr->mem_off += n;
	return (ssize_t)n;
}

struct lineread *lineread__new(lineread_fn fn, void *ctx, size_t max_line)
{
	struct lineread *lr = calloc(1, sizeof(*lr));

	if (!lr)
		return NULL;
	lr->fn = fn;
	lr->ctx = ctx;
	lr->max_line = max_line ? max_line : LINEREAD_DEFAULT_MAX;
	lr->cap = BUF_MIN;
	lr->buf = malloc(lr->cap + 1);
	if (!lr->buf) {
		free(lr);
		errno = ENOMEM;
		return NULL;
	}
	lr->fd = -1;
	return lr;
}

struct lineread *lineread__new_fd(int fd, size_t max_line)
{
	struct lineread *lr = lineread__new(read_fd, NULL, max_line);

	if (lr) {
		lr->ctx = lr;
		lr->fd = fd;
	}
	return lr;
}

struct lineread *lineread__new_mem(const void *buf, size_t len, size_t max_line)
{
	struct lineread *lr = lineread__new(read_mem, NULL, max_line);

	if (lr) {
		lr->ctx = lr;
		lr->mem = buf;
		lr->mem_len = len;
	}
	return lr;
}

void lineread__free(struct lineread *lr)
{
	if (!lr)
		return;
	free(lr->buf);
	free(lr);
}

/* Reads more input behind what is buffered. 1 read, 0 at end, -errno. */
static int fill(struct lineread *lr)
{
	ssize_t n;

	if (lr->eof)
		return 0;
	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->end == lr->cap) {
		size_t cap = lr->cap * 2;
		char *nb;

		if (cap > lr->max_line + 1)
			cap = lr->max_line + 1;
		if (cap <= lr->cap)
			return -E2BIG;
		nb = realloc(lr->buf, cap + 1);
		if (!nb)
			return -ENOMEM;
		lr->buf = nb;
		lr->cap = cap;
	}
	n = lr->fn(lr->ctx, lr->buf + lr->end, lr->cap - lr->end);
	if (n < 0)
		return (int)n;
	if (n == 0) {
		lr->eof = 1;
		return 0;
	}
	lr->end += (size_t)n;
	return 1;
}

/* Drops input up to and including the next '\n'. 0 or -errno. */
static int skip_line(struct lineread *lr)
{
	int r;

	for (;;) {
		char *nl = memchr(lr->buf + lr->start, '\n', lr->end - lr->start);

		if (nl) {
			lr->offset += (size_t)(nl + 1 - (lr->buf + lr->start));
			lr->start = (size_t)(nl + 1 - lr->buf);
			return 0;
		}
		lr->offset += lr->end - lr->start;
		lr->start = lr->end = 0;
		r = fill(lr);
		if (r <= 0)
			return r;
	}
}

int lineread__next(struct lineread *lr, const char **ret_line, size_t *ret_len)
{
	size_t scanned = 0;
	char *nl;
	int r;

	for (;;) {
		nl = memchr(lr->buf + lr->start + scanned, '\n', lr->end - lr->start - scanned);
		if (nl)
			break;
		scanned = lr->end - lr->start;
		if (scanned > lr->max_line) {
			lr->lineno++;
			r = skip_line(lr);
			return r ? r : -E2BIG;
		}
		r = fill(lr);
		if (r == -E2BIG) {
			lr->lineno++;
			r = skip_line(lr);
			return r ? r : -E2BIG;
		}
		if (r < 0)
			return r;
		if (r == 0) {
			if (lr->end == lr->start)
				return 0;
			/* a last line without '\n' */
			nl = lr->buf + lr->end;
			break;
		}
	}
	lr->lineno++;
	*ret_line = lr->buf + lr->start;
	*ret_len = (size_t)(nl - (lr->buf + lr->start));
	if (*ret_len > lr->max_line) {
		lr->start = nl < lr->buf + lr->end ? (size_t)(nl + 1 - lr->buf) : lr->end;
		return -E2BIG;
	}
	*nl = '\0'; /* buf has one spare byte past cap for the last-line case */
	lr->offset += *ret_len + (nl < lr->buf + lr->end ? 1 : 0);
	lr->start = nl < lr->buf + lr->end ? (size_t)(nl + 1 - lr->buf) : lr->end;
	return 1;
}

unsigned long lineread__lineno(const struct lineread *lr)
{
	return lr->lineno;
}

unsigned long long lineread__offset(const struct lineread *lr)
{
	return lr->offset;
}

int lineread__parse_lines(struct lineread *lr, const struct lineread_parse_opts *o,
			  lineread_parse_fn fn, void *ctx, struct parse_error *reterr)
{
	struct parse_error perr;
	const char *line;
	size_t len;
	int r;

	for (;;) {
		r = lineread__next(lr, &line, &len);
		if (r == 0)
			return 0;
		perr = (struct parse_error){ .line = lineread__lineno(lr) };
		if (r == -E2BIG) {
			perr.reason = "line too long";
		} else if (r < 0) {
			return r;
		} else {
			if (o->lines)
				(*o->lines)++;
			r = fn(line, len, &perr, ctx);
			if (r != -EINVAL) {
				if (r)
					return r;
				continue;
			}
		}
		if (o->skipped)
			(*o->skipped)++;
		if (o->strict) {
			if (reterr)
				*reterr = perr;
			return -EINVAL;
		}
		if (o->on_skip)
			o->on_skip(o->name, &perr, o->on_skip_ctx);
	}
}
