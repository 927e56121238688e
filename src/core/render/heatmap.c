// SPDX-License-Identifier: MIT
#include "ember/core/render/heatmap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/sbuf.h"

#define NS_PER_S 1000000000ULL

void heatmap_opts_init(struct heatmap_opts *o)
{
	*o = (struct heatmap_opts){
		.start_ns = 0,
		.column_ns = HEATMAP_DEFAULT_COLUMN_NS,
		.rows = HEATMAP_DEFAULT_ROWS,
		.columns = 1,
	};
}

int heatmap_opts_check(const struct heatmap_opts *o, const char **ret_reason)
{
	const char *why = NULL;

	if (!o->rows || o->rows > HEATMAP_MAX_ROWS)
		why = "rows must be 1 to 10000";
	else if (!o->column_ns || o->column_ns > HEATMAP_MAX_COLUMN_NS)
		why = "the column span must be 1 ns to 366 days";
	else if (o->column_ns < o->rows)
		why = "a row must span at least 1 ns";
	else if (!o->columns || o->columns > HEATMAP_MAX_COLUMNS)
		why = "too many columns (at most 1048576)";
	else if ((uint64_t)o->columns * o->rows > HEATMAP_MAX_CELLS)
		why = "too many cells (at most 16777216)";
	else if (o->start_ns > UINT64_MAX - (uint64_t)o->columns * o->column_ns ||
		 (uint64_t)o->columns * o->column_ns / o->columns != o->column_ns)
		why = "the map ends past the end of time";
	if (why) {
		if (ret_reason)
			*ret_reason = why;
		return -EINVAL;
	}
	return 0;
}

int heatmap_opts_fit(struct heatmap_opts *o, uint64_t first_ns, uint64_t last_ns)
{
	uint64_t start, n;

	if (!o->column_ns || first_ns > last_ns)
		return -EINVAL;
	start = first_ns / o->column_ns * o->column_ns;
	n = (last_ns - start) / o->column_ns + 1;
	if (n > HEATMAP_MAX_COLUMNS)
		return -E2BIG;
	o->start_ns = start;
	o->columns = (unsigned int)n;
	return 0;
}

uint64_t heatmap_row_offset_ns(const struct heatmap_opts *o, unsigned int r)
{
	/* ceil(r * C / R): a time t is in row floor(off * R / C) exactly when off >= this */
	unsigned __int128 x = (unsigned __int128)r * o->column_ns + o->rows - 1;

	return (uint64_t)(x / o->rows);
}

static unsigned int row_of(const struct heatmap_opts *o, uint64_t off)
{
	return (unsigned int)((unsigned __int128)off * o->rows / o->column_ns);
}

int heatmap_cell_of(const struct heatmap_opts *o, uint64_t t_ns, unsigned int *ret_col,
		    unsigned int *ret_row)
{
	uint64_t off, col;

	if (t_ns < o->start_ns)
		return -ERANGE;
	off = t_ns - o->start_ns;
	col = off / o->column_ns;
	if (col >= o->columns)
		return -ERANGE;
	*ret_col = (unsigned int)col;
	*ret_row = row_of(o, off - col * o->column_ns);
	return 0;
}

int heatmap_cell_range(const struct heatmap_opts *o, unsigned int col, unsigned int row,
		       uint64_t *ret_start_ns, uint64_t *ret_end_ns)
{
	uint64_t base;

	if (col >= o->columns || row >= o->rows)
		return -ERANGE;
	base = o->start_ns + (uint64_t)col * o->column_ns;
	*ret_start_ns = base + heatmap_row_offset_ns(o, row);
	*ret_end_ns = base + heatmap_row_offset_ns(o, row + 1);
	return 0;
}

int heatmap_selection_range(const struct heatmap_opts *o, unsigned int col_a, unsigned int row_a,
			    unsigned int col_b, unsigned int row_b, uint64_t *ret_start_ns,
			    uint64_t *ret_end_ns)
{
	uint64_t sa, ea, sb, eb;

	if (heatmap_cell_range(o, col_a, row_a, &sa, &ea) ||
	    heatmap_cell_range(o, col_b, row_b, &sb, &eb))
		return -ERANGE;
	/* painting order is time order, so the earlier cell is the one that starts first */
	*ret_start_ns = sa < sb ? sa : sb;
	*ret_end_ns = ea > eb ? ea : eb;
	return 0;
}

