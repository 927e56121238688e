// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/render/heatmap.h"
#include "ember/core/base/parse.h"
#include "ember/core/base/sbuf.h"

#define S 1000000000ULL
#define MS 1000000ULL

static void test_defaults(void **state)
{
	struct heatmap_opts o;

	heatmap_opts_init(&o);
	assert_int_equal(o.column_ns, S);
	assert_int_equal(o.rows, 50);
	assert_int_equal(heatmap_row_offset_ns(&o, 1), 20 * MS);
	assert_int_equal(heatmap_row_offset_ns(&o, 50), S);
	assert_int_equal(heatmap_opts_check(&o, NULL), 0);
}

static void test_fit(void **state)
{
	struct heatmap_opts o;

	heatmap_opts_init(&o);
	/* start floors to the column, as FlameScope floors to the second */
	assert_int_equal(heatmap_opts_fit(&o, 100 * S + 700 * MS, 102 * S), 0);
	assert_int_equal(o.start_ns, 100 * S);
	assert_int_equal(o.columns, 3); /* 102.000 is the first instant of column 2 */
	assert_int_equal(heatmap_opts_fit(&o, 5 * S, 5 * S), 0);
	assert_int_equal(o.columns, 1);
	assert_int_equal(heatmap_opts_fit(&o, 5 * S, 4 * S), -EINVAL);
	assert_int_equal(heatmap_opts_fit(&o, 0, 100ULL * 86400 * S), -E2BIG);
	o.column_ns = 3600 * S;
	o.rows = 60;
	assert_int_equal(heatmap_opts_fit(&o, 7200 * S + 5, 7200 * S + 3599 * S), 0);
	assert_int_equal(o.start_ns, 7200 * S);
	assert_int_equal(o.columns, 1);
	assert_int_equal(heatmap_row_offset_ns(&o, 1), 60 * S);
}

static void test_check(void **state)
{
	static const struct { uint64_t col; unsigned int rows, columns; int ok; } cases[] = {
		{ S, 50, 1, 1 },
		{ S, 0, 1, 0 },
		{ S, HEATMAP_MAX_ROWS + 1, 1, 0 },
		{ 0, 50, 1, 0 },
		{ 10, 50, 1, 0 },		/* rows shorter than 1 ns */
		{ S, 50, 0, 0 },
		{ S, 50, HEATMAP_MAX_COLUMNS + 1, 0 },
		{ S, 10000, 10000, 0 },		/* too many cells */
		{ HEATMAP_MAX_COLUMN_NS + 1, 50, 1, 0 },
	};
	struct heatmap_opts o;
	const char *why;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		heatmap_opts_init(&o);
		o.column_ns = cases[i].col;
		o.rows = cases[i].rows;
		o.columns = cases[i].columns;
		why = NULL;
		if (cases[i].ok) {
			assert_int_equal(heatmap_opts_check(&o, &why), 0);
		} else {
			assert_int_equal(heatmap_opts_check(&o, &why), -EINVAL);
			assert_non_null(why);
		}
	}
	heatmap_opts_init(&o);
	o.start_ns = UINT64_MAX - S;
	o.columns = 2;
	assert_int_equal(heatmap_opts_check(&o, NULL), -EINVAL);
}

/* Boundaries: a time exactly on a row or column edge belongs to the later cell. */
static void test_cell_of_boundaries(void **state)
{
	static const struct { uint64_t t; int err; unsigned int col, row; } cases[] = {
		{ 10 * S, 0, 0, 0 },
		{ 10 * S + 20 * MS - 1, 0, 0, 0 },
		{ 10 * S + 20 * MS, 0, 0, 1 },
		{ 10 * S + 980 * MS, 0, 0, 49 },
		{ 11 * S - 1, 0, 0, 49 },
		{ 11 * S, 0, 1, 0 },
		{ 12 * S + 500 * MS, 0, 2, 25 },
		{ 13 * S - 1, 0, 2, 49 },
		{ 13 * S, -ERANGE, 0, 0 },
		{ 10 * S - 1, -ERANGE, 0, 0 },
		{ 0, -ERANGE, 0, 0 },
	};
	struct heatmap_opts o;
	unsigned int c, r;
	size_t i;

	heatmap_opts_init(&o);
	o.start_ns = 10 * S;
	o.columns = 3;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int err = heatmap_cell_of(&o, cases[i].t, &c, &r);

		assert_int_equal(err, cases[i].err);
		if (!err) {
			assert_int_equal(c, cases[i].col);
			assert_int_equal(r, cases[i].row);
		}
	}
}

