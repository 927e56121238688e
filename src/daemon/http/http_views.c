// SPDX-License-Identifier: MIT
/*
 * The views engineers know from pprof and Pyroscope, over the same range, filters, event=,
 * focus= and ignore= as every profile route (core/analysis/views.h computes them):
 *   GET /api/v1/top            JSON: per function self and total, sort=self|total, limit=N
 *   GET /api/v1/sandwich       JSON: function=RE's total and its callers' and callees' folded
 *                              stacks (the dashboard draws them)
 *   GET /api/v1/sandwich.svg   the same as one SVG: the callers' flame graph above (the function
 *                              at its bottom), the callees' icicle below
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/analysis/views.h"
#include "ember/core/base/regex.h"
#include "ember/core/base/strtab.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/render/flamegraph.h"
#include "ember/daemon/http/http.h"
#include "http_internal.h"

#define TOP_DEFAULT_LIMIT 100
#define TOP_MAX_LIMIT	  100000

struct view_params {
	uint64_t limit;
	enum views_sort sort;
	struct ember_regex *fn;
	char fn_src[QUERY_MAX_REGEX + 1];
	char fn_err[128];
	unsigned int width;
};

static int view_param(const char *key, const char *value, void *ctx, struct query_error *err)
{
	struct view_params *vp = ctx;
	uint64_t v;

	if (!strcmp(key, "limit")) {
		if (query_parse_u64(key, value, 1, TOP_MAX_LIMIT, &vp->limit, err))
			return -EINVAL;
		return 1;
	}
	if (!strcmp(key, "sort")) {
		if (strcmp(value, "self") && strcmp(value, "total")) {
			*err = (struct query_error){ .param = "sort", .reason = "self or total",
						     .status = 400 };
			return -EINVAL;
		}
		vp->sort = value[0] == 's' ? VIEWS_SORT_SELF : VIEWS_SORT_TOTAL;
		return 1;
	}
	if (!strcmp(key, "width")) {
		if (query_parse_u64(key, value, 100, 10000, &v, err))
			return -EINVAL;
		vp->width = (unsigned int)v;
		return 1;
	}
	if (!strcmp(key, "function")) {
		size_t n = strlen(value);

		if (!n || n > QUERY_MAX_REGEX) {
			*err = (struct query_error){ .param = "function",
						     .reason = "a regex of 1 to 256 bytes",
						     .status = 400 };
			return -EINVAL;
		}
		ember_regex__free(vp->fn);
		vp->fn = ember_regex__new(value, n, vp->fn_err, sizeof(vp->fn_err));
		if (!vp->fn) {
			if (errno == ENOMEM)
				return -ENOMEM;
			*err = (struct query_error){ .param = "function", .reason = vp->fn_err,
						     .status = 400 };
			return -EINVAL;
		}
		memcpy(vp->fn_src, value, n + 1);
		return 1;
	}
	return 0;
}

static const char *unit_of(const struct query_common *q)
{
	return q->event == QUERY_EVENT_CPU ? "samples" : q->event == QUERY_EVENT_WALL ? "us" : "ms";
}

/* The frames above the functions: the comm, and the workload's with group_by. */
static size_t root_frames(const struct query_common *q)
{
	return q->group_by[0] ? 2 : 1;
}

/* Parses, checks and queries: the profile, or NULL with the answer (error) filled. */
static struct profile *view_profile(struct http_server *srv, struct http_request *req,
				    struct query_common *q, struct view_params *vp,
				    struct http_response *resp, struct strtab **ret_st, int *ret_err)
{
	struct strtab *st;
	struct profile *p;

	*ret_err = 0;
	if (http_request__parse(req, q, 0, view_param, vp, resp))
		return NULL;
	st = http_render_strtab(srv);
	p = st ? http_source_profile(&srv->src, q, st) : NULL;
	if (!p) {
		*ret_err = http_query_err(errno);
		strtab__free(st);
		return NULL;
	}
	*ret_st = st;
	resp->cache_control = http_data_cache_control(srv, q, req->now_ns);
	return p;
}

