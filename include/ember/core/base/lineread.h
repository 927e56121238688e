/* SPDX-License-Identifier: MIT */
/*
 * lineread: buffered line reader over any byte source, with a bound on line length, so that a
 * parser's memory never grows with its input: lines longer than the bound are skipped whole and
 * reported, not buffered.
 */
#ifndef EMBER_LINEREAD_H
#define EMBER_LINEREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct parse_error;

/* Reads up to @n bytes into @buf: bytes read, 0 at end, or -errno. */
typedef ssize_t (*lineread_fn)(void *ctx, void *buf, size_t n);

struct lineread; /* opaque */

#define LINEREAD_DEFAULT_MAX (64u << 20) /* 64 MiB */

/* @ctx is borrowed. @max_line: longest line kept (0: default). NULL + errno=ENOMEM. */
struct lineread *lineread__new(lineread_fn fn, void *ctx, size_t max_line);
/* Reads a plain fd (borrowed). */
struct lineread *lineread__new_fd(int fd, size_t max_line);
/* Reads a memory buffer (borrowed; must outlive the reader). */
struct lineread *lineread__new_mem(const void *buf, size_t len, size_t max_line);
void lineread__free(struct lineread *lr);

/*
 * Next line, without its '\n' (a '\r' before it is kept: parsers decide). The line is borrowed
 * until the next call, and is NUL-terminated at *ret_len (it may contain NULs itself).
 * Returns 1 for a line, 0 at end of input, -E2BIG for a line over the bound (skipped: the
 * reader is already past it), or -errno from the source.
 */
int lineread__next(struct lineread *lr, const char **ret_line, size_t *ret_len);
/* 1-based number of the line last returned (or skipped). */
unsigned long lineread__lineno(const struct lineread *lr);
/* Bytes consumed so far. */
unsigned long long lineread__offset(const struct lineread *lr);

/*
 * One line for lineread__parse_lines(), @perr's line number set: 0 when the line is taken (or is
 * blank, a comment), -EINVAL when it is malformed (@perr's col and reason set; no other error
 * may be -EINVAL), another -errno to end the read.
 */
typedef int (*lineread_parse_fn)(const char *line, size_t len, struct parse_error *perr, void *ctx);

/* What lineread__parse_lines() does with malformed lines, and where it counts. */
struct lineread_parse_opts {
	bool strict; /* the first malformed line ends the read */
	/* Called for each skipped line (may be NULL): @name, the error. */
	void (*on_skip)(const char *name, const struct parse_error *err, void *ctx);
	void *on_skip_ctx;
	const char *name;
	unsigned long *lines;	/* += lines given to the parser (may be NULL) */
	unsigned long *skipped; /* += malformed lines and lines over the bound (may be NULL) */
};

/*
 * The loop of a line parser (folded_read(), samples_read()): calls @fn for each line of @lr. A
 * line over the bound ("line too long") or one @fn finds malformed is skipped: counted, and
 * reported through on_skip, or with strict the end of the read (-EINVAL, the error in @reterr,
 * which may be NULL). Returns 0 at the end of the input, -EINVAL, or the first other error of
 * @fn or of the source.
 */
int lineread__parse_lines(struct lineread *lr, const struct lineread_parse_opts *o,
			  lineread_parse_fn fn, void *ctx, struct parse_error *reterr);

#endif
