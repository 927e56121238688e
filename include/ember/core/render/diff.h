/* SPDX-License-Identifier: MIT */
/*
 * diff: two profiles -> a differential profile, with FlameGraph difffolded.pl's semantics, and
 * the "elided" paths (stacks of A that vanished from B, Netflix FlameCommander's answer to the
 * vanishing-code problem in Gregg's "Differential Flame Graphs").
 *
 * A differential profile is a two-column profile over the union of the stacks of A and B:
 * count = A's value (0 where A lacks the stack), count2 = B's value. flamegraph.pl (and our
 * renderer) draws it with widths from B and colours from B - A. Not thread-safe.
 */
#ifndef EMBER_DIFF_H
#define EMBER_DIFF_H

#include <stdbool.h>
#include <stddef.h>

struct profile;
struct sbuf;

struct diff_opts {
	/*
	 * difffolded -n: when the totals differ, A's counts become int(a * total(B) / total(A)),
	 * computed in doubles and truncated toward zero, exactly as the perl script does.
	 */
	bool normalize;
};

/*
 * B - A as a new two-column profile sharing @a's strtab (B's frame names are interned into it if
 * @b uses another one). Stacks come in A's order, then the ones only in B. Caller frees with
 * profile__free(). NULL + errno: ENOMEM, or EDOM when normalizing an A with total 0 against a
 * B with a non-zero total (difffolded dies with "Illegal division by zero").
 */
struct profile *diff_profiles(const struct profile *a, const struct profile *b,
			      const struct diff_opts *opts);

/*
 * Writes @d (a two-column profile) as difffolded's three columns "stack countA countB\n", one
 * line per stack (zero counts included, as difffolded prints them), sorted by stack text.
 * Numbers are printed as perl prints them: integers in full, others with "%.15g".
 * 0 or the sbuf's -ENOMEM.
 */
int diff_write(const struct profile *d, struct sbuf *sb);

/* Appends @v as perl's print does for a number (integral: all digits; else "%.15g"). */
void diff_format_number(struct sbuf *sb, double v);

/*
 * The share of A (first column) on stacks that B (second column) lacks: sum of count over
 * stacks with count2 == 0, divided by the total of count. 0 when A is empty. In [0, 1].
 */
double diff_elided_share(const struct profile *d);

/*
 * Appends the note a differential flame graph states (flamegraph_opts.info):
 * "12.50% elided: share of A's samples on paths absent from B".
 */
void diff_elided_note(const struct profile *d, struct sbuf *sb);

/*
 * The elided flame graph: a one-column profile (same strtab) holding A's count of every stack
 * absent from B. Caller frees with profile__free(). NULL + errno=ENOMEM.
 */
struct profile *diff_elided(const struct profile *d);

#endif
