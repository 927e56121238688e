// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/render/flamegraph.h"
#include "ember/core/formats/folded.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

struct fx {
	struct strtab *st;
	struct profile *p;
	struct flamegraph_opts o;
	struct sbuf out;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->st = strtab__new();
	f->p = profile__new(f->st);
	assert_non_null(f->p);
	flamegraph_opts_init(&f->o);
	sbuf_init(&f->out);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	sbuf_fini(&f->out);
	flamegraph_opts_fini(&f->o);
	profile__free(f->p);
	strtab__free(f->st);
	free(f);
	return 0;
}

/* Adds folded lines ("stack count" or "stack c1 c2") to the fixture's profile. */
static void load(struct fx *f, const char *text)
{
	const char *line = text, *nl;

	while (*line) {
		struct folded_line fl;
		size_t len;

		nl = strchr(line, '\n');
		len = nl ? (size_t)(nl - line) : strlen(line);
		if (folded_parse_line(line, len, FOLDED_COLUMNS_AUTO, &fl, NULL) == 1)
			assert_true(folded_add_stack(f->p, fl.stack, fl.stack_len, fl.count, fl.count2,
						     fl.ncounts == 2, 0) >= 0);
		if (!nl)
			break;
		line = nl + 1;
	}
}

static const struct {
	const char *key, *value;
	int ret;
} opt_cases[] = {
	{ "title", "T", 0 },
	{ "width", "800", 0 },
	{ "width", "0", -EINVAL },
	{ "width", "12x", -EINVAL },
	{ "width", "-5", -EINVAL },
	{ "height", "20", 0 },
	{ "minwidth", "0.5", 0 },
	{ "minwidth", "2%", 0 },
	{ "minwidth", "abc", -EINVAL },
	{ "minwidth", "-1", -EINVAL },
	{ "minwidth", "", -EINVAL },
	{ "fontsize", "10.5", 0 },
	{ "fontsize", "nan", -EINVAL },
	{ "fontwidth", "0.6", 0 },
	{ "colors", "java", 0 },
	{ "color", "orange", 0 },
	{ "colors", "rainbow", -EINVAL },
	{ "bgcolors", "#a0B0c0", 0 },
	{ "bgcolors", "grey", 0 },
	{ "bgcolors", "#zzzzzz", -EINVAL },
	{ "bgcolors", "\"><x", -EINVAL },
	{ "hash", NULL, 0 },
	{ "random", "yes", 0 },
	{ "reverse", "1", 0 },
	{ "inverted", "true", 0 },
	{ "flamechart", "off", 0 },
	{ "negate", "maybe", -EINVAL },
	{ "notes", "fine", 0 },
	{ "notes", "a<b", -EINVAL },
	{ "notes", "a--b", -EINVAL },
	{ "factor", "2", 0 },
	{ "factor", "0", -EINVAL },
	{ "total", "1000", 0 },
	{ "encoding", "ISO-8859-1", 0 },
	{ "encoding", "x\" y", -EINVAL },
	{ "seed", "42", 0 },
	{ "search", "^ext4_", 0 },
	{ "info", "12% elided", 0 },
	{ "nameattr", "/nonexistent/file", -ENOENT },
	{ "nosuchoption", "1", -EINVAL },
	{ "--title", "x", -EINVAL },
};

static void test_opts_set(void **state)
{
	struct flamegraph_opts o;
	size_t i;

	(void)state;
	flamegraph_opts_init(&o);
	assert_int_equal(o.width, 1200);
	assert_int_equal(o.height, 16);
	assert_true(o.minwidth == 0.1);
	for (i = 0; i < sizeof(opt_cases) / sizeof(opt_cases[0]); i++) {
		int r = flamegraph_opts_set(&o, opt_cases[i].key, opt_cases[i].value);

		if (r != opt_cases[i].ret)
			fail_msg("%s=%s: %d, expected %d", opt_cases[i].key,
				 opt_cases[i].value ? opt_cases[i].value : "(null)", r,
				 opt_cases[i].ret);
	}
	assert_int_equal(o.width, 800);
	assert_true(o.minwidth == 2 && o.minwidth_pct);
	assert_int_equal(o.colors, FG_PALETTE_ORANGE);
	assert_int_equal(o.colorby, FG_COLORBY_RANDOM);
	assert_true(o.reverse && o.inverted && !o.flamechart);
	assert_string_equal(o.info, "12% elided");
	assert_true(flamegraph_opt_is_file("cp") && flamegraph_opt_is_file("nameattr"));
	assert_false(flamegraph_opt_is_file("title"));
	flamegraph_opts_fini(&o);
	flamegraph_opts_fini(&o); /* idempotent */
}

