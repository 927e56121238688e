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
#include "ember/core/base/lineread.h"
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
	int r = heatmap_parse_seconds(s + rel, strlen(s + rel), &ret->ns);

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

int cmd_heatmap(int argc, char **argv)
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
	struct heatmap_fg_opt fg[64];
	size_t nfg = 0, nbase = sizeof(base_opts) / sizeof(base_opts[0]), k;
	struct heatmap_input_opts in_opts = { .format = HEATMAP_INPUT_AUTO };
	struct samples_filter filter;
	struct heatmap_opts ho;
	struct heatmap_svg_opts so;
	struct heatmap hm = { 0 };
	struct time_arg t_start = { 0 }, t_end = { 0 }, r_start = { 0 }, r_end = { 0 };
	struct strtab *st = NULL;
	struct samples *s = NULL;
	struct profile *p = NULL;
	struct sbuf out = SBUF_INIT;
	unsigned long rows = HEATMAP_DEFAULT_ROWS, cell_w = 0, cell_h = 0;
	uint64_t column_ns = HEATMAP_DEFAULT_COLUMN_NS;
	bool json = false, svg = false, range = false, flamegraph = false;
	const char *title = NULL, *path = NULL, *why;
	char subtitle[256];
	int c, err = 0, ret = CLI_EXIT_OK;

	samples_filter_init(&filter);
	heatmap_opts_init(&ho);
	heatmap_svg_opts_init(&so);
	memcpy(longopts, base_opts, sizeof(base_opts));
	for (k = 0; k < NR_FG_KEYS; k++)
		longopts[nbase + k] = (struct option){ fg_keys[k].name,
						       fg_keys[k].arg ? required_argument : no_argument,
						       NULL, OPT_FG_BASE + (int)k };
	longopts[nbase + NR_FG_KEYS] = (struct option){ 0 };
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!cli_parse_ulong("--rows", optarg, &rows))
				err = -EINVAL;
			break;
		case 'c':
			if (heatmap_parse_seconds(optarg, strlen(optarg), &column_ns) ||
			    !column_ns) {
				log_error("option '--column-seconds' needs a positive number of "
					  "seconds, not '%s'", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_START:
			if (!parse_time_arg("--start", optarg, &t_start))
				err = -EINVAL;
			break;
		case OPT_END:
			if (!parse_time_arg("--end", optarg, &t_end))
				err = -EINVAL;
			break;
		case OPT_SVG:
			svg = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_RANGE:
			range = true;
			if (optind >= argc || !parse_time_arg("--range", optarg, &r_start) ||
			    !parse_time_arg("--range", argv[optind], &r_end)) {
				if (optind >= argc)
					log_error("option '--range' needs START and END");
				err = -EINVAL;
				break;
			}
			optind++;
			break;
		case OPT_FLAMEGRAPH:
			flamegraph = true;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_CELL_W:
			if (!cli_parse_ulong("--cell-width", optarg, &cell_w) || !cell_w ||
			    cell_w > 1000) {
				log_error("--cell-width must be 1 to 1000 pixels");
				err = -EINVAL;
			}
			break;
		case OPT_CELL_H:
			if (!cli_parse_ulong("--cell-height", optarg, &cell_h) || !cell_h ||
			    cell_h > 1000) {
				log_error("--cell-height must be 1 to 1000 pixels");
				err = -EINVAL;
			}
			break;
		case OPT_INCLUDE_IDLE:
			filter.include_idle = true;
			break;
		case OPT_COMM:
			filter.comm = optarg;
			break;
		case OPT_PID:
			if (!parse_long_opt("--pid", optarg, &filter.pid))
				err = -EINVAL;
			break;
		case OPT_TID:
			if (!parse_long_opt("--tid", optarg, &filter.tid))
				err = -EINVAL;
			break;
		case OPT_FORMAT:
			if (heatmap_input_format_parse(optarg, &in_opts.format)) {
				log_error("unknown --format '%s' (auto, samples, perf)", optarg);
				err = -EINVAL;
			}
			break;
		case OPT_STRICT:
			in_opts.strict = true;
			break;
		case OPT_FG_BASE ... OPT_FG_BASE + (int)NR_FG_KEYS - 1:
			if (nfg == sizeof(fg) / sizeof(fg[0]) - 1) {
				log_error("too many flame graph options");
				err = -EINVAL;
				break;
			}
			fg[nfg++] = (struct heatmap_fg_opt){ .key = fg_keys[c - OPT_FG_BASE].name,
							     .value = optarg };
			break;
		case 'h':
			heatmap_usage(stdout);
			return CLI_EXIT_OK;
		default:
			heatmap_usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (err)
			return CLI_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		log_error("one input file at most (got %d)", argc - optind);
		return CLI_EXIT_USAGE;
	}
	path = optind < argc ? argv[optind] : NULL;
	if (json && svg) {
		log_error("--svg and --json are exclusive");
		return CLI_EXIT_USAGE;
	}
	if (flamegraph && !range) {
		log_error("--flamegraph needs --range START END");
		return CLI_EXIT_USAGE;
	}
	if (nfg && !flamegraph) {
		log_error("--%s is a flame graph option: it needs --range and --flamegraph",
			  fg[0].key);
		return CLI_EXIT_USAGE;
	}
	if (range && (json || svg)) {
		log_error("--range prints a folded profile (or --flamegraph): no --svg or --json");
		return CLI_EXIT_USAGE;
	}
	if (!rows || rows > HEATMAP_MAX_ROWS) {
		log_error("--rows must be 1 to %u", HEATMAP_MAX_ROWS);
		return CLI_EXIT_USAGE;
	}
	ho.rows = (unsigned int)rows;
	ho.column_ns = column_ns;
	if (heatmap_opts_check(&ho, &why)) {
		log_error("bad arrangement: %s", why);
		return CLI_EXIT_USAGE;
	}
	in_opts.pid = filter.pid >= 0 || filter.tid >= 0;
	in_opts.tid = filter.tid >= 0;

	st = strtab__new();
	s = st ? samples__new(st) : NULL;
	if (!s) {
		err = log_errno(-ENOMEM, "cannot allocate the sample set");
		goto out;
	}
	err = heatmap_input_read(path, s, &in_opts);
	if (err)
		goto out;

	/* the map's span: by option, or fitted to the samples */
	if (t_start.set && t_start.relative) {
		log_error("--start must be an absolute time");
		err = -EINVAL;
		goto out;
	}
	if (samples__nr(s)) {
		err = heatmap_opts_fit(&ho, samples__first_ns(s), samples__last_ns(s));
	} else {
		ho.start_ns = 0;
		ho.columns = 1;
	}
	if (!err && t_start.set) {
		uint64_t last = samples__nr(s) ? samples__last_ns(s) : t_start.ns;

		ho.start_ns = t_start.ns;
		err = set_columns(&ho, last);
	}
	if (!err && t_end.set) {
		uint64_t end = resolve(&t_end, ho.start_ns);

		if (end < ho.start_ns) {
			log_error("--end is before the start of the map");
			err = -EINVAL;
			goto out;
		}
		err = set_columns(&ho, end);
	}
	if (err == -E2BIG) {
		log_error("the samples span more than %u columns: use a longer --column-seconds "
			  "or --start/--end", HEATMAP_MAX_COLUMNS);
		goto out;
	}
	if (err)
		goto out;
	if (heatmap_opts_check(&ho, &why)) {
		log_error("bad arrangement: %s", why);
		err = -EINVAL;
		goto out;
	}

	if (range) {
		uint64_t a = resolve(&r_start, ho.start_ns), b = resolve(&r_end, ho.start_ns);
		int n;

		if (b <= a) {
			log_error("--range END must be after START");
			err = -EINVAL;
			goto out;
		}
		p = profile__new(st);
		if (!p) {
			err = log_errno(-ENOMEM, "cannot allocate the profile");
			goto out;
		}
		n = samples__range_profile(s, a, b, &filter, p);
		if (n < 0) {
			err = log_errno(n, "range query failed");
			goto out;
		}
		if (!n)
			log_warn("no samples in the range");
		if (flamegraph) {
			if (title) {
				/* the first option, so that a later one cannot be overridden by it */
				memmove(fg + 1, fg, nfg * sizeof(fg[0]));
				fg[0] = (struct heatmap_fg_opt){ .key = "title", .value = title };
				nfg++;
			}
			err = heatmap_render_flamegraph(p, fg, nfg, &out);
			if (err)
				goto out;
			err = sbuf_write_fd(&out, STDOUT_FILENO);
			if (err)
				log_errno(err, "writing the output failed");
			goto out;
		}
		err = cli_write_folded(p);
		goto out;
	}

	err = heatmap_init(&hm, &ho);
	if (err) {
		log_errno(err, "cannot allocate the heat map");
		goto out;
	}
	err = samples__heatmap(s, &filter, &hm);
	if (err) {
		log_errno(err, "heat map failed");
		goto out;
	}
	if (json) {
		err = heatmap_render_json(&hm, &out);
	} else {
		size_t len = 0;

		subtitle[0] = '\0';
		len += (size_t)snprintf(subtitle, sizeof(subtitle), "%s%s",
					path && strcmp(path, "-") ? path : "<stdin>",
					filter.include_idle ? "" : ", idle excluded");
		if (filter.comm && len < sizeof(subtitle))
			len += (size_t)snprintf(subtitle + len, sizeof(subtitle) - len,
						", comm %s", filter.comm);
		if (filter.pid >= 0 && len < sizeof(subtitle))
			len += (size_t)snprintf(subtitle + len, sizeof(subtitle) - len,
						", pid %ld", filter.pid);
		if (filter.tid >= 0 && len < sizeof(subtitle))
			(void)snprintf(subtitle + len, sizeof(subtitle) - len, ", tid %ld",
				       filter.tid);
		so.title = title;
		so.subtitle = subtitle;
		so.cell_w = (unsigned int)cell_w;
		so.cell_h = (unsigned int)cell_h;
		so.file = path && strcmp(path, "-") ? path : NULL;
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
	if (err)
		ret = cli_exit_code(err);
	heatmap_fini(&hm);
	sbuf_fini(&out);
	profile__free(p);
	samples__free(s);
	strtab__free(st);
	return ret;
}
