// SPDX-License-Identifier: MIT
#include "ember/core/analysis/algebra.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/strtab.h"

int algebra_find(const struct profile *in, const struct profile *p, size_t idx)
{
	const struct strtab *sin = profile__strtab(in), *sp = profile__strtab(p);
	uint32_t local[128], *ids = local;
	const uint32_t *f;
	size_t n, j;
	int r = -ENOENT, id;

	f = profile__stack(p, idx, &n);
	if (sin == sp)
		return profile__find(in, f, n);
	if (n > 128) {
		ids = malloc(n * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
	}
	for (j = 0; j < n; j++) {
		id = strtab__find(sin, strtab__str(sp, f[j]), strtab__len(sp, f[j]));
		if (id < 0)
			goto out;
		ids[j] = (uint32_t)id;
	}
	r = profile__find(in, ids, n);
out:
	if (ids != local)
		free(ids);
	return r;
}

/* Adds @v to stack @idx of @src in @dst (names interned into @dst's strtab). 0 or -ENOMEM. */
static int add_from(struct profile *dst, const struct profile *src, size_t idx, double v)
{
	struct strtab *sd = profile__strtab(dst);
	const struct strtab *ss = profile__strtab(src);
	uint32_t local[128], *ids = local;
	const uint32_t *f;
	size_t n, j;
	int id, err = 0;

	f = profile__stack(src, idx, &n);
	if (sd == ss)
		return profile__add(dst, f, n, v) < 0 ? -ENOMEM : 0;
	if (n > 128) {
		ids = malloc(n * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
	}
	for (j = 0; j < n; j++) {
		id = strtab__intern(sd, strtab__str(ss, f[j]), strtab__len(ss, f[j]));
		if (id < 0) {
			err = -ENOMEM;
			goto out;
		}
		ids[j] = (uint32_t)id;
	}
	if (profile__add(dst, ids, n, v) < 0)
		err = -ENOMEM;
out:
	if (ids != local)
		free(ids);
	return err;
}

/* The value of stack @idx of @p in @q (0 outside its support); -ENOMEM is reported in *err. */
static double value_in(const struct profile *q, const struct profile *p, size_t idx, int *err)
{
	int j = algebra_find(q, p, idx);

	if (j == -ENOMEM)
		*err = -ENOMEM;
	return j >= 0 ? profile__count(q, (size_t)j) : 0;
}

struct profile *algebra_combine(const struct profile *a, double ka, const struct profile *b,
				double kb)
{
	struct profile *r = profile__new(profile__strtab(a));
	size_t i;
	double v;
	int err = 0;

	if (!r)
		return NULL;
	for (i = 0; i < profile__nr_stacks(a) && !err; i++) {
		v = ka * profile__count(a, i);
		if (b)
			v += kb * value_in(b, a, i, &err);
		if (v != 0 && !err)
			err = add_from(r, a, i, v);
	}
	for (i = 0; b && i < profile__nr_stacks(b) && !err; i++) {
		int j = algebra_find(a, b, i);

		if (j == -ENOMEM) {
			err = j;
			break;
		}
		if (j >= 0)
			continue; /* done above */
		v = kb * profile__count(b, i);
		if (v != 0)
			err = add_from(r, b, i, v);
	}
	if (err) {
		profile__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

struct profile *algebra_add(const struct profile *a, const struct profile *b)
{
	return algebra_combine(a, 1, b, 1);
}

struct profile *algebra_sub(const struct profile *a, const struct profile *b)
{
	return algebra_combine(a, 1, b, -1);
}

struct profile *algebra_scale(const struct profile *a, double k)
{
	return algebra_combine(a, k, NULL, 0);
}

double algebra_norm1(const struct profile *a)
{
	double s = 0;
	size_t i;

	for (i = 0; i < profile__nr_stacks(a); i++)
		s += fabs(profile__count(a, i));
	return s;
}

/* sum |ka*a - kb*b| over the union of the supports; NAN on ENOMEM */
static double scaled_distance(const struct profile *a, double ka, const struct profile *b,
			      double kb)
{
	double s = 0;
	size_t i;
	int j, err = 0;

	for (i = 0; i < profile__nr_stacks(a); i++)
		s += fabs(ka * profile__count(a, i) - kb * value_in(b, a, i, &err));
	for (i = 0; i < profile__nr_stacks(b); i++) {
		j = algebra_find(a, b, i);
		if (j == -ENOMEM)
			err = j;
		if (j < 0)
			s += fabs(kb * profile__count(b, i));
	}
	return err ? NAN : s;
}

double algebra_distance(const struct profile *a, const struct profile *b)
{
	return scaled_distance(a, 1, b, 1);
}

double algebra_similarity(const struct profile *a, const struct profile *b)
{
	double na = algebra_norm1(a), nb = algebra_norm1(b), s;

	if (na == 0 || nb == 0)
		return na == nb ? 1 : 0;
	s = 1 - scaled_distance(a, 1 / na, b, 1 / nb) / 2;
	/* rounding can stray by an ulp or so past the bounds */
	return s < 0 ? 0 : s > 1 ? 1 : s;
}

void algebra_parts_fini(struct algebra_parts *parts)
{
	profile__free(parts->appeared);
	profile__free(parts->disappeared);
	profile__free(parts->grown);
	profile__free(parts->shrunk);
	*parts = (struct algebra_parts){ 0 };
}

int algebra_decompose(const struct profile *a, double ka, const struct profile *b, double kb,
		      struct algebra_parts *ret)
{
	struct strtab *st = profile__strtab(a);
	struct algebra_parts pt = {
		.appeared = profile__new(st),
		.disappeared = profile__new(st),
		.grown = profile__new(st),
		.shrunk = profile__new(st),
	};
	double va, vb, d;
	size_t i;
	int j, err = 0;

	if (!pt.appeared || !pt.disappeared || !pt.grown || !pt.shrunk) {
		err = -ENOMEM;
		goto fail;
	}
	if (!(ka > 0) || !(kb > 0)) {
		err = -EDOM;
		goto fail;
	}
	for (i = 0; i < profile__nr_stacks(a) && !err; i++) {
		va = profile__count(a, i);
		if (va < 0) {
			err = -EDOM;
			break;
		}
		if (va == 0)
			continue;
		j = algebra_find(b, a, i);
		if (j == -ENOMEM) {
			err = j;
			break;
		}
		vb = j >= 0 ? profile__count(b, (size_t)j) : 0;
		if (vb < 0) {
			err = -EDOM;
			break;
		}
		if (vb == 0) {
			err = add_from(pt.disappeared, a, i, ka * va);
			continue;
		}
		d = kb * vb - ka * va;
		if (d > 0)
			err = add_from(pt.grown, a, i, d);
		else if (d < 0)
			err = add_from(pt.shrunk, a, i, -d);
	}
	for (i = 0; i < profile__nr_stacks(b) && !err; i++) {
		vb = profile__count(b, i);
		if (vb < 0) {
			err = -EDOM;
			break;
		}
		if (vb == 0)
			continue;
		j = algebra_find(a, b, i);
		if (j == -ENOMEM) {
			err = j;
			break;
		}
		if (j >= 0 && profile__count(a, (size_t)j) != 0)
			continue; /* common: done above */
		err = add_from(pt.appeared, b, i, kb * vb);
	}
	if (err)
		goto fail;
	*ret = pt;
	return 0;
fail:
	algebra_parts_fini(&pt);
	return err;
}