/*
 * flamegraph.pl sorts whole lines: "foo.bar" falls between the leaf "foo 1" and "foo;baz", so
 * foo is drawn twice; "b 1x 3" (frame "b 1x") sorts before "b 5" because of the count text.
 * Expected rows are flamegraph.pl's output for this input.
 */
static void test_line_order(void **state)
{
	struct fx *f = *state;
	static const char expect[] = "37\t305.0\t73.8\t1\tbaz\n"
				     "53\t157.5\t73.7\t1\tfoo\n"
				     "53\t231.2\t73.8\t1\tfoo.bar\n"
				     "53\t305.0\t73.8\t1\tfoo\n"
				     "53\t600.0\t147.5\t2\tc\n"
				     "53\t1116.2\t73.8\t1\td\n"
				     "69\t157.5\t221.3\t3\ta\n"
				     "69\t378.8\t368.7\t5\tb 1x\n"
				     "69\t747.5\t442.5\t6\tb\n"
				     "85\t10.0\t1180.0\t16\tall\n";

	load(f, "b;d 1\na;foo 1\nb 1x;c 2\na;foo;baz 1\n 2\nb 5\na;foo.bar 1\nb 1x 3\n");
	assert_int_equal(flamegraph_frames_tsv(f->p, &f->o, &f->out), 0);
	assert_string_equal(f->out.buf, expect);
}

/* The same rows whatever the insertion order (the sort, not the input, decides). */
static void test_sort_is_order_independent(void **state)
{
	struct fx *f = *state;
	struct strtab *st2 = strtab__new();
	struct profile *p2 = profile__new(st2);
	struct sbuf b = SBUF_INIT;
	char line[64];
	int i;

	assert_non_null(p2);
	for (i = 0; i < 500; i++) {
		int k = (i * 7919) % 500;

		snprintf(line, sizeof(line), "r;f%d;g%d;h%d %d", k % 7, k % 13, k, 1 + k % 5);
		load(f, line);
		snprintf(line, sizeof(line), "r;f%d;g%d;h%d %d", i % 7, i % 13, i, 1 + i % 5);
		assert_true(folded_add_stack(p2, line, strchr(line, ' ') - line, 1 + i % 5, 0, false,
					     0) >= 0);
	}
	assert_int_equal(flamegraph_frames_tsv(f->p, &f->o, &f->out), 0);
	assert_int_equal(flamegraph_frames_tsv(p2, &f->o, &b), 0);
	assert_string_equal(f->out.buf, b.buf);
	sbuf_fini(&b);
	profile__free(p2);
	strtab__free(st2);
}

