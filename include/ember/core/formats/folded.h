/* SPDX-License-Identifier: MIT */
/*
 * folded: the folded-stack text format of FlameGraph ("frame;frame;frame count"), read and written.
 *
 * A line is: stack, one or more whitespace characters, a count (digits with an optional fraction:
 * 12, 12., 12.5). A second count may follow (difffolded's "stack before after"). As flamegraph.pl
 * reads it, the stack is everything before the last whitespace character preceding the count, so
 * frames may hold spaces and any bytes but ';', '\n' and NUL. CRLF line ends and blank lines are
 * accepted. Frames are separated by ';'; trailing empty frames are dropped (as perl's split does).
 */
#ifndef EMBER_FOLDED_H
#define EMBER_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ember/core/base/parse.h"

struct profile;
struct sbuf;
struct lineread;

struct folded_line {
	const char *stack;	/* borrowed from the parsed line */
	size_t stack_len;
	double count;		/* first count (the only one in a one-column line) */
	double count2;		/* second count if ncounts == 2 */
	int ncounts;		/* 1 or 2 */
	/* exact: every count is an integer (12, 12., 12.00), held exactly in ucount/ucount2; a
	 * double rounds integers past 2^53, so whatever stores counts uses these */
	bool exact;
	uint64_t ucount, ucount2;
};

enum folded_columns {
	FOLDED_COLUMNS_AUTO = 0,	/* per line, as flamegraph.pl: 2 if the stack ends in " N" */
	FOLDED_COLUMNS_ONE = 1,		/* the last number is the count, the rest is the stack */
	FOLDED_COLUMNS_TWO = 2,		/* both counts required */
};

/*
 * Parses one line (without its '\n'; a trailing '\r' is ignored). Returns 1 for a stack line,
 * 0 for a blank line, -EINVAL for a malformed one with @reterr (may be NULL) filled (col, reason).
 * An integer count over 2^64-1 is malformed ("sample count over 18446744073709551615").
 */
int folded_parse_line(const char *line, size_t len, enum folded_columns cols,
		      struct folded_line *ret, struct parse_error *reterr);

/*
 * Splits @stack on ';' and interns each frame into @p's strtab, then adds the counts: the
 * profile's own profile__add_text(), under the name the folded readers know it by.
 * Returns the stack index >= 0, -ENOMEM, or -E2BIG past @max_depth frames (0: no limit).
 */
int folded_add_stack(struct profile *p, const char *stack, size_t len, double count,
		     double count2, bool two, size_t max_depth);
/*
 * The same for a parsed line (@fl->stack, its counts): integer counts are summed exactly, and
 * -ERANGE (nothing added) when the stack's count would pass 2^64-1.
 */
int folded_add_line(struct profile *p, const struct folded_line *fl, size_t max_depth);
/* Adds the counts of @fl to the stack @frames[0..n) of @p, exactly as folded_add_line(). */
int folded_add_counts(struct profile *p, const uint32_t *frames, size_t n,
		      const struct folded_line *fl);

struct folded_read_opts {
	enum folded_columns columns;
	bool strict;		/* the first malformed line is an error */
	size_t max_depth;	/* 0: no limit; deeper stacks are malformed */
	/* Optional transform of each stack before it is added (e.g. strip hex); writes into @out. */
	void (*rewrite)(const char *stack, size_t len, struct sbuf *out, void *ctx);
	void *rewrite_ctx;
	/* Called for each skipped line (may be NULL): file name, error. */
	void (*on_skip)(const char *name, const struct parse_error *err, void *ctx);
	void *on_skip_ctx;
	const char *name;	/* for messages */
};

struct folded_stats {
	unsigned long lines;	/* lines read, blank included */
	unsigned long stacks;	/* stack lines added */
	unsigned long skipped;	/* malformed lines skipped */
	double total;		/* sum of first counts added (a statistic: rounded) */
};

/*
 * Reads every line from @lr into @p. Memory grows with unique stacks, not input size. A line
 * that would take its stack's count past 2^64-1 is malformed (skipped, or the error when strict).
 * Returns 0, -EINVAL (strict mode: first bad line, in @reterr), -ENOMEM or a read error.
 * @stats (may be NULL) is accumulated, not reset.
 */
int folded_read(struct lineread *lr, struct profile *p, const struct folded_read_opts *opts,
		struct folded_stats *stats, struct parse_error *reterr);

/*
 * Writes @p as folded text, sorted by stack text (deterministic), one line per stack with a
 * non-zero count (or both counts for a two-column profile). 0 or -errno.
 */
int folded_write(const struct profile *p, struct sbuf *sb);
int folded_write_file(const struct profile *p, FILE *f);

/*
 * What a folded file's counts are. Folded text has no header: ember's own output counts
 * samples, while stackcollapse-perf.pl (and `ember collapse`) sums perf's periods, a weight:
 * nanoseconds for cpu-clock/task-clock.
 */
enum folded_unit {
	FOLDED_UNIT_SAMPLES = 0,
	FOLDED_UNIT_NS,		/* a weight in nanoseconds (perf's cpu-clock periods summed) */
};

/* "samples", "ns". Static. */
const char *folded_unit_name(enum folded_unit u);
/* Parses "samples" or "ns" (also "period", "nanoseconds"). 0 or -EINVAL. */
int folded_unit_parse(const char *s, enum folded_unit *ret);

/*
 * Tells period sums from sample counts: when every count of @p is an integer multiple of one
 * clock period P in ns (P >= 100000, i.e. 10 kHz at most, and 1e9 / round(1e9 / P) == P within
 * 1 ns: 10101010 at 99 Hz, 1001001 at 999 Hz; of the divisors of the counts' gcd that are, the
 * largest at a common sampling rate (99 Hz over 33 Hz when every count is a multiple of three
 * periods), else the largest)
 * and @p has at least 3 stacks, the counts are
 * perf periods: FOLDED_UNIT_NS with *@ret_period_ns = P. Otherwise FOLDED_UNIT_SAMPLES
 * (*@ret_period_ns = 0). A guess: callers let the user override it.
 */
enum folded_unit folded_guess_unit(const struct profile *p, uint64_t *ret_period_ns);

/* Replaces every "0x<hex digits>" with "0x..." (difffolded -s). */
void folded_strip_hex(const char *stack, size_t len, struct sbuf *out, void *ctx);

#endif
