/* SPDX-License-Identifier: MIT */
/*
 * flamegraph: profile -> frame layout -> interactive SVG, laid out exactly as FlameGraph's
 * flamegraph.pl draws it (same sibling order, same merging of frames, same minwidth pruning in
 * pixels, same x/y/width arithmetic and rounding), so that the same input at the same width gives
 * the same frames. Shared by `ember flamegraph`, `ember diff --flamegraph`, the heat map's
 * `--range --flamegraph` and emberd's /api/v1/flamegraph.svg.
 *
 * Options are plain data. Callers either set fields directly (strings must then be malloc'ed:
 * flamegraph_opts_fini() frees them) or, better, go through flamegraph_opts_set(), which takes
 * flamegraph.pl's option names without dashes and is shared by the CLI and HTTP query strings.
 * Not thread-safe per opts object; rendering different profiles in parallel with different opts
 * objects is safe (rendering only reads the profile and its strtab).
 */
#ifndef EMBER_FLAMEGRAPH_H
#define EMBER_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct profile;
struct sbuf;

/* flamegraph.pl --colors */
enum flamegraph_palette {
	FG_PALETTE_HOT = 0,	/* default */
	FG_PALETTE_MEM,
	FG_PALETTE_IO,
	FG_PALETTE_WAKEUP,
	FG_PALETTE_CHAIN,
	FG_PALETTE_JAVA,
	FG_PALETTE_JS,
	FG_PALETTE_PERL,
	FG_PALETTE_RED,
	FG_PALETTE_GREEN,
	FG_PALETTE_BLUE,
	FG_PALETTE_AQUA,
	FG_PALETTE_YELLOW,
	FG_PALETTE_PURPLE,
	FG_PALETTE_ORANGE,
	FG_PALETTE__COUNT,
};

/* How frame colours are chosen (flamegraph.pl: default, --hash, --random). */
enum flamegraph_colorby {
	FG_COLORBY_NAME = 0,	/* default: flamegraph.pl's seeded per-name colour; deterministic */
	FG_COLORBY_HASH,	/* --hash: flamegraph.pl's namehash (early characters weigh more) */
	FG_COLORBY_RANDOM,	/* --random: random per frame, from @seed */
};

/* --cp: the palette map (function name -> "rgb(r,g,b)"), read before and written after. */
struct flamegraph_cpmap; /* opaque; owned by the opts */
/* --nameattr: function name -> extra attributes of its <g> (or <a>). */
struct flamegraph_nameattr; /* opaque; owned by the opts */

struct flamegraph_opts {
	/* text */
	char *title;		/* NULL/"": "Flame Graph" ("Icicle Graph" inverted, "Flame Chart") */
	char *subtitle;		/* NULL/"": none */
	/*
	 * Extra lines of text (lines separated by '\n') drawn below the graph, after the
	 * elision note; for callers that must say more, e.g. ember diff's "12.5% of samples
	 * elided". NULL: none. Like every string here: malloc'ed, freed by _fini().
	 */
	char *info;
	char *notes;		/* --notes: an XML comment (must not contain '<' or '>') */
	char *countname;	/* "samples" */
	/*
	 * ember: the counts are nanoseconds of CPU time (perf's cpu-clock periods summed, as
	 * `ember collapse` and stackcollapse-perf.pl write them), not samples: unless countname
	 * is set, labels show time with its unit ("1.25 s"), the totals say "of CPU time" and the
	 * default title says "(CPU time)". Option "unit": "samples" (default) or "ns".
	 */
	bool counts_ns;
	char *nametype;		/* "Function:" */
	char *fonttype;		/* "Verdana" */
	char *encoding;		/* NULL: no encoding attribute in the XML declaration */
	char *search;		/* ember: a regex searched (highlighted) when the SVG opens */

	/* geometry */
	unsigned int width;	/* --width, pixels, 1200 */
	unsigned int height;	/* --height of one frame, pixels, 16 */
	double fontsize;	/* 12 */
	double fontwidth;	/* 0.59 */
	double minwidth;	/* 0.1 */
	bool minwidth_pct;	/* minwidth given as "N%": percent of the total, not pixels */

	/* colours */
	enum flamegraph_palette colors;
	char *bgcolors;		/* NULL/"": by palette; "yellow" "blue" "green" "grey" or "#rrggbb" */
	enum flamegraph_colorby colorby;
	uint64_t seed;		/* --random's seed; 0: from the clock */
	bool cp;		/* --cp: consistent palette via @cp_path */
	char *cp_path;		/* "palette.map"; read/written by flamegraph_cp_load()/_save() */
	struct flamegraph_cpmap *cpmap; /* loaded map (or NULL); render adds new names to it */

