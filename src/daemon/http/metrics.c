// SPDX-License-Identifier: MIT
/* metrics: Prometheus registry and text exposition format. */
#include "ember/daemon/http/metrics.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/counters.h"

struct series {
	int family;
	char *labels;		/* rendered: k="v",k="v" (escaped), "" for none; owned */
	double value;		/* counter/gauge; histogram: sum */
	unsigned long long count;	/* histogram: observations */
	unsigned long long *buckets;	/* histogram: per bucket (not cumulative); owned */
};

struct family {
	char *name, *help;	/* owned */
	enum metric_type type;
	double *bounds;		/* histogram upper bounds; owned */
	size_t nbounds;
	size_t *series;		/* indices into m->series, in creation order; owned */
	size_t nseries, series_cap;
};

struct metrics {
	pthread_mutex_t lock;
	struct family fams[METRICS_MAX_FAMILIES];
	int nfams;
	struct strtab *keys;	/* "family\x01labels" -> series index */
	struct series *series;
	size_t nseries, series_cap;
	unsigned long dropped;
	struct sbuf key;	/* scratch, under the lock */
};

struct metrics *metrics__new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		goto nomem;
	sbuf_init(&m->key);
	m->keys = strtab__new();
	if (!m->keys)
		goto nomem;
	if (pthread_mutex_init(&m->lock, NULL)) {
		strtab__free(m->keys);
		goto nomem_free;
	}
	return m;
nomem:
	if (m)
		strtab__free(m->keys);
nomem_free:
	free(m);
	errno = ENOMEM;
	return NULL;
}

