// SPDX-License-Identifier: MIT
#include "ember/core/analysis/hotelling.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

/* Candidate columns held in memory at once: profiles x candidates doubles (256 MiB). */
#define MAX_CELLS (32u << 20)
/* A candidate whose variance is explained by the kept stacks to within this share is dropped. */
#define COLLINEAR_TOL 1e-9

struct rank {
	size_t stack;
	size_t df;
	double sum;
	const struct profile *all;
};

static int cmp_rank(const void *x, const void *y)
{
	const struct rank *a = x, *b = y;

	if (a->df != b->df)
		return (a->df < b->df) - (a->df > b->df); /* most frequent first */
	if (a->sum != b->sum)
		return (a->sum < b->sum) - (a->sum > b->sum); /* heaviest first */
	return profile__cmp_stacks(a->all, a->stack, b->stack);
}

/* Adds stack @i of @p to @all with zero counts (interning names). Index >= 0 or -ENOMEM. */
static int union_index(struct profile *all, const struct profile *p, size_t i, uint32_t **tmp,
		       size_t *cap)
{
	struct strtab *st = profile__strtab(all);
	const struct strtab *sp = profile__strtab(p);
	const uint32_t *f;
	size_t n, j;
	int id;

	f = profile__stack(p, i, &n);
	if (st != sp) {
		if (n > *cap) {
			uint32_t *nt = realloc(*tmp, n * sizeof(*nt));

			if (!nt)
				return -ENOMEM;
			*tmp = nt;
			*cap = n;
		}
		for (j = 0; j < n; j++) {
			id = strtab__intern(st, strtab__str(sp, f[j]), strtab__len(sp, f[j]));
			if (id < 0)
				return -ENOMEM;
			(*tmp)[j] = (uint32_t)id;
		}
		f = *tmp;
	}
	return profile__add2(all, f, n, 0, 0);
}

void hotelling_result_fini(struct hotelling_result *r)
{
	profile__free(r->all);
	free(r->kept);
	*r = (struct hotelling_result){ 0 };
}