/* Rows that do not divide the column: ranges must still tile it and agree with cell_of. */
static void test_uneven_rows_tile(void **state)
{
	struct heatmap_opts o = { .start_ns = 7, .column_ns = 1000, .rows = 7, .columns = 2 };
	uint64_t a, b, prev_end = 7, t;
	unsigned int c, r, cc, rr;

	for (c = 0; c < 2; c++)
		for (r = 0; r < 7; r++) {
			assert_int_equal(heatmap_cell_range(&o, c, r, &a, &b), 0);
			assert_int_equal(a, prev_end);
			assert_true(b > a);
			for (t = a; t < b; t++) {
				assert_int_equal(heatmap_cell_of(&o, t, &cc, &rr), 0);
				assert_int_equal(cc, c);
				assert_int_equal(rr, r);
			}
			prev_end = b;
		}
	assert_int_equal(prev_end, 2007);
	assert_int_equal(heatmap_cell_range(&o, 2, 0, &a, &b), -ERANGE);
	assert_int_equal(heatmap_cell_range(&o, 0, 7, &a, &b), -ERANGE);
}

static void test_selection_range(void **state)
{
	struct heatmap_opts o;
	uint64_t a, b;

	heatmap_opts_init(&o);
	o.start_ns = 100 * S;
	o.columns = 10;
	/* cell (2, 45) to cell (4, 3), clicked in either order */
	assert_int_equal(heatmap_selection_range(&o, 2, 45, 4, 3, &a, &b), 0);
	assert_int_equal(a, 102 * S + 900 * MS);
	assert_int_equal(b, 104 * S + 80 * MS);
	assert_int_equal(heatmap_selection_range(&o, 4, 3, 2, 45, &a, &b), 0);
	assert_int_equal(a, 102 * S + 900 * MS);
	assert_int_equal(b, 104 * S + 80 * MS);
	/* one cell */
	assert_int_equal(heatmap_selection_range(&o, 9, 49, 9, 49, &a, &b), 0);
	assert_int_equal(a, 109 * S + 980 * MS);
	assert_int_equal(b, 110 * S);
	assert_int_equal(heatmap_selection_range(&o, 10, 0, 0, 0, &a, &b), -ERANGE);
}