	/* layout */
	bool reverse;		/* --reverse: stacks reversed (leaf first) before merging */
	bool inverted;		/* --inverted: icicle graph, root at the top */
	bool flamechart;	/* --flamechart: keep input order, merge only adjacent stacks */
	bool negate;		/* --negate: differential hues swapped */
	double factor;		/* --factor: counts scaled by this in labels, 1 */
	double total;		/* --total: 0 or the total to scale to (ignored if < actual) */

	/* --nameattr FILE: per-function attributes (title, href, target, id, class, ...) */
	char *nameattr_path;
	struct flamegraph_nameattr *nameattr; /* loaded by flamegraph_opts_set("nameattr") */
};

/* flamegraph.pl's defaults. Never fails (all default strings are static until set). */
void flamegraph_opts_init(struct flamegraph_opts *o);
/* Frees every string and loaded map; @o may be re-initialized afterwards. */
void flamegraph_opts_fini(struct flamegraph_opts *o);

/*
 * Sets one option by flamegraph.pl's name without dashes: title subtitle info notes width height
 * minwidth ("N" pixels or "N%") fonttype fontsize fontwidth countname nametype colors (also
 * "color") bgcolors hash random seed cp (value ignored, or a palette map path) reverse inverted
 * flamechart negate factor total nameattr encoding search unit ("samples" or "ns"). Boolean options take NULL, "", "1",
 * "true", "yes", "on" (true) or "0", "false", "no", "off" (false).
 * Returns 0, -EINVAL on an unknown key or a bad value, -ENOMEM, or for "nameattr" a read error
 * (-errno) of the file. "cp" and "nameattr" touch files: flamegraph_opt_is_file() says which keys
 * an HTTP server must refuse.
 */
int flamegraph_opts_set(struct flamegraph_opts *o, const char *key, const char *value);
bool flamegraph_opt_is_file(const char *key);

/* --cp: loads @o->cp_path if it exists (a missing file is an empty map). 0 or -errno/-EINVAL. */
int flamegraph_cp_load(struct flamegraph_opts *o);
/* Writes the map back to @o->cp_path, sorted by name, "name->rgb(r,g,b)" lines. 0 or -errno. */
int flamegraph_cp_save(const struct flamegraph_opts *o);

/* What a render drew and left out (optional out-param). */
struct flamegraph_stats {
	size_t frames;		/* frames drawn, the root "all" included */
	size_t elided;		/* frames narrower than minwidth, left out */
	double elided_samples;	/* samples under the outermost elided frames */
	double total;		/* the total samples (width of "all") */
	unsigned int depth;	/* deepest drawn frame (root is 0) */
};

/*
 * Renders the whole SVG of @p into @out (appended). Two-column profiles (profile__has_count2)
 * draw differential graphs: widths from the second count, colours from second - first.
 * An empty profile gives flamegraph.pl's "ERROR: No valid input" SVG and returns -ENODATA.
 * Returns 0, -ENODATA, -EINVAL (bad option combination, e.g. notes with '<'), -ENOMEM.
 * @p and its strtab are only read.
 */
int flamegraph_render(const struct profile *p, const struct flamegraph_opts *o, struct sbuf *out);
int flamegraph_render_stats(const struct profile *p, const struct flamegraph_opts *o,
			    struct sbuf *out, struct flamegraph_stats *ret_stats);

/*
 * The frame table instead of the SVG: one line per drawn frame, sorted by y then x,
 * "y\tx\twidth\tsamples\tname\n" with x, y, width as flamegraph.pl writes them (one decimal)
 * and the raw name (the root is "all"); the format of the corpus' flamegraph-frames TSVs.
 */
int flamegraph_frames_tsv(const struct profile *p, const struct flamegraph_opts *o,
			  struct sbuf *out);

/*
 * Flame charts (--flamechart) need the input order including repeats, which a profile merges
 * away: a sequence of (stack index in @p, counts) in input order. With @ev == NULL the profile's
 * insertion order is used (each stack once). Options as flamegraph_render().
 */
struct flamegraph_event {
	size_t stack;
	double count, count2;
};
int flamegraph_render_events(const struct profile *p, const struct flamegraph_event *ev,
			     size_t nev, const struct flamegraph_opts *o, struct sbuf *out,
			     struct flamegraph_stats *ret_stats);
int flamegraph_frames_tsv_events(const struct profile *p, const struct flamegraph_event *ev,
				 size_t nev, const struct flamegraph_opts *o, struct sbuf *out);

#endif