int hotelling_test(struct profile *const *a, size_t n_a, struct profile *const *b, size_t n_b,
		   const struct hotelling_opts *opts, struct hotelling_result *ret)
{
	struct hotelling_result r = { .n_a = n_a, .n_b = n_b };
	const size_t N = n_a + n_b;
	size_t max_stacks = opts ? opts->max_stacks : 0;
	gsl_error_handler_t *old_handler = NULL;
	gsl_matrix *S = NULL;
	gsl_vector *dv = NULL, *xv = NULL;
	struct rank *rk = NULL;
	size_t *df = NULL, *col_of = NULL, *map = NULL, nmap = 0;
	double *sum_a = NULL, *sum_b = NULL, *X = NULL, *Z = NULL, *L = NULL;
	size_t m, k, i, j, q, ncand, pmax, nsel = 0, *sel = NULL, nexact = 0, *exact = NULL;
	uint32_t *tmp = NULL;
	size_t tcap = 0;
	int err = 0, idx;

	*ret = (struct hotelling_result){ 0 };
	r.alpha = opts && opts->alpha ? opts->alpha : HOTELLING_DEFAULT_ALPHA;
	if (n_a < 2 || n_b < 2 || N < 4 || !(r.alpha > 0 && r.alpha < 1))
		return -EINVAL;
	pmax = N - 3;
	if (!max_stacks) {
		/*
		 * The default keeps the F test's second degrees of freedom (N - p - 1) at about
		 * half the profiles: as p nears N - 2 the critical value explodes and the test
		 * loses its power.
		 */
		max_stacks = HOTELLING_DEFAULT_MAX_STACKS;
		if ((N - 2) / 2 < max_stacks)
			max_stacks = (N - 2) / 2;
	}
	if (max_stacks < pmax)
		pmax = max_stacks;

	/* pass 1: the union of stacks, document frequencies and sums per set */
	r.all = profile__new(profile__strtab(a[0]));
	if (!r.all)
		return -ENOMEM;
	profile__set_has_count2(r.all, true);
	for (k = 0; k < N; k++)
		nmap += profile__nr_stacks(k < n_a ? a[k] : b[k - n_a]);
	map = malloc((nmap ? nmap : 1) * sizeof(*map));
	if (!map)
		goto nomem;
	nmap = 0;
	for (k = 0; k < N; k++) {
		const struct profile *p = k < n_a ? a[k] : b[k - n_a];

		for (i = 0; i < profile__nr_stacks(p); i++) {
			idx = union_index(r.all, p, i, &tmp, &tcap);
			if (idx < 0)
				goto nomem;
			map[nmap++] = (size_t)idx;
		}
	}
	m = profile__nr_stacks(r.all);
	r.nr_stacks = m;
	df = calloc(m ? m : 1, sizeof(*df));
	sum_a = calloc(m ? m : 1, sizeof(*sum_a));
	sum_b = calloc(m ? m : 1, sizeof(*sum_b));
	rk = malloc((m ? m : 1) * sizeof(*rk));
	col_of = malloc((m ? m : 1) * sizeof(*col_of));
	if (!df || !sum_a || !sum_b || !rk || !col_of)
		goto nomem;
	nmap = 0;
	for (k = 0; k < N; k++) {
		const struct profile *p = k < n_a ? a[k] : b[k - n_a];

		for (i = 0; i < profile__nr_stacks(p); i++) {
			double v = profile__count(p, i);

			j = map[nmap++];
			if (v != 0)
				df[j]++;
			if (k < n_a)
				sum_a[j] += v;
			else
				sum_b[j] += v;
		}
	}
	for (j = 0; j < m; j++) {
		profile__set_counts(r.all, j, sum_a[j] / (double)n_a, sum_b[j] / (double)n_b);
		rk[j] = (struct rank){ .stack = j, .df = df[j], .sum = sum_a[j] + sum_b[j],
				       .all = r.all };
	}
	qsort(rk, m, sizeof(*rk), cmp_rank);

	/* the candidate columns, in rank order, as a dense N x ncand matrix */
	ncand = m;
	if (N * ncand > MAX_CELLS)
		ncand = MAX_CELLS / N;
	while (ncand > 0 && rk[ncand - 1].df == 0)
		ncand--; /* stacks with only zero counts carry nothing */
	for (j = 0; j < m; j++)
		col_of[j] = SIZE_MAX;
	for (q = 0; q < ncand; q++)
		col_of[rk[q].stack] = q;
	X = calloc(N * (ncand ? ncand : 1), sizeof(*X));
	Z = malloc(N * (pmax ? pmax : 1) * sizeof(*Z));
	L = calloc(pmax * pmax + 1, sizeof(*L));
	sel = malloc((pmax ? pmax : 1) * sizeof(*sel));
	exact = malloc((ncand ? ncand : 1) * sizeof(*exact));
	if (!X || !Z || !L || !sel || !exact)
		goto nomem;
	nmap = 0;
	for (k = 0; k < N; k++) {
		const struct profile *p = k < n_a ? a[k] : b[k - n_a];

		for (i = 0; i < profile__nr_stacks(p); i++) {
			q = col_of[map[nmap++]];
			if (q != SIZE_MAX)
				X[k * ncand + q] += profile__count(p, i);
		}
	}

	/*
	 * Greedy selection with an incremental Cholesky factor L of the kept stacks' pooled
	 * covariance: a candidate is kept when the part of its variance not explained by the
	 * stacks already kept (the Schur complement) is a real share of it.
	 */
	for (q = 0; q < ncand && nsel < pmax; q++) {
		double ma = sum_a[rk[q].stack] / (double)n_a, mb = sum_b[rk[q].stack] / (double)n_b;
		double *z = Z + nsel * N, sjj = 0, rr, *row = L + nsel * pmax;

		for (k = 0; k < N; k++) {
			z[k] = X[k * ncand + q] - (k < n_a ? ma : mb);
			sjj += z[k] * z[k];
		}
		sjj /= (double)(N - 2);
		if (!(sjj > 0)) {
			if (ma != mb)
				exact[nexact++] = q; /* the same count in every profile of each set */
			else
				r.skipped_constant++;
			continue;
		}
		rr = sjj;
		for (i = 0; i < nsel; i++) {
			double s = 0, *zi = Z + i * N;

			for (k = 0; k < N; k++)
				s += zi[k] * z[k];
			s /= (double)(N - 2);
			for (j = 0; j < i; j++)
				s -= L[i * pmax + j] * row[j];
			row[i] = s / L[i * pmax + i];
			rr -= row[i] * row[i];
		}
		if (!(rr > COLLINEAR_TOL * sjj)) {
			r.skipped_collinear++;
			continue;
		}
		row[nsel] = sqrt(rr);
		sel[nsel++] = q;
	}
	/* past p: the candidates left can still hold exact changes (they never use up a dimension) */
	for (; q < ncand; q++) {
		double ma = sum_a[rk[q].stack] / (double)n_a, mb = sum_b[rk[q].stack] / (double)n_b;

		if (ma == mb)
			continue;
		for (k = 0; k < N; k++)
			if (X[k * ncand + q] != (k < n_a ? ma : mb))
				break;
		if (k == N)
			exact[nexact++] = q;
	}
	if (nsel == 0 && nexact == 0) {
		err = -ENODATA;
		goto fail;
	}
	r.p = nsel;
	r.nr_exact = nexact;
	r.nr_kept = nsel + nexact;

	/* T^2 with GSL: S = Z'Z / (N - 2), Cholesky, S x = d */
	old_handler = gsl_set_error_handler_off();
	S = gsl_matrix_alloc(nsel, nsel);
	dv = gsl_vector_alloc(nsel);
	xv = gsl_vector_alloc(nsel);
	r.kept = calloc(nsel + nexact, sizeof(*r.kept));
	if (!r.kept)
		goto nomem;
	for (i = 0; i < nexact; i++) {
		struct hotelling_stack *hs = &r.kept[nsel + i];
		size_t st = rk[exact[i]].stack;

		*hs = (struct hotelling_stack){
			.stack = st,
			.df = rk[exact[i]].df,
			.mean_a = sum_a[st] / (double)n_a,
			.mean_b = sum_b[st] / (double)n_b,
			.exact = true,
			.significant = true,
		};
		hs->delta = hs->mean_b - hs->mean_a;
		hs->ci_lo = hs->ci_hi = hs->delta;
		r.nr_significant++;
	}
	if (nsel == 0) {
		/* nothing varies: no T^2 to compute, and every change seen is certain */
		r.t2 = r.f = r.df2 = r.f_crit = r.t2_crit = NAN;
		r.p_value = 0;
		*ret = r;
		goto out;
	}
	if (!S || !dv || !xv)
		goto nomem;
	for (i = 0; i < nsel; i++) {
		for (j = 0; j <= i; j++) {
			double s = 0, *zi = Z + i * N, *zj = Z + j * N;

			for (k = 0; k < N; k++)
				s += zi[k] * zj[k];
			s /= (double)(N - 2);
			gsl_matrix_set(S, i, j, s);
			gsl_matrix_set(S, j, i, s);
		}
	}
	for (i = 0; i < nsel; i++) {
		struct hotelling_stack *hs = &r.kept[i];
		size_t st = rk[sel[i]].stack;

		*hs = (struct hotelling_stack){
			.stack = st,
			.df = rk[sel[i]].df,
			.mean_a = sum_a[st] / (double)n_a,
			.mean_b = sum_b[st] / (double)n_b,
			.var = gsl_matrix_get(S, i, i),
		};
		hs->delta = hs->mean_b - hs->mean_a;
		gsl_vector_set(dv, i, hs->delta);
	}
	if (gsl_linalg_cholesky_decomp1(S) || gsl_linalg_cholesky_solve(S, dv, xv)) {
		err = -EDOM;
		goto fail;
	}
	{
		double dot = 0, p = (double)nsel, n = (double)N, hw_factor;

		for (i = 0; i < nsel; i++)
			dot += gsl_vector_get(dv, i) * gsl_vector_get(xv, i);
		r.t2 = (double)n_a * (double)n_b / n * dot;
		r.df1 = p;
		r.df2 = n - p - 1;
		r.f = (n - p - 1) / (p * (n - 2)) * r.t2;
		r.p_value = gsl_cdf_fdist_Q(r.f, r.df1, r.df2);
		r.f_crit = gsl_cdf_fdist_Qinv(r.alpha, r.df1, r.df2);
		r.t2_crit = p * (n - 2) / (n - p - 1) * r.f_crit;
		if (!isfinite(r.t2) || !isfinite(r.f_crit)) {
			err = -EDOM;
			goto fail;
		}
		hw_factor = r.t2_crit * (1.0 / (double)n_a + 1.0 / (double)n_b);
		for (i = 0; i < nsel; i++) {
			struct hotelling_stack *hs = &r.kept[i];
			double hw = sqrt(hw_factor * hs->var);

			hs->ci_lo = hs->delta - hw;
			hs->ci_hi = hs->delta + hw;
			hs->significant = hs->ci_lo > 0 || hs->ci_hi < 0;
			r.nr_significant += hs->significant;
		}
		if (nexact)
			r.p_value = 0;
	}
	*ret = r;
	goto out;
nomem:
	err = -ENOMEM;
fail:
	hotelling_result_fini(&r);
out:
	if (old_handler)
		gsl_set_error_handler(old_handler);
	gsl_matrix_free(S);
	gsl_vector_free(dv);
	gsl_vector_free(xv);
	free(tmp);
	free(map);
	free(df);
	free(sum_a);
	free(sum_b);
	free(rk);
	free(col_of);
	free(X);
	free(Z);
	free(L);
	free(sel);
	free(exact);
	return err;
}

