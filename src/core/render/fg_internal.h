/* SPDX-License-Identifier: MIT */
/*
 * Private to the flame graph renderer in src/core/render/; the contract is
 * include/ember/core/render/flamegraph.h. What each file owns:
 *
 *   flamegraph.c   the entry points: check the options, lay out, draw
 *   fg_options.c   flamegraph_opts_*(), the --cp colour map and the --nameattr attributes
 *   fg_layout.c    the sort of the stacks in flamegraph.pl's line order and the walk that
 *                  turns them into frames (struct fg_ctx, struct fg_node)
 *   fg_svg.c       the SVG and the frames TSV of a laid-out fg_ctx
 *   fg_palette.c   colours and UTF-8 helpers
 */
#ifndef EMBER_FG_INTERNAL_H
#define EMBER_FG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/sbuf.h"
#include "ember/core/render/flamegraph.h"

struct profile;
struct strtab;

#define FG_XPAD 10	   /* px left and right of the frames */
#define FG_ROOT UINT32_MAX /* the frame id of the root ("all") */

struct fg_rgb {
	int r, g, b;
};

struct fg_colorer {
	enum flamegraph_palette palette;
	enum flamegraph_colorby by;
	uint64_t *rng; /* state for FG_COLORBY_RANDOM */
};

/* The colour flamegraph.pl gives the frame name @s (annotations included). */
void fg_color(const struct fg_colorer *c, const char *s, size_t len, struct fg_rgb *ret);
/* Differential colour of @value (second - first) against the largest |delta| @max. */
void fg_color_scale(double value, double max, bool negate, struct fg_rgb *ret);
/* Uniform [0,1) from a xorshift state (never 0). */
double fg_rand01(uint64_t *state);

/* Code points in @s (an invalid byte counts as one), and the bytes of the first @chars. */
size_t fg_utf8_chars(const char *s, size_t len);
size_t fg_utf8_prefix(const char *s, size_t len, size_t chars);

/* --- options (fg_options.c) --- */

/* --bgcolors: a flamegraph.pl name or "#rgb"/"#rrggbb". */
bool fg_valid_bgcolors(const char *v);
/* --cp: @key's colour, borrowed from the map (valid until the next set), or NULL. */
const char *fg_cpmap_get(const struct flamegraph_cpmap *m, const char *key, size_t klen);
/* Sets @key -> @val (copied). 0 or -ENOMEM. */
int fg_cpmap_set(struct flamegraph_cpmap *m, const char *key, size_t klen, const char *val);

/* --nameattr: the attributes of the name @s, an array ended by a NULL key, or NULL. Borrowed
 * from the opts. */
struct fg_attr;
const struct fg_attr *fg_find_attrs(const struct flamegraph_opts *o, const char *s, size_t len);
/* The value of @key among @a (may be NULL), or NULL. */
const char *fg_attr_get(const struct fg_attr *a, const char *key);

/* --- layout (fg_layout.c) --- */

struct fg_node {
	uint32_t id;
	uint32_t depth;
	double stime, etime;
	double t1;	/* inclusive first-column count (differential) */
	double delta;	/* self delta, flamegraph.pl's */
};

struct fg_ctx {
	const struct profile *p;
	const struct strtab *st;
	const struct flamegraph_opts *o;
	const struct flamegraph_event *ev; /* NULL: counts come from the profile */
	bool diff, reverse;

	/* sort keys */
	uint32_t *key_cont, *key_leaf; /* per frame id */
	uint32_t key_end;
	unsigned char *amb;	/* per key: a leaf token that prefixes another token */
	struct sbuf tmp_a, tmp_b;

	/* chain palette: waker frames renamed "name_[w]" */
	struct strtab *wst;
	int32_t *wid;		/* per frame id: id in wst, or -1 */
	size_t nbase;

	/* results */
	struct fg_node *nodes;
	size_t nnodes, nodes_cap;
	double time, timemax, maxdelta;
	double widthpertime, minwidth_time;
	struct flamegraph_stats stats;
	int err;
};

/*
 * Sorts the stacks of @p (or the @nev events @ev when @events: a flame chart keeps their order),
 * walks them and keeps the frames wide enough: c->nodes sorted by depth then x. @c is set up
 * whatever the result: free it with fg_ctx_fini(). 0, -ENODATA (nothing to draw), -EINVAL (an
 * event names no stack) or -ENOMEM.
 */
int fg_layout(struct fg_ctx *c, const struct profile *p, const struct flamegraph_event *ev,
	      size_t nev, bool events, const struct flamegraph_opts *o);
void fg_ctx_fini(struct fg_ctx *c);
/* The name of frame @id ("" for FG_ROOT; a waker frame's "name_[w]"), borrowed from the strtabs. */
const char *fg_frame_name(const struct fg_ctx *c, uint32_t id, size_t *len);

/* --- output (fg_svg.c) --- */

/* Appends the SVG of a laid-out @c to @sb. 0, -ENOMEM (the --cp map or @sb). */
int fg_render_svg(struct fg_ctx *c, struct sbuf *sb);
/* Appends one line per frame: y, x, width, count, name. 0 or -ENOMEM. */
int fg_render_tsv(struct fg_ctx *c, struct sbuf *sb);
/* Appends flamegraph.pl's "no valid input" SVG. */
void fg_error_svg(const struct flamegraph_opts *o, struct sbuf *sb);

#endif
