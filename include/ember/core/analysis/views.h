/* SPDX-License-Identifier: MIT */
/*
 * views: the profile views engineers know from pprof, Pyroscope and speedscope, computed on a
 * profile (one count column):
 *
 * - views_filter_frames(): pprof's -focus and -ignore (query.h focus=, ignore=): the stacks with
 *   a frame matching focus, without those with a frame matching ignore; what `ember merge
 *   --grep/--exclude` keeps of the same stacks.
 * - views_top(): per function (frame name), self (samples where it is the leaf) and total
 *   (samples of the stacks it is in, once per stack however often it recurses).
 * - views_sandwich(): one function's callers and callees, merged from every place it is called:
 *   per stack through a frame matching the pattern, the outermost such frame splits it; the
 *   callers profile holds that frame then its callers toward the root (drawn as a flame graph:
 *   the function at the bottom, its callers above), the callees profile that frame then what it
 *   called (drawn as an icicle: callees below). Both add up to the function's total.
 *
 * The first @skip frames of every stack are not functions (emberd's root: the comm, or the
 * workload with group_by): neither counted nor matched. libc (+ the regex); inputs are only
 * read, so calls on the same profile may run at once.
 */
#ifndef EMBER_VIEWS_H
#define EMBER_VIEWS_H

#include <stddef.h>
#include <stdint.h>

struct profile;
struct query_common;
struct ember_regex;

/* A new profile (same strtab) of @p's stacks that pass @q's focus= and ignore=. NULL + errno
 * (ENOMEM, QUERY_EFRAME_LIMIT when a pattern reached its match limit). */
struct profile *views_filter_frames(const struct profile *p, const struct query_common *q);

struct views_top_row {
	uint32_t frame;	  /* id in the profile's strtab */
	const char *name; /* its name, borrowed from the strtab */
	double self, total;
};
enum views_sort { VIEWS_SORT_SELF = 0, VIEWS_SORT_TOTAL };
/*
 * Every function of @p, sorted by @sort (then by the other, then by name): *@ret_rows (free())
 * and *@ret_n. 0 or -ENOMEM.
 */
int views_top(const struct profile *p, size_t skip, enum views_sort sort,
	      struct views_top_row **ret_rows, size_t *ret_n);

/*
 * The sandwich of the frames matching @re (see above): two new profiles (same strtab) in
 * *@ret_callers and *@ret_callees, and the function's total (samples through a match) in
 * *@ret_total. 0, -ENOMEM or -QUERY_EFRAME_LIMIT.
 */
int views_sandwich(const struct profile *p, size_t skip, const struct ember_regex *re,
		   struct profile **ret_callers, struct profile **ret_callees, double *ret_total);

#endif