struct profile *hotelling_reduced_diff(const struct hotelling_result *r)
{
	struct profile *d = profile__new(profile__strtab(r->all));
	const uint32_t *f;
	size_t i, n;
	int idx;

	if (!d)
		return NULL;
	profile__set_has_count2(d, true);
	for (i = 0; i < profile__nr_stacks(r->all); i++) {
		double mb = profile__count2(r->all, i);

		f = profile__stack(r->all, i, &n);
		if (profile__add2(d, f, n, mb, mb) < 0)
			goto nomem;
	}
	for (i = 0; i < r->nr_kept; i++) {
		if (!r->kept[i].significant)
			continue;
		f = profile__stack(r->all, r->kept[i].stack, &n);
		idx = profile__find(d, f, n);
		if (idx >= 0)
			profile__set_counts(d, (size_t)idx, r->kept[i].mean_a, r->kept[i].mean_b);
	}
	return d;
nomem:
	profile__free(d);
	errno = ENOMEM;
	return NULL;
}

static void json_num(struct sbuf *sb, const char *key, double v, bool comma)
{
	sbuf_addf(sb, "\"%s\":", key);
	if (isfinite(v))
		sbuf_addf(sb, "%.17g", v);
	else
		sbuf_adds(sb, "null");
	if (comma)
		sbuf_addc(sb, ',');
}

