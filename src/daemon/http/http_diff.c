// SPDX-License-Identifier: MIT
/*
 * emberd's differential endpoints beyond /api/v1/diff.svg:
 *   GET /api/v1/diff.folded  difffolded's three columns of range A (from, to) against range B
 *                            (b_from, b_to), same filters; normalize=1 as difffolded -n;
 *                            elided=1: only the stacks of A absent from B, with A's counts.
 *   GET /api/v1/compare      the two-sample Hotelling T^2 test between the two ranges, each cut
 *                            into windows of window= seconds (default 1) taken as the samples;
 *                            alpha=, max_stacks=. JSON: the windows and the test's result.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/render/diff.h"
#include "ember/core/formats/folded.h"
#include "ember/core/analysis/hotelling.h"
#include "ember/daemon/http/http.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/timeexpr.h"
#include "http_internal.h"

#define NS 1000000000LL
/* Windows per range at most: each one is a store query and a profile in memory. */
#define COMPARE_MAX_WINDOWS 600

struct diffx_params {
	struct query_range_b b;	/* b_from, b_to, normalize, elided */
	int64_t now;
	uint64_t window_s, max_stacks;
	double alpha;
};

static int diffx_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct diffx_params *dp = ctx;
	int r = query_range_b_set(&dp->b, key, value, dp->now, err);

	if (r)
		return r;
	if (!strcmp(key, "window"))
		return query_parse_u64(key, value, 1, 86400, &dp->window_s, err) ? -EINVAL : 1;
	if (!strcmp(key, "max_stacks"))
		return query_parse_u64(key, value, 1, 1000, &dp->max_stacks, err) ? -EINVAL : 1;
	if (!strcmp(key, "alpha")) {
		char *end;
		double v;

		errno = 0;
		v = strtod(value, &end);
		if (errno || end == value || *end || !(v > 0 && v < 1)) {
			*err = (struct query_error){ .reason = "must be a number between 0 and 1",
						     .status = 400 };
			snprintf(err->param, sizeof(err->param), "%s", key);
			return -EINVAL;
		}
		dp->alpha = v;
		return 1;
	}
	return 0;
}

/* Parses A (common) and B; 0, or 1 after an error response was filled. */
static int parse_ranges(struct http_server *srv, struct http_request *req, struct query_common *q,
			struct diffx_params *dp, struct http_response *resp)
{
	if (http_request__parse(req, q, 0, diffx_param, dp, resp))
		return 1;
	struct query_error qe = { 0 };

	if (query_range_b_finish(&dp->b, (int64_t)srv->cfg.max_range_s * NS, &qe) ||
	    http_source_check_history(&srv->src, q, dp->b.to_ns, "b_to", &qe)) {
		http_response__error(resp, qe.status, qe.param, qe.reason);
		return 1;
	}
	return 0;
}

/*
 * The profile of [from, to) with @q's filters. The copy shares @q's compiled regex, which
 * stays owned (and freed) by @q.
 */
static struct profile *range_profile(struct http_server *srv, const struct query_common *q,
				     int64_t from, int64_t to, struct strtab *st)
{
	struct query_common w = *q;

	w.from_ns = from;
	w.to_ns = to;
	return http_source_profile(&srv->src, &w, st);
}

int http_handle_diff_folded(struct http_server *srv, struct http_request *req,
			    struct http_response *resp)
{
	struct diffx_params dp = { .now = req->now_ns };
	struct diff_opts dopts = { 0 };
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *a = NULL, *b = NULL, *d = NULL, *e = NULL;
	int err = 0;

	query_common_init(&q);
	if (parse_ranges(srv, req, &q, &dp, resp))
		goto out;
	dopts.normalize = dp.b.normalize;
	st = http_render_strtab(srv);
	a = st ? range_profile(srv, &q, q.from_ns, q.to_ns, st) : NULL;
	b = a ? range_profile(srv, &q, dp.b.from_ns, dp.b.to_ns, st) : NULL;
	if (!b) {
		err = http_query_err(errno);
		goto out;
	}
	d = diff_profiles(a, b, &dopts);
	if (!d) {
		if (errno == EDOM)
			http_response__error(resp, 400, "normalize",
					     "cannot normalize: range A has no samples");
		else
			err = -ENOMEM;
		goto out;
	}
	resp->content_type = "text/plain; charset=utf-8";
	if (dp.b.elided) {
		e = diff_elided(d);
		err = e ? folded_write(e, &resp->body) : -ENOMEM;
	} else {
		err = diff_write(d, &resp->body);
	}
out:
	profile__free(e);
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	query_common_fini(&q);
	return err;
}

/*
 * Cuts [from, to) into whole windows of @win ns, each a profile; returns how many, or -errno
 * (-ECANCELED when the client goes away meanwhile: up to 600 queries).
 */
static long window_profiles(struct http_server *srv, struct http_request *req,
			    const struct query_common *q, int64_t from, int64_t to, int64_t win,
			    struct strtab *st, struct profile ***ret)
{
	long n = (long)((to - from) / win), i;
	struct profile **ps;

