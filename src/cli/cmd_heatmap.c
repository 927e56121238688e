// SPDX-License-Identifier: MIT
/*
 * ember heatmap: the flame scope. Timestamped samples (ember-samples v1, or `perf script` text)
 * -> a subsecond-offset heat map (SVG or JSON), or the folded profile / flame graph of a range.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/render/heatmap.h"
#include "ember/core/render/heatmap_samples.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/parse.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/samples.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

#include "heatmap_input.h"

static void heatmap_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember heatmap [OPTIONS] [FILE]\n"
		"Draws a flame scope subsecond-offset heat map of timestamped samples: one column\n"
		"per second, 50 rows of 20 ms painted bottom to top, darker for more samples.\n"
		"FILE is ember-samples v1 text (ember collapse --timestamps) or `perf script`\n"
		"output; '-' or no FILE reads stdin; gzip input is read as is.\n\n"
		"Arrangement:\n"
		"  -r, --rows N             rows per column (default 50)\n"
		"  -c, --column-seconds S   seconds per column (default 1; e.g. 3600 with\n"
		"                           --rows 60 for one-minute rows in hour columns)\n"
		"      --start T            first column starts at T (default: the first sample's\n"
		"                           time rounded down to a column)\n"
		"      --end T              last column covers T (default: the last sample)\n"
		"Output:\n"
		"      --svg                interactive SVG (default)\n"
		"      --json               {start, column_s, rows, row_s, values[column][row], max}\n"
		"      --range START END    the folded profile of START <= time < END instead;\n"
		"                           times in seconds, or +S for S after the map's start\n"
		"      --flamegraph         with --range: a flame graph of it (SVG), drawn with\n"
		"                           the flame graph options of `ember flamegraph`:\n"
		"                           --subtitle --width --height --minwidth --fonttype\n"
		"                           --fontsize --fontwidth --countname --nametype --colors\n"
		"                           --bgcolors --hash --random --seed --reverse --inverted\n"
		"                           --negate --factor --search --notes --encoding\n"
		"      --title TEXT         title of the SVG\n"
		"      --cell-width PX      pixels per column (default: fit about 1200 px)\n"
		"      --cell-height PX     pixels per row (default 8)\n"
		"Filters (idle stacks of the swapper task are left out by default):\n"
		"      --include-idle       keep idle stacks\n"
		"      --comm NAME          only stacks whose root frame's process name is NAME\n"
		"      --pid PID            only root frames \"comm-PID\" or \"comm-PID/TID\"\n"
		"      --tid TID            only root frames \"comm-PID/TID\"\n"
		"Input:\n"
		"      --format F           auto (default), samples or perf\n"
		"      --strict             a malformed line is an error, not a counted skip\n"
		"  -h, --help               this text\n");
}

/* A time argument: seconds, or "+S" relative to the map's start. */
struct time_arg {
	bool set, relative;
	uint64_t ns;
};

static bool parse_time_arg(const char *opt, const char *s, struct time_arg *ret)
{
	bool rel = s[0] == '+';
	int r = parse_seconds_ns(s + rel, strlen(s + rel), &ret->ns);

	if (r) {
		log_error("option '%s' needs a time in seconds (or +seconds), not '%s'", opt, s);
		return false;
	}
	ret->set = true;
	ret->relative = rel;
	return true;
}

static uint64_t resolve(const struct time_arg *t, uint64_t start)
{
	if (!t->relative)
		return t->ns;
	return t->ns > UINT64_MAX - start ? UINT64_MAX : start + t->ns;
}

static bool parse_long_opt(const char *opt, const char *s, long *ret)
{
	unsigned long v;

	if (!cli_parse_ulong(opt, s, &v))
		return false;
	if (v > 0x7fffffffUL) {
		log_error("option '%s': %s is too large", opt, s);
		return false;
	}
	*ret = (long)v;
	return true;
}

/* Columns from @o->start_ns to cover @last_ns (at least one). 0 or -E2BIG. */
static int set_columns(struct heatmap_opts *o, uint64_t last_ns)
{
	uint64_t n = last_ns >= o->start_ns ? (last_ns - o->start_ns) / o->column_ns + 1 : 1;

	if (n > HEATMAP_MAX_COLUMNS)
		return -E2BIG;
	o->columns = (unsigned int)n;
	return 0;
}

/* `ember flamegraph` options (flamegraph.pl's) passed on with --flamegraph. */
static const struct {
	const char *name;
	bool arg;
} fg_keys[] = {
	{ "subtitle", true }, { "width", true }, { "height", true }, { "minwidth", true },
	{ "fonttype", true }, { "fontsize", true }, { "fontwidth", true }, { "countname", true },
	{ "nametype", true }, { "colors", true }, { "bgcolors", true }, { "hash", false },
	{ "random", false }, { "seed", true }, { "reverse", false }, { "inverted", false },
	{ "negate", false }, { "factor", true }, { "search", true }, { "notes", true },
	{ "encoding", true },
};
#define NR_FG_KEYS (sizeof(fg_keys) / sizeof(fg_keys[0]))
#define OPT_FG_BASE 512

