/* SPDX-License-Identifier: MIT */
/*
 * hotelling: the two-sample Hotelling T^2 test over two sets of profiles (section 3.3 of
 * Tornetta, "On the Algebraic Properties of Flame Graphs"): is the mean flame graph of set B
 * different from set A's, and which stacks make the difference?
 *
 * Each profile (its first count column) is a point in the space of stacks. The dimension is
 * reduced the way the paper suggests (document frequency): stacks are ranked by the number of
 * profiles they appear in (then by total count, then by stack text) and the first ones are kept,
 * at most max_stacks and at most n1 + n2 - 3, so that n1 + n2 - 2 > p and the pooled covariance
 * can be inverted. A candidate whose pooled variance is 0, or which is (numerically) a linear
 * combination of the stacks already kept, is passed over and counted.
 *
 * With d = mean(B) - mean(A) and S the pooled covariance of the p kept stacks:
 *   T^2 = n1 n2 / (n1 + n2) * d' S^-1 d
 *   F   = (n1 + n2 - p - 1) / (p (n1 + n2 - 2)) * T^2   ~ F(p, n1 + n2 - p - 1) under H0
 *   critical T^2: c^2 = p (n1 + n2 - 2) / (n1 + n2 - p - 1) * F^-1(1 - alpha; p, n1 + n2 - p - 1)
 *   simultaneous (1 - alpha) interval of stack i: d_i +- sqrt(c^2 (1/n1 + 1/n2) S_ii)
 * A stack is significant when its interval excludes 0.
 *
 * A stack with the same count in every profile of A and another same count in every profile of
 * B (pooled variance 0, means apart) is an exact change: it cannot be a dimension of the test
 * (S would be singular) and needs none, since no noise explains it. It is kept after the p
 * tested stacks, significant with a zero-width interval, and the test rejects H0 whatever T^2
 * says (p-value 0). Counts are integers, so a burn of fixed CPU time sampled at a fixed period
 * gives one: 100 samples in every run of one set, none in the other.
 *
 * Uses GSL (Cholesky, the F distribution). Not thread-safe: GSL's error handler is switched off
 * for the duration of a call (and restored).
 */
#ifndef EMBER_HOTELLING_H
#define EMBER_HOTELLING_H

#include <stdbool.h>
#include <stddef.h>

struct profile;
struct sbuf;

#define HOTELLING_DEFAULT_ALPHA 0.05
#define HOTELLING_DEFAULT_MAX_STACKS 20

struct hotelling_opts {
	double alpha;		/* significance level, in (0, 1); 0: the default */
	/*
	 * Most stacks kept (p), never more than n1 + n2 - 3. 0: the default,
	 * min(HOTELLING_DEFAULT_MAX_STACKS, (n1 + n2 - 2) / 2), which leaves the F test about
	 * half the profiles as degrees of freedom.
	 */
	size_t max_stacks;
};

/* One kept stack (a dimension of the test). */
struct hotelling_stack {
	size_t stack;		/* index in hotelling_result.all */
	size_t df;		/* document frequency: profiles (of both sets) holding the stack */
	double mean_a, mean_b;
	double delta;		/* mean_b - mean_a */
	double var;		/* pooled variance S_ii */
	double ci_lo, ci_hi;	/* simultaneous confidence interval of delta */
	bool exact;		/* an exact change: no variance in either set (not in T^2) */
	bool significant;	/* the interval excludes 0 */
};

struct hotelling_result {
	size_t n_a, n_b;		/* profiles in each set */
	size_t nr_stacks;		/* distinct stacks over all profiles */
	size_t p;			/* stacks kept: the dimension of the test */
	size_t nr_exact;		/* exact changes, kept after the p tested stacks */
	size_t nr_kept;			/* p + nr_exact: the entries of kept */
	size_t skipped_constant;	/* candidates passed over: pooled variance 0, no change */
	size_t skipped_collinear;	/* candidates passed over: linear in the kept ones */
	double alpha;
	double t2, f, df1, df2, p_value;
	double f_crit, t2_crit;		/* F^-1(1 - alpha; df1, df2) and c^2 */
	size_t nr_significant;
	/*
	 * Owned: every stack seen, as a two-column profile: count = mean over set A,
	 * count2 = mean over set B (the differential of the two mean flame graphs).
	 * Its strtab is the first A profile's (borrowed: it must outlive the result).
	 */
	struct profile *all;
	struct hotelling_stack *kept;	/* owned: nr_kept entries, tested ones in rank order first */
};

/*
 * Runs the test of @b (n_b profiles) against @a (n_a profiles). The profiles may use different
 * strtabs; stacks are matched by frame names. Fills @ret (release with hotelling_result_fini()).
 * Returns 0; -EINVAL if a set has fewer than 2 profiles, n_a + n_b < 4, or alpha is not in
 * (0, 1); -ENODATA if no stack varies and none changed exactly (nothing to test); -ENOMEM; -EDOM if GSL fails on the
 * numbers. On failure @ret is zeroed.
 */
int hotelling_test(struct profile *const *a, size_t n_a, struct profile *const *b, size_t n_b,
		   const struct hotelling_opts *opts, struct hotelling_result *ret);
void hotelling_result_fini(struct hotelling_result *r);

/*
 * The noise-reduced difference of section 3.4: a two-column profile (strtab of r->all) with
 * count2 = mean B on every stack and count = mean A on the significant stacks, mean B elsewhere;
 * so B - A is the mean difference restricted to the significant stacks, and a differential
 * flame graph of it has B's widths and colours only where the change is significant.
 * Caller frees with profile__free(). NULL + errno=ENOMEM.
 */
struct profile *hotelling_reduced_diff(const struct hotelling_result *r);

/* H0 rejected: T^2 past its critical value, or an exact change (nr_exact > 0). */
bool hotelling_rejects(const struct hotelling_result *r);

/*
 * The one verdict of a result, as the dashboard, /api/v1/compare ("verdict") and `ember stat
 * compare` say it: "no significant difference (p-value P, alpha A)", "the ranges differ (...): N
 * stacks changed significantly", or "the ranges differ as a whole (...), but no single stack's
 * change is significant on its own" (reject with nr_significant 0). Appended to @sb (no quotes
 * or escapes needed).
 */
void hotelling_verdict(const struct hotelling_result *r, struct sbuf *sb);

/*
 * The result as one JSON object (shared by `ember stat compare --json` and emberd's
 * /api/v1/compare): n_a n_b stacks p skipped_constant skipped_collinear nr_exact alpha t2 f df1
 * df2 p_value f_crit t2_crit reject nr_significant verdict (hotelling_verdict()), and "kept":
 * [{stack, df, mean_a, mean_b, delta, var, ci_lo, ci_hi, exact, significant}], the tested
 * stacks in rank order, then the exact changes. Numbers with 17 significant digits; a
 * non-finite one is null. Appends to @sb; returns its sticky error (0 or -ENOMEM).
 */
int hotelling_write_json(const struct hotelling_result *r, struct sbuf *sb);

#endif