	if (n <= 0)
		return 0;
	ps = calloc((size_t)n, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		ps[i] = http_request__cancelled(req)
			    ? NULL
			    : range_profile(srv, q, from + i * win, from + (i + 1) * win, st);
		if (!ps[i]) {
			int err = http_request__cancelled(req) ? -ECANCELED : http_query_err(errno);

			while (i-- > 0)
				profile__free(ps[i]);
			free(ps);
			return err;
		}
	}
	*ret = ps;
	return n;
}

/* Whether any of the @n window profiles holds a sample. */
static bool samples_in(struct profile *const *p, long n)
{
	long i;

	for (i = 0; i < n; i++)
		if (profile__nr_stacks(p[i]))
			return true;
	return false;
}

int http_handle_compare(struct http_server *srv, struct http_request *req,
			struct http_response *resp)
{
	struct diffx_params dp = { .now = req->now_ns, .window_s = 0, /* 0: not given */
				   .alpha = HOTELLING_DEFAULT_ALPHA };
	struct hotelling_result r = { 0 };
	struct hotelling_opts ho;
	struct query_common q;
	struct strtab *st = NULL;
	struct profile **pa = NULL, **pb = NULL;
	long na = 0, nb = 0, i;
	int64_t win, longest;
	int err = 0;

	query_common_init(&q);
	if (parse_ranges(srv, req, &q, &dp, resp))
		goto out;
	longest = q.to_ns - q.from_ns > dp.b.to_ns - dp.b.from_ns ? q.to_ns - q.from_ns
								  : dp.b.to_ns - dp.b.from_ns;
	if (!dp.window_s) /* 1 s, or the shortest whole second that keeps 600 windows at most */
		dp.window_s = (uint64_t)((longest + COMPARE_MAX_WINDOWS * NS - 1) /
					 (COMPARE_MAX_WINDOWS * NS));
	if (!dp.window_s)
		dp.window_s = 1;
	win = (int64_t)dp.window_s * NS;
	if (longest / win > COMPARE_MAX_WINDOWS) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "more than %d windows in a range (%lld s in windows of %llu s): use "
			 "window=%lld or more, or leave window out",
			 COMPARE_MAX_WINDOWS, (long long)(longest / NS),
			 (unsigned long long)dp.window_s,
			 (long long)((longest + COMPARE_MAX_WINDOWS * NS - 1) / (COMPARE_MAX_WINDOWS * NS)));
		http_response__error(resp, 413, "window", msg);
		goto out;
	}
	if ((q.to_ns - q.from_ns) / win < 2 || (dp.b.to_ns - dp.b.from_ns) / win < 2) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "each range needs at least 2 whole windows of %llu s (ranges of %llu s or "
			 "more)", (unsigned long long)dp.window_s,
			 (unsigned long long)(2 * dp.window_s));
		http_response__error(resp, 400, "window", msg);
		goto out;
	}
	st = http_render_strtab(srv);
	if (!st) {
		err = -ENOMEM;
		goto out;
	}
	na = window_profiles(srv, req, &q, q.from_ns, q.to_ns, win, st, &pa);
	if (na < 0) {
		err = (int)na;
		na = 0;
		goto out;
	}
	nb = window_profiles(srv, req, &q, dp.b.from_ns, dp.b.to_ns, win, st, &pb);
	if (nb < 0) {
		err = (int)nb;
		nb = 0;
		goto out;
	}
	ho = (struct hotelling_opts){ .alpha = dp.alpha, .max_stacks = dp.max_stacks };
	err = hotelling_test(pa, (size_t)na, pb, (size_t)nb, &ho, &r);
	if (err == -ENODATA || err == -EINVAL || err == -EDOM) {
		/* most often no samples at all: ranges before emberd started or within its first
		 * seconds (the store receives samples a tick or two after they are taken) */
		const char *why = err != -ENODATA ? "the test cannot be computed on these windows"
				  : !samples_in(pa, na) && !samples_in(pb, nb)
				  ? "nothing to test: no samples in either range"
				  : "nothing to test: no stack varies across the windows";

		http_response__error(resp, 422, NULL, why);
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	sbuf_addf(&resp->body, "{\"window_s\":%llu,\"a\":{\"from_ns\":%lld,\"to_ns\":%lld,\"windows\":%ld},"
			       "\"b\":{\"from_ns\":%lld,\"to_ns\":%lld,\"windows\":%ld},\"test\":",
		  (unsigned long long)dp.window_s, (long long)q.from_ns, (long long)q.to_ns, na,
		  (long long)dp.b.from_ns, (long long)dp.b.to_ns, nb);
	err = hotelling_write_json(&r, &resp->body);
	/* hotelling_write_json ends the object with a newline: close ours after it */
	if (!err && resp->body.len && resp->body.buf[resp->body.len - 1] == '\n')
		resp->body.len--;
	sbuf_adds(&resp->body, "}\n");
	err = err ? err : sbuf_error(&resp->body);
out:
	hotelling_result_fini(&r);
	for (i = 0; i < na; i++)
		profile__free(pa[i]);
	for (i = 0; i < nb; i++)
		profile__free(pb[i]);
	free(pa);
	free(pb);
	strtab__free(st);
	query_common_fini(&q);
	return err;
}