int heatmap_init(struct heatmap *hm, const struct heatmap_opts *o)
{
	int err = heatmap_opts_check(o, NULL);

	*hm = (struct heatmap){ .o = *o };
	if (err)
		return err;
	hm->values = calloc((size_t)o->columns * o->rows, sizeof(*hm->values));
	if (!hm->values)
		return -ENOMEM;
	return 0;
}

void heatmap_fini(struct heatmap *hm)
{
	free(hm->values);
	*hm = (struct heatmap){ 0 };
}

void heatmap_clear(struct heatmap *hm)
{
	memset(hm->values, 0, (size_t)hm->o.columns * hm->o.rows * sizeof(*hm->values));
	hm->max = hm->total = hm->outside = 0;
}

static void cell_add(struct heatmap *hm, size_t idx, double count)
{
	double v = hm->values[idx] + count;

	hm->values[idx] = v;
	if (v > hm->max)
		hm->max = v;
	hm->total += count;
}

void heatmap_add(struct heatmap *hm, uint64_t t_ns, double count)
{
	unsigned int c, r;

	if (heatmap_cell_of(&hm->o, t_ns, &c, &r)) {
		hm->outside += count;
		return;
	}
	cell_add(hm, (size_t)c * hm->o.rows + r, count);
}

/*
 * A cursor caching the current cell's time range, so that runs of times in one cell (sorted
 * input) cost two comparisons instead of a 128-bit division.
 */
struct cursor {
	uint64_t lo, hi;	/* current cell [lo, hi); lo > hi when none */
	size_t idx;
};

static void cursor_add(struct heatmap *hm, struct cursor *cur, uint64_t t, double count)
{
	unsigned int c, r;
	uint64_t lo, hi;

	if (t >= cur->lo && t < cur->hi) {
		cell_add(hm, cur->idx, count);
		return;
	}
	if (heatmap_cell_of(&hm->o, t, &c, &r)) {
		hm->outside += count;
		return;
	}
	(void)heatmap_cell_range(&hm->o, c, r, &lo, &hi);
	cur->lo = lo;
	cur->hi = hi;
	cur->idx = (size_t)c * hm->o.rows + r;
	cell_add(hm, cur->idx, count);
}

void heatmap_add_ns(struct heatmap *hm, const uint64_t *times_ns, const double *counts, size_t n)
{
	struct cursor cur = { .lo = 1, .hi = 0 };
	size_t i;

	for (i = 0; i < n; i++)
		cursor_add(hm, &cur, times_ns[i], counts ? counts[i] : 1.0);
}

static bool seconds_to_ns(double s, uint64_t *ret)
{
	double ns;

	if (!(s >= 0) || !isfinite(s))
		return false;
	ns = nearbyint(s * 1e9);
	if (ns >= 18446744073709551616.0)
		return false;
	*ret = (uint64_t)ns;
	return true;
}

void heatmap_add_s(struct heatmap *hm, const double *times_s, const double *counts, size_t n)
{
	struct cursor cur = { .lo = 1, .hi = 0 };
	uint64_t t;
	size_t i;

	for (i = 0; i < n; i++) {
		double c = counts ? counts[i] : 1.0;

		if (!seconds_to_ns(times_s[i], &t))
			hm->outside += c;
		else
			cursor_add(hm, &cur, t, c);
	}
}

int heatmap_add_cb(struct heatmap *hm, heatmap_next_fn next, void *ctx)
{
	struct cursor cur = { .lo = 1, .hi = 0 };
	uint64_t t;
	double c;
	int r;

	for (;;) {
		r = next(ctx, &t, &c);
		if (r <= 0)
			return r;
		cursor_add(hm, &cur, t, c);
	}
}

void heatmap_update_stats(struct heatmap *hm)
{
	size_t i, n = (size_t)hm->o.columns * hm->o.rows;

	hm->max = hm->total = 0;
	for (i = 0; i < n; i++) {
		hm->total += hm->values[i];
		if (hm->values[i] > hm->max)
			hm->max = hm->values[i];
	}
}

