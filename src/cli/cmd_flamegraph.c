// SPDX-License-Identifier: MIT
/* ember flamegraph: folded stacks -> interactive SVG flame graph (flamegraph.pl's options). */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/render/flamegraph.h"
#include "ember/core/formats/folded.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/query.h"
#include "ember/core/analysis/views.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void flamegraph_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember flamegraph [OPTIONS] [FILE...] > graph.svg\n"
		"Draws folded stacks (FILE '-' or none: stdin; gzip is read as is) as an\n"
		"interactive SVG flame graph, laid out as FlameGraph's flamegraph.pl does.\n"
		"Input with two counts per line draws a differential flame graph.\n\n"
		"  --title TEXT       title (default \"Flame Graph\")\n"
		"  --subtitle TEXT    second title line\n"
		"  --width NUM        image width in pixels (1200)\n"
		"  --height NUM       frame height in pixels (16)\n"
		"  --minwidth NUM[%%]  omit frames narrower than NUM pixels, or NUM%% of the\n"
		"                     samples (0.1); the graph says how many were left out\n"
		"  --fonttype FONT    font (Verdana)\n"
		"  --fontsize NUM     font size (12)\n"
		"  --fontwidth NUM    average character width relative to the size (0.59)\n"
		"  --countname TEXT   count label (samples)\n"
		"  --unit samples|ns  what the counts are; by default guessed: counts that are\n"
		"                     all multiples of a clock period (perf's cpu-clock periods,\n"
		"                     as `ember collapse` sums them) are ns of CPU time, and the\n"
		"                     title, tooltips and totals show time (said on stderr)\n"
		"  --nametype TEXT    name label of the details line (Function:)\n"
		"  --colors PALETTE   hot (default), mem, io, wakeup, chain, java, js, perl,\n"
		"                     red, green, blue, aqua, yellow, purple, orange\n"
		"  --bgcolors COLOR   yellow, blue, green, grey or #rrggbb\n"
		"  --hash             colours from flamegraph.pl's name hash\n"
		"  --random           random colours (--seed N to repeat them)\n"
		"  --cp               consistent palette: read and update ./palette.map\n"
		"  --cp-file PATH     consistent palette kept in PATH\n"
		"  --reverse          reverse each stack (leaf first) before merging\n"
		"  --inverted         icicle graph (root at the top)\n"
		"  --flamechart       flame chart: input order, only adjacent stacks merge\n"
		"  --negate           swap the differential hues\n"
		"  --notes TEXT       an XML comment in the SVG\n"
		"  --factor NUM       scale the counts shown by NUM\n"
		"  --total NUM        draw against this total (if larger than the samples)\n"
		"  --nameattr FILE    per-function attributes: name TAB key=value TAB ...\n"
		"  --encoding NAME    XML encoding declaration\n"
		"  --search REGEX     highlight matches when the graph opens\n"
		"  --info TEXT        extra line(s) of text under the graph\n"
		"  --focus RE         keep only the stacks with a frame matching RE (pprof's\n"
		"                     -focus; `ember merge --grep`)\n"
		"  --ignore RE        drop the stacks with a frame matching RE (pprof's -ignore;\n"
		"                     `ember merge --exclude`)\n"
		"  --frames-tsv       print the frame table (y x width samples name) instead\n"
		"  -o, --output FILE  write to FILE instead of stdout\n"
		"  --strict           a malformed line is an error, not a counted skip\n"
		"  -h, --help         this text\n"
		"Colours are deterministic: a function gets the same colour in every graph.\n");
}

enum {
	OPT_BASE = 256,
	OPT_FRAMES_TSV = 1000,
	OPT_STRICT,
	OPT_CPFILE,
	OPT_FOCUS,
	OPT_IGNORE,
};

/* flamegraph.pl's options, mapped 1:1 onto flamegraph_opts_set() keys */
static const char *const fg_keys[] = {
	"title", "subtitle", "width", "height", "minwidth", "fonttype", "fontsize",
	"fontwidth", "countname", "nametype", "colors", "color", "bgcolors", "hash",
	"random", "cp", "reverse", "inverted", "flamechart", "negate", "notes",
	"factor", "total", "nameattr", "encoding", "search", "seed", "info", "unit",
};

