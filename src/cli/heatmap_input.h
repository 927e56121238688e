/* SPDX-License-Identifier: MIT */
/*
 * ember heatmap's input and flame graph glue: reads timestamped samples from ember-samples v1
 * text or `perf script` output into a struct samples, and renders a range's flame graph.
 * Logging functions (they report the errors they return).
 */
#ifndef EMBER_CLI_HEATMAP_INPUT_H
#define EMBER_CLI_HEATMAP_INPUT_H

#include <stdbool.h>
#include <stddef.h>

struct samples;
struct profile;
struct sbuf;

enum heatmap_input_format {
	HEATMAP_INPUT_AUTO = 0,	/* "# ember-samples" or a sample line first: samples; else perf */
	HEATMAP_INPUT_SAMPLES,
	HEATMAP_INPUT_PERF,
};

struct heatmap_input_opts {
	enum heatmap_input_format format;
	bool strict;		/* the first malformed line is an error */
	bool pid, tid;		/* perf: root frames "comm-PID" / "comm-PID/TID" */
};

/* "auto", "samples", "perf". 0 or -EINVAL. */
int heatmap_input_format_parse(const char *s, enum heatmap_input_format *ret);

/* Reads @path ("-" or NULL: stdin) into @s (sorted at the end). 0 or -errno (logged). */
int heatmap_input_read(const char *path, struct samples *s, const struct heatmap_input_opts *o);

/* An `ember flamegraph` option (flamegraph.pl's name without dashes) and its value. */
struct heatmap_fg_opt {
	const char *key;	/* borrowed */
	const char *value;	/* borrowed; NULL for a flag */
};

/*
 * Renders @p as a flame graph SVG into @out with the options @kv[0..n) applied in order.
 * 0 or -errno (logged; -EINVAL for a bad option).
 */
int heatmap_render_flamegraph(const struct profile *p, const struct heatmap_fg_opt *kv, size_t n,
			      struct sbuf *out);

#endif