void heatmap_add_seconds(struct sbuf *sb, uint64_t ns)
{
	char frac[10];
	uint64_t f = ns % NS_PER_S;
	int len = 9;

	sbuf_addu(sb, ns / NS_PER_S);
	if (!f)
		return;
	snprintf(frac, sizeof(frac), "%09llu", (unsigned long long)f);
	while (len > 0 && frac[len - 1] == '0')
		len--;
	sbuf_addc(sb, '.');
	sbuf_add(sb, frac, (size_t)len);
}

int heatmap_render_json(const struct heatmap *hm, struct sbuf *out)
{
	const struct heatmap_opts *o = &hm->o;
	unsigned int c, r;

	sbuf_adds(out, "{\"start\":");
	heatmap_add_seconds(out, o->start_ns);
	sbuf_adds(out, ",\"start_ns\":\"");
	sbuf_addu(out, o->start_ns);
	sbuf_adds(out, "\",\"column_s\":");
	heatmap_add_seconds(out, o->column_ns);
	sbuf_adds(out, ",\"rows\":");
	sbuf_addu(out, o->rows);
	sbuf_adds(out, ",\"row_s\":");
	if (o->column_ns % o->rows == 0)
		heatmap_add_seconds(out, o->column_ns / o->rows);
	else
		sbuf_add_count(out, (double)o->column_ns / o->rows / 1e9);
	sbuf_adds(out, ",\"columns\":");
	sbuf_addu(out, o->columns);
	sbuf_adds(out, ",\"values\":[");
	for (c = 0; c < o->columns; c++) {
		sbuf_adds(out, c ? ",[" : "[");
		for (r = 0; r < o->rows; r++) {
			if (r)
				sbuf_addc(out, ',');
			sbuf_add_count(out, heatmap_value(hm, c, r));
		}
		sbuf_addc(out, ']');
	}
	sbuf_adds(out, "],\"max\":");
	sbuf_add_count(out, hm->max);
	sbuf_adds(out, ",\"total\":");
	sbuf_add_count(out, hm->total);
	sbuf_adds(out, ",\"outside\":");
	sbuf_add_count(out, hm->outside);
	sbuf_adds(out, "}\n");
	return sbuf_error(out);
}

void heatmap_svg_opts_init(struct heatmap_svg_opts *o)
{
	*o = (struct heatmap_svg_opts){ 0 };
}

/* A duration as a short axis label: "2h", "90m", "1.5s", "20ms", "250us", "7ns". */
static void add_duration(struct sbuf *sb, uint64_t ns)
{
	if (ns >= 3600 * NS_PER_S && ns % (3600 * NS_PER_S) == 0) {
		sbuf_addu(sb, ns / (3600 * NS_PER_S));
		sbuf_addc(sb, 'h');
	} else if (ns >= 60 * NS_PER_S && ns % (60 * NS_PER_S) == 0) {
		sbuf_addu(sb, ns / (60 * NS_PER_S));
		sbuf_addc(sb, 'm');
	} else if (ns >= NS_PER_S || ns == 0) {
		heatmap_add_seconds(sb, ns);
		sbuf_addc(sb, 's');
	} else if (ns >= 1000000) {
		heatmap_add_seconds(sb, ns * 1000);	/* ms, exact */
		sbuf_adds(sb, "ms");
	} else if (ns >= 1000) {
		heatmap_add_seconds(sb, ns * 1000000);	/* us, exact */
		sbuf_adds(sb, "us");
	} else {
		sbuf_addu(sb, ns);
		sbuf_adds(sb, "ns");
	}
}

/* Cell colour: white at 0, rgb(120,20,0) at the max; darkness proportional to the count. */
static void add_fill(struct sbuf *sb, double v, double max)
{
	double s = max > 0 ? v / max : 0;

	if (s < 0)
		s = 0;
	if (s > 1)
		s = 1;
	sbuf_addf(sb, "rgb(%d,%d,%d)", (int)lround(255 - 135 * s), (int)lround(255 - 235 * s),
		  (int)lround(255 - 255 * s));
}

