// SPDX-License-Identifier: MIT
/*
 * ember collapse: perf script / DTrace / bpftrace text -> folded stacks (as FlameGraph's
 * stackcollapse scripts print them), or timestamped samples (ember-samples v1). The parsing of
 * the inputs, on one thread or a pool, is collapse_run.c's.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ember/core/formats/collapse.h"
#include "ember/core/base/log.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/formats/samples_text.h"
#include "ember/core/model/frame.h"
#include "collapse_run.h"

static void collapse_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember collapse [perf|dtrace|bpftrace] [OPTIONS] [FILE...]\n"
		"Turns profiler text output into folded stacks, byte for byte as FlameGraph's\n"
		"stackcollapse-perf.pl, stackcollapse.pl and stackcollapse-bpftrace.pl print them.\n"
		"Without a format the input's first lines decide. FILE '-' or no FILE reads stdin;\n"
		"gzip input is read as is; several FILEs are one stream, as the scripts read them.\n\n"
		"perf options (stackcollapse-perf.pl's):\n"
		"      --pid          root frame 'comm-PID'\n"
		"      --tid          root frame 'comm-PID/TID'\n"
		"      --kernel       annotate kernel frames with _[k]\n"
		"      --jit          annotate JIT frames (/tmp/perf-PID.map) with _[j]\n"
		"      --all          --kernel and --jit\n"
		"      --addrs        keep raw addresses of unresolved frames: [module <addr>]\n"
		"      --event-filter EV  keep only samples of event EV (default: the first seen)\n"
		"other options:\n"
		"      --counts samples|period  what a perf record counts: its period, summed as\n"
		"                     the script does (default: ns for cpu-clock/task-clock,\n"
		"                     events for cycles...), or 1 sample (the unit is said on stderr)\n"
		"      --timestamps   one line per sample, 'TIME STACK 1' (ember-samples v1,\n"
		"                     docs/formats.md) instead of summed stacks (perf only)\n"
		"  -j, --jobs N       parse perf input on N threads (default 1)\n"
		"      --chunk-bytes N  bytes per chunk with --jobs (default 1 MiB or more;\n"
		"                     small values are for testing the splitting)\n"
		"  -h, --help         this text\n"
		"Not supported: --inline, --context, --srcline (they need addr2line).\n");
}

/*
 * Frames perf left unresolved ("[libfoo.so]": its "[unknown] (/path/libfoo.so)"; "[unknown]"),
 * summed per name over the stacks that hold them (once per stack), the largest few said with
 * their share and what would name them ("47 % unresolved" said no more).
 */
#define UNRES_NAMES 64

struct unres_ent {
	char name[96];
	double count;
};

struct unres_sum {
	struct unres_ent e[UNRES_NAMES];
	size_t n;
	double total, any;	/* all counts; those of stacks with an unresolved frame */
	unsigned long long dropped; /* names past UNRES_NAMES */
};

/* "[file]", "[module]_[k]", "[unknown]" (frame.h); not ember's other markers */
static bool unresolved_frame(const char *f, size_t n)
{
	struct frame fr;

	frame_parse(f, n, &fr);
	if (fr.form == FRAME_MARKER)
		return fr.name_len == 9 && !memcmp(fr.name, "[unknown]", 9);
	return fr.form == FRAME_FILE && (fr.kind == FRAME_NATIVE || fr.kind == FRAME_KERNEL) &&
	       !fr.waker;
}

static int unres_add(const char *stack, size_t len, double count, void *ctx)
{
	struct unres_sum *u = ctx;
	bool seen[UNRES_NAMES] = { false }, any = false;
	size_t start = 0, i, k;

	u->total += count;
	for (i = 0; i <= len; i++) {
		const char *f = stack + start;
		size_t n = i - start;

		if (i < len && stack[i] != ';')
			continue;
		start = i + 1;
		if (!unresolved_frame(f, n) || n >= sizeof(u->e[0].name))
			continue;
		any = true;
		for (k = 0; k < u->n; k++)
			if (!strncmp(u->e[k].name, f, n) && !u->e[k].name[n])
				break;
		if (k == u->n) {
			if (u->n == UNRES_NAMES) {
				u->dropped++;
				continue;
			}
			memcpy(u->e[k].name, f, n);
			u->e[k].name[n] = '\0';
			u->e[k].count = 0;
			u->n++;
		}
		if (!seen[k]) { /* once per stack: a share of the samples */
			seen[k] = true;
			u->e[k].count += count;
		}
	}
	if (any)
		u->any += count;
	return 0;
}

