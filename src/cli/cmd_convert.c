// SPDX-License-Identifier: MIT
/*
 * ember convert: folded stacks or "ember-samples v1" timestamped samples to pprof, speedscope
 * JSON or d3-flame-graph JSON; and pprof profiles back to folded stacks (or the others).
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ember/core/formats/d3json.h"
#include "ember/core/base/lineread.h"
#include "ember/core/base/log.h"
#include "ember/core/base/readall.h"
#include "ember/core/formats/pprof.h"
#include "ember/core/model/profile.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/speedscope.h"
#include "ember/core/base/strtab.h"

enum conv_format { FMT_AUTO, FMT_FOLDED, FMT_SAMPLES, FMT_PPROF, FMT_SPEEDSCOPE, FMT_D3 };

static const struct {
	const char *name;
	enum conv_format fmt;
	bool in, out;
} formats[] = {
	{ "folded", FMT_FOLDED, true, true },
	{ "samples", FMT_SAMPLES, true, false },
	{ "pprof", FMT_PPROF, true, true },
	{ "speedscope", FMT_SPEEDSCOPE, false, true },
	{ "d3", FMT_D3, false, true },
};

/* One timestamped record of the input, in input order: time and a stack of the profile. */
struct timed {
	uint64_t t_ns;
	size_t stack;
	double count;
	size_t seq;	/* input order, for a stable sort */
};

struct conv {
	struct strtab *st;
	struct profile *p;
	struct timed *recs;
	size_t nr_recs, recs_cap;
	uint64_t freq_hz;	/* 0: not given */
	const char *name;	/* speedscope's profile name: --name or the file name */
	const char *name_opt;	/* --name as given, or NULL */
	const char *input_name;
	int sample_index;
	bool strict;
	bool samples_input;	/* ember-samples v1: counts are samples */
	bool from_pprof;
	bool unit_set;		/* --unit given */
	enum folded_unit unit;
};

static void convert_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember convert --to FORMAT [OPTIONS] [FILE]\n"
		"       ember convert --from pprof [--to FORMAT] [OPTIONS] [FILE]\n"
		"Converts a profile between ember's formats and those of other tools. FILE '-' or no\n"
		"FILE reads stdin; gzip input is read as is.\n\n"
		"  -t, --to FORMAT        pprof (gzip-compressed profile.proto, for go tool pprof,\n"
		"                         Parca, Pyroscope), speedscope (speedscope's JSON),\n"
		"                         d3 (d3-flame-graph's JSON tree) or folded\n"
		"  -f, --from FORMAT      folded or samples (\"ember-samples v1\", timestamped; found\n"
		"                         by its header when FORMAT is not given), or pprof\n"
		"  -F, --frequency HZ     sampling frequency of the input: pprof's period and CPU time\n"
		"                         (default 99), speedscope weights in nanoseconds instead of\n"
		"                         sample counts\n"
		"  -i, --sample-index N   with --from pprof: which sample value to read (default:\n"
		"                         samples/count when present, else pprof's default)\n"
		"  -u, --unit UNIT        what folded counts are: samples, or ns (perf's cpu-clock\n"
		"                         periods summed, as `ember collapse` writes them); default:\n"
		"                         ns when every count is a multiple of one clock period\n"
		"  -n, --name NAME        the profile's name in speedscope and d3 output\n"
		"  -o, --output FILE      write to FILE instead of stdout\n"
		"      --strict           a malformed line is an error, not a counted skip\n"
		"  -h, --help             this text\n");
}

static bool parse_format(const char *s, bool out, enum conv_format *ret)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, s) && (out ? formats[i].out : formats[i].in)) {
			*ret = formats[i].fmt;
			return true;
		}
	log_error("unknown %s format '%s'; see `ember convert --help`", out ? "output" : "input",
		  s);
	return false;
}

/* Reads the whole input (raw bytes, no decompression) into @sb, up to @max bytes. */
static int read_all(const char *path, size_t max, struct sbuf *sb)
{
	const char *name = (!path || !strcmp(path, "-")) ? "<stdin>" : path;
	int fd, err;

	fd = strcmp(name, "<stdin>") ? open(path, O_RDONLY | O_CLOEXEC) : dup(STDIN_FILENO);
	if (fd < 0) {
		err = -errno;
		return log_errno(err, "cannot open '%s'", name);
	}
	err = read_fd_all(fd, &sb->buf, &sb->cap, max, &sb->len);
	close(fd);
	if (err == -EFBIG) {
		log_error("'%s' is larger than %zu bytes", name, max);
		return -E2BIG;
	}
	if (err)
		return log_errno(err, "reading '%s' failed", name);
	return 0;
}

