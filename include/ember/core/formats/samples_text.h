/* SPDX-License-Identifier: MIT */
/*
 * samples_text: the "ember-samples v1" text format of a struct samples (docs/formats.md), as
 * `ember collapse --timestamps` and emberd's /samples write it and `ember heatmap` and emberd
 * --replay read it. Parsers non-logging: errors come back in a struct parse_error.
 */
#ifndef EMBER_SAMPLES_TEXT_H
#define EMBER_SAMPLES_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/parse.h"

struct lineread;
struct samples;
struct sbuf;

/*
 * The "ember-samples v1" text format (docs/formats.md): "# ember-samples v1" then one
 * "TIME STACK COUNT" line per record, TIME in seconds with 9 fractional digits.
 */
#define SAMPLES_HEADER "# ember-samples v1"

/* Appends one line "TIME STACK COUNT\n" (stack text as given; no check). */
void samples_format_line(struct sbuf *sb, uint64_t t_ns, const char *stack, size_t len,
			 uint64_t count);

/*
 * Parses one line (without '\n'; a trailing '\r' ignored). Returns 1 for a sample (time, stack
 * borrowed from @line, count), 0 for a blank or comment line, -EINVAL with @reterr (may be NULL;
 * col and reason) for a malformed one: bad time, no count, a count that is not a whole number
 * below 2^64, or a "# ember-samples vN" header of another version.
 */
int samples_parse_line(const char *line, size_t len, uint64_t *ret_t_ns, const char **ret_stack,
		       size_t *ret_stack_len, uint64_t *ret_count, struct parse_error *reterr);

/*
 * True when @line looks like the start of an ember-samples file: the header, or a sample line
 * (used to tell it from `perf script` text).
 */
bool samples_detect(const char *line, size_t len);

struct samples_read_opts {
	bool strict;		/* the first malformed line is an error */
	size_t max_depth;	/* 0: no limit; deeper stacks are malformed */
	/* Called for each skipped line (may be NULL). */
	void (*on_skip)(const char *name, const struct parse_error *err, void *ctx);
	void *on_skip_ctx;
	const char *name;	/* for messages */
};

struct samples_read_stats {
	unsigned long lines;	/* lines read, blank and comments included */
	unsigned long records;	/* sample lines added */
	unsigned long skipped;	/* malformed lines skipped (including over-long ones) */
	uint64_t total;		/* sum of counts added */
};

/*
 * Reads every line of @lr into @s, then sorts. Returns 0, -EINVAL (strict mode: the first bad
 * line, in @reterr), -ENOMEM or a read error. @stats (may be NULL) is accumulated.
 */
int samples_read(struct lineread *lr, struct samples *s, const struct samples_read_opts *opts,
		 struct samples_read_stats *stats, struct parse_error *reterr);

/*
 * Writes the header and every sorted sample in time order (stable: records at one time in the
 * order added). 0 or -ENOMEM (-EINVAL with staged samples).
 */
int samples__write(const struct samples *s, struct sbuf *sb);

#endif