static int cmp_unres(const void *a, const void *b)
{
	double x = ((const struct unres_ent *)a)->count, y = ((const struct unres_ent *)b)->count;

	return (y > x) - (y < x); /* largest first */
}

static void report_unresolved(const struct collapse_agg *agg)
{
	struct unres_sum *u = calloc(1, sizeof(*u));
	struct sbuf sb = SBUF_INIT;
	bool unknown = false, file = false, kernel = false;
	size_t i;

	if (!u)
		return;
	(void)collapse_agg__foreach(agg, unres_add, u);
	if (!u->n || u->total <= 0)
		goto out;
	qsort(u->e, u->n, sizeof(u->e[0]), cmp_unres);
	sbuf_addf(&sb, "%.1f%% of the samples have frames perf left unresolved:", 100 * u->any / u->total);
	for (i = 0; i < u->n; i++) {
		const char *nm = u->e[i].name;
		size_t n = strlen(nm);

		if (i < 5)
			sbuf_addf(&sb, "%s %s %.1f%%", i ? "," : "", nm, 100 * u->e[i].count / u->total);
		kernel |= frame_is_kernel(nm, n);
		unknown |= !strcmp(nm, "[unknown]");
		file |= !frame_is_kernel(nm, n) && strcmp(nm, "[unknown]");
	}
	if (u->n > 5)
		sbuf_addf(&sb, " and %zu more%s", u->n - 5, u->dropped ? " (some not counted)" : "");
	if (file)
		sbuf_adds(&sb, ". [file]: perf found no symbol in that file (stripped): install its debug "
			       "symbols (Debian: its -dbgsym package) where perf script runs, and run "
			       "perf script again");
	if (unknown)
		sbuf_adds(&sb, ". [unknown]: an address in no mapping (JIT code without a "
			       "/tmp/perf-PID.map, or a broken unwind: build with frame pointers or "
			       "record with --call-graph dwarf)");
	if (kernel)
		sbuf_adds(&sb, ". _[k]: kernel addresses perf could not name (record as root, or "
			       "with kernel.kptr_restrict=0)");
	if (!sbuf_error(&sb))
		log_info("%s", sb.buf);
out:
	sbuf_fini(&sb);
	free(u);
}

static void report(struct collapse_run *r, const char *name, bool timestamps)
{
	const struct collapse_stats *s = &r->stats;

	cli_report_skip_total(name, &r->sk);
	if (s->filtered && r->event_defaulted)
		log_warn("kept only '%s' samples (the first event seen); %llu sample%s of other "
			 "events (such as '%s') skipped; choose one with --event-filter",
			 r->event, s->filtered, s->filtered == 1 ? "" : "s", r->other_event);
	if (s->incomplete)
		log_warn("the input ends inside a record (no blank line or count after it): "
			 "dropped, as the stackcollapse scripts drop it");
	if (r->fmt == COLLAPSE_FORMAT_PERF && s->samples && !timestamps) {
		const char *unit = collapse_count_unit(r->event, s->weighted);

		if (s->weighted)
			log_info("counts are '%s' periods summed (unit: %s) over %llu samples, as "
				 "stackcollapse-perf.pl prints them; --counts samples counts samples",
				 r->event && *r->event ? r->event : "perf", unit, s->samples);
		else
			log_info("counts are samples (%llu)", s->samples);
	}
	if (r->no_time)
		log_warn("%llu sample%s without a time skipped (--timestamps needs perf script's "
			 "time field)", r->no_time, r->no_time == 1 ? "" : "s");
	if (r->fmt == COLLAPSE_FORMAT_PERF && r->agg && !timestamps)
		report_unresolved(r->agg);
}