static void test_reverse_inverted(void **state)
{
	struct fx *f = *state;

	load(f, "a;b;c 2\na;b 1\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "reverse", NULL), 0);
	assert_int_equal(flamegraph_frames_tsv(f->p, &f->o, &f->out), 0);
	/* reversed: c;b;a and b;a: the root's children are b (1) and c (2) */
	assert_string_equal(f->out.buf, "37\t403.3\t786.7\t2\ta\n"
					"53\t10.0\t393.3\t1\ta\n"
					"53\t403.3\t786.7\t2\tb\n"
					"69\t10.0\t393.3\t1\tb\n"
					"69\t403.3\t786.7\t2\tc\n"
					"85\t10.0\t1180.0\t3\tall\n");
	sbuf_reset(&f->out);
	assert_int_equal(flamegraph_opts_set(&f->o, "reverse", "0"), 0);
	assert_int_equal(flamegraph_opts_set(&f->o, "inverted", NULL), 0);
	assert_int_equal(flamegraph_frames_tsv(f->p, &f->o, &f->out), 0);
	assert_string_equal(f->out.buf, "36\t10.0\t1180.0\t3\tall\n"
					"52\t10.0\t1180.0\t3\ta\n"
					"68\t10.0\t1180.0\t3\tb\n"
					"84\t403.3\t786.7\t2\tc\n");
}

static void test_minwidth_elision(void **state)
{
	struct fx *f = *state;
	struct flamegraph_stats s;

	load(f, "m;big 9990\nm;small;deeper 5\nm;tiny 5\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "minwidth", "1"), 0);
	assert_int_equal(flamegraph_render_stats(f->p, &f->o, &f->out, &s), 0);
	/* small (0.59 px), deeper and tiny are left out; 10 samples under the outermost ones */
	assert_int_equal(s.elided, 3);
	assert_true(s.elided_samples == 10);
	assert_int_equal(s.frames, 3);
	assert_non_null(strstr(f->out.buf, ">3 frames (0.10% of samples) narrower than 1 px "
					   "not shown</text>"));
	assert_null(strstr(f->out.buf, "tiny"));
	sbuf_reset(&f->out);
	assert_int_equal(flamegraph_opts_set(&f->o, "minwidth", "0"), 0);
	assert_int_equal(flamegraph_render_stats(f->p, &f->o, &f->out, &s), 0);
	assert_int_equal(s.elided, 0);
	assert_int_equal(s.frames, 6);
	assert_null(strstr(f->out.buf, "not shown"));
}

static void test_info_lines(void **state)
{
	struct fx *f = *state;

	load(f, "a;b 1\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "info", "12.5% elided\nsecond <line>"), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	assert_non_null(strstr(f->out.buf, ">12.5% elided</text>"));
	assert_non_null(strstr(f->out.buf, ">second &lt;line&gt;</text>"));
}

static void test_differential(void **state)
{
	struct fx *f = *state;
	const char *s;

	load(f, "m;up 10 30\nm;down 30 10\nm;same 5 5\n");
	assert_true(profile__has_count2(f->p));
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	s = f->out.buf;
	/* width from the second column, red for the largest growth, blue for the largest drop */
	assert_non_null(strstr(s, "<title>up (30 samples, 66.67%; before 10, self +44.44%)</title>"
				  "<rect x=\"403.3\" y=\"37\" width=\"786.7\" height=\"15.0\" "
				  "fill=\"rgb(255,0,0)\"/>"));
	assert_non_null(strstr(s, "<title>down (10 samples, 22.22%; before 30, self -44.44%)"
				  "</title><rect x=\"10.0\" y=\"37\" width=\"262.2\" height=\"15.0\" "
				  "fill=\"rgb(0,0,255)\"/>"));
	assert_non_null(strstr(s, "same (5 samples, 11.11%; before 5, self 0.00%)</title><rect "
				  "x=\"272.2\" y=\"37\" width=\"131.1\" height=\"15.0\" "
				  "fill=\"rgb(255,255,255)\"/>"));
	sbuf_reset(&f->out);
	assert_int_equal(flamegraph_opts_set(&f->o, "negate", NULL), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	assert_non_null(strstr(f->out.buf, "self -44.44%)</title><rect x=\"403.3\" y=\"37\" "
					   "width=\"786.7\" height=\"15.0\" fill=\"rgb(0,0,255)\"/>"));
}

/* flamegraph.pl's default colour is srand(sum of code points) + rand: values from perl 5.36 */
static void test_colors_as_flamegraph_pl(void **state)
{
	struct fx *f = *state;

	load(f, "main 1\n");
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	/* perl flamegraph.pl's fills for these names (it seeds rand with the code point sum) */
	assert_non_null(strstr(f->out.buf, "<title>main (1 samples, 100.00%)</title><rect x=\"10.0\" "
					   "y=\"37\" width=\"1180.0\" height=\"15.0\" "
					   "fill=\"rgb(243,179,42)\"/>"));
	sbuf_reset(&f->out);
	load(f, "-;x 1\n--;y 1\n");
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	assert_non_null(strstr(f->out.buf, "<title>- (1 samples, 33.33%)</title><rect x=\"403.3\" "
					   "y=\"53\" width=\"393.4\" height=\"15.0\" "
					   "fill=\"rgb(200,200,200)\"/>"));
	assert_non_null(strstr(f->out.buf, "fill=\"rgb(160,160,160)\""));
	assert_non_null(strstr(f->out.buf, "<title>x (1 samples, 33.33%)</title><rect x=\"403.3\" "
					   "y=\"37\" width=\"393.4\" height=\"15.0\" "
					   "fill=\"rgb(238,153,36)\"/>"));
}

static void test_hostile_names(void **state)
{
	struct fx *f = *state;
	const char *s, *p;

	load(f, "a<b>&c\";\x01\x1b[0m;\xff\xfe;\xed\xa0\x80;]]>;ok\xc3\xa9 7\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "nametype", "x\"</script>]]>"), 0);
	assert_int_equal(flamegraph_opts_set(&f->o, "search", "]]>\\\"'"), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	s = f->out.buf;
	assert_non_null(strstr(s, "<title>a&lt;b&gt;&amp;c\" (7 samples, 100.00%)</title>"));
	assert_non_null(strstr(s, "<title>??[0m (7 samples"));
	/* bytes outside UTF-8: the one rule of every output (utf8.h) */
	assert_non_null(strstr(s, "<title>\\xff\\xfe (7 samples"));
	assert_non_null(strstr(s, "<title>\\xed\\xa0\\x80 (7 samples")); /* a UTF-16 surrogate */
	assert_non_null(strstr(s, "<title>]]&gt; (7 samples"));
	assert_non_null(strstr(s, "<title>ok\xc3\xa9 (7 samples"));
	/* exactly one CDATA end: the script's own */
	p = strstr(s, "]]>");
	assert_non_null(p);
	assert_null(strstr(p + 3, "]]>"));
	assert_null(strstr(s, "</script>]"));
	for (p = s; *p; p++)
		assert_true((unsigned char)*p >= 0x20 || *p == '\n' || *p == '\t');
}

static void test_empty(void **state)
{
	struct fx *f = *state;

	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), -ENODATA);
	assert_non_null(strstr(f->out.buf, "ERROR: No valid input"));
	sbuf_reset(&f->out);
	load(f, "a;b 0\n");
	assert_int_equal(flamegraph_frames_tsv(f->p, &f->o, &f->out), -ENODATA);
}

static void test_flamechart_events(void **state)
{
	struct fx *f = *state;
	struct flamegraph_event ev[3];
	int a, b;

	load(f, "a;b 1\na;c 1\n");
	a = profile__find(f->p, (const uint32_t[]){ 0, 1 }, 2);
	b = profile__find(f->p, (const uint32_t[]){ 0, 2 }, 2);
	assert_true(a >= 0 && b >= 0);
	ev[0] = (struct flamegraph_event){ .stack = (size_t)a, .count = 1 };
	ev[1] = (struct flamegraph_event){ .stack = (size_t)b, .count = 2 };
	ev[2] = (struct flamegraph_event){ .stack = (size_t)a, .count = 1 };
	assert_int_equal(flamegraph_opts_set(&f->o, "flamechart", NULL), 0);
	assert_int_equal(flamegraph_frames_tsv_events(f->p, ev, 3, &f->o, &f->out), 0);
	assert_string_equal(f->out.buf, "37\t10.0\t295.0\t1\tb\n"
					"37\t305.0\t590.0\t2\tc\n"
					"37\t895.0\t295.0\t1\tb\n"
					"53\t10.0\t1180.0\t4\ta\n"
					"69\t10.0\t1180.0\t4\tall\n");
	sbuf_reset(&f->out);
	assert_int_equal(flamegraph_render_events(f->p, ev, 3, &f->o, &f->out, NULL), 0);
	assert_non_null(strstr(f->out.buf, ">Flame Chart</text>"));
	ev[1].stack = 99;
	assert_int_equal(flamegraph_render_events(f->p, ev, 3, &f->o, &f->out, NULL), -EINVAL);
}

static void test_cp_roundtrip(void **state)
{
	struct fx *f = *state;
	char path[] = "/tmp/ember-fg-cp-XXXXXX";
	char buf[256];
	FILE *fp;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	fp = fopen(path, "we");
	assert_non_null(fp);
	fputs("main->rgb(1,2,3)\n", fp);
	fclose(fp);
	load(f, "main;work 3\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "cp", path), 0);
	assert_int_equal(flamegraph_cp_load(&f->o), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	assert_non_null(strstr(f->out.buf, "fill=\"rgb(1,2,3)\""));
	assert_int_equal(flamegraph_cp_save(&f->o), 0);
	fp = fopen(path, "re");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_int_equal(strncmp(buf, "->rgb(", 6), 0); /* the root's empty name, as perl */
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_string_equal(buf, "main->rgb(1,2,3)\n");
	assert_non_null(fgets(buf, sizeof(buf), fp));
	assert_int_equal(strncmp(buf, "work->rgb(", 10), 0);
	fclose(fp);
	unlink(path);
}

static void test_random_seed(void **state)
{
	struct fx *f = *state;
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;

	load(f, "main;a;b 3\nmain;c 4\nmain;d;e;f 2\n");
	assert_int_equal(flamegraph_opts_set(&f->o, "random", NULL), 0);
	assert_int_equal(flamegraph_opts_set(&f->o, "seed", "42"), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &a), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &b), 0);
	assert_string_equal(a.buf, b.buf); /* the same seed repeats the colours */
	assert_int_equal(flamegraph_opts_set(&f->o, "seed", "43"), 0);
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), 0);
	assert_string_not_equal(a.buf, f->out.buf);
	sbuf_fini(&a);
	sbuf_fini(&b);
}

