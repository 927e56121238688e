/* SPDX-License-Identifier: MIT */
/*
 * collapse: profiler text output (`perf script`, DTrace stack aggregations, bpftrace stack maps)
 * turned into folded stacks exactly as FlameGraph's stackcollapse-perf.pl, stackcollapse.pl and
 * stackcollapse-bpftrace.pl print them.
 *
 * Streaming: a parser object is fed one line at a time (from a lineread, or by the caller) and
 * calls back once per sample record with the record's folded stack already processed (comm root
 * frame, offsets stripped, [unknown] replaced, arguments cut, annotations...). Its memory is
 * bounded by the longest record, never by the input. An aggregation table (collapse_agg) sums
 * records into unique stacks, and can fill a struct profile.
 *
 * The perl scripts' odd corners are reproduced on purpose (see docs/ember-collapse.md): for
 * example a perf sample that is not followed by a blank line before the end of input is dropped,
 * as stackcollapse-perf.pl drops it (it is counted in collapse_stats.incomplete).
 *
 * Not thread-safe: use one parser per thread. Nothing here logs.
 */
#ifndef EMBER_COLLAPSE_H
#define EMBER_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ember/core/base/parse.h"

struct lineread;
struct profile;
struct sbuf;

enum collapse_format {
	COLLAPSE_FORMAT_AUTO = 0,	/* detect from the first lines (buffered, bounded) */
	COLLAPSE_FORMAT_PERF,		/* `perf script` text, with or without --header */
	COLLAPSE_FORMAT_DTRACE,		/* DTrace stack()/ustack() aggregation (stackcollapse.pl) */
	COLLAPSE_FORMAT_BPFTRACE,	/* bpftrace `@[kstack, ustack, comm] = count()` map dump */
};

/* "perf", "dtrace", "bpftrace", "auto". Borrowed, static. */
const char *collapse_format_name(enum collapse_format f);
/* Parses a format name. 0 or -EINVAL. */
int collapse_format_parse(const char *s, enum collapse_format *ret);

struct collapse_opts {
	enum collapse_format format;
	/* perf options, as stackcollapse-perf.pl's */
	bool pid;		/* --pid: root frame "comm-PID" */
	bool tid;		/* --tid: root frame "comm-PID/TID" */
	bool kernel;		/* --kernel: "_[k]" on kernel frames */
	bool jit;		/* --jit: "_[j]" on perf-PID.map frames */
	bool addrs;		/* --addrs: "[module <addr>]" for unresolved frames */
	/* Keep only this event (e.g. "cycles"); NULL or "": the first event seen (borrowed). */
	const char *event_filter;
	/*
	 * Only with a NULL/empty @event_filter set by the caller on behalf of an earlier parser:
	 * treat @event_filter as defaulted (used when one input is split across parsers).
	 */
	bool event_defaulted;
	/*
	 * perf: each record counts 1 (a sample) instead of its period. Not what the script prints
	 * (it sums periods: nanoseconds for cpu-clock/task-clock, events for cycles and the rest).
	 */
	bool count_samples;
	/* Called for each malformed line skipped (may be NULL). @name is collapse__set_name()'s. */
	void (*on_skip)(const char *name, const struct parse_error *err, void *ctx);
	void *on_skip_ctx;
};

/*
 * One sample record. Every pointer is borrowed and valid only during the callback. Fields the
 * input does not carry are NaN / -1 / empty.
 */
struct collapse_sample {
	double time_s;		/* perf: the record's time (seconds, perf's clock); NaN if absent */
	const char *time_str;	/* the time exactly as printed ("158665.570607"); "" if absent */
	size_t time_len;
	long pid;		/* -1 if absent (perf prints TID alone unless asked for both) */
	long tid;		/* -1 if absent */
	const char *comm;	/* perf: the process name as printed (spaces kept); else "" */
	size_t comm_len;
	const char *event;	/* perf: event name ("cycles", "cpu-clock"); else "" */
	size_t event_len;
	/* The folded stack, root first, ';'-separated, as the reference script prints it. */
	const char *stack;
	size_t stack_len;
	uint64_t count;		/* perf: the period (1 if absent or 0); dtrace/bpftrace: the count */
	bool count_huge;	/* the count did not fit 64 bits: @count is UINT64_MAX, see @count_f */
	double count_f;		/* the count as a double (always set) */
	unsigned long line;	/* 1-based line number of the record's first line in its input */
};

/* Return 0 to go on, or a negative errno to stop: collapse__feed() returns it. */
typedef int (*collapse_sample_fn)(const struct collapse_sample *s, void *ctx);

struct collapse_stats {
	unsigned long long lines;	/* lines fed (including skipped ones) */
	unsigned long long samples;	/* records delivered to the callback */
	unsigned long long skipped;	/* malformed (unrecognized) lines skipped */
	unsigned long long long_lines;	/* lines over the reader's bound, skipped */
	unsigned long long filtered;	/* perf records of another event than the kept one */
	unsigned long long incomplete;	/* records cut off by the end of input, dropped */
	unsigned long long no_time;	/* delivered perf records without a time field */
	/* delivered perf records whose count is a period other than 1 (counts are a weight) */
	unsigned long long weighted;
};

/*
 * The unit of the counts a perf input's records carry: "samples" when none had a period (or
 * with count_samples), else the period's unit for @event: "ns" for cpu-clock and task-clock,
 * "events" for any other event (cycles, instructions...); perf's modifiers (":pppH") are
 * ignored. Static strings.
 */
const char *collapse_count_unit(const char *event, bool weighted);

struct collapse; /* opaque */

/*
 * A parser delivering records to @fn(@ctx) (@fn may be NULL: only statistics). @opts is copied
 * (its event_filter string too). NULL + errno (ENOMEM, EINVAL for contradictory options).
 * Free with collapse__free().
 */
