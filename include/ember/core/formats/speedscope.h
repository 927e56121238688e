/* SPDX-License-Identifier: MIT */
/*
 * speedscope: profiles as speedscope's JSON file format (https://www.speedscope.app/
 * file-format-schema.json): one "sampled" profile whose samples are stacks of indices into
 * shared.frames (root first) with one weight each, in the order they were added, so that
 * timestamped input keeps its time order in speedscope's "Time Order" view; consecutive samples
 * of the same stack are merged into one. startValue is 0 and endValue the sum of the weights,
 * which is what speedscope takes as the profile's total.
 *
 * Weights are sample counts (unit "none"), or with a known frequency nanoseconds of CPU time
 * (count * 1e9 / freq_hz, unit "nanoseconds"). Not thread-safe.
 */
#ifndef EMBER_SPEEDSCOPE_H
#define EMBER_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct sbuf;
struct strtab;

struct speedscope_opts {
	const char *name;	/* the file's and the profile's name (borrowed); NULL: "ember" */
	uint64_t freq_hz;	/* 0: weights are sample counts; otherwise nanoseconds */
	bool counts_ns;		/* the counts are nanoseconds already (perf's periods summed) */
};

struct speedscope_writer; /* opaque */

/*
 * Frame names are ids in @st (borrowed; must outlive the writer). @opts may be NULL and is
 * copied (not the name string, which is borrowed until __finish). NULL + errno=ENOMEM; free with
 * speedscope_writer__free().
 */
struct speedscope_writer *speedscope_writer__new(const struct strtab *st,
						 const struct speedscope_opts *opts);
void speedscope_writer__free(struct speedscope_writer *w); /* NULL is a no-op */

/*
 * Appends @count samples of @frames[0..n) (root first, ids in the strtab) after the samples
 * added so far. 0, -EINVAL for a negative or non-finite count (a zero count is ignored),
 * -ENOMEM.
 */
int speedscope_writer__add(struct speedscope_writer *w, const uint32_t *frames, size_t n,
			   double count);
/* Appends the JSON document (one line, then '\n') to @out. 0 or -ENOMEM. */
int speedscope_writer__finish(struct speedscope_writer *w, struct sbuf *out);

/* One call: the stacks of @p (first counts) sorted by stack text. 0 or -errno. */
int speedscope_write_profile(const struct profile *p, const struct speedscope_opts *opts,
			     struct sbuf *out);

#endif