int cmd_collapse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", no_argument, NULL, 'p' },
		{ "tid", no_argument, NULL, 't' },
		{ "kernel", no_argument, NULL, 'k' },
		{ "jit", no_argument, NULL, 'J' },
		{ "all", no_argument, NULL, 'a' },
		{ "addrs", no_argument, NULL, 'A' },
		{ "event-filter", required_argument, NULL, 'e' },
		{ "timestamps", no_argument, NULL, 'T' },
		{ "counts", required_argument, NULL, 'c' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "chunk-bytes", required_argument, NULL, 'C' },
		{ "inline", no_argument, NULL, 'I' },
		{ "context", no_argument, NULL, 'I' },
		{ "srcline", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct collapse_args args = { .jobs = 1 };
	struct collapse_run r = { 0 };
	char **files;
	int ch, nfiles, err = 0;
	const char *lastname;

	/* an optional format word first */
	if (argc > 1 && !collapse_format_parse(argv[1], &args.opts.format) &&
	    args.opts.format != COLLAPSE_FORMAT_AUTO) {
		argv++;
		argc--;
	} else {
		args.opts.format = COLLAPSE_FORMAT_AUTO;
	}
	while ((ch = getopt_long(argc, argv, "j:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			args.opts.pid = true;
			break;
		case 't':
			args.opts.tid = true;
			break;
		case 'k':
			args.opts.kernel = true;
			break;
		case 'J':
			args.opts.jit = true;
			break;
		case 'a':
			args.opts.kernel = args.opts.jit = true;
			break;
		case 'A':
			args.opts.addrs = true;
			break;
		case 'e':
			args.opts.event_filter = optarg;
			break;
		case 'c':
			if (!strcmp(optarg, "samples")) {
				args.opts.count_samples = true;
			} else if (strcmp(optarg, "period")) {
				log_error("--counts takes 'samples' or 'period', not '%s'", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'T':
			args.timestamps = true;
			break;
		case 'j':
			if (!cli_parse_ulong("--jobs", optarg, &args.jobs))
				return CLI_EXIT_USAGE;
			if (args.jobs < 1 || args.jobs > COLLAPSE_MAX_JOBS) {
				log_error("--jobs must be between 1 and %d", COLLAPSE_MAX_JOBS);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'C':
			if (!cli_parse_ulong("--chunk-bytes", optarg, &args.chunk_bytes))
				return CLI_EXIT_USAGE;
			if (args.chunk_bytes < 1 || args.chunk_bytes > (1ul << 30)) {
				log_error("--chunk-bytes must be between 1 and 2^30");
				return CLI_EXIT_USAGE;
			}
			break;
		case 'I':
			log_error("--inline, --context and --srcline are not supported (they need "
				  "addr2line on the profiled binaries)");
			return CLI_EXIT_USAGE;
		case 'h':
			collapse_usage(stdout);
			return CLI_EXIT_OK;
		default:
			collapse_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	files = argv + optind;
	nfiles = argc - optind;
	lastname = nfiles ? files[nfiles - 1] : "<stdin>";
	if (args.timestamps && (args.opts.format == COLLAPSE_FORMAT_DTRACE ||
				args.opts.format == COLLAPSE_FORMAT_BPFTRACE)) {
		log_error("--timestamps needs perf script input: %s output has no times",
			  collapse_format_name(args.opts.format));
		return CLI_EXIT_USAGE;
	}
	err = collapse_run_init(&r, &args);
	if (err)
		goto out;
	if (args.timestamps)
		err = collapse_write_out(SAMPLES_HEADER "\n", sizeof(SAMPLES_HEADER));
	if (err)
		goto out;

	/* auto-detection for --jobs: look at the start of the first input */
	if (args.jobs > 1 && args.opts.format == COLLAPSE_FORMAT_AUTO && nfiles &&
	    strcmp(files[0], "-")) {
		struct cli_input in;
		char head[64 << 10];
		int n;

		err = cli_input_open(&in, files[0]);
		if (err)
			goto out;
		n = gzread(in.gz, head, sizeof(head));
		cli_input_close(&in);
		if (n > 0)
			args.opts.format = collapse_detect(head, (size_t)n);
	}
	if (args.jobs > 1 && args.opts.format == COLLAPSE_FORMAT_PERF)
		err = collapse_run_parallel(&r, files, nfiles);
	else
		err = collapse_run_sequential(&r, files, nfiles);
	if (err)
		goto out;
	if (!args.timestamps) {
		/* bpftrace's script prints records as they come; the others print sorted sums */
		err = collapse_agg__write_file(r.agg, r.fmt != COLLAPSE_FORMAT_BPFTRACE, stdout);
		if (err)
			log_errno(err, "writing the output failed");
	}
	if (!err && fflush(stdout))
		err = log_errno(-errno, "writing the output failed");
	report(&r, lastname, args.timestamps);
out:
	collapse_run_fini(&r);
	return err ? cli_exit_code(err) : CLI_EXIT_OK;
}