/* The smallest step from 1, 2, 5, 10, 20, 50, ... such that step * px >= min_px. */
static unsigned int label_step(unsigned int px, unsigned int min_px)
{
	static const unsigned int m[] = { 1, 2, 5 };
	unsigned long long base = 1;

	for (;;) {
		for (size_t i = 0; i < 3; i++) {
			unsigned long long s = base * m[i];

			if (s * px >= min_px)
				return s > UINT32_MAX ? UINT32_MAX : (unsigned int)s;
		}
		base *= 10;
	}
}

/*
 * The page's script. It reads the arrangement from the grid's data attributes and does the time
 * arithmetic in BigInt nanoseconds so that ranges are exact, as heatmap_cell_range() computes
 * them.
 */
static const char svg_script[] =
	"var svg = document.documentElement, grid = document.getElementById('grid');\n"
	"function attr(n) { return grid.getAttribute('data-' + n); }\n"
	"var START = BigInt(attr('start-ns')), COL = BigInt(attr('column-ns'));\n"
	"var ROWS = parseInt(attr('rows')), COLS = parseInt(attr('columns'));\n"
	"var X0 = parseFloat(grid.getAttribute('x')), Y0 = parseFloat(grid.getAttribute('y'));\n"
	"var CW = parseFloat(attr('cell-w')), CH = parseFloat(attr('cell-h'));\n"
	"var FILE = attr('file'), FGURL = attr('flamegraph-url');\n"
	"var hover = document.getElementById('hover'), hcell = document.getElementById('hcell');\n"
	"var sel = document.getElementById('selection'), selg = document.getElementById('selrects');\n"
	"var NS = 'http://www.w3.org/2000/svg';\n"
	"var anchor = null;\n"
	"function rowoff(r) { var R = BigInt(ROWS); return (BigInt(r) * COL + R - 1n) / R; }\n"
	"function cellStart(c, r) { return START + BigInt(c) * COL + rowoff(r); }\n"
	"function cellEnd(c, r) { return START + BigInt(c) * COL + rowoff(r + 1); }\n"
	"function secs(ns) {\n"
	"  var s = (ns / 1000000000n).toString(), f = (ns % 1000000000n).toString();\n"
	"  if (f === '0') return s;\n"
	"  while (f.length < 9) f = '0' + f;\n"
	"  return s + '.' + f.replace(/0+$/, '');\n"
	"}\n"
	"function count(c, r) {\n"
	"  var e = document.getElementById('c' + c + '_' + r);\n"
	"  return e ? parseFloat(e.getAttribute('data-n')) : 0;\n"
	"}\n"
	"function cellAt(evt) {\n"
	"  var p = svg.createSVGPoint(); p.x = evt.clientX; p.y = evt.clientY;\n"
	"  var m = svg.getScreenCTM(); if (m) p = p.matrixTransform(m.inverse());\n"
	"  var c = Math.floor((p.x - X0) / CW), rr = Math.floor((p.y - Y0) / CH);\n"
	"  if (c < 0 || c >= COLS || rr < 0 || rr >= ROWS) return null;\n"
	"  return { c: c, r: ROWS - 1 - rr };\n"
	"}\n"
	"function place(e, c, r, r2) {\n"
	"  e.setAttribute('x', X0 + c * CW); e.setAttribute('width', CW);\n"
	"  e.setAttribute('y', Y0 + (ROWS - 1 - r2) * CH); e.setAttribute('height', (r2 - r + 1) * CH);\n"
	"}\n"
	"function show(text) { hover.textContent = text; }\n"
	"svg.addEventListener('mousemove', function (evt) {\n"
	"  var k = cellAt(evt);\n"
	"  if (!k) { hcell.setAttribute('visibility', 'hidden'); show(' '); return; }\n"
	"  place(hcell, k.c, k.r, k.r); hcell.setAttribute('visibility', 'visible');\n"
	"  var s = cellStart(k.c, k.r), e = cellEnd(k.c, k.r);\n"
	"  show('cell ' + k.c + ',' + k.r + ': ' + secs(s) + ' - ' + secs(e) + ' s (+' +\n"
	"       secs(s - START) + ' s), ' + count(k.c, k.r) + ' samples');\n"
	"});\n"
	"function highlight(a, b) {\n"
	"  while (selg.firstChild) selg.removeChild(selg.firstChild);\n"
	"  for (var c = a.c; c <= b.c; c++) {\n"
	"    var r0 = c === a.c ? a.r : 0, r1 = c === b.c ? b.r : ROWS - 1;\n"
	"    var e = document.createElementNS(NS, 'rect');\n"
	"    place(e, c, r0, r1); e.setAttribute('class', 'sel'); selg.appendChild(e);\n"
	"  }\n"
	"}\n"
	"svg.addEventListener('click', function (evt) {\n"
	"  var k = cellAt(evt);\n"
	"  if (!k) return;\n"
	"  if (!anchor) {\n"
	"    anchor = k; highlight(k, k);\n"
	"    sel.removeAttribute('data-start'); sel.removeAttribute('data-end');\n"
	"    sel.removeAttribute('data-samples');\n"
	"    sel.textContent = 'selection starts at ' + secs(cellStart(k.c, k.r)) +\n"
	"      ' s: click another cell to end it';\n"
	"    return;\n"
	"  }\n"
	"  var a = anchor, b = k; anchor = null;\n"
	"  if (b.c * ROWS + b.r < a.c * ROWS + a.r) { var t = a; a = b; b = t; }\n"
	"  highlight(a, b);\n"
	"  var n = 0;\n"
	"  for (var i = a.c * ROWS + a.r; i <= b.c * ROWS + b.r; i++)\n"
	"    n += count(Math.floor(i / ROWS), i % ROWS);\n"
	"  var s = secs(cellStart(a.c, a.r)), e = secs(cellEnd(b.c, b.r));\n"
	"  sel.setAttribute('data-start', s); sel.setAttribute('data-end', e);\n"
	"  sel.setAttribute('data-samples', String(n));\n"
	"  var text = 'selected ' + s + ' - ' + e + ' s (+' + secs(cellStart(a.c, a.r) - START) +\n"
	"    ' - +' + secs(cellEnd(b.c, b.r) - START) + ' s), ' + n + ' samples';\n"
	"  if (FILE) text += ': ember heatmap ' + FILE + ' --range ' + s + ' ' + e;\n"
	"  sel.textContent = text;\n"
	"  var link = document.getElementById('fglink');\n"
	"  if (link && FGURL) {\n"
	"    var u = FGURL.split('{start}').join(s).split('{end}').join(e);\n"
	"    link.setAttribute('href', u); link.setAttributeNS('http://www.w3.org/1999/xlink', 'href', u);\n"
	"    link.setAttribute('visibility', 'visible');\n"
	"  }\n"
	"});\n";

