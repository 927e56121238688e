// SPDX-License-Identifier: MIT
/* counters: one description of a stage's counters, rendered as JSON, metric series, log text. */
#include "ember/core/base/counters.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ember/core/base/sbuf.h"

double counter_value(const struct counter_desc *d, const void *stats, unsigned int i)
{
	const char *p = (const char *)stats + d->off;
	uint64_t u64;
	int64_t i64;
	uint32_t u32;
	double v;
	bool b;

	switch (d->value) {
	case COUNTER_U64:
		memcpy(&u64, p + (size_t)i * sizeof(u64), sizeof(u64));
		return (double)u64;
	case COUNTER_U32:
		memcpy(&u32, p, sizeof(u32));
		return (double)u32;
	case COUNTER_I64:
		memcpy(&i64, p, sizeof(i64));
		return (double)i64;
	case COUNTER_BOOL:
		memcpy(&b, p, sizeof(b));
		return b ? 1.0 : 0.0;
	case COUNTER_DOUBLE:
		memcpy(&v, p, sizeof(v));
		return v;
	case COUNTER_FN:
		return d->fn ? d->fn(stats) : 0.0;
	case COUNTER_STR:
		break;
	}
	return 0.0;
}

/* A printf conversion of one double and nothing else: %[flags][width][.prec](f|e|g). */
static bool fmt_ok(const char *f)
{
	if (!f || *f++ != '%')
		return false;
	f += strspn(f, "-+ 0#");
	while (isdigit((unsigned char)*f))
		f++;
	if (*f == '.') {
		f++;
		while (isdigit((unsigned char)*f))
			f++;
	}
	return *f && strchr("fFeEgG", *f) && !f[1];
}

static void add_double(struct sbuf *sb, const char *fmt, double v)
{
	char buf[64];

	if (!fmt_ok(fmt)) {
		snprintf(buf, sizeof(buf), "%.17g", v);
	} else {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(buf, sizeof(buf), fmt, v); /* checked by fmt_ok(): one double */
#pragma GCC diagnostic pop
	}
	sbuf_adds(sb, buf);
}

/* One value as the JSON (and log templates) write it; @fmt overrides the row's json_fmt. */
static void add_value(struct sbuf *sb, const struct counter_desc *d, const void *stats,
		      unsigned int i, const char *fmt)
{
	const char *p = (const char *)stats + d->off;
	uint64_t u64;
	uint32_t u32;
	bool b;

	if (!fmt)
		fmt = d->json_fmt;
	if (d->value == COUNTER_STR) {
		const char *s = d->str ? d->str(stats) : NULL;

		if (!s) {
			sbuf_adds(sb, "null");
			return;
		}
		sbuf_addc(sb, '"');
		sbuf_add_json(sb, s, strlen(s));
		sbuf_addc(sb, '"');
		return;
	}
	if (d->value == COUNTER_BOOL && !fmt) {
		memcpy(&b, p, sizeof(b));
		sbuf_adds(sb, b ? "true" : "false");
		return;
	}
	if (!fmt && !d->json_scale && d->value == COUNTER_U64) {
		memcpy(&u64, p + (size_t)i * sizeof(u64), sizeof(u64));
		sbuf_addf(sb, "%llu", (unsigned long long)u64); /* exact beyond 2^53 */
		return;
	}
	if (!fmt && !d->json_scale && d->value == COUNTER_I64) {
		int64_t i64;

		memcpy(&i64, p, sizeof(i64));
		sbuf_addf(sb, "%lld", (long long)i64);
		return;
	}
	if (!fmt && !d->json_scale && d->value == COUNTER_U32) {
		memcpy(&u32, p, sizeof(u32));
		sbuf_addf(sb, "%u", u32);
		return;
	}
	add_double(sb, fmt, counter_value(d, stats, i) * (d->json_scale ? d->json_scale : 1.0));
}

