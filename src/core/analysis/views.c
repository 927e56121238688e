// SPDX-License-Identifier: MIT
/* The top table, focus/ignore and the sandwich view over a profile (views.h). */
#include "ember/core/analysis/views.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/regex.h"
#include "ember/core/base/strtab.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/query.h"

/*
 * Per frame id, what a pattern said of its name, asked once per name: a profile of a minute
 * holds thousands of stacks over a few hundred names. 0: not asked yet; else the answer + 1.
 */
struct memo {
	signed char *v;
	size_t cap;
};

static int memo_get(struct memo *m, uint32_t id, int (*ask)(const char *, size_t, const void *),
		    const void *arg, const struct strtab *st)
{
	int r;

	if (id >= m->cap) {
		size_t cap = m->cap ? m->cap : 256;
		signed char *nv;

		while (cap <= id)
			cap *= 2;
		nv = realloc(m->v, cap);
		if (!nv)
			return -ENOMEM;
		memset(nv + m->cap, 0, cap - m->cap);
		m->v = nv;
		m->cap = cap;
	}
	if (m->v[id])
		return m->v[id] - 1;
	r = ask(strtab__str(st, id), strtab__len(st, id), arg);
	if (r < 0)
		return r;
	m->v[id] = (signed char)(r + 1);
	return r;
}

static int ask_query(const char *name, size_t len, const void *arg)
{
	return query_common_match_frame(arg, name, len);
}

static int ask_regex(const char *name, size_t len, const void *arg)
{
	int r = ember_regex__match(arg, name, len);

	return r == -E2BIG ? -QUERY_EFRAME_LIMIT : r;
}

struct filter_ctx {
	const struct query_common *q;
	struct memo m;
	int err;
};

static bool keep_frames(const struct profile *p, size_t idx, void *ctx)
{
	struct filter_ctx *c = ctx;
	const uint32_t *f;
	size_t n, i;
	bool focus_hit = !c->q->focus_re;
	int r;

	if (c->err)
		return false;
	f = profile__stack(p, idx, &n);
	for (i = 0; i < n; i++) {
		r = memo_get(&c->m, f[i], ask_query, c->q, profile__strtab(p));
		if (r < 0) {
			c->err = r;
			return false;
		}
		if (r & QUERY_FRAME_IGNORE)
			return false;
		if (r & QUERY_FRAME_FOCUS)
			focus_hit = true;
	}
	return focus_hit;
}

struct profile *views_filter_frames(const struct profile *p, const struct query_common *q)
{
	struct filter_ctx c = { .q = q };
	struct profile *out = profile__filter(p, keep_frames, &c);

	free(c.m.v);
	if (out && c.err) {
		profile__free(out);
		out = NULL;
		errno = -c.err;
	}
	return out;
}

static int cmp_desc(double x, double y)
{
	return x == y ? 0 : x < y ? 1 : -1;
}

static int cmp_self(const void *pa, const void *pb)
{
	const struct views_top_row *a = pa, *b = pb;
	int c = cmp_desc(a->self, b->self);

	c = c ? c : cmp_desc(a->total, b->total);
	return c ? c : strcmp(a->name, b->name);
}

static int cmp_total(const void *pa, const void *pb)
{
	const struct views_top_row *a = pa, *b = pb;
	int c = cmp_desc(a->total, b->total);

	c = c ? c : cmp_desc(a->self, b->self);
	return c ? c : strcmp(a->name, b->name);
}

int views_top(const struct profile *p, size_t skip, enum views_sort sort,
	      struct views_top_row **ret_rows, size_t *ret_n)
{
	const struct strtab *st = profile__strtab(p);
	size_t nid = strtab__count(st), i, k, n, nrows = 0;
	double *self = calloc(nid ? nid : 1, sizeof(*self));
	double *total = calloc(nid ? nid : 1, sizeof(*total));
	size_t *stamp = calloc(nid ? nid : 1, sizeof(*stamp));
	struct views_top_row *rows = NULL;
	int err = -ENOMEM;

	if (!self || !total || !stamp)
		goto out;
	for (i = 0; i < profile__nr_stacks(p); i++) {
		const uint32_t *f = profile__stack(p, i, &n);
		double c = profile__count(p, i);

		if (n <= skip)
			continue;
		self[f[n - 1]] += c;
		for (k = skip; k < n; k++) {
			/* a recursive function counts once per stack */
			if (stamp[f[k]] == i + 1)
				continue;
			stamp[f[k]] = i + 1;
			total[f[k]] += c;
		}
	}
	for (i = 0; i < nid; i++)
		nrows += total[i] > 0;
	rows = malloc((nrows ? nrows : 1) * sizeof(*rows));
	if (!rows)
		goto out;
	for (i = 0, k = 0; i < nid; i++)
		if (total[i] > 0)
			rows[k++] = (struct views_top_row){ (uint32_t)i, strtab__str(st, (uint32_t)i),
							    self[i], total[i] };
	qsort(rows, nrows, sizeof(*rows), sort == VIEWS_SORT_SELF ? cmp_self : cmp_total);
	*ret_rows = rows;
	*ret_n = nrows;
	rows = NULL;
	err = 0;
out:
	free(rows);
	free(self);
	free(total);
	free(stamp);
	return err;
}

int views_sandwich(const struct profile *p, size_t skip, const struct ember_regex *re,
		   struct profile **ret_callers, struct profile **ret_callees, double *ret_total)
{
	struct profile *up = profile__new(profile__strtab(p));
	struct profile *down = up ? profile__new(profile__strtab(p)) : NULL;
	struct memo m = { 0 };
	uint32_t *buf = NULL;
	size_t cap = 0, i, k, n, j;
	double sum = 0;
	int err = down ? 0 : -ENOMEM, r;

	for (i = 0; !err && i < profile__nr_stacks(p); i++) {
		const uint32_t *f = profile__stack(p, i, &n);
		uint64_t c, c2;

		for (k = skip; k < n; k++) {
			r = memo_get(&m, f[k], ask_regex, re, profile__strtab(p));
			if (r) {
				err = r < 0 ? r : 0;
				break;
			}
		}
		if (err || k >= n)
			continue;
		if (n > cap) {
			uint32_t *nb = realloc(buf, n * sizeof(*buf));

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = n;
		}
		/* callers: the function, then toward the root (the skipped root frames too: the
		 * process it ran in is a caller worth seeing) */
		for (j = 0; j <= k; j++)
			buf[j] = f[k - j];
		/* (the adds return the stack's index) */
		if (!profile__count_exact(p, i, &c, &c2)) {
			r = profile__add(up, buf, k + 1, profile__count(p, i));
			if (r >= 0)
				r = profile__add(down, f + k, n - k, profile__count(p, i));
		} else {
			r = profile__add_u64(up, buf, k + 1, c);
			if (r >= 0)
				r = profile__add_u64(down, f + k, n - k, c);
		}
		err = r < 0 ? r : 0;
		sum += profile__count(p, i);
	}
	free(buf);
	free(m.v);
	if (err) {
		profile__free(up);
		profile__free(down);
		return err;
	}
	*ret_callers = up;
	*ret_callees = down;
	*ret_total = sum;
	return 0;
}