static bool key_takes_arg(const char *k)
{
	static const char *const flags[] = { "hash", "random", "cp", "reverse",
					     "inverted", "flamechart", "negate" };
	size_t i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!strcmp(k, flags[i]))
			return false;
	return true;
}

/*
 * The reader of this command: folded_parse_line() for each line, then the stack is split and
 * interned reusing the frame ids of the previous line wherever the bytes agree (folded files are
 * usually sorted, so consecutive lines share long prefixes and most frames skip the hash table).
 * Semantics are folded_add_stack()'s: trailing empty frames dropped, counts summed per stack.
 */
struct fg_reader {
	unsigned long skipped;	/* malformed lines, all files */
	const char *name;	/* the first file's, for messages */
	struct profile *p;
	struct strtab *st;
	struct sbuf prev;	/* previous stack text */
	uint32_t *ids;		/* its frame ids */
	size_t *ends;		/* and the end offset of each frame */
	size_t n, cap;
	bool keep_events;
	struct flamegraph_event *ev;
	size_t nev, evcap;
};

static int reader_add(struct fg_reader *r, const char *stack, size_t len, const struct folded_line *fl)
{
	size_t common = 0, k = 0, start = 0, i, plen = r->prev.len;
	const char *prev = r->prev.buf;
	int idx;

	while (len > 0 && stack[len - 1] == ';')
		len--;
	/* the common byte prefix, a word at a time */
	while (common + 8 <= len && common + 8 <= plen) {
		uint64_t x, y;

		memcpy(&x, stack + common, 8);
		memcpy(&y, prev + common, 8);
		if (x != y)
			break;
		common += 8;
	}
	while (common < len && common < plen && stack[common] == prev[common])
		common++;
	/* reuse: frame k of the previous line ends at ends[k] <= common, and so does ours */
	while (k < r->n && r->ends[k] <= common && (r->ends[k] == len || stack[r->ends[k]] == ';'))
		k++;
	if (k)
		start = r->ends[k - 1] + 1;
	for (i = start; len && i <= len; i++) {
		int id;

		if (i < len && stack[i] != ';')
			continue;
		if (k == r->cap) {
			size_t ncap = r->cap ? r->cap * 2 : 256;
			uint32_t *ni = realloc(r->ids, ncap * sizeof(*ni));
			size_t *ne;

			if (!ni)
				return -ENOMEM;
			r->ids = ni;
			ne = realloc(r->ends, ncap * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			r->ends = ne;
			r->cap = ncap;
		}
		id = strtab__intern(r->st, stack + start, i - start);
		if (id < 0)
			return id;
		r->ids[k] = (uint32_t)id;
		r->ends[k++] = i;
		start = i + 1;
	}
	r->n = k;
	sbuf_reset(&r->prev);
	sbuf_add(&r->prev, stack, len);
	if (sbuf_error(&r->prev))
		return -ENOMEM;
	idx = folded_add_counts(r->p, r->ids, k, fl); /* integer counts exactly */
	if (idx < 0)
		return idx;
	if (!r->keep_events)
		return 0;
	if (r->nev == r->evcap) {
		size_t ncap = r->evcap ? r->evcap * 2 : 1024;
		struct flamegraph_event *ne = realloc(r->ev, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		r->ev = ne;
		r->evcap = ncap;
	}
	r->ev[r->nev++] = (struct flamegraph_event){ .stack = (size_t)idx, .count = fl->count,
						     .count2 = fl->count2 };
	return 0;
}

static int read_file(struct fg_reader *r, const char *path, bool strict)
{
	struct cli_input in;
	struct cli_skips sk = { 0 };
	const char *line;
	size_t len;
	int ret, err;

	err = cli_input_open(&in, path);
	if (err)
		return err;
	while ((ret = lineread__next(in.lr, &line, &len)) != 0) {
		struct folded_line fl;
		struct parse_error perr = { 0 };

		if (ret == -E2BIG) {
			perr.reason = "line too long";
			ret = -EINVAL;
		} else if (ret < 0) {
			err = log_errno(ret, "reading '%s' failed", in.name);
			break;
		} else {
			ret = folded_parse_line(line, len, FOLDED_COLUMNS_AUTO, &fl, &perr);
		}
		perr.line = lineread__lineno(in.lr);
		if (ret == 0)
			continue;
		if (ret < 0) {
			if (strict) {
				log_error("%s:%lu:%u: %s", in.name, perr.line, perr.col, perr.reason);
				err = -EINVAL;
				break;
			}
			cli_report_skip(in.name, &perr, &sk);
			continue;
		}
		err = reader_add(r, fl.stack, fl.stack_len, &fl);
		if (err == -ERANGE) { /* a malformed line, as folded_read() has it */
			perr.col = 1;
			perr.reason = "the stack's count would pass 18446744073709551615";
			err = 0;
			if (strict) {
				log_error("%s:%lu:%u: %s", in.name, perr.line, perr.col,
					  perr.reason);
				err = -EINVAL;
				break;
			}
			cli_report_skip(in.name, &perr, &sk);
			continue;
		}
		if (err) {
			log_errno(err, "reading '%s' failed", in.name);
			break;
		}
	}
	r->skipped += sk.total;
	if (!r->name)
		r->name = strcmp(path, "-") ? path : "<stdin>";
	cli_report_skip_total(in.name, &sk);
	cli_input_close(&in);
	return err;
}

int cmd_flamegraph(int argc, char **argv)
{
	enum { NKEYS = sizeof(fg_keys) / sizeof(fg_keys[0]) };
	struct option longopts[NKEYS + 8];
	struct query_common q;
	struct query_error qe = { 0 };
	struct flamegraph_opts o;
	struct folded_read_opts ropts = { .columns = FOLDED_COLUMNS_AUTO };
	struct flamegraph_event *ev = NULL;
	struct fg_reader r = { 0 };
	struct flamegraph_stats stats = { 0 };
	struct sbuf out = SBUF_INIT;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	const char *output = NULL;
	bool tsv = false, unit_set = false;
	size_t nev = 0, k;
	int c, idx, i, err = 0, ret = CLI_EXIT_OK, fd = STDOUT_FILENO;

	flamegraph_opts_init(&o);
	query_common_init(&q);
	for (k = 0; k < NKEYS; k++)
		longopts[k] = (struct option){ fg_keys[k],
					       key_takes_arg(fg_keys[k]) ? required_argument
									 : no_argument,
					       NULL, OPT_BASE + (int)k };
	longopts[k++] = (struct option){ "frames-tsv", no_argument, NULL, OPT_FRAMES_TSV };
	longopts[k++] = (struct option){ "strict", no_argument, NULL, OPT_STRICT };
	longopts[k++] = (struct option){ "cp-file", required_argument, NULL, OPT_CPFILE };
	longopts[k++] = (struct option){ "focus", required_argument, NULL, OPT_FOCUS };
	longopts[k++] = (struct option){ "ignore", required_argument, NULL, OPT_IGNORE };
	longopts[k++] = (struct option){ "output", required_argument, NULL, 'o' };
	longopts[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[k] = (struct option){ 0 };

	while ((c = getopt_long(argc, argv, "o:h", longopts, &idx)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'h':
			flamegraph_usage(stdout);
			flamegraph_opts_fini(&o);
			return CLI_EXIT_OK;
		case OPT_FRAMES_TSV:
			tsv = true;
			break;
		case OPT_STRICT:
			ropts.strict = true;
			break;
		case OPT_FOCUS:
		case OPT_IGNORE:
			/* the HTTP API's focus= and ignore=: one parser, one meaning */
			if (query_common_set(&q, c == OPT_FOCUS ? "focus" : "ignore", optarg, 0,
					     &qe) < 0) {
				log_error("invalid --%s '%s': %s", qe.param, optarg, qe.reason);
				err = -EINVAL;
			}
			break;
		case OPT_CPFILE:
			err = flamegraph_opts_set(&o, "cp", optarg);
			if (err)
				log_error("invalid value '%s' for --cp-file", optarg);
			break;
		default:
			if (c >= OPT_BASE && c < OPT_BASE + NKEYS) {
				const char *key = fg_keys[c - OPT_BASE];

				if (!strcmp(key, "unit"))
					unit_set = true;
				err = flamegraph_opts_set(&o, key, optarg);
				if (err == -EINVAL && optarg)
					log_error("invalid value '%s' for --%s", optarg, key);
				else if (err)
					log_errno(err, "--%s '%s' failed", key, optarg ? optarg : "");
				break;
			}
			flamegraph_usage(stderr);
			err = -EINVAL;
		}
		if (err)
			goto out;
	}
	if (o.cp) {
		err = flamegraph_cp_load(&o);
		if (err) {
			log_errno(err, "reading the palette map failed");
			goto out;
		}
	}
	st = strtab__new();
	p = st ? profile__new(st) : NULL;
	if (!p) {
		err = log_errno(-ENOMEM, "out of memory");
		goto out;
	}
	r = (struct fg_reader){ .p = p, .st = st, .keep_events = o.flamechart };
	sbuf_init(&r.prev);
	for (i = optind; i < argc || i == optind; i++) {
		err = read_file(&r, i < argc ? argv[i] : "-", ropts.strict);
		if (err)
			goto out;
	}
	ev = r.ev;
	nev = r.nev;
	r.ev = NULL;
	if (query_common_has_frames(&q)) {
		struct profile *f;

		if (o.flamechart) {
			err = -EINVAL;
			log_error("--focus and --ignore keep whole stacks of a profile: not with "
				  "--flamechart");
			goto out;
		}
		f = views_filter_frames(p, &q);
		if (!f) {
			err = log_errno(errno == QUERY_EFRAME_LIMIT ? -E2BIG : -errno,
					"--focus/--ignore failed");
			goto out;
		}
		profile__free(p);
		p = f;
	}
	if (!unit_set && !(o.countname && *o.countname) && !tsv) {
		uint64_t period_ns = 0;

		/* perf's periods summed are CPU time: labelled as samples they read 10101010x
		 * too many */
		if (folded_guess_unit(p, &period_ns) == FOLDED_UNIT_NS) {
			o.counts_ns = true;
			log_info("'%s': every count is a multiple of %" PRIu64 " ns (perf's cpu-clock "
				 "period at %.0f Hz, as `ember collapse` sums them): drawn as CPU time; "
				 "--unit samples if they are samples", r.name ? r.name : "<stdin>",
				 period_ns, 1e9 / (double)period_ns);
		}
	}
	if (tsv)
		err = o.flamechart ? flamegraph_frames_tsv_events(p, ev, nev, &o, &out)
				   : flamegraph_frames_tsv(p, &o, &out);
	else
		err = o.flamechart ? flamegraph_render_events(p, ev, nev, &o, &out, &stats)
				   : flamegraph_render_stats(p, &o, &out, &stats);
	if (err == -ENODATA) {
		if (!cli_no_stacks(r.name ? r.name : "<stdin>", 0, r.skipped))
			log_error("no stack counts found in the input");
		ret = CLI_EXIT_USAGE;
		err = 0; /* the error SVG is still written, as flamegraph.pl does */
	} else if (err) {
		log_errno(err, "rendering the flame graph failed");
		goto out;
	}
	if (output) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			err = log_errno(-errno, "cannot open '%s'", output);
			goto out;
		}
	}
	err = sbuf_write_fd(&out, fd);
	if (output && close(fd) && !err)
		err = -errno;
	if (err) {
		log_errno(err, "writing the output failed");
		goto out;
	}
	if (o.cp && !tsv) {
		err = flamegraph_cp_save(&o);
		if (err)
			log_errno(err, "writing the palette map failed");
	}
out:
	if (err)
		ret = cli_exit_code(err);
	free(ev);
	free(r.ev);
	free(r.ids);
	free(r.ends);
	sbuf_fini(&r.prev);
	sbuf_fini(&out);
	profile__free(p);
	strtab__free(st);
	flamegraph_opts_fini(&o);
	query_common_fini(&q);
	return ret;
}