void counters_json(struct sbuf *sb, const struct counter_desc *d, size_t n, const void *stats)
{
	size_t k;
	unsigned int i;

	for (k = 0; k < n; k++) {
		if (!d[k].key || (d[k].flags & COUNTER_NO_JSON))
			continue;
		sbuf_addf(sb, "\"%s\": ", d[k].key);
		if (!d[k].nr) {
			add_value(sb, &d[k], stats, 0, NULL);
			sbuf_adds(sb, ", ");
			continue;
		}
		sbuf_addc(sb, '{');
		for (i = 0; i < d[k].nr; i++) {
			sbuf_addf(sb, "%s\"", i ? ", " : "");
			sbuf_adds(sb, d[k].name ? d[k].name(i) : "?");
			sbuf_adds(sb, "\": ");
			add_value(sb, &d[k], stats, i, NULL);
		}
		sbuf_adds(sb, "}, ");
	}
}

void counters_foreach_series(const struct counter_desc *d, size_t n, const void *stats,
			     const char *const *extra, counter_series_fn fn, void *ctx)
{
	const char *labels[12];
	size_t k, l, nx = 0;
	unsigned int i;

	while (extra && extra[nx] && extra[nx + 1] && nx < 4)
		nx += 2;
	for (k = 0; k < n; k++) {
		double scale = d[k].metric_scale ? d[k].metric_scale : 1.0;

		if (!d[k].metric || d[k].value == COUNTER_STR)
			continue;
		for (l = 0; l < nx; l++)
			labels[l] = extra[l];
		if (d[k].label) {
			labels[l++] = d[k].label;
			labels[l++] = d[k].label_value;
		}
		if (d[k].label2) {
			labels[l++] = d[k].label2;
			labels[l++] = d[k].label2_value;
		}
		if (!d[k].nr) {
			labels[l] = NULL;
			fn(&d[k], l ? labels : NULL, counter_value(&d[k], stats, 0) * scale, ctx);
			continue;
		}
		for (i = 0; i < d[k].nr; i++) {
			labels[l] = d[k].array_label ? d[k].array_label : "name";
			labels[l + 1] = d[k].name ? d[k].name(i) : "?";
			labels[l + 2] = NULL;
			fn(&d[k], labels, counter_value(&d[k], stats, i) * scale, ctx);
		}
	}
}

static const struct counter_desc *find(const struct counter_source *src, size_t nsrc,
				       const char *name, size_t len, const void **ret_stats)
{
	size_t s, k, pl;

	for (s = 0; s < nsrc; s++) {
		pl = src[s].prefix ? strlen(src[s].prefix) : 0;
		if (pl && (len <= pl || memcmp(name, src[s].prefix, pl) || name[pl] != '.'))
			continue;
		for (k = 0; k < src[s].n; k++) {
			const char *key = src[s].d[k].key;
			const char *rest = name + (pl ? pl + 1 : 0);
			size_t rl = len - (size_t)(rest - name);

			if (key && !src[s].d[k].nr && strlen(key) == rl && !memcmp(key, rest, rl)) {
				*ret_stats = src[s].stats;
				return &src[s].d[k];
			}
		}
	}
	return NULL;
}

int counters_format(struct sbuf *sb, const char *tmpl, const struct counter_source *src,
		    size_t nsrc)
{
	const char *p = tmpl, *open, *close, *colon;
	int r = 0;

	while ((open = strchr(p, '{'))) {
		const struct counter_desc *d;
		const void *stats = NULL;
		char fmt[16];
		size_t len;

		sbuf_add(sb, p, (size_t)(open - p));
		close = strchr(open, '}');
		if (!close) {
			p = open;
			break;
		}
		colon = memchr(open, ':', (size_t)(close - open));
		len = (size_t)((colon ? colon : close) - open - 1);
		d = find(src, nsrc, open + 1, len, &stats);
		fmt[0] = '\0';
		if (colon && (size_t)(close - colon) < sizeof(fmt) - 1)
			snprintf(fmt, sizeof(fmt), "%%%.*s", (int)(close - colon - 1), colon + 1);
		if (!d || (colon && !fmt_ok(fmt))) {
			sbuf_add(sb, open, (size_t)(close - open + 1));
			r = -EINVAL;
		} else {
			add_value(sb, d, stats, 0, colon ? fmt : NULL);
		}
		p = close + 1;
	}
	sbuf_adds(sb, p);
	return r;
}
