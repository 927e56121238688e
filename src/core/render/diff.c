// SPDX-License-Identifier: MIT
#include "ember/core/render/diff.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

/* Frames of stack @idx of @src with ids of @st (interned there); @tmp grows as needed. */
static const uint32_t *frames_in(const struct profile *src, size_t idx, struct strtab *st,
				 uint32_t **tmp, size_t *cap, size_t *ret_n, int *err)
{
	const struct strtab *sst = profile__strtab(src);
	const uint32_t *f = profile__stack(src, idx, ret_n);
	size_t j, n = *ret_n;

	*err = 0;
	if (sst == st)
		return f;
	if (n > *cap) {
		uint32_t *nt = realloc(*tmp, n * sizeof(*nt));

		if (!nt) {
			*err = -ENOMEM;
			return NULL;
		}
		*tmp = nt;
		*cap = n;
	}
	for (j = 0; j < n; j++) {
		int id = strtab__intern(st, strtab__str(sst, f[j]), strtab__len(sst, f[j]));

		if (id < 0) {
			*err = id;
			return NULL;
		}
		(*tmp)[j] = (uint32_t)id;
	}
	return *tmp;
}

/* Adds the count of stack @idx of @src as @d's first count (or second: @second), exactly. */
static int add_count(struct profile *d, const uint32_t *f, size_t n, const struct profile *src,
		     size_t idx, bool second)
{
	uint64_t c, c2;
	double v = profile__count(src, idx);
	int r;

	if (profile__count_exact(src, idx, &c, &c2))
		r = second ? profile__add2_u64(d, f, n, 0, c) : profile__add2_u64(d, f, n, c, 0);
	else
		r = second ? profile__add2(d, f, n, 0, v) : profile__add2(d, f, n, v, 0);
	return r == -ENOMEM ? r : 0; /* one stack per side: no sum to overflow */
}

struct profile *diff_profiles(const struct profile *a, const struct profile *b,
			      const struct diff_opts *opts)
{
	struct strtab *st = profile__strtab(a);
	struct profile *d = profile__new(st);
	double ta = profile__total(a), tb = profile__total(b);
	uint32_t *tmp = NULL;
	size_t i, n, cap = 0;
	const uint32_t *f;
	int err = 0;

	if (!d)
		return NULL;
	if (opts && opts->normalize && ta != tb && ta == 0 && profile__nr_stacks(a) +
	    profile__nr_stacks(b) > 0) {
		err = -EDOM;
		goto fail;
	}
	profile__set_has_count2(d, true);
	for (i = 0; i < profile__nr_stacks(a); i++) {
		f = profile__stack(a, i, &n);
		err = add_count(d, f, n, a, i, false);
		if (err)
			goto fail;
	}
	for (i = 0; i < profile__nr_stacks(b); i++) {
		f = frames_in(b, i, st, &tmp, &cap, &n, &err);
		if (!f)
			goto fail;
		err = add_count(d, f, n, b, i, true);
		if (err)
			goto fail;
	}
	if (opts && opts->normalize && ta != tb) {
		/* difffolded: int($c1 * $total2 / $total1), left to right, in doubles */
		for (i = 0; i < profile__nr_stacks(d); i++)
			profile__set_counts(d, i, trunc(profile__count(d, i) * tb / ta),
					    profile__count2(d, i));
	}
	free(tmp);
	return d;
fail:
	free(tmp);
	profile__free(d);
	errno = -err;
	return NULL;
}

void diff_format_number(struct sbuf *sb, double v)
{
	char tmp[64];

	/* perl keeps integer sums as IVs and prints them in full; NVs print with %.15g */
	if (v == floor(v) && fabs(v) < 9223372036854775808.0) {
		snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
		sbuf_adds(sb, tmp);
		return;
	}
	if (isnan(v)) {
		sbuf_adds(sb, "NaN");
		return;
	}
	if (isinf(v)) {
		sbuf_adds(sb, v < 0 ? "-Inf" : "Inf");
		return;
	}
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	sbuf_adds(sb, tmp);
}

int diff_write(const struct profile *d, struct sbuf *sb)
{
	size_t *idx = profile__sorted(d), i, n = profile__nr_stacks(d);

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint64_t c1, c2;

		profile__stack_text(d, idx[i], sb);
		sbuf_addc(sb, ' ');
		/* integers in full, never through a double */
		if (profile__count_exact(d, idx[i], &c1, &c2)) {
			sbuf_addu(sb, c1);
			sbuf_addc(sb, ' ');
			sbuf_addu(sb, c2);
		} else {
			diff_format_number(sb, profile__count(d, idx[i]));
			sbuf_addc(sb, ' ');
			diff_format_number(sb, profile__count2(d, idx[i]));
		}
		sbuf_addc(sb, '\n');
	}
	free(idx);
	return sbuf_error(sb);
}

double diff_elided_share(const struct profile *d)
{
	double gone = 0, all = 0;
	size_t i;

	for (i = 0; i < profile__nr_stacks(d); i++) {
		all += profile__count(d, i);
		if (profile__count2(d, i) == 0)
			gone += profile__count(d, i);
	}
	return all > 0 ? gone / all : 0;
}

void diff_elided_note(const struct profile *d, struct sbuf *sb)
{
	sbuf_addf(sb, "%.2f%% elided: share of A's samples on paths absent from B",
		  100 * diff_elided_share(d));
}

struct profile *diff_elided(const struct profile *d)
{
	struct profile *e = profile__new(profile__strtab(d));
	const uint32_t *f;
	size_t i, n;

	if (!e)
		return NULL;
	for (i = 0; i < profile__nr_stacks(d); i++) {
		if (profile__count2(d, i) != 0 || profile__count(d, i) == 0)
			continue;
		f = profile__stack(d, i, &n);
		if (profile__add(e, f, n, profile__count(d, i)) < 0) {
			profile__free(e);
			errno = ENOMEM;
			return NULL;
		}
	}
	return e;
}