int http_handle_top(struct http_server *srv, struct http_request *req, struct http_response *resp)
{
	struct view_params vp = { .limit = TOP_DEFAULT_LIMIT, .sort = VIEWS_SORT_SELF };
	struct views_top_row *rows = NULL;
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *p;
	size_t n = 0, i;
	int err;

	query_common_init(&q);
	p = view_profile(srv, req, &q, &vp, resp, &st, &err);
	if (!p)
		goto out;
	err = views_top(p, root_frames(&q), vp.sort, &rows, &n);
	if (err)
		goto out;
	sbuf_addf(&resp->body, "{\"unit\": \"%s\", \"total\": ", unit_of(&q));
	sbuf_add_count(&resp->body, profile__total(p));
	sbuf_addf(&resp->body, ", \"functions\": %zu, \"sort\": \"%s\", \"top\": [", n,
		  vp.sort == VIEWS_SORT_SELF ? "self" : "total");
	for (i = 0; i < n && i < vp.limit; i++) {
		sbuf_adds(&resp->body, i ? ",\n {\"function\": \"" : "\n {\"function\": \"");
		sbuf_add_json(&resp->body, rows[i].name, strlen(rows[i].name));
		sbuf_adds(&resp->body, "\", \"self\": ");
		sbuf_add_count(&resp->body, rows[i].self);
		sbuf_adds(&resp->body, ", \"total\": ");
		sbuf_add_count(&resp->body, rows[i].total);
		sbuf_addc(&resp->body, '}');
	}
	sbuf_adds(&resp->body, "]}\n");
out:
	free(rows);
	profile__free(p);
	strtab__free(st);
	query_common_fini(&q);
	ember_regex__free(vp.fn);
	return err;
}

/* The sandwich's two profiles; 0 with them, or 0 with an error answer, or -errno. */
static int sandwich_of(struct http_server *srv, struct http_request *req, struct query_common *q,
		       struct view_params *vp, struct http_response *resp, struct strtab **ret_st,
		       struct profile **ret_up, struct profile **ret_down, double *ret_total)
{
	struct profile *p;
	int err;

	p = view_profile(srv, req, q, vp, resp, ret_st, &err);
	if (!p)
		return err;
	if (!vp->fn) {
		http_response__error(resp, 400, "function", "a regex of the function is required");
		profile__free(p);
		return 0;
	}
	err = views_sandwich(p, root_frames(q), vp->fn, ret_up, ret_down, ret_total);
	profile__free(p);
	return err;
}

int http_handle_sandwich(struct http_server *srv, struct http_request *req,
			 struct http_response *resp)
{
	struct view_params vp = { 0 };
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *up = NULL, *down = NULL;
	struct sbuf tmp = SBUF_INIT;
	double total = 0;
	int err;

	query_common_init(&q);
	err = sandwich_of(srv, req, &q, &vp, resp, &st, &up, &down, &total);
	if (err || !up)
		goto out;
	sbuf_adds(&resp->body, "{\"function\": \"");
	sbuf_add_json(&resp->body, vp.fn_src, strlen(vp.fn_src));
	sbuf_addf(&resp->body, "\", \"unit\": \"%s\", \"total\": ", unit_of(&q));
	sbuf_add_count(&resp->body, total);
	sbuf_adds(&resp->body, ", \"callers\": \"");
	err = folded_write(up, &tmp);
	sbuf_add_json(&resp->body, tmp.buf ? tmp.buf : "", tmp.len);
	sbuf_reset(&tmp);
	sbuf_adds(&resp->body, "\", \"callees\": \"");
	err = err ? err : folded_write(down, &tmp);
	sbuf_add_json(&resp->body, tmp.buf ? tmp.buf : "", tmp.len);
	sbuf_adds(&resp->body, "\"}\n");
	err = err ? err : sbuf_error(&tmp);
out:
	sbuf_fini(&tmp);
	profile__free(up);
	profile__free(down);
	strtab__free(st);
	query_common_fini(&q);
	ember_regex__free(vp.fn);
	return err;
}