static int read_pprof(struct conv *c, const char *path)
{
	struct pprof_read_opts o = { .sample_index = c->sample_index };
	struct parse_error perr = { 0 };
	struct pprof_info info;
	struct sbuf raw = SBUF_INIT;
	int err;

	err = read_all(path, PPROF_DEFAULT_MAX_BYTES, &raw);
	if (!err) {
		err = pprof_read(raw.buf, raw.len, c->p, &o, &info, &perr);
		if (err == -EINVAL || err == -E2BIG)
			log_error("'%s': %s", c->input_name, perr.reason ? perr.reason : "bad profile");
		else if (err)
			log_errno(err, "reading '%s' failed", c->input_name);
	}
	if (!err) {
		log_debug("'%s': %lu samples of %s, %lu skipped", c->input_name, info.samples,
			  info.sample_type, info.skipped);
		if (info.skipped)
			log_warn("'%s': %lu samples with a negative value skipped", c->input_name,
				 info.skipped);
		if (!c->freq_hz && info.period > 0 && !strcmp(info.sample_type, "samples/count"))
			c->freq_hz = (uint64_t)llround(1e9 / (double)info.period);
	}
	sbuf_fini(&raw);
	return err;
}

/* "TIME STACK COUNT" (samples.h): 1 sample, 0 blank or comment, -EINVAL with @perr. */
static int parse_sample_line(const char *line, size_t len, uint64_t *ret_t_ns,
			     struct folded_line *ret, struct parse_error *perr)
{
	uint64_t count;
	int r = samples_parse_line(line, len, ret_t_ns, &ret->stack, &ret->stack_len, &count, perr);

	if (r == 1) {
		ret->count = (double)count;
		ret->ucount = count;
		ret->exact = true;
		ret->ncounts = 1;
	}
	return r;
}