enum {
	OPT_START = 256, OPT_END, OPT_SVG, OPT_JSON, OPT_RANGE, OPT_FLAMEGRAPH, OPT_TITLE,
	OPT_CELL_W, OPT_CELL_H, OPT_INCLUDE_IDLE, OPT_COMM, OPT_PID, OPT_TID, OPT_FORMAT,
	OPT_STRICT,
};

/* The command line, parsed. */
struct heatmap_args {
	struct heatmap_input_opts in_opts;
	struct samples_filter filter;
	struct heatmap_opts ho;		/* rows and column_ns; the span comes from the input */
	struct time_arg t_start, t_end; /* --start, --end */
	struct time_arg r_start, r_end; /* --range */
	struct heatmap_fg_opt fg[64];	/* with --flamegraph; room for --title in front */
	size_t nfg;
	unsigned long rows, cell_w, cell_h;
	uint64_t column_ns;
	bool json, svg, range, flamegraph;
	const char *title, *path; /* borrowed from argv */
};

/* Applies option @c (getopt_long's, argument in optarg). 0 or -EINVAL (logged, or the usage
 * shown for an unknown option). */
static int parse_option(struct heatmap_args *a, int c, int argc, char **argv)
{
	switch (c) {
	case 'r':
		if (!cli_parse_ulong("--rows", optarg, &a->rows))
			return -EINVAL;
		break;
	case 'c':
		if (parse_seconds_ns(optarg, strlen(optarg), &a->column_ns) || !a->column_ns) {
			log_error("option '--column-seconds' needs a positive number of "
				  "seconds, not '%s'", optarg);
			return -EINVAL;
		}
		break;
	case OPT_START:
		if (!parse_time_arg("--start", optarg, &a->t_start))
			return -EINVAL;
		break;
	case OPT_END:
		if (!parse_time_arg("--end", optarg, &a->t_end))
			return -EINVAL;
		break;
	case OPT_SVG:
		a->svg = true;
		break;
	case OPT_JSON:
		a->json = true;
		break;
	case OPT_RANGE:
		a->range = true;
		if (optind >= argc || !parse_time_arg("--range", optarg, &a->r_start) ||
		    !parse_time_arg("--range", argv[optind], &a->r_end)) {
			if (optind >= argc)
				log_error("option '--range' needs START and END");
			return -EINVAL;
		}
		optind++;
		break;
	case OPT_FLAMEGRAPH:
		a->flamegraph = true;
		break;
	case OPT_TITLE:
		a->title = optarg;
		break;
	case OPT_CELL_W:
		if (!cli_parse_ulong("--cell-width", optarg, &a->cell_w) || !a->cell_w ||
		    a->cell_w > 1000) {
			log_error("--cell-width must be 1 to 1000 pixels");
			return -EINVAL;
		}
		break;
	case OPT_CELL_H:
		if (!cli_parse_ulong("--cell-height", optarg, &a->cell_h) || !a->cell_h ||
		    a->cell_h > 1000) {
			log_error("--cell-height must be 1 to 1000 pixels");
			return -EINVAL;
		}
		break;
	case OPT_INCLUDE_IDLE:
		a->filter.include_idle = true;
		break;
	case OPT_COMM:
		a->filter.comm = optarg;
		break;
	case OPT_PID:
		if (!parse_long_opt("--pid", optarg, &a->filter.pid))
			return -EINVAL;
		break;
	case OPT_TID:
		if (!parse_long_opt("--tid", optarg, &a->filter.tid))
			return -EINVAL;
		break;
	case OPT_FORMAT:
		if (heatmap_input_format_parse(optarg, &a->in_opts.format)) {
			log_error("unknown --format '%s' (auto, samples, perf)", optarg);
			return -EINVAL;
		}
		break;
	case OPT_STRICT:
		a->in_opts.strict = true;
		break;
	case OPT_FG_BASE ... OPT_FG_BASE + (int)NR_FG_KEYS - 1:
		if (a->nfg == sizeof(a->fg) / sizeof(a->fg[0]) - 1) {
			log_error("too many flame graph options");
			return -EINVAL;
		}
		a->fg[a->nfg++] = (struct heatmap_fg_opt){ .key = fg_keys[c - OPT_FG_BASE].name,
							   .value = optarg };
		break;
	default:
		heatmap_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* The options that only make sense together, and the arrangement. 0 or -EINVAL (logged). */
static int check_args(struct heatmap_args *a, int nargs)
{
	const char *why;

	if (nargs > 1) {
		log_error("one input file at most (got %d)", nargs);
		return -EINVAL;
	}
	if (a->json && a->svg) {
		log_error("--svg and --json are exclusive");
		return -EINVAL;
	}
	if (a->flamegraph && !a->range) {
		log_error("--flamegraph needs --range START END");
		return -EINVAL;
	}
	if (a->nfg && !a->flamegraph) {
		log_error("--%s is a flame graph option: it needs --range and --flamegraph",
			  a->fg[0].key);
		return -EINVAL;
	}
	if (a->range && (a->json || a->svg)) {
		log_error("--range prints a folded profile (or --flamegraph): no --svg or --json");
		return -EINVAL;
	}
	if (!a->rows || a->rows > HEATMAP_MAX_ROWS) {
		log_error("--rows must be 1 to %u", HEATMAP_MAX_ROWS);
		return -EINVAL;
	}
	a->ho.rows = (unsigned int)a->rows;
	a->ho.column_ns = a->column_ns;
	if (heatmap_opts_check(&a->ho, &why)) {
		log_error("bad arrangement: %s", why);
		return -EINVAL;
	}
	a->in_opts.pid = a->filter.pid >= 0 || a->filter.tid >= 0;
	a->in_opts.tid = a->filter.tid >= 0;
	return 0;
}

/* Parses and checks the command line into @a: 0 to go on, 1 when --help was printed, -EINVAL on
 * bad usage (logged). */
static int parse_args(int argc, char **argv, struct heatmap_args *a)
{
	static const struct option base_opts[] = {
		{ "rows", required_argument, NULL, 'r' },
		{ "column-seconds", required_argument, NULL, 'c' },
		{ "start", required_argument, NULL, OPT_START },
		{ "end", required_argument, NULL, OPT_END },
		{ "svg", no_argument, NULL, OPT_SVG },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ "flamegraph", no_argument, NULL, OPT_FLAMEGRAPH },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "cell-width", required_argument, NULL, OPT_CELL_W },
		{ "cell-height", required_argument, NULL, OPT_CELL_H },
		{ "include-idle", no_argument, NULL, OPT_INCLUDE_IDLE },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option longopts[sizeof(base_opts) / sizeof(base_opts[0]) + NR_FG_KEYS + 1];
	size_t nbase = sizeof(base_opts) / sizeof(base_opts[0]), k;
	int c;

	*a = (struct heatmap_args){ .in_opts = { .format = HEATMAP_INPUT_AUTO },
				    .rows = HEATMAP_DEFAULT_ROWS,
				    .column_ns = HEATMAP_DEFAULT_COLUMN_NS };
	samples_filter_init(&a->filter);
	heatmap_opts_init(&a->ho);
	memcpy(longopts, base_opts, sizeof(base_opts));
	for (k = 0; k < NR_FG_KEYS; k++)
		longopts[nbase + k] = (struct option){ fg_keys[k].name,
						       fg_keys[k].arg ? required_argument : no_argument,
						       NULL, OPT_FG_BASE + (int)k };
	longopts[nbase + NR_FG_KEYS] = (struct option){ 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:c:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			heatmap_usage(stdout);
			return 1;
		}
		if (parse_option(a, c, argc, argv))
			return -EINVAL;
	}
	a->path = optind < argc ? argv[optind] : NULL;
	return check_args(a, argc - optind);
}