static void add_base64(struct sbuf *sb, const unsigned char *s, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char out[4];
	size_t i;

	for (i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);

		out[0] = tab[v >> 18 & 63];
		out[1] = tab[v >> 12 & 63];
		out[2] = i + 1 < n ? tab[v >> 6 & 63] : '=';
		out[3] = i + 2 < n ? tab[v & 63] : '=';
		sbuf_add(sb, out, 4);
	}
}

/* The height the renderer gave its SVG (its first height="N"), 0 when not found. */
static unsigned int svg_height(const struct sbuf *svg)
{
	const char *h = svg->buf ? strstr(svg->buf, "height=\"") : NULL;

	return h ? (unsigned int)strtoul(h + 8, NULL, 10) : 0;
}

int http_handle_sandwich_svg(struct http_server *srv, struct http_request *req,
			     struct http_response *resp)
{
	struct view_params vp = { .width = 1200 };
	struct flamegraph_opts o;
	struct query_common q;
	struct strtab *st = NULL;
	struct profile *up = NULL, *down = NULL;
	struct sbuf a = SBUF_INIT, b = SBUF_INIT, title = SBUF_INIT;
	unsigned int ha, hb;
	char w[16];
	double total = 0;
	int err;

	flamegraph_opts_init(&o);
	query_common_init(&q);
	err = sandwich_of(srv, req, &q, &vp, resp, &st, &up, &down, &total);
	if (err || !up)
		goto out;
	snprintf(w, sizeof(w), "%u", vp.width);
	err = flamegraph_opts_set(&o, "width", w);
	if (!err)
		err = flamegraph_opts_set(&o, "countname", unit_of(&q));
	sbuf_addf(&title, "Callers of /%s/", vp.fn_src);
	if (!err)
		err = flamegraph_opts_set(&o, "title", title.buf ? title.buf : "");
	if (!err)
		err = flamegraph_render(up, &o, &a);
	sbuf_reset(&title);
	sbuf_addf(&title, "Callees of /%s/", vp.fn_src);
	if (!err || err == -ENODATA)
		err = flamegraph_opts_set(&o, "title", title.buf ? title.buf : "");
	o.inverted = true;
	if (!err)
		err = flamegraph_render(down, &o, &b);
	if (err && err != -ENODATA)
		goto out;
	err = 0;
	ha = svg_height(&a);
	hb = svg_height(&b);
	resp->content_type = "image/svg+xml";
	/* two documents of flamegraph.pl's kind, each with its own script: as images, one above
	 * the other (static; the dashboard's sandwich is the interactive one) */
	sbuf_addf(&resp->body,
		  "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		  "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		  "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		  "<!-- ember sandwich: function=",
		  vp.width, ha + hb, vp.width, ha + hb);
	sbuf_add_xml(&resp->body, vp.fn_src, strlen(vp.fn_src));
	sbuf_adds(&resp->body, " total=");
	sbuf_add_count(&resp->body, total);
	sbuf_addf(&resp->body, " -->\n<title>Sandwich of /");
	sbuf_add_xml(&resp->body, vp.fn_src, strlen(vp.fn_src));
	sbuf_adds(&resp->body, "/: callers above, callees below</title>\n");
	sbuf_addf(&resp->body,
		  "<image id=\"callers\" x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" "
		  "href=\"data:image/svg+xml;base64,",
		  vp.width, ha);
	add_base64(&resp->body, (const unsigned char *)(a.buf ? a.buf : ""), a.len);
	sbuf_addf(&resp->body,
		  "\"/>\n<image id=\"callees\" x=\"0\" y=\"%u\" width=\"%u\" height=\"%u\" "
		  "href=\"data:image/svg+xml;base64,",
		  ha, vp.width, hb);
	add_base64(&resp->body, (const unsigned char *)(b.buf ? b.buf : ""), b.len);
	sbuf_adds(&resp->body, "\"/>\n</svg>\n");
out:
	sbuf_fini(&a);
	sbuf_fini(&b);
	sbuf_fini(&title);
	profile__free(up);
	profile__free(down);
	strtab__free(st);
	query_common_fini(&q);
	flamegraph_opts_fini(&o);
	ember_regex__free(vp.fn);
	return err;
}