bool hotelling_rejects(const struct hotelling_result *r)
{
	return r->nr_exact > 0 || r->t2 > r->t2_crit;
}

void hotelling_verdict(const struct hotelling_result *r, struct sbuf *sb)
{
	if (!hotelling_rejects(r)) {
		sbuf_addf(sb, "no significant difference (p-value %.3g, alpha %g)", r->p_value,
			  r->alpha);
		return;
	}
	if (r->nr_significant)
		sbuf_addf(sb, "the ranges differ (p-value %.3g, alpha %g): %zu stack%s changed "
			  "significantly", r->p_value, r->alpha, r->nr_significant,
			  r->nr_significant == 1 ? "" : "s");
	else
		sbuf_addf(sb, "the ranges differ as a whole (p-value %.3g, alpha %g), but no single "
			  "stack's change is significant on its own", r->p_value, r->alpha);
}

int hotelling_write_json(const struct hotelling_result *r, struct sbuf *sb)
{
	struct sbuf txt = SBUF_INIT;
	size_t i;

	sbuf_addf(sb, "{\"n_a\":%zu,\"n_b\":%zu,\"stacks\":%zu,\"p\":%zu,", r->n_a, r->n_b,
		  r->nr_stacks, r->p);
	sbuf_addf(sb, "\"skipped_constant\":%zu,\"skipped_collinear\":%zu,\"nr_exact\":%zu,",
		  r->skipped_constant, r->skipped_collinear, r->nr_exact);
	json_num(sb, "alpha", r->alpha, true);
	json_num(sb, "t2", r->t2, true);
	json_num(sb, "f", r->f, true);
	json_num(sb, "df1", r->df1, true);
	json_num(sb, "df2", r->df2, true);
	json_num(sb, "p_value", r->p_value, true);
	json_num(sb, "f_crit", r->f_crit, true);
	json_num(sb, "t2_crit", r->t2_crit, true);
	sbuf_addf(sb, "\"reject\":%s,\"nr_significant\":%zu,\"verdict\":\"",
		  hotelling_rejects(r) ? "true" : "false", r->nr_significant);
	hotelling_verdict(r, sb);
	sbuf_adds(sb, "\",\"kept\":[");
	for (i = 0; i < r->nr_kept; i++) {
		const struct hotelling_stack *hs = &r->kept[i];

		sbuf_reset(&txt);
		profile__stack_text(r->all, hs->stack, &txt);
		sbuf_adds(sb, i ? ",{\"stack\":\"" : "{\"stack\":\"");
		sbuf_add_json(sb, txt.buf ? txt.buf : "", txt.len);
		sbuf_addf(sb, "\",\"df\":%zu,", hs->df);
		json_num(sb, "mean_a", hs->mean_a, true);
		json_num(sb, "mean_b", hs->mean_b, true);
		json_num(sb, "delta", hs->delta, true);
		json_num(sb, "var", hs->var, true);
		json_num(sb, "ci_lo", hs->ci_lo, true);
		json_num(sb, "ci_hi", hs->ci_hi, true);
		sbuf_addf(sb, "\"exact\":%s,\"significant\":%s}", hs->exact ? "true" : "false",
			  hs->significant ? "true" : "false");
	}
	sbuf_adds(sb, "]}\n");
	if (sbuf_error(&txt))
		sb->err = -ENOMEM;
	sbuf_fini(&txt);
	return sbuf_error(sb);
}