/* The map's span: by option, or fitted to the samples. 0 or -errno (logged). */
static int fit_span(struct heatmap_args *a, const struct samples *s)
{
	struct heatmap_opts *ho = &a->ho;
	const char *why;
	int err = 0;

	if (a->t_start.set && a->t_start.relative) {
		log_error("--start must be an absolute time");
		return -EINVAL;
	}
	if (samples__nr(s)) {
		err = heatmap_opts_fit(ho, samples__first_ns(s), samples__last_ns(s));
	} else {
		ho->start_ns = 0;
		ho->columns = 1;
	}
	if (!err && a->t_start.set) {
		uint64_t last = samples__nr(s) ? samples__last_ns(s) : a->t_start.ns;

		ho->start_ns = a->t_start.ns;
		err = set_columns(ho, last);
	}
	if (!err && a->t_end.set) {
		uint64_t end = resolve(&a->t_end, ho->start_ns);

		if (end < ho->start_ns) {
			log_error("--end is before the start of the map");
			return -EINVAL;
		}
		err = set_columns(ho, end);
	}
	if (err == -E2BIG) {
		log_error("the samples span more than %u columns: use a longer --column-seconds "
			  "or --start/--end", HEATMAP_MAX_COLUMNS);
		return err;
	}
	if (err)
		return err;
	if (heatmap_opts_check(ho, &why)) {
		log_error("bad arrangement: %s", why);
		return -EINVAL;
	}
	return 0;
}