int heatmap_render_svg(const struct heatmap *hm, const struct heatmap_svg_opts *so,
		       struct sbuf *out)
{
	const struct heatmap_opts *o = &hm->o;
	struct heatmap_svg_opts defaults;
	unsigned int cw, ch, c, r, step, left = 80, top = 74, gw, gh, width, height, legend_y;
	const char *title;

	if (!so) {
		heatmap_svg_opts_init(&defaults);
		so = &defaults;
	}
	title = so->title && *so->title ? so->title : "Flame Scope";
	cw = so->cell_w;
	if (!cw) {
		cw = 1200 / o->columns;
		cw = cw < 2 ? 2 : cw > 20 ? 20 : cw;
	}
	ch = so->cell_h ? so->cell_h : 8;
	gw = o->columns * cw;
	gh = o->rows * ch;
	width = left + gw + 40;
	if (width < 1000)
		width = 1000; /* room for the selection line and its command hint */
	legend_y = top + gh + 66;
	height = legend_y + 90;

	sbuf_adds(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n");
	sbuf_addf(out,
		  "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		  "xmlns=\"http://www.w3.org/2000/svg\" "
		  "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		  width, height, width, height);
	sbuf_adds(out, "<!-- flame scope heat map by ember: columns left to right, rows painted "
		       "bottom to top -->\n");
	sbuf_adds(out,
		  "<style type=\"text/css\">\n"
		  "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		  ".title { font-size: 17px; text-anchor: middle; }\n"
		  ".sub { fill: #555; text-anchor: middle; }\n"
		  ".ax { font-size: 10px; fill: #333; }\n"
		  ".sel { fill: rgb(40,110,230); fill-opacity: 0.35; stroke: rgb(20,60,200); "
		  "stroke-width: 1; pointer-events: none; }\n"
		  "#hcell { fill: none; stroke: #000; stroke-width: 1.5; pointer-events: none; }\n"
		  "#grid { cursor: pointer; }\n"
		  "</style>\n");
	sbuf_addf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f8\"/>\n",
		  width, height);
	sbuf_addf(out, "<text class=\"title\" x=\"%u\" y=\"22\">", width / 2);
	sbuf_add_xml(out, title, strlen(title));
	sbuf_adds(out, "</text>\n");
	sbuf_addf(out, "<text class=\"sub\" x=\"%u\" y=\"40\">", width / 2);
	if (so->subtitle && *so->subtitle) {
		sbuf_add_xml(out, so->subtitle, strlen(so->subtitle));
		sbuf_adds(out, " - ");
	}
	sbuf_adds(out, "start ");
	heatmap_add_seconds(out, o->start_ns);
	sbuf_adds(out, " s, ");
	sbuf_addu(out, o->columns);
	sbuf_adds(out, " columns of ");
	add_duration(out, o->column_ns);
	sbuf_adds(out, ", ");
	sbuf_addu(out, o->rows);
	sbuf_adds(out, " rows");
	if (o->column_ns % o->rows == 0) {
		sbuf_adds(out, " of ");
		add_duration(out, o->column_ns / o->rows);
	}
	sbuf_adds(out, ", ");
	sbuf_add_count(out, hm->total);
	sbuf_adds(out, " samples</text>\n");
	sbuf_addf(out, "<text id=\"hover\" x=\"%u\" y=\"60\"> </text>\n", left);

	/* the grid: background (event target and arrangement for the script), then the cells */
	sbuf_addf(out,
		  "<rect id=\"grid\" x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"#fff\" "
		  "stroke=\"#999\" data-start-ns=\"",
		  left, top, gw, gh);
	sbuf_addu(out, o->start_ns);
	sbuf_adds(out, "\" data-column-ns=\"");
	sbuf_addu(out, o->column_ns);
	sbuf_addf(out, "\" data-rows=\"%u\" data-columns=\"%u\" data-cell-w=\"%u\" data-cell-h=\"%u\"",
		  o->rows, o->columns, cw, ch);
	sbuf_adds(out, " data-max=\"");
	sbuf_add_count(out, hm->max);
	sbuf_adds(out, "\" data-total=\"");
	sbuf_add_count(out, hm->total);
	sbuf_adds(out, "\" data-file=\"");
	if (so->file)
		sbuf_add_xml(out, so->file, strlen(so->file));
	sbuf_adds(out, "\" data-flamegraph-url=\"");
	if (so->flamegraph_url)
		sbuf_add_xml(out, so->flamegraph_url, strlen(so->flamegraph_url));
	sbuf_adds(out, "\"/>\n<g id=\"cells\">\n");
	for (c = 0; c < o->columns; c++) {
		for (r = 0; r < o->rows; r++) {
			double v = heatmap_value(hm, c, r);

			if (v == 0)
				continue;
			sbuf_addf(out, "<rect id=\"c%u_%u\" x=\"%u\" y=\"%u\" width=\"%u\" "
				       "height=\"%u\" fill=\"",
				  c, r, left + c * cw, top + (o->rows - 1 - r) * ch, cw, ch);
			add_fill(out, v, hm->max);
			sbuf_adds(out, "\" data-n=\"");
			sbuf_add_count(out, v);
			sbuf_adds(out, "\" pointer-events=\"none\"/>\n");
		}
	}
	sbuf_adds(out, "</g>\n<g id=\"selrects\"></g>\n");
	sbuf_adds(out, "<rect id=\"hcell\" x=\"0\" y=\"0\" width=\"0\" height=\"0\" "
		       "visibility=\"hidden\"/>\n");

	/* x axis: time from the start, at column edges */
	step = label_step(cw, 60);
	sbuf_adds(out, "<g id=\"xaxis\">\n");
	for (c = 0; c <= o->columns; c += step) {
		unsigned int x = left + c * cw;

		sbuf_addf(out, "<line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" stroke=\"#666\"/>",
			  x, top + gh, x, top + gh + 4);
		sbuf_addf(out, "<text class=\"ax\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">+", x,
			  top + gh + 16);
		add_duration(out, (uint64_t)c * o->column_ns);
		sbuf_adds(out, "</text>\n");
		if (o->columns - c < step)
			break;
	}
	sbuf_addf(out, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">time from start (", left + gw / 2,
		  top + gh + 34);
	heatmap_add_seconds(out, o->start_ns);
	sbuf_adds(out, " s), one column per ");
	add_duration(out, o->column_ns);
	sbuf_adds(out, "</text>\n</g>\n");

	/* y axis: offset within a column, 0 at the bottom */
	step = label_step(ch, 20);
	sbuf_adds(out, "<g id=\"yaxis\">\n");
	for (r = 0; r <= o->rows; r += step) {
		unsigned int y = top + gh - r * ch;

		sbuf_addf(out, "<line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" stroke=\"#666\"/>",
			  left - 4, y, left, y);
		sbuf_addf(out, "<text class=\"ax\" x=\"%u\" y=\"%u\" text-anchor=\"end\">", left - 6,
			  y + 4);
		add_duration(out, heatmap_row_offset_ns(o, r));
		sbuf_adds(out, "</text>\n");
		if (o->rows - r < step)
			break;
	}
	sbuf_addf(out,
		  "<text x=\"14\" y=\"%u\" text-anchor=\"middle\" transform=\"rotate(-90 14 %u)\">"
		  "offset in column</text>\n</g>\n",
		  top + gh / 2, top + gh / 2);

	/* legend: the scale from 0 to the max */
	sbuf_adds(out, "<defs><linearGradient id=\"scale\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">"
		       "<stop offset=\"0\" stop-color=\"rgb(255,255,255)\"/>"
		       "<stop offset=\"1\" stop-color=\"rgb(120,20,0)\"/></linearGradient></defs>\n");
	sbuf_addf(out, "<g id=\"legend\"><text x=\"%u\" y=\"%u\">samples per cell</text>", left,
		  legend_y - 6);
	sbuf_addf(out,
		  "<rect x=\"%u\" y=\"%u\" width=\"200\" height=\"12\" fill=\"url(#scale)\" "
		  "stroke=\"#999\"/>",
		  left, legend_y);
	sbuf_addf(out, "<text class=\"ax\" x=\"%u\" y=\"%u\">0</text>", left, legend_y + 24);
	sbuf_addf(out, "<text class=\"ax\" x=\"%u\" y=\"%u\" text-anchor=\"middle\">", left + 100,
		  legend_y + 24);
	sbuf_add_count(out, hm->max / 2);
	sbuf_addf(out, "</text><text class=\"ax\" x=\"%u\" y=\"%u\" text-anchor=\"end\">",
		  left + 200, legend_y + 24);
	sbuf_add_count(out, hm->max);
	sbuf_adds(out, "</text></g>\n");

	/* selection report */
	sbuf_addf(out,
		  "<text id=\"selection\" x=\"10\" y=\"%u\">click two cells to select a time "
		  "range</text>\n",
		  legend_y + 50);
	if (so->flamegraph_url && *so->flamegraph_url)
		sbuf_addf(out,
			  "<a id=\"fglink\" href=\"#\" xlink:href=\"#\" visibility=\"hidden\">"
			  "<text x=\"%u\" y=\"%u\" fill=\"rgb(20,60,200)\">flame graph of the "
			  "selection</text></a>\n",
			  10, legend_y + 70);
	/* last, so that every element it looks up already exists when it runs */
	sbuf_adds(out, "<script type=\"text/ecmascript\"><![CDATA[\n");
	sbuf_adds(out, svg_script);
	sbuf_adds(out, "]]></script>\n</svg>\n");
	return sbuf_error(out);
}
