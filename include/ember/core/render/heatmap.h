/* SPDX-License-Identifier: MIT */
/*
 * heatmap: the flame scope's subsecond-offset heat map. Sample times are binned into columns of
 * @column_ns each, every column split into @rows rows painted bottom to top: row 0 (the bottom)
 * holds the earliest offsets within the column. The default is FlameScope's: 1 s columns of 50
 * rows of 20 ms. Other arrangements by option, e.g. 1 h columns of 60 rows of 1 min.
 *
 * Everything is in integer nanoseconds so that cells map to time ranges exactly. Column c covers
 * [start + c*column_ns, start + (c+1)*column_ns); within it, row r covers the offsets
 * [ceil(r*column_ns/rows), ceil((r+1)*column_ns/rows)), so a sample falls in row
 * floor(offset*rows/column_ns). When rows divides column_ns (the default) every row is exactly
 * row_ns = column_ns/rows long. A time exactly on a boundary belongs to the later cell.
 *
 * The heat map takes plain data (times plus counts, from arrays or one at a time): it knows
 * nothing of stores, files or filters. Renderers write into a struct sbuf. Not thread-safe per
 * object; rendering only reads.
 */
#ifndef EMBER_HEATMAP_H
#define EMBER_HEATMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

#define HEATMAP_DEFAULT_COLUMN_NS 1000000000ULL	/* 1 s */
#define HEATMAP_DEFAULT_ROWS 50u			/* of 20 ms */
#define HEATMAP_MAX_ROWS 10000u
#define HEATMAP_MAX_COLUMNS (1u << 20)		/* 12 days of 1 s columns */
#define HEATMAP_MAX_CELLS (16u << 20)		/* columns * rows */
#define HEATMAP_MAX_COLUMN_NS (366ULL * 86400 * 1000000000ULL)	/* one (leap) year */

struct heatmap_opts {
	uint64_t start_ns;	/* left edge of column 0 (absolute, the samples' clock) */
	uint64_t column_ns;	/* span of one column; default 1 s */
	unsigned int rows;	/* rows per column; default 50 */
	unsigned int columns;	/* number of columns (>= 1) */
};

/* FlameScope's defaults (1 s x 50 rows), start 0, one column. */
void heatmap_opts_init(struct heatmap_opts *o);

/*
 * Fills @o->start_ns and @o->columns to cover [@first_ns, @last_ns] (both inclusive: the times of
 * the first and last sample) with @o->column_ns-aligned columns: start = floor(first/column) *
 * column, as FlameScope floors the first time to a whole second. 0, or -E2BIG when that needs
 * more than HEATMAP_MAX_COLUMNS columns, -EINVAL if @first_ns > @last_ns or column_ns is 0.
 */
int heatmap_opts_fit(struct heatmap_opts *o, uint64_t first_ns, uint64_t last_ns);

/* 0, or -EINVAL (with a static reason in @ret_reason, may be NULL) for options out of limits. */
int heatmap_opts_check(const struct heatmap_opts *o, const char **ret_reason);

/* Exact row boundary: offset within a column where row @r starts (r may equal rows). */
uint64_t heatmap_row_offset_ns(const struct heatmap_opts *o, unsigned int r);

/*
 * The cell a time falls in: 0 and @ret_col/@ret_row set, or -ERANGE when @t_ns is before the
 * first column or at/after the end of the last one.
 */
int heatmap_cell_of(const struct heatmap_opts *o, uint64_t t_ns, unsigned int *ret_col,
		    unsigned int *ret_row);

/* The half-open time range [start, end) of cell (@col, @row). 0, or -ERANGE off the map. */
int heatmap_cell_range(const struct heatmap_opts *o, unsigned int col, unsigned int row,
		       uint64_t *ret_start_ns, uint64_t *ret_end_ns);

/*
 * A selection made by clicking two cells (in either order): the half-open range from the start of
 * the earlier cell (in painting order: column by column, bottom to top) to the end of the later.
 * 0, or -ERANGE if either cell is off the map.
 */
int heatmap_selection_range(const struct heatmap_opts *o, unsigned int col_a, unsigned int row_a,
			    unsigned int col_b, unsigned int row_b, uint64_t *ret_start_ns,
			    uint64_t *ret_end_ns);