/* Known per-cell counts, with samples on second and row boundaries, via every add path. */
static const uint64_t known_t[] = {
	10 * S,			/* (0,0) */
	10 * S + 20 * MS - 1,	/* (0,0) */
	10 * S + 20 * MS,	/* (0,1) */
	11 * S - 1,		/* (0,49) */
	11 * S,			/* (1,0) */
	11 * S,			/* (1,0) */
	11 * S + 40 * MS,	/* (1,2) */
	12 * S + 999 * MS,	/* (2,49) */
	13 * S,			/* off the map */
};
static const double known_c[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

static void check_known(const struct heatmap *hm)
{
	assert_true(heatmap_value(hm, 0, 0) == 3);
	assert_true(heatmap_value(hm, 0, 1) == 3);
	assert_true(heatmap_value(hm, 0, 49) == 4);
	assert_true(heatmap_value(hm, 1, 0) == 11);
	assert_true(heatmap_value(hm, 1, 2) == 7);
	assert_true(heatmap_value(hm, 2, 49) == 8);
	assert_true(heatmap_value(hm, 1, 1) == 0);
	assert_true(hm->max == 11);
	assert_true(hm->total == 36);
	assert_true(hm->outside == 9);
}

static void known_opts(struct heatmap_opts *o)
{
	heatmap_opts_init(o);
	o->start_ns = 10 * S;
	o->columns = 3;
}

struct cb_ctx {
	size_t i;
};

static int next_known(void *ctx, uint64_t *t, double *c)
{
	struct cb_ctx *k = ctx;

	if (k->i == sizeof(known_t) / sizeof(known_t[0]))
		return 0;
	*t = known_t[k->i];
	*c = known_c[k->i];
	k->i++;
	return 1;
}

static int next_fail(void *ctx, uint64_t *t, double *c)
{
	return -EIO;
}

static void test_add_paths(void **state)
{
	size_t n = sizeof(known_t) / sizeof(known_t[0]), i;
	struct heatmap_opts o;
	struct heatmap hm;
	struct cb_ctx k = { 0 };
	double secs[16];

	known_opts(&o);
	assert_int_equal(heatmap_init(&hm, &o), 0);
	heatmap_add_ns(&hm, known_t, known_c, n);
	check_known(&hm);
	heatmap_clear(&hm);
	assert_true(hm.total == 0 && hm.max == 0 && heatmap_value(&hm, 1, 0) == 0);
	for (i = n; i-- > 0;) /* reverse order: no sorted fast path */
		heatmap_add(&hm, known_t[i], known_c[i]);
	check_known(&hm);
	heatmap_clear(&hm);
	assert_int_equal(heatmap_add_cb(&hm, next_known, &k), 0);
	check_known(&hm);
	assert_int_equal(heatmap_add_cb(&hm, next_fail, NULL), -EIO);
	heatmap_clear(&hm);
	/* seconds: exact decimal times survive the double round trip (rounded to ns) */
	secs[0] = 10.0, secs[1] = 10.019, secs[2] = 10.02, secs[3] = 10.999;
	secs[4] = 11.0, secs[5] = -1, secs[6] = 1.0 / 0.0;
	heatmap_add_s(&hm, secs, NULL, 7);
	assert_true(heatmap_value(&hm, 0, 0) == 2);
	assert_true(heatmap_value(&hm, 0, 1) == 1);
	assert_true(heatmap_value(&hm, 0, 49) == 1);
	assert_true(heatmap_value(&hm, 1, 0) == 1);
	assert_true(hm.outside == 2);
	/* update_stats after writing cells directly */
	hm.values[5] = 100;
	heatmap_update_stats(&hm);
	assert_true(hm.max == 100 && hm.total == 105);
	heatmap_fini(&hm);
	heatmap_fini(&hm); /* twice is fine */
	o.rows = 0;
	assert_int_equal(heatmap_init(&hm, &o), -EINVAL);
	heatmap_fini(&hm);
}

/* Counts of cell (c, r) as the JSON says: values[c][r]. A tiny parser for our own output. */
static double json_cell(const char *json, unsigned int c, unsigned int r)
{
	const char *p = strstr(json, "\"values\":[");
	unsigned int i;

	assert_non_null(p);
	p += strlen("\"values\":[");
	for (i = 0; i < c; i++) {
		p = strchr(p, ']');
		assert_non_null(p);
		p += 2; /* "]," */
	}
	assert_true(*p == '[');
	p++;
	for (i = 0; i < r; i++) {
		p = strchr(p, ',');
		assert_non_null(p);
		p++;
	}
	return strtod(p, NULL);
}

static void test_json(void **state)
{
	struct heatmap_opts o;
	struct heatmap hm;
	struct sbuf sb = SBUF_INIT;

	known_opts(&o);
	assert_int_equal(heatmap_init(&hm, &o), 0);
	heatmap_add_ns(&hm, known_t, known_c, sizeof(known_t) / sizeof(known_t[0]));
	assert_int_equal(heatmap_render_json(&hm, &sb), 0);
	assert_non_null(strstr(sb.buf, "{\"start\":10,\"start_ns\":\"10000000000\",\"column_s\":1,"
				       "\"rows\":50,\"row_s\":0.02,\"columns\":3,\"values\":[[3,3,0,"));
	assert_non_null(strstr(sb.buf, "],\"max\":11,\"total\":36,\"outside\":9}\n"));
	assert_true(json_cell(sb.buf, 0, 0) == 3);
	assert_true(json_cell(sb.buf, 0, 49) == 4);
	assert_true(json_cell(sb.buf, 1, 0) == 11);
	assert_true(json_cell(sb.buf, 1, 2) == 7);
	assert_true(json_cell(sb.buf, 2, 49) == 8);
	assert_true(json_cell(sb.buf, 2, 48) == 0);
	heatmap_fini(&hm);
	/* an hour column of 60 one-minute rows */
	sbuf_reset(&sb);
	heatmap_opts_init(&o);
	o.column_ns = 3600 * S;
	o.rows = 60;
	o.start_ns = 1712345678 * S + 123456789;
	assert_int_equal(heatmap_init(&hm, &o), 0);
	heatmap_add(&hm, o.start_ns + 61 * S, 2);
	assert_int_equal(heatmap_render_json(&hm, &sb), 0);
	assert_non_null(strstr(sb.buf, "\"start\":1712345678.123456789,\"start_ns\":"
				       "\"1712345678123456789\",\"column_s\":3600,\"rows\":60,"
				       "\"row_s\":60,"));
	assert_true(json_cell(sb.buf, 0, 1) == 2);
	heatmap_fini(&hm);
	sbuf_fini(&sb);
}

static double svg_cell(const char *svg, unsigned int c, unsigned int r)
{
	char id[64];
	const char *p;

	snprintf(id, sizeof(id), "<rect id=\"c%u_%u\"", c, r);
	p = strstr(svg, id);
	if (!p)
		return 0;
	p = strstr(p, "data-n=\"");
	assert_non_null(p);
	return strtod(p + 8, NULL);
}

static void test_svg(void **state)
{
	struct heatmap_opts o;
	struct heatmap_svg_opts so;
	struct heatmap hm;
	struct sbuf sb = SBUF_INIT;

	known_opts(&o);
	assert_int_equal(heatmap_init(&hm, &o), 0);
	heatmap_add_ns(&hm, known_t, known_c, sizeof(known_t) / sizeof(known_t[0]));
	heatmap_svg_opts_init(&so);
	so.title = "a <b> & c";
	so.file = "x\"y.txt";
	assert_int_equal(heatmap_render_svg(&hm, &so, &sb), 0);
	assert_true(svg_cell(sb.buf, 0, 0) == 3);
	assert_true(svg_cell(sb.buf, 0, 1) == 3);
	assert_true(svg_cell(sb.buf, 0, 49) == 4);
	assert_true(svg_cell(sb.buf, 1, 0) == 11);
	assert_true(svg_cell(sb.buf, 1, 2) == 7);
	assert_true(svg_cell(sb.buf, 2, 49) == 8);
	assert_null(strstr(sb.buf, "id=\"c1_1\""));	/* empty cells are not drawn */
	/* the darkest cell is the max, white would be 0 */
	assert_non_null(strstr(sb.buf, "<rect id=\"c1_0\" x=\"100\" y=\"466\" width=\"20\" "
				       "height=\"8\" fill=\"rgb(120,20,0)\" data-n=\"11\""));
	assert_non_null(strstr(sb.buf, "a &lt;b&gt; &amp; c"));
	assert_non_null(strstr(sb.buf, "data-file=\"x&quot;y.txt\""));
	assert_non_null(strstr(sb.buf, "data-start-ns=\"10000000000\" data-column-ns=\"1000000000\" "
				       "data-rows=\"50\" data-columns=\"3\""));
	assert_non_null(strstr(sb.buf, "id=\"selection\""));
	assert_non_null(strstr(sb.buf, "id=\"legend\""));
	assert_null(strstr(sb.buf, "id=\"fglink\""));
	assert_string_equal(sb.buf + sb.len - 7, "</svg>\n");
	sbuf_reset(&sb);
	so.flamegraph_url = "/api/v1/flamegraph.svg?from={start}&to={end}";
	assert_int_equal(heatmap_render_svg(&hm, NULL, &sb), 0);
	sbuf_reset(&sb);
	assert_int_equal(heatmap_render_svg(&hm, &so, &sb), 0);
	assert_non_null(strstr(sb.buf, "id=\"fglink\""));
	assert_non_null(strstr(sb.buf, "from={start}&amp;to={end}"));
	heatmap_fini(&hm);
	sbuf_fini(&sb);
}

static void test_seconds(void **state)
{
	static const struct { const char *s; int err; uint64_t ns; } cases[] = {
		{ "0", 0, 0 },
		{ "12", 0, 12 * S },
		{ "12.", 0, 12 * S },
		{ ".5", 0, 500 * MS },
		{ "12.020000001", 0, 12 * S + 20 * MS + 1 },
		{ "1712345678.123456789", 0, 1712345678123456789ULL },
		{ "18446744073.709551615", 0, UINT64_MAX },
		{ "18446744073.709551616", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 },
		{ "1.0000000001", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ ".", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ "1e3", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
	};
	struct sbuf sb = SBUF_INIT;
	uint64_t ns;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ns = 77;
		assert_int_equal(parse_seconds_ns(cases[i].s, strlen(cases[i].s), &ns),
				 cases[i].err);
		if (!cases[i].err) {
			assert_int_equal(ns, cases[i].ns);
			/* and back: the shortest exact decimal reads as the same value */
			sbuf_reset(&sb);
			heatmap_add_seconds(&sb, ns);
			assert_int_equal(parse_seconds_ns(sb.buf, sb.len, &ns), 0);
			assert_int_equal(ns, cases[i].ns);
		} else {
			assert_int_equal(ns, 77);
		}
	}
	sbuf_reset(&sb);
	heatmap_add_seconds(&sb, 20 * MS);
	assert_string_equal(sb.buf, "0.02");
	sbuf_fini(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_fit),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_cell_of_boundaries),
		cmocka_unit_test(test_uneven_rows_tile),
		cmocka_unit_test(test_selection_range),
		cmocka_unit_test(test_add_paths),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