struct collapse *collapse__new(const struct collapse_opts *opts, collapse_sample_fn fn,
			       void *ctx);
void collapse__free(struct collapse *c); /* NULL is a no-op */

/* Name used in on_skip reports (borrowed until the next call or the parser's end). */
void collapse__set_name(struct collapse *c, const char *name);

/*
 * Feeds one line (without its '\n'; may hold any bytes) numbered @lineno in the current input.
 * Returns 0, a callback's negative return, or -ENOMEM. Malformed lines are not errors: they are
 * counted and reported through on_skip. With COLLAPSE_FORMAT_AUTO, lines are held (bounded)
 * until the format is known; -EINVAL if the format cannot be told within the bound.
 */
int collapse__feed(struct collapse *c, const char *line, size_t len, unsigned long lineno);
/* Records that line @lineno was over the reader's bound and skipped (counted and reported). */
void collapse__feed_long(struct collapse *c, unsigned long lineno);

/*
 * Reads every line of @lr (named @name in reports), as one continuation of the stream: several
 * files fed in turn behave as the perl scripts' `<>` over them. 0, -errno from the reader or a
 * callback, -ENOMEM.
 */
int collapse__read(struct collapse *c, struct lineread *lr, const char *name);

/*
 * Ends the input: a record not closed yet is dropped as the scripts drop it (counted in
 * stats.incomplete). -EINVAL if the format is still unknown (auto-detection on too little or
 * unrecognizable input; the only data lost is what was fed), else 0 or a callback's error.
 */
int collapse__finish(struct collapse *c);

/* The detected or chosen format (AUTO until detection succeeds). */
enum collapse_format collapse__format(const struct collapse *c);
/* The perf event kept so far ("" until the first event is seen). Borrowed, valid until free. */
const char *collapse__event(const struct collapse *c);
/* True when the event was not given but taken from the first record. */
bool collapse__event_defaulted(const struct collapse *c);
/*
 * Sets the kept event when none was chosen yet (no-op otherwise): for a parser that continues
 * a stream another parser started. 0 or -ENOMEM.
 */
int collapse__set_event(struct collapse *c, const char *event, bool defaulted);
/* The first other event name filtered out ("" if none). Borrowed, valid until free. */
const char *collapse__other_event(const struct collapse *c);
const struct collapse_stats *collapse__stats(const struct collapse *c);
/*
 * True when no record is open and no state carries over to the next line (after a record's
 * blank line, normally). Used to split one input across parsers at record boundaries.
 */
bool collapse__clean(const struct collapse *c);

/*
 * Guesses the format from the first lines of an input (@buf, @len bytes, any cut). Returns the
 * format, or COLLAPSE_FORMAT_AUTO when it cannot tell (yet).
 */
enum collapse_format collapse_detect(const char *buf, size_t len);

/*
 * collapse_agg: sums records by folded stack text, as the scripts' %collapsed hash does, counts
 * kept exact in 64 bits (falling back to doubles past 2^64, as perl does). Memory grows with
 * unique stacks. Not thread-safe; merge per-thread tables with collapse_agg__merge().
 */
struct collapse_agg; /* opaque */

/* NULL + errno=ENOMEM; free with collapse_agg__free(). */
struct collapse_agg *collapse_agg__new(void);
void collapse_agg__free(struct collapse_agg *a); /* NULL is a no-op */

/* Adds @count to @stack (copied). 0 or -ENOMEM. */
int collapse_agg__add(struct collapse_agg *a, const char *stack, size_t len, uint64_t count);
/* Adds a record (its stack and count, huge counts included). 0 or -ENOMEM. */
int collapse_agg__add_sample(struct collapse_agg *a, const struct collapse_sample *s);
/* A collapse_sample_fn that adds each record to the collapse_agg @ctx. */
int collapse_agg_sample_cb(const struct collapse_sample *s, void *ctx);
/* Adds every stack of @src to @dst. 0 or -ENOMEM. */
int collapse_agg__merge(struct collapse_agg *dst, const struct collapse_agg *src);

size_t collapse_agg__nr_stacks(const struct collapse_agg *a);
/* Calls @fn(@stack, @len, @count, @ctx) for every stack, in first-seen order; a nonzero return
 * stops the walk and is returned. */
int collapse_agg__foreach(const struct collapse_agg *a,
			  int (*fn)(const char *stack, size_t len, double count, void *ctx), void *ctx);
/* Bytes of memory held. */
size_t collapse_agg__mem_bytes(const struct collapse_agg *a);

/*
 * Writes "STACK COUNT\n" per stack, sorted byte-wise by stack (perl's `sort { $a cmp $b }`), or
 * in first-seen order when @sorted is false. Counts print as perl prints them (integers; %.15g
 * past 2^64). 0 or -errno (-ENOMEM for the sbuf, the write error for the FILE).
 */
int collapse_agg__write(const struct collapse_agg *a, bool sorted, struct sbuf *sb);
int collapse_agg__write_file(const struct collapse_agg *a, bool sorted, FILE *f);

/*
 * Adds every stack to @p (frames interned into its strtab; counts as doubles). Frames are split
 * on ';'. 0 or -ENOMEM.
 */
int collapse_agg__to_profile(const struct collapse_agg *a, struct profile *p);

/*
 * Convenience: parses all of @lr with @opts into @p (aggregated). @stats (may be NULL) receives
 * the parser's statistics. 0, -EINVAL (format undecidable), -ENOMEM or a read error.
 */
int collapse_read_profile(struct lineread *lr, const char *name, const struct collapse_opts *opts,
			  struct profile *p, struct collapse_stats *stats);

#endif