/* --range: the folded profile of the range, or its flame graph, to stdout. 0 or -errno (logged). */
static int render_range(struct heatmap_args *a, const struct samples *s, struct strtab *st)
{
	uint64_t start = resolve(&a->r_start, a->ho.start_ns);
	uint64_t end = resolve(&a->r_end, a->ho.start_ns);
	struct sbuf out = SBUF_INIT;
	struct profile *p;
	int n, err;

	if (end <= start) {
		log_error("--range END must be after START");
		return -EINVAL;
	}
	p = profile__new(st);
	if (!p)
		return log_errno(-ENOMEM, "cannot allocate the profile");
	n = samples__range_profile(s, start, end, &a->filter, p);
	if (n < 0) {
		err = log_errno(n, "range query failed");
		goto out;
	}
	if (!n)
		log_warn("no samples in the range");
	if (!a->flamegraph) {
		err = cli_write_folded(p);
		goto out;
	}
	if (a->title) {
		/* the first option, so that a later one cannot be overridden by it */
		memmove(a->fg + 1, a->fg, a->nfg * sizeof(a->fg[0]));
		a->fg[0] = (struct heatmap_fg_opt){ .key = "title", .value = a->title };
		a->nfg++;
	}
	err = heatmap_render_flamegraph(p, a->fg, a->nfg, &out);
	if (err)
		goto out;
	err = sbuf_write_fd(&out, STDOUT_FILENO);
	if (err)
		log_errno(err, "writing the output failed");
out:
	sbuf_fini(&out);
	profile__free(p);
	return err;
}

/* The SVG's subtitle: the input and the filters. */
static void map_subtitle(const struct heatmap_args *a, char *buf, size_t size)
{
	const struct samples_filter *f = &a->filter;
	size_t len = 0;

	buf[0] = '\0';
	len += (size_t)snprintf(buf, size, "%s%s",
				a->path && strcmp(a->path, "-") ? a->path : "<stdin>",
				f->include_idle ? "" : ", idle excluded");
	if (f->comm && len < size)
		len += (size_t)snprintf(buf + len, size - len, ", comm %s", f->comm);
	if (f->pid >= 0 && len < size)
		len += (size_t)snprintf(buf + len, size - len, ", pid %ld", f->pid);
	if (f->tid >= 0 && len < size)
		(void)snprintf(buf + len, size - len, ", tid %ld", f->tid);
}

/* The heat map, as SVG or JSON, to stdout. 0 or -errno (logged). */
static int render_map(const struct heatmap_args *a, const struct samples *s)
{
	struct heatmap hm = { 0 };
	struct sbuf out = SBUF_INIT;
	char subtitle[256];
	int err;

	err = heatmap_init(&hm, &a->ho);
	if (err) {
		log_errno(err, "cannot allocate the heat map");
		goto out;
	}
	err = heatmap_add_samples(&hm, s, &a->filter);
	if (err) {
		log_errno(err, "heat map failed");
		goto out;
	}
	if (a->json) {
		err = heatmap_render_json(&hm, &out);
	} else {
		struct heatmap_svg_opts so;

		heatmap_svg_opts_init(&so);
		map_subtitle(a, subtitle, sizeof(subtitle));
		so.title = a->title;
		so.subtitle = subtitle;
		so.cell_w = (unsigned int)a->cell_w;
		so.cell_h = (unsigned int)a->cell_h;
		so.file = a->path && strcmp(a->path, "-") ? a->path : NULL;
		err = heatmap_render_svg(&hm, &so, &out);
	}
	if (err) {
		log_errno(err, "rendering failed");
		goto out;
	}
	err = sbuf_write_fd(&out, STDOUT_FILENO);
	if (err)
		log_errno(err, "writing the output failed");
out:
	heatmap_fini(&hm);
	sbuf_fini(&out);
	return err;
}

int cmd_heatmap(int argc, char **argv)
{
	struct heatmap_args a;
	struct strtab *st;
	struct samples *s = NULL;
	int err;

	err = parse_args(argc, argv, &a);
	if (err)
		return err > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	st = strtab__new();
	s = st ? samples__new(st) : NULL;
	if (!s) {
		err = log_errno(-ENOMEM, "cannot allocate the sample set");
		goto out;
	}
	err = heatmap_input_read(a.path, s, &a.in_opts);
	if (!err)
		err = fit_span(&a, s);
	if (!err)
		err = a.range ? render_range(&a, s, st) : render_map(&a, s);
out:
	samples__free(s);
	strtab__free(st);
	return err ? cli_exit_code(err) : CLI_EXIT_OK;
}