struct heatmap {
	struct heatmap_opts o;	/* copied at init */
	double *values;		/* owned; columns * rows, column-major: values[col * rows + row] */
	double max;		/* largest cell */
	double total;		/* sum of the cells */
	double outside;		/* counts of samples that fell off the map (not in any cell) */
};

/* Allocates a zeroed map. 0, -EINVAL (options, see heatmap_opts_check) or -ENOMEM. */
int heatmap_init(struct heatmap *hm, const struct heatmap_opts *o);
/* Frees the cells; @hm may be zeroed or half-built. */
void heatmap_fini(struct heatmap *hm);
/* Zeroes the cells, keeping the arrangement. */
void heatmap_clear(struct heatmap *hm);

static inline double heatmap_value(const struct heatmap *hm, unsigned int col, unsigned int row)
{
	return hm->values[(size_t)col * hm->o.rows + row];
}

/* Adds @count at time @t_ns (off-map samples go to @hm->outside). Updates max and total. */
void heatmap_add(struct heatmap *hm, uint64_t t_ns, double count);

/*
 * Adds @n samples: times in nanoseconds, counts from @counts (NULL: each sample counts 1).
 * Any order; sorted input takes a faster path (no division per sample).
 */
void heatmap_add_ns(struct heatmap *hm, const uint64_t *times_ns, const double *counts, size_t n);
/* The same with times in seconds (doubles; rounded to the nearest nanosecond; negative and
 * non-finite times go to @outside). */
void heatmap_add_s(struct heatmap *hm, const double *times_s, const double *counts, size_t n);

/*
 * Pull interface: @next fills the next sample and returns 1, or returns 0 at the end or a
 * negative errno to stop. Returns 0 or that error.
 */
typedef int (*heatmap_next_fn)(void *ctx, uint64_t *ret_t_ns, double *ret_count);
int heatmap_add_cb(struct heatmap *hm, heatmap_next_fn next, void *ctx);

/* Recomputes @max and @total from the cells (after writing @values directly). */
void heatmap_update_stats(struct heatmap *hm);

/*
 * JSON for the dashboard, one object:
 *   {"start": S, "start_ns": "N", "column_s": C, "rows": R, "row_s": C/R, "columns": N,
 *    "values": [[col 0: row 0 (bottom) .. row R-1], [col 1 ...], ...], "max": M, "total": T,
 *    "outside": O}
 * Times in seconds as exact decimals; start_ns is the exact start as a string. 0 or -ENOMEM.
 */
int heatmap_render_json(const struct heatmap *hm, struct sbuf *out);

struct heatmap_svg_opts {
	const char *title;	/* borrowed; NULL: "Flame Scope" */
	const char *subtitle;	/* borrowed; NULL: none (e.g. the input file and filters) */
	unsigned int cell_w;	/* pixels per column; 0: fit about 1200 px, from 2 to 20 */
	unsigned int cell_h;	/* pixels per row; 0: 8 (50 rows -> 400 px), at least 1 */
	/*
	 * Shown in the selection box as a command hint: "ember heatmap FILE --range S E"
	 * (borrowed; NULL: no hint). Also put in the SVG as data-file.
	 */
	const char *file;
	/*
	 * Optional: a URL template for a selected range's flame graph; "{start}" and "{end}" are
	 * replaced by the range (seconds). With it the page shows a link (emberd). Borrowed.
	 */
	const char *flamegraph_url;
};

void heatmap_svg_opts_init(struct heatmap_svg_opts *o);

/*
 * A standalone interactive SVG (no external resources; passes xmllint --noout): cells shaded from
 * white (0) to dark red (max), darkness proportional to the count, a legend for the scale, the
 * x axis labelled in seconds from the start and the y axis in milliseconds (or s, min) within a
 * column. Hovering a cell shows its time range and count; clicking two cells selects the range
 * between them (highlighted) and shows its start, end and sample count. Each non-empty cell is a
 * <rect id="c{col}_{row}" data-n="COUNT">; the selection is published in the element
 * id="selection" as data-start / data-end (seconds) / data-samples. 0 or -ENOMEM.
 */
int heatmap_render_svg(const struct heatmap *hm, const struct heatmap_svg_opts *so,
		       struct sbuf *out);

/*
 * Appends @ns as seconds, an exact decimal without trailing zeros ("12", "12.5", "0.02"), which
 * parse_seconds_ns() (ember/core/base/parse.h) reads back.
 */
void heatmap_add_seconds(struct sbuf *sb, uint64_t ns);

#endif