static int add_record(struct conv *c, uint64_t t_ns, const struct folded_line *fl)
{
	int idx = folded_add_line(c->p, fl, 0);

	if (idx < 0)
		return idx;
	if (c->nr_recs == c->recs_cap) {
		size_t cap = c->recs_cap ? c->recs_cap * 2 : 1024;
		struct timed *n = realloc(c->recs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		c->recs = n;
		c->recs_cap = cap;
	}
	c->recs[c->nr_recs] = (struct timed){ .t_ns = t_ns, .stack = (size_t)idx,
					      .count = fl->count, .seq = c->nr_recs };
	c->nr_recs++;
	return 0;
}

/*
 * Reads folded or ember-samples text; with FMT_AUTO the first non-blank line decides
 * (samples_detect(): the "# ember-samples" header or a "TIME STACK COUNT" line).
 */
static int read_text(struct conv *c, const char *path, enum conv_format from)
{
	struct cli_skips sk = { 0 };
	struct cli_input in;
	const char *line;
	size_t len;
	unsigned long skipped;
	int r, err;
	bool decided = from != FMT_AUTO;

	err = cli_input_open(&in, path);
	if (err)
		return err;
	while ((r = lineread__next(in.lr, &line, &len)) != 0) {
		struct parse_error perr = { .line = lineread__lineno(in.lr) };
		struct folded_line fl;
		uint64_t t_ns = 0;

		if (r == -E2BIG) {
			perr.reason = "line too long";
			goto skip;
		}
		if (r < 0) {
			err = log_errno(r, "reading '%s' failed", in.name);
			break;
		}
		if (!decided) {
			size_t k = 0;

			while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
				k++;
			if (k == len)
				continue;
			from = samples_detect(line, len) ? FMT_SAMPLES : FMT_FOLDED;
			decided = true;
		}
		if (from == FMT_SAMPLES)
			r = parse_sample_line(line, len, &t_ns, &fl, &perr);
		else
			r = folded_parse_line(line, len, FOLDED_COLUMNS_ONE, &fl, &perr);
		if (r == 0)
			continue;
		if (r > 0) {
			if (from == FMT_SAMPLES)
				r = add_record(c, t_ns, &fl);
			else
				r = folded_add_line(c->p, &fl, 0); /* integer counts exactly */
			if (r >= 0)
				continue;
			if (r != -E2BIG && r != -ERANGE) {
				err = log_errno(r, "reading '%s' failed", in.name);
				break;
			}
			perr.reason = "stack too deep";
			if (r == -ERANGE)
				perr.reason = "the stack's count would pass 18446744073709551615";
		}
skip:
		if (c->strict) {
			log_error("%s:%lu:%u: %s", in.name, perr.line, perr.col, perr.reason);
			err = -EINVAL;
			break;
		}
		cli_report_skip(in.name, &perr, &sk);
	}
	skipped = sk.total;
	cli_report_skip_total(in.name, &sk);
	if (!err)
		err = cli_no_stacks(in.name, profile__nr_stacks(c->p), skipped);
	cli_input_close(&in);
	if (!err)
		c->samples_input = from == FMT_SAMPLES;
	return err;
}

static int cmp_timed(const void *a, const void *b)
{
	const struct timed *x = a, *y = b;

	if (x->t_ns != y->t_ns)
		return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * What the counts are: --unit, else samples for ember-samples and pprof input, else the
 * folded core's guess (perf's periods summed by `ember collapse` / stackcollapse-perf.pl are
 * all multiples of the clock period), said on stderr.
 */
static enum folded_unit count_unit(struct conv *c, uint64_t *ret_period_ns)
{
	enum folded_unit u;

	*ret_period_ns = 0;
	if (c->unit_set) {
		u = c->unit;
	} else if (c->samples_input || c->from_pprof) {
		return FOLDED_UNIT_SAMPLES;
	} else {
		u = folded_guess_unit(c->p, ret_period_ns);
		if (u == FOLDED_UNIT_NS)
			log_info("'%s': every count is a multiple of %" PRIu64 " ns (perf's cpu-clock "
				 "period at %.0f Hz, as `ember collapse` sums them): counts read as "
				 "nanoseconds; --unit samples if they are samples", c->input_name,
				 *ret_period_ns, 1e9 / (double)*ret_period_ns);
		return u;
	}
	if (u == FOLDED_UNIT_NS && !*ret_period_ns) {
		uint64_t g = 0;

		if (folded_guess_unit(c->p, &g) == FOLDED_UNIT_NS && !c->freq_hz)
			*ret_period_ns = g;
		else
			*ret_period_ns = (uint64_t)(1e9 / (double)(c->freq_hz ? c->freq_hz :
								   PPROF_DEFAULT_FREQ_HZ) + 0.5);
	}
	return u;
}

static int write_pprof(struct conv *c, struct sbuf *out)
{
	struct pprof_opts o = { .freq_hz = c->freq_hz };
	struct pprof_writer *w;
	int err;

	if (count_unit(c, &o.period_ns) == FOLDED_UNIT_NS)
		o.counts_ns = true;

	if (c->nr_recs) {
		uint64_t first = c->recs[0].t_ns, last = c->recs[c->nr_recs - 1].t_ns;
		uint64_t period = (uint64_t)(1e9 / (double)(c->freq_hz ? c->freq_hz :
									 PPROF_DEFAULT_FREQ_HZ));

		/* the last sample stands for one period of CPU time */
		o.time_ns = (int64_t)first;
		o.duration_ns = (int64_t)(last - first + period);
	}
	w = pprof_writer__new(&o);
	if (!w)
		return log_errno(-ENOMEM, "cannot convert");
	err = pprof_writer__add_profile(w, c->p);
	if (!err)
		err = pprof_writer__finish(w, out);
	if (!err && pprof_writer__rounded(w))
		log_warn("%lu fractional counts rounded to whole samples (pprof counts are integers)",
			 pprof_writer__rounded(w));
	pprof_writer__free(w);
	if (err)
		log_errno(err, "writing pprof failed");
	return err;
}

static int write_speedscope(struct conv *c, struct sbuf *out)
{
	struct speedscope_opts o = { .name = c->name, .freq_hz = c->freq_hz };
	struct speedscope_writer *w;
	uint64_t period;
	size_t i, n;
	int err = 0;

	o.counts_ns = count_unit(c, &period) == FOLDED_UNIT_NS;

	if (!c->nr_recs) {
		err = speedscope_write_profile(c->p, &o, out);
		goto out;
	}
	/* timestamped: samples in time order, for speedscope's time-order view */
	w = speedscope_writer__new(c->st, &o);
	if (!w) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c->nr_recs && !err; i++) {
		const uint32_t *f = profile__stack(c->p, c->recs[i].stack, &n);

		err = speedscope_writer__add(w, f, n, c->recs[i].count);
	}
	if (!err)
		err = speedscope_writer__finish(w, out);
	speedscope_writer__free(w);
out:
	if (err)
		log_errno(err, "writing speedscope JSON failed");
	return err;
}