void metrics__free(struct metrics *m)
{
	size_t i;
	int f;

	if (!m)
		return;
	for (f = 0; f < m->nfams; f++) {
		free(m->fams[f].name);
		free(m->fams[f].help);
		free(m->fams[f].bounds);
		free(m->fams[f].series);
	}
	for (i = 0; i < m->nseries; i++) {
		free(m->series[i].labels);
		free(m->series[i].buckets);
	}
	free(m->series);
	strtab__free(m->keys);
	sbuf_fini(&m->key);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static bool valid_name(const char *s, bool colon)
{
	size_t i;

	if (!s || !*s)
		return false;
	for (i = 0; s[i]; i++) {
		char c = s[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			     (colon && c == ':');

		if (!alpha && !(i && c >= '0' && c <= '9'))
			return false;
	}
	return true;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

int metrics__family(struct metrics *m, const char *name, enum metric_type type, const char *help,
		    const double *buckets, size_t nbuckets)
{
	struct family *f;
	size_t i;
	int err = 0, id;

	if (!valid_name(name, true) || !help)
		return -EINVAL;
	if (type == METRIC_COUNTER && !has_suffix(name, "_total"))
		return -EINVAL;
	if (type != METRIC_COUNTER && has_suffix(name, "_total"))
		return -EINVAL; /* promtool: only counters end in _total */
	if (type == METRIC_HISTOGRAM) {
		if (!buckets || nbuckets < 1 || nbuckets > METRICS_MAX_BUCKETS)
			return -EINVAL;
		for (i = 0; i < nbuckets; i++)
			if (!isfinite(buckets[i]) || (i && buckets[i] <= buckets[i - 1]))
				return -EINVAL;
	} else if (buckets || nbuckets) {
		return -EINVAL;
	}
	pthread_mutex_lock(&m->lock);
	for (id = 0; id < m->nfams; id++) {
		if (strcmp(m->fams[id].name, name))
			continue;
		err = m->fams[id].type == type ? id : -EINVAL;
		goto out;
	}
	if (m->nfams == METRICS_MAX_FAMILIES) {
		err = -ENOSPC;
		goto out;
	}
	f = &m->fams[m->nfams];
	*f = (struct family){ .type = type, .name = strdup(name), .help = strdup(help) };
	if (type == METRIC_HISTOGRAM) {
		f->bounds = malloc(nbuckets * sizeof(*f->bounds));
		if (f->bounds)
			memcpy(f->bounds, buckets, nbuckets * sizeof(*f->bounds));
		f->nbounds = nbuckets;
	}
	if (!f->name || !f->help || (type == METRIC_HISTOGRAM && !f->bounds)) {
		free(f->name);
		free(f->help);
		free(f->bounds);
		*f = (struct family){ 0 };
		err = -ENOMEM;
		goto out;
	}
	err = m->nfams++;
out:
	pthread_mutex_unlock(&m->lock);
	return err;
}

static void add_escaped_label(struct sbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			sbuf_adds(sb, "\\\\");
		else if (*s == '"')
			sbuf_adds(sb, "\\\"");
		else if (*s == '\n')
			sbuf_adds(sb, "\\n");
		else
			sbuf_addc(sb, *s);
	}
}

/* The series of @family with @labels, created if needed; -errno. Called with the lock held. */
static int find_series(struct metrics *m, int family, const char *const *labels)
{
	struct family *f;
	struct series *s;
	size_t before, i, k, start;
	int id;

	if (family < 0 || family >= m->nfams)
		return -EINVAL;
	f = &m->fams[family];
	sbuf_reset(&m->key);
	sbuf_addu(&m->key, (unsigned)family);
	sbuf_addc(&m->key, '\x01');
	start = m->key.len;
	for (i = 0; labels && labels[i]; i += 2) {
		if (i / 2 >= METRICS_MAX_LABELS || !labels[i + 1] || !valid_name(labels[i], false) ||
		    !strncmp(labels[i], "__", 2) ||
		    (f->type == METRIC_HISTOGRAM && !strcmp(labels[i], "le")))
			return -EINVAL;
		for (k = 0; k < i; k += 2)
			if (!strcmp(labels[k], labels[i]))
				return -EINVAL; /* a label name twice */
		if (i)
			sbuf_addc(&m->key, ',');
		sbuf_adds(&m->key, labels[i]);
		sbuf_adds(&m->key, "=\"");
		add_escaped_label(&m->key, labels[i + 1]);
		sbuf_addc(&m->key, '"');
	}
	if (sbuf_error(&m->key))
		return -ENOMEM;
	before = strtab__count(m->keys);
	id = strtab__find(m->keys, m->key.buf, m->key.len);
	if (id >= 0)
		return id;
	if (before >= METRICS_MAX_SERIES) {
		m->dropped++;
		return -ENOSPC;
	}
	if (m->nseries == m->series_cap) {
		size_t cap = m->series_cap ? m->series_cap * 2 : 64;
		struct series *ns = realloc(m->series, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		m->series = ns;
		m->series_cap = cap;
	}
	if (f->nseries == f->series_cap) {
		size_t cap = f->series_cap ? f->series_cap * 2 : 8;
		size_t *ns = realloc(f->series, cap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		f->series = ns;
		f->series_cap = cap;
	}
	s = &m->series[m->nseries];
	*s = (struct series){ .family = family, .labels = strdup(m->key.buf + start) };
	if (f->type == METRIC_HISTOGRAM)
		s->buckets = calloc(f->nbounds, sizeof(*s->buckets));
	if (!s->labels || (f->type == METRIC_HISTOGRAM && !s->buckets)) {
		free(s->labels);
		free(s->buckets);
		return -ENOMEM;
	}
	id = strtab__intern(m->keys, m->key.buf, m->key.len);
	if (id < 0) {
		free(s->labels);
		free(s->buckets);
		return id;
	}
	/* strtab ids are dense and the series are created in the same order */
	f->series[f->nseries++] = m->nseries++;
	return id;
}

static int update(struct metrics *m, int family, const char *const *labels, double v, int op)
{
	struct family *f;
	struct series *s;
	size_t b;
	int idx, err = 0;

	if (isnan(v))
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	idx = find_series(m, family, labels);
	if (idx < 0) {
		err = idx;
		goto out;
	}
	f = &m->fams[family];
	s = &m->series[idx];
	switch (op) {
	case 0: /* set */
		if (f->type == METRIC_HISTOGRAM || (f->type == METRIC_COUNTER && v < s->value))
			err = -EINVAL;
		else
			s->value = v;
		break;
	case 1: /* add */
		if (f->type == METRIC_HISTOGRAM || (f->type == METRIC_COUNTER && v < 0))
			err = -EINVAL;
		else
			s->value += v;
		break;
	default: /* observe */
		if (f->type != METRIC_HISTOGRAM) {
			err = -EINVAL;
			break;
		}
		for (b = 0; b < f->nbounds; b++)
			if (v <= f->bounds[b]) {
				s->buckets[b]++;
				break;
			}
		s->count++;
		s->value += v;
		break;
	}
out:
	pthread_mutex_unlock(&m->lock);
	return err;
}

int metrics__set(struct metrics *m, int family, const char *const *labels, double value)
{
	return update(m, family, labels, value, 0);
}

int metrics__add(struct metrics *m, int family, const char *const *labels, double delta)
{
	return update(m, family, labels, delta, 1);
}

int metrics__observe(struct metrics *m, int family, const char *const *labels, double value)
{
	return update(m, family, labels, value, 2);
}

unsigned long metrics__dropped(const struct metrics *m)
{
	return __atomic_load_n(&m->dropped, __ATOMIC_RELAXED);
}

void metrics_format_value(struct sbuf *out, double v)
{
	if (isnan(v)) {
		sbuf_adds(out, "NaN");
	} else if (isinf(v)) {
		sbuf_adds(out, v > 0 ? "+Inf" : "-Inf");
	} else if (v < 0) {
		sbuf_addc(out, '-');
		sbuf_add_count(out, -v);
	} else {
		sbuf_add_count(out, v);
	}
}

static void add_help(struct sbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			sbuf_adds(sb, "\\\\");
		else if (*s == '\n')
			sbuf_adds(sb, "\\n");
		else
			sbuf_addc(sb, *s);
	}
}

/* name{labels[,extra]} with braces only when there is something inside */
static void add_series_name(struct sbuf *out, const char *name, const char *suffix,
			    const char *labels, const char *extra)
{
	sbuf_adds(out, name);
	sbuf_adds(out, suffix);
	if (!*labels && !extra)
		return;
	sbuf_addc(out, '{');
	sbuf_adds(out, labels);
	if (extra) {
		if (*labels)
			sbuf_addc(out, ',');
		sbuf_adds(out, extra);
	}
	sbuf_addc(out, '}');
}

static int cmp_family(const void *a, const void *b, void *ctx)
{
	const struct metrics *m = ctx;

	return strcmp(m->fams[*(const int *)a].name, m->fams[*(const int *)b].name);
}

int metrics__render(struct metrics *m, struct sbuf *out)
{
	static const char *const types[] = {
		[METRIC_COUNTER] = "counter",
		[METRIC_GAUGE] = "gauge",
		[METRIC_HISTOGRAM] = "histogram",
	};
	int order[METRICS_MAX_FAMILIES], i;
	char le[64];
	size_t k, b;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->nfams; i++)
		order[i] = i;
	qsort_r(order, (size_t)m->nfams, sizeof(order[0]), cmp_family, m);
	for (i = 0; i < m->nfams; i++) {
		const struct family *f = &m->fams[order[i]];

		if (!f->nseries)
			continue;
		sbuf_addf(out, "# HELP %s ", f->name);
		add_help(out, f->help);
		sbuf_addf(out, "\n# TYPE %s %s\n", f->name, types[f->type]);
		for (k = 0; k < f->nseries; k++) {
			const struct series *s = &m->series[f->series[k]];
			unsigned long long cum = 0;

			if (f->type != METRIC_HISTOGRAM) {
				add_series_name(out, f->name, "", s->labels, NULL);
				sbuf_addc(out, ' ');
				metrics_format_value(out, s->value);
				sbuf_addc(out, '\n');
				continue;
			}
			for (b = 0; b <= f->nbounds; b++) {
				struct sbuf tmp = SBUF_INIT;

				if (b < f->nbounds) {
					cum += s->buckets[b];
					metrics_format_value(&tmp, f->bounds[b]);
				} else {
					cum = s->count;
					sbuf_adds(&tmp, "+Inf");
				}
				snprintf(le, sizeof(le), "le=\"%s\"", tmp.buf ? tmp.buf : "");
				sbuf_fini(&tmp);
				add_series_name(out, f->name, "_bucket", s->labels, le);
				sbuf_addc(out, ' ');
				sbuf_addu(out, cum);
				sbuf_addc(out, '\n');
			}
			add_series_name(out, f->name, "_sum", s->labels, NULL);
			sbuf_addc(out, ' ');
			metrics_format_value(out, s->value);
			sbuf_addc(out, '\n');
			add_series_name(out, f->name, "_count", s->labels, NULL);
			sbuf_addc(out, ' ');
			sbuf_addu(out, s->count);
			sbuf_addc(out, '\n');
		}
	}
	pthread_mutex_unlock(&m->lock);
	return sbuf_error(out);
}

/* The type of @metric's family in @d: that of the row carrying its help. */
static enum metric_type counters_type(const struct counter_desc *d, size_t n, const char *metric)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (d[k].help && d[k].metric && !strcmp(d[k].metric, metric))
			return d[k].type == COUNTER_GAUGE ? METRIC_GAUGE : METRIC_COUNTER;
	return METRIC_COUNTER;
}

int metrics__declare_counters(struct metrics *m, const struct counter_desc *d, size_t n)
{
	size_t k;
	int f;

	for (k = 0; k < n; k++) {
		if (!d[k].metric || !d[k].help)
			continue;
		f = metrics__family(m, d[k].metric, counters_type(d, n, d[k].metric), d[k].help,
				    NULL, 0);
		if (f < 0)
			return f;
	}
	return 0;
}

struct counters_set_ctx {
	struct metrics *m;
	const struct counter_desc *d;
	size_t n;
};

static void counters_set_one(const struct counter_desc *row, const char *const *labels,
			     double value, void *ctx)
{
	struct counters_set_ctx *c = ctx;
	int f = metrics__family(c->m, row->metric, counters_type(c->d, c->n, row->metric), "",
				NULL, 0);

	if (f >= 0)
		(void)metrics__set(c->m, f, labels, value);
}

void metrics__set_counters(struct metrics *m, const struct counter_desc *d, size_t n,
			   const void *stats, const char *const *extra)
{
	struct counters_set_ctx c = { .m = m, .d = d, .n = n };

	counters_foreach_series(d, n, stats, extra, counters_set_one, &c);
}
