/* SPDX-License-Identifier: MIT */
/*
 * algebra: flame graphs as the paper "On the Algebraic Properties of Flame Graphs" (Tornetta,
 * 2023) defines them: finitely supported functions stack -> value, i.e. sparse vectors over the
 * free vector space of stacks. A flame graph is one with non-negative values (the positive cone).
 *
 * These functions read the first count column of profiles (profile__count) and ignore the
 * second. Stacks of two profiles are matched by their frame names, so the profiles may use
 * different strtabs (sharing one is faster). Results are new one-column profiles in the first
 * operand's strtab; stacks whose result is exactly 0 are left out (they are outside the
 * support). Not thread-safe; inputs are only read.
 */
#ifndef EMBER_ALGEBRA_H
#define EMBER_ALGEBRA_H

#include <stddef.h>

struct profile;

/* Index in @in of stack @idx of @p (the same frame names), or -ENOENT. */
int algebra_find(const struct profile *in, const struct profile *p, size_t idx);

/*
 * @ka * @a + @kb * @b as a new profile (strtab of @a). @b may be NULL (then it is @ka * @a).
 * Caller frees with profile__free(). NULL + errno=ENOMEM.
 */
struct profile *algebra_combine(const struct profile *a, double ka, const struct profile *b,
				double kb);
/* Shorthands: a + b, a - b (not a flame graph in general: values may be negative), k * a. */
struct profile *algebra_add(const struct profile *a, const struct profile *b);
struct profile *algebra_sub(const struct profile *a, const struct profile *b);
struct profile *algebra_scale(const struct profile *a, double k);

/* ||a||_1 = sum of |a(s)| over the stacks: for a CPU profile, the total samples. */
double algebra_norm1(const struct profile *a);
/* d(a, b) = ||a - b||_1, computed without building a - b. */
double algebra_distance(const struct profile *a, const struct profile *b);
/*
 * The paper's normalized similarity 1 - || a/||a|| - b/||b|| ||_1 / 2, in [0, 1]: 1 for equal
 * shapes (identical, or one a positive multiple of the other), 0 for disjoint supports.
 * Two empty profiles are identical (1); one empty and one not share nothing (0).
 */
double algebra_similarity(const struct profile *a, const struct profile *b);

/*
 * The decomposition of D = kb*b - ka*a (section 3.1) into four flame graphs with mutually
 * disjoint supports:  D = appeared + grown - disappeared - shrunk, where
 *   appeared    = kb*b on stacks outside the support of a,
 *   disappeared = ka*a on stacks outside the support of b,
 *   grown       = D on common stacks where D > 0,
 *   shrunk      = -D on common stacks where D < 0.
 * Each part's value on a stack is computed by the same one operation as D's, so the identity
 * holds exactly in floating point. With ka = 1/||a||, kb = 1/||b|| it is the normalized
 * decomposition the paper recommends for viewing.
 */
struct algebra_parts {
	struct profile *appeared, *disappeared, *grown, *shrunk;
};

/*
 * Fills @ret with four new profiles (strtab of @a); release them with algebra_parts_fini().
 * @ka and @kb must be > 0. 0, -EDOM if a value of @a or @b is negative (not a flame graph) or
 * a factor is not positive, or -ENOMEM. On failure @ret is untouched.
 */
int algebra_decompose(const struct profile *a, double ka, const struct profile *b, double kb,
		      struct algebra_parts *ret);
void algebra_parts_fini(struct algebra_parts *parts);

#endif