static int write_output(const char *path, const struct sbuf *sb)
{
	int fd, err;

	if (!path || !strcmp(path, "-")) {
		err = sbuf_write_fd(sb, STDOUT_FILENO);
		return err ? log_errno(err, "writing the output failed") : 0;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		return log_errno(err, "cannot create '%s'", path);
	}
	err = sbuf_write_fd(sb, fd);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		return log_errno(err, "writing '%s' failed", path);
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "sample-index", required_argument, NULL, 'i' },
		{ "name", required_argument, NULL, 'n' },
		{ "unit", required_argument, NULL, 'u' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct conv c = { .sample_index = -1 };
	enum conv_format to = FMT_AUTO, from = FMT_AUTO;
	const char *output = NULL, *path;
	struct sbuf out = SBUF_INIT;
	unsigned long v;
	int opt, err = 0;

	while ((opt = getopt_long(argc, argv, "t:f:F:i:n:o:u:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
			if (!parse_format(optarg, true, &to))
				err = -EINVAL;
			break;
		case 'f':
			if (!parse_format(optarg, false, &from))
				err = -EINVAL;
			break;
		case 'F':
			if (!cli_parse_ulong("--frequency", optarg, &v))
				err = -EINVAL;
			else if (v < 1 || v > 1000000000) {
				log_error("--frequency must be 1..1000000000 Hz, not %lu", v);
				err = -EINVAL;
			}
			c.freq_hz = v;
			break;
		case 'i':
			if (!cli_parse_ulong("--sample-index", optarg, &v))
				err = -EINVAL;
			else if (v > 1000) {
				log_error("--sample-index %lu is out of range", v);
				err = -EINVAL;
			}
			c.sample_index = (int)v;
			break;
		case 'n':
			c.name = c.name_opt = optarg;
			break;
		case 'u':
			if (folded_unit_parse(optarg, &c.unit)) {
				log_error("--unit takes 'samples' or 'ns', not '%s'", optarg);
				err = -EINVAL;
			}
			c.unit_set = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 'S':
			c.strict = true;
			break;
		case 'h':
			convert_usage(stdout);
			return CLI_EXIT_OK;
		default:
			convert_usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (err)
			return CLI_EXIT_USAGE;
	}
	if (to == FMT_AUTO && from == FMT_PPROF)
		to = FMT_FOLDED;
	if (to == FMT_AUTO) {
		log_error("missing --to FORMAT (pprof, speedscope, d3 or folded)");
		convert_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (argc - optind > 1) {
		log_error("convert takes one input file, not %d", argc - optind);
		return CLI_EXIT_USAGE;
	}
	if (c.sample_index >= 0 && from != FMT_PPROF) {
		log_error("--sample-index needs --from pprof");
		return CLI_EXIT_USAGE;
	}
	path = optind < argc ? argv[optind] : "-";
	c.input_name = strcmp(path, "-") ? path : "<stdin>";
	if (!c.name) {
		const char *slash = strrchr(c.input_name, '/');

		c.name = slash ? slash + 1 : c.input_name;
	}
	c.st = strtab__new();
	c.p = c.st ? profile__new(c.st) : NULL;
	if (!c.p) {
		err = log_errno(-ENOMEM, "cannot allocate the profile");
		goto out;
	}
	c.from_pprof = from == FMT_PPROF;
	if (from == FMT_PPROF)
		err = read_pprof(&c, path);
	else
		err = read_text(&c, path, from);
	if (err)
		goto out;
	if (c.nr_recs)
		qsort(c.recs, c.nr_recs, sizeof(*c.recs), cmp_timed);

	switch (to) {
	case FMT_PPROF:
		err = write_pprof(&c, &out);
		break;
	case FMT_SPEEDSCOPE:
		err = write_speedscope(&c, &out);
		break;
	case FMT_D3:
		err = d3json_write_profile(c.p, c.name_opt, &out);
		if (err)
			log_errno(err, "writing d3 JSON failed");
		break;
	default:
		err = folded_write(c.p, &out);
		if (err)
			log_errno(err, "writing folded stacks failed");
		break;
	}
	if (!err)
		err = write_output(output, &out);
out:
	sbuf_fini(&out);
	free(c.recs);
	profile__free(c.p);
	strtab__free(c.st);
	return err ? cli_exit_code(err) : CLI_EXIT_OK;
}
