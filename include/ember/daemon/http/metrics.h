/* SPDX-License-Identifier: MIT */
/*
 * metrics: a registry of Prometheus metrics and its text exposition format (version 0.0.4, what
 * `GET /metrics` serves and `promtool check metrics` checks).
 *
 * A family has a name, a type (counter, gauge, histogram) and a help text; it holds one series
 * per distinct label set. The daemon declares its families once at start, then sets, adds and
 * observes; metrics__render() writes every family sorted by name with its # HELP and # TYPE
 * lines, series in the order they were created, histograms as cumulative _bucket{le=...} lines
 * ending with le="+Inf", then _sum and _count.
 *
 * Names follow Prometheus' rules and its lint (promtool): metric names match
 * [a-zA-Z_:][a-zA-Z0-9_:]*, counters end in "_total", label names match [a-zA-Z_][a-zA-Z0-9_]*
 * and do not start with "__"; histograms may not use the label "le". Label values may hold any
 * bytes; they are escaped (\\, \", \n) on output.
 *
 * Thread-safe: every function takes the registry's mutex, so the main loop can update counters
 * while the HTTP thread observes request latencies and renders.
 */
#ifndef EMBER_METRICS_H
#define EMBER_METRICS_H

#include <stddef.h>

struct sbuf;
struct counter_desc;

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

/* Limits, so that label values taken from requests cannot grow the registry without bound. */
#define METRICS_MAX_FAMILIES 256
#define METRICS_MAX_SERIES 4096	/* over all families */
#define METRICS_MAX_BUCKETS 32
#define METRICS_MAX_LABELS 8	/* per series */

struct metrics; /* opaque */

/* NULL + errno=ENOMEM; free with metrics__free(). */
struct metrics *metrics__new(void);
void metrics__free(struct metrics *m); /* NULL is a no-op */

/*
 * Declares a family and returns its id >= 0. @help is copied (any text; escaped on output).
 * A histogram takes @nbuckets (1..METRICS_MAX_BUCKETS) strictly increasing finite upper bounds
 * (copied; "+Inf" is implicit); other types pass NULL, 0. Declaring the same name again with the
 * same type returns the same id. -EINVAL (bad name, counter without "_total", bad buckets, or the
 * name taken by another type), -ENOSPC (too many families), -ENOMEM.
 */
int metrics__family(struct metrics *m, const char *name, enum metric_type type, const char *help,
		    const double *buckets, size_t nbuckets);

/*
 * Labels are given as a NULL-terminated array of name, value, name, value, ... (NULL itself:
 * no labels); strings are copied when a series is created. The same names and values in the same
 * order address the same series.
 *
 * metrics__set(): gauges and counters (a counter must not go down; -EINVAL if it would).
 * metrics__add(): adds @delta (>= 0 for counters).
 * metrics__observe(): histograms: counts @value in its bucket, adds it to the sum.
 * All return 0, -EINVAL (wrong type, bad family id, bad label name, NaN), -ENOSPC (series limit:
 * the update is dropped and counted in metrics__dropped()) or -ENOMEM.
 */
int metrics__set(struct metrics *m, int family, const char *const *labels, double value);
int metrics__add(struct metrics *m, int family, const char *const *labels, double delta);
int metrics__observe(struct metrics *m, int family, const char *const *labels, double value);

/* Updates dropped because a limit was reached. */
unsigned long metrics__dropped(const struct metrics *m);

/* Appends the text exposition of every family that has at least one series. 0 or -ENOMEM. */
int metrics__render(struct metrics *m, struct sbuf *out);

/*
 * A stage's counter table (core/base/counters.h) as families and series: _declare() declares
 * every family of @d with its type and help (at start); _set() sets every series from @stats,
 * with @extra's label pairs first (NULL: none; see counters_foreach_series()).
 * 0, or the first error of metrics__family() (a table's bad name or type: a programmer error).
 */
int metrics__declare_counters(struct metrics *m, const struct counter_desc *d, size_t n);
void metrics__set_counters(struct metrics *m, const struct counter_desc *d, size_t n,
			   const void *stats, const char *const *extra);

/* The Content-Type of the rendered text. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Appends @value the way the exposition format writes numbers: integers exactly, others with
 * 17 significant digits, "+Inf", "-Inf", "NaN". */
void metrics_format_value(struct sbuf *out, double value);

#endif