struct render_job {
	const struct profile *p;
	bool inverted;
	const char *want;
	int bad;
};

static void *render_many(void *arg)
{
	struct render_job *j = arg;
	struct flamegraph_opts o;
	int i;

	flamegraph_opts_init(&o);
	o.inverted = j->inverted;
	for (i = 0; i < 100; i++) {
		struct sbuf sb = SBUF_INIT;

		if (flamegraph_frames_tsv(j->p, &o, &sb) || strcmp(sb.buf, j->want))
			j->bad++;
		sbuf_fini(&sb);
	}
	flamegraph_opts_fini(&o);
	return NULL;
}

/*
 * emberd renders on several threads at once: renders share no state. Each thread has its own
 * profile and strtab (different names), so a shared sort context would mix them up.
 */
static void test_threads(void **state)
{
	struct sbuf want[4] = { SBUF_INIT, SBUF_INIT, SBUF_INIT, SBUF_INIT };
	struct strtab *st[4];
	struct profile *p[4];
	struct render_job jobs[4];
	struct flamegraph_opts o;
	pthread_t th[4];
	char line[96];
	int i, k;

	(void)state;
	flamegraph_opts_init(&o);
	for (k = 0; k < 4; k++) {
		st[k] = strtab__new();
		p[k] = profile__new(st[k]);
		assert_non_null(p[k]);
		for (i = 0; i < 1000; i++) {
			int n = snprintf(line, sizeof(line), "t%d_r;f%d_%d;g%d;h%d", k, (i * (k + 3)) % 7,
					 k, (i * 31) % 13, i);

			assert_true(folded_add_stack(p[k], line, (size_t)n, 1 + (i + k) % 5, 0, false,
						     0) >= 0);
		}
		o.inverted = k & 1;
		assert_int_equal(flamegraph_frames_tsv(p[k], &o, &want[k]), 0);
	}
	for (k = 0; k < 4; k++) {
		jobs[k] = (struct render_job){ p[k], k & 1, want[k].buf, 0 };
		assert_int_equal(pthread_create(&th[k], NULL, render_many, &jobs[k]), 0);
	}
	for (k = 0; k < 4; k++) {
		assert_int_equal(pthread_join(th[k], NULL), 0);
		assert_int_equal(jobs[k].bad, 0);
	}
	for (k = 0; k < 4; k++) {
		sbuf_fini(&want[k]);
		profile__free(p[k]);
		strtab__free(st[k]);
	}
	flamegraph_opts_fini(&o);
}

static void test_bad_opts_at_render(void **state)
{
	struct fx *f = *state;

	load(f, "a 1\n");
	f->o.width = 5;
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), -EINVAL);
	f->o.width = 1200;
	f->o.colors = (enum flamegraph_palette)99;
	assert_int_equal(flamegraph_render(f->p, &f->o, &f->out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts_set),
		cmocka_unit_test_setup_teardown(test_line_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sort_is_order_independent, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverse_inverted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_minwidth_elision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_info_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_differential, setup, teardown),
		cmocka_unit_test_setup_teardown(test_colors_as_flamegraph_pl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flamechart_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cp_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_seed, setup, teardown),
		cmocka_unit_test(test_threads),
		cmocka_unit_test_setup_teardown(test_bad_opts_at_render, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
