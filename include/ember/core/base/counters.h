/* SPDX-License-Identifier: MIT */
/*
 * counters: a stage's counters described once, as a table over its stats struct, and rendered
 * from that one description into the stats JSON (/api/v1/stats), the metric series (/metrics,
 * through a callback: the registry is the daemon's) and log lines (a template naming the keys).
 *
 * A row is one field of the struct (offsetof), or a value derived from the struct (@fn, @str),
 * or an array of uint64_t (@nr elements named by @name(i)). It has a key (its name in the JSON
 * and in log templates), optionally a Prometheus family (@metric, @type) with one label pair
 * (@label, @label_value), and the family's help text on the family's first row (NULL on the
 * others, which add series to it). To add a counter: add the field to the stats struct, then
 * one row to the stage's table (src/daemon/<stage>/<name>_counters.c); the JSON key, the series and
 * its help follow.
 */
#ifndef EMBER_CORE_BASE_COUNTERS_H
#define EMBER_CORE_BASE_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

enum counter_type {
	COUNTER_COUNTER,	/* only goes up: the family's name ends in _total */
	COUNTER_GAUGE,
};

enum counter_value {
	COUNTER_U64,		/* uint64_t at @off (or @nr of them) */
	COUNTER_U32,		/* uint32_t at @off */
	COUNTER_I64,		/* int64_t at @off (a gauge that may be negative) */
	COUNTER_BOOL,		/* bool at @off: true/false in JSON, 1/0 as a metric */
	COUNTER_DOUBLE,		/* double at @off */
	COUNTER_FN,		/* @fn(stats): derived (a ratio, an average) */
	COUNTER_STR,		/* @str(stats): a string in the JSON only (a mode, a source) */
};

enum counter_flags {
	COUNTER_NO_JSON = 1u << 0, /* metric or log only */
};

struct counter_desc {
	const char *key;		/* the JSON key, and the name in log templates */
	const char *metric;		/* the Prometheus family; NULL: not exported */
	enum counter_type type;
	const char *help;		/* the family's help, on its first row only */
	const char *unit;		/* what the field counts (ns, bytes, samples): documentation */
	size_t off;			/* offsetof() in the stats struct */
	enum counter_value value;
	double (*fn)(const void *stats);	 /* COUNTER_FN */
	const char *(*str)(const void *stats); /* COUNTER_STR */
	const char *json_fmt;		/* printf format of a double in the JSON ("%.1f"); NULL:
					   integers as integers, doubles as %.17g */
	double json_scale;		/* 0: 1; e.g. 1e-6: a ns field shown in ms */
	double metric_scale;		/* 0: 1; e.g. 1e-9: a ns field exported in seconds */
	const char *label, *label_value; /* the series' label pair; NULL: none */
	const char *label2, *label2_value; /* a second pair */
	unsigned int nr;		/* > 0: an array of @nr uint64_t; JSON: an object */
	const char *(*name)(unsigned int i); /* ... its element names (JSON keys, label values) */
	const char *array_label;	/* ... and the label they are the value of */
	unsigned int flags;		/* enum counter_flags */
};

#define COUNTERS_N(a) (sizeof(a) / sizeof((a)[0]))

/* A table and the struct it reads; @prefix names it in log templates ("{prefix.key}"). */
struct counter_source {
	const char *prefix;
	const struct counter_desc *d;
	size_t n;
	const void *stats;
};

/* The value of row @d (element @i of an array) in @stats, as a double, before any scale. */
double counter_value(const struct counter_desc *d, const void *stats, unsigned int i);

/*
 * Appends "key": value, for every row in the JSON, each followed by ", " (the caller opens and
 * closes the object). Arrays are objects keyed by their element names.
 */
void counters_json(struct sbuf *sb, const struct counter_desc *d, size_t n, const void *stats);

/*
 * Calls @fn for each series of every row with a family: @labels is NULL or a NULL-terminated
 * name, value, ... list (@extra's pairs first: NULL or NULL-terminated, up to two pairs, e.g.
 * "exporter", "otlp" for one of several structs); @value is scaled by metric_scale.
 */
typedef void (*counter_series_fn)(const struct counter_desc *d, const char *const *labels,
				  double value, void *ctx);
void counters_foreach_series(const struct counter_desc *d, size_t n, const void *stats,
			     const char *const *extra, counter_series_fn fn, void *ctx);

/*
 * Appends @tmpl with each "{prefix.key}" or "{prefix.key:FMT}" (FMT a printf conversion of a
 * double without its '%', e.g. ".0f") replaced by that row's value in @src (integers as
 * integers without FMT; JSON scale applied). 0, or -EINVAL for an unknown key or a bad FMT
 * (the placeholder is then copied as is).
 */
int counters_format(struct sbuf *sb, const char *tmpl, const struct counter_source *src,
		    size_t nsrc);

#endif
