// SPDX-License-Identifier: MIT
/*
 * ember stat: flame graph algebra and statistics (Tornetta, "On the Algebraic Properties of
 * Flame Graphs"): similarity, the decomposition of a difference, and the two-sample Hotelling
 * T^2 test over two sets of profiles.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ember/core/analysis/algebra.h"
#include "ember/core/render/flamegraph.h"
#include "ember/core/analysis/hotelling.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void stat_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember stat similarity [OPTIONS] A B\n"
		"       ember stat decompose [OPTIONS] --out DIR A B\n"
		"       ember stat compare [OPTIONS] --a FILE... --b FILE...\n"
		"Flame graph algebra and statistics over folded stack files (A before, B after).\n\n"
		"similarity: 1 - || A/||A|| - B/||B|| ||_1 / 2 (1: same shape, 0: disjoint), with\n"
		"  the L1 norms and distances.\n"
		"decompose: splits B - A into appeared, disappeared, grown and shrunk (four folded\n"
		"  files and their flame graphs in DIR: NAME.folded, NAME.svg; disjoint, and\n"
		"  B - A = appeared + grown - disappeared - shrunk). By\n"
		"  default A and B are first normalized to percent of their own totals, so the\n"
		"  parts compare shapes; --raw keeps sample counts.\n"
		"compare: the two-sample Hotelling T^2 test of set B against set A (e.g. 20 runs\n"
		"  before and 20 after): T^2, F, p-value, critical value, simultaneous confidence\n"
		"  intervals per stack, and the stacks whose interval excludes 0.\n\n"
		"  -s, --strip-hex     replace hex numbers 0x1f2e with 0x... when reading\n"
		"      --strict        a malformed line is an error, not a counted skip\n"
		"      --out DIR       (decompose) where the parts go (created if missing)\n"
		"      --raw           (decompose) no normalization\n"
		"      --a FILE...     (compare) the profiles of set A (before); one per file\n"
		"      --b FILE...     (compare) the profiles of set B (after)\n"
		"      --alpha X       (compare) significance level, default %g\n"
		"      --max-stacks K  (compare) keep at most K stacks, by document frequency\n"
		"                      (default: %d, at most (n1 + n2 - 2) / 2; never more than\n"
		"                      n1 + n2 - 3)\n"
		"      --json          (compare) the result as JSON\n"
		"      --folded FILE   (compare) write the noise-reduced difference: three columns\n"
		"                      'stack meanA meanB', meanA = meanB except on significant stacks\n"
		"      --svg FILE      (compare) its differential flame graph: widths of mean B,\n"
		"                      coloured only where the change is significant\n"
		"  -h, --help          this text\n",
		HOTELLING_DEFAULT_ALPHA, HOTELLING_DEFAULT_MAX_STACKS);
}

struct stat_args {
	const char *cmd;
	bool strip_hex, strict, raw, json;
	const char *out_dir, *folded_out, *svg_out;
	double alpha;
	unsigned long max_stacks;
	const char **files_a, **files_b, **pos;
	size_t n_a, n_b, n_pos;
};

static int read_one(const struct stat_args *sa, struct strtab *st, const char *path,
		    struct profile **ret)
{
	struct folded_read_opts opts = {
		.columns = FOLDED_COLUMNS_ONE,
		.strict = sa->strict,
		.rewrite = sa->strip_hex ? folded_strip_hex : NULL,
	};
	struct profile *p = profile__new(st);
	int err;

	if (!p)
		return log_errno(-ENOMEM, "cannot allocate a profile");
	err = cli_read_folded(path, p, &opts, NULL);
	if (err) {
		profile__free(p);
		return err;
	}
	*ret = p;
	return 0;
}

/* A count without exponent notation (folded readers accept digits and a fraction only). */
static void add_plain(struct sbuf *sb, double v)
{
	char tmp[400];
	int prec;

	if (v == floor(v) && fabs(v) < 1e18) {
		sbuf_addf(sb, "%.0f", v);
		return;
	}
	for (prec = 1; prec < 340; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*f", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	sbuf_adds(sb, tmp);
}

/* Folded lines sorted by stack; two columns when @two. 0 or -ENOMEM. */
static int write_folded_plain(const struct profile *p, bool two, struct sbuf *sb)
{
	size_t *idx = profile__sorted(p), i;

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < profile__nr_stacks(p); i++) {
		profile__stack_text(p, idx[i], sb);
		sbuf_addc(sb, ' ');
		add_plain(sb, profile__count(p, idx[i]));
		if (two) {
			sbuf_addc(sb, ' ');
			add_plain(sb, profile__count2(p, idx[i]));
		}
		sbuf_addc(sb, '\n');
	}
	free(idx);
	return sbuf_error(sb);
}

static int write_file(const char *path, const struct sbuf *sb)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), err;

	if (fd < 0) {
		err = -errno;
		return log_errno(err, "cannot create '%s'", path);
	}
	err = sbuf_write_fd(sb, fd);
	if (close(fd) && !err)
		err = -errno;
	if (err)
		log_errno(err, "writing '%s' failed", path);
	return err;
}

/* Renders @p as a flame graph into @path with @title and @info. 0 or -errno (logged). */
static int write_svg(const char *path, const struct profile *p, const char *title,
		     const char *info, const char *countname)
{
	struct flamegraph_opts o;
	struct sbuf sb = SBUF_INIT;
	int err;

	flamegraph_opts_init(&o);
	err = flamegraph_opts_set(&o, "title", title);
	if (!err && info)
		err = flamegraph_opts_set(&o, "info", info);
	if (!err && countname)
		err = flamegraph_opts_set(&o, "countname", countname);
	if (!err) {
		err = flamegraph_render(p, &o, &sb);
		if (err == -ENODATA)
			err = 0; /* an empty part: the SVG says there is nothing to draw */
	}
	if (!err)
		err = write_file(path, &sb);
	else
		log_errno(err, "rendering '%s' failed", path);
	sbuf_fini(&sb);
	flamegraph_opts_fini(&o);
	return err;
}

static int stat_similarity(const struct stat_args *sa)
{
	struct strtab *st;
	struct profile *a = NULL, *b = NULL;
	double na, nb, dn;
	int err;

	if (sa->n_pos != 2) {
		log_error("stat similarity needs two files, A and B");
		return -EINVAL;
	}
	st = strtab__new();
	if (!st)
		return log_errno(-ENOMEM, "cannot allocate the string table");
	err = read_one(sa, st, sa->pos[0], &a);
	if (!err)
		err = read_one(sa, st, sa->pos[1], &b);
	if (err)
		goto out;
	na = algebra_norm1(a);
	nb = algebra_norm1(b);
	dn = na > 0 && nb > 0 ? 2 * (1 - algebra_similarity(a, b)) : NAN;
	printf("similarity %.9f\n", algebra_similarity(a, b));
	printf("norm_a %.15g\nnorm_b %.15g\n", na, nb);
	printf("distance %.15g\n", algebra_distance(a, b));
	if (isfinite(dn))
		printf("distance_normalized %.9f\n", dn);
	printf("stacks_a %zu\nstacks_b %zu\n", profile__nr_stacks(a), profile__nr_stacks(b));
	if (fflush(stdout))
		err = log_errno(-errno, "writing the output failed");
out:
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	return err;
}

static int stat_decompose(const struct stat_args *sa)
{
	static const char *const names[4] = { "appeared", "disappeared", "grown", "shrunk" };
	struct strtab *st;
	struct profile *a = NULL, *b = NULL;
	struct algebra_parts pt = { 0 };
	struct sbuf sb = SBUF_INIT, path = SBUF_INIT;
	double na, nb, ka = 1, kb = 1;
	int err, k;

	if (sa->n_pos != 2 || !sa->out_dir) {
		log_error("stat decompose needs --out DIR and two files, A and B");
		return -EINVAL;
	}
	st = strtab__new();
	if (!st)
		return log_errno(-ENOMEM, "cannot allocate the string table");
	err = read_one(sa, st, sa->pos[0], &a);
	if (!err)
		err = read_one(sa, st, sa->pos[1], &b);
	if (err)
		goto out;
	na = algebra_norm1(a);
	nb = algebra_norm1(b);
	if (!sa->raw) {
		if (na == 0 || nb == 0) {
			log_error("cannot normalize: '%s' has no samples; use --raw",
				  sa->pos[na == 0 ? 0 : 1]);
			err = -EINVAL;
			goto out;
		}
		ka = 100 / na;
		kb = 100 / nb;
	}
	err = algebra_decompose(a, ka, b, kb, &pt);
	if (err == -EDOM) {
		log_error("cannot decompose: negative counts");
		err = -EINVAL;
	}
	if (err) {
		log_errno(err, "decomposition failed");
		goto out;
	}
	if (mkdir(sa->out_dir, 0755) && errno != EEXIST) {
		err = log_errno(-errno, "cannot create '%s'", sa->out_dir);
		goto out;
	}
	if (sa->raw)
		printf("units: samples (A: %.15g, B: %.15g)\n", na, nb);
	else
		printf("units: percent of each profile's total (A: %.15g, B: %.15g samples)\n", na,
		       nb);
	for (k = 0; k < 4 && !err; k++) {
		const struct profile *p = (&pt.appeared)[k];

		sbuf_reset(&sb);
		sbuf_reset(&path);
		sbuf_addf(&path, "%s/%s.folded", sa->out_dir, names[k]);
		err = write_folded_plain(p, false, &sb);
		if (!err)
			err = sbuf_error(&path);
		if (!err)
			err = write_file(path.buf, &sb);
		if (!err) {
			static const char *const what[4] = {
				"stacks only in B", "stacks only in A",
				"common stacks that grew from A to B",
				"common stacks that shrank from A to B",
			};
			char title[96], info[160];

			snprintf(title, sizeof(title), "%c%s: %s", names[k][0] - 32, names[k] + 1,
				 what[k]);
			snprintf(info, sizeof(info), "%s part of B - A: %.6g %s", names[k],
				 algebra_norm1(p), sa->raw ? "samples" : "% of the total");
			sbuf_reset(&path);
			sbuf_addf(&path, "%s/%s.svg", sa->out_dir, names[k]);
			err = sbuf_error(&path);
			if (!err)
				err = write_svg(path.buf, p, title, info, sa->raw ? NULL : "%");
		}
		printf("%-12s %6zu stacks %14.6f\n", names[k], profile__nr_stacks(p),
		       algebra_norm1(p));
	}
	printf("similarity %.9f\n", algebra_similarity(a, b));
	if (fflush(stdout) && !err)
		err = log_errno(-errno, "writing the output failed");
out:
	sbuf_fini(&sb);
	sbuf_fini(&path);
	algebra_parts_fini(&pt);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	return err;
}

static void print_report(const struct hotelling_result *r, const struct stat_args *sa)
{
	struct sbuf txt = SBUF_INIT;
	size_t i;

	printf("profiles: A %zu, B %zu\n", r->n_a, r->n_b);
	printf("stacks: %zu distinct; kept p = %zu by document frequency (n1 + n2 - 2 = %zu > p)",
	       r->nr_stacks, r->p, r->n_a + r->n_b - 2);
	if (r->skipped_constant || r->skipped_collinear)
		printf("; passed over %zu with zero variance, %zu collinear", r->skipped_constant,
		       r->skipped_collinear);
	if (r->nr_exact)
		printf("; %zu changed exactly (the same count in every profile of each set)",
		       r->nr_exact);
	if (r->p) {
		printf("\nT2 %.6g  F(%g, %g) %.6g  p-value %.6g\n", r->t2, r->df1, r->df2, r->f,
		       r->p_value);
		printf("alpha %g  critical T2 %.6g  critical F %.6g\n", r->alpha, r->t2_crit,
		       r->f_crit);
	} else {
		printf("\nno T2: no stack varies within the sets\n");
	}
	printf("result: %s\n", hotelling_rejects(r) ? "the profiles differ (H0 rejected)"
						    : "no significant difference (H0 kept)");
	printf("significant stacks: %zu\n", r->nr_significant);
	printf("%-3s %5s %12s %12s %12s %12s %12s  %s\n", "sig", "df", "mean A", "mean B",
	       "delta", "CI low", "CI high", "stack");
	for (i = 0; i < r->nr_kept; i++) {
		const struct hotelling_stack *hs = &r->kept[i];

		sbuf_reset(&txt);
		profile__stack_text(r->all, hs->stack, &txt);
		printf("%-3s %5zu %12.4f %12.4f %+12.4f %12.4f %12.4f  %s\n",
		       hs->exact ? "*=" : hs->significant ? "*" : "", hs->df, hs->mean_a, hs->mean_b, hs->delta,
		       hs->ci_lo, hs->ci_hi, txt.buf ? txt.buf : "");
	}
	sbuf_fini(&txt);
}

static int stat_compare(const struct stat_args *sa)
{
	struct hotelling_opts ho = { .alpha = sa->alpha, .max_stacks = sa->max_stacks };
	struct hotelling_result r = { 0 };
	struct strtab *st = NULL;
	struct profile **pa = NULL, **pb = NULL, *red = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t i;
	int err = 0;

	if (sa->n_pos) {
		log_error("stat compare: unexpected argument '%s' (files go after --a or --b)",
			  sa->pos[0]);
		return -EINVAL;
	}
	if (sa->n_a < 2 || sa->n_b < 2) {
		log_error("stat compare needs at least 2 profiles in each set (--a: %zu, --b: %zu)",
			  sa->n_a, sa->n_b);
		return -EINVAL;
	}
	st = strtab__new();
	pa = calloc(sa->n_a, sizeof(*pa));
	pb = calloc(sa->n_b, sizeof(*pb));
	if (!st || !pa || !pb) {
		err = log_errno(-ENOMEM, "cannot allocate the profiles");
		goto out;
	}
	for (i = 0; i < sa->n_a && !err; i++)
		err = read_one(sa, st, sa->files_a[i], &pa[i]);
	for (i = 0; i < sa->n_b && !err; i++)
		err = read_one(sa, st, sa->files_b[i], &pb[i]);
	if (err)
		goto out;
	err = hotelling_test(pa, sa->n_a, pb, sa->n_b, &ho, &r);
	if (err == -ENODATA) {
		log_error("nothing to test: no stack varies across the profiles");
		err = -EINVAL;
		goto out;
	} else if (err) {
		log_errno(err, "the Hotelling test failed");
		goto out;
	}
	if (sa->json) {
		err = hotelling_write_json(&r, &sb);
		if (!err)
			err = sbuf_write_fd(&sb, STDOUT_FILENO);
		if (err)
			log_errno(err, "writing the output failed");
	} else {
		print_report(&r, sa);
		if (fflush(stdout))
			err = log_errno(-errno, "writing the output failed");
	}
	if (!err && (sa->folded_out || sa->svg_out)) {
		red = hotelling_reduced_diff(&r);
		if (!red)
			err = log_errno(-ENOMEM, "the reduced difference failed");
	}
	if (!err && sa->folded_out) {
		sbuf_reset(&sb);
		err = write_folded_plain(red, true, &sb);
		if (!err)
			err = write_file(sa->folded_out, &sb);
		else
			log_errno(err, "the reduced difference failed");
	}
	if (!err && sa->svg_out) {
		char info[200];

		snprintf(info, sizeof(info),
			 "Hotelling T2 %.4g (critical %.4g at alpha %g), p-value %.3g: %zu of %zu "
			 "tested stacks differ significantly; mean of %zu profiles (B) against %zu (A)",
			 r.t2, r.t2_crit, r.alpha, r.p_value, r.nr_significant, r.p, r.n_b, r.n_a);
		err = write_svg(sa->svg_out, red, "Significant differences (noise-reduced)", info,
				NULL);
	}
out:
	sbuf_fini(&sb);
	profile__free(red);
	hotelling_result_fini(&r);
	for (i = 0; pa && i < sa->n_a; i++)
		profile__free(pa[i]);
	for (i = 0; pb && i < sa->n_b; i++)
		profile__free(pb[i]);
	free(pa);
	free(pb);
	strtab__free(st);
	return err;
}

/* Parses a probability in (0, 1). */
static bool parse_alpha(const char *s, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0 && v < 1)) {
		log_error("option '--alpha' needs a number between 0 and 1, not '%s'", s);
		return false;
	}
	*ret = v;
	return true;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args sa = { .alpha = HOTELLING_DEFAULT_ALPHA };
	const char ***list = NULL;
	size_t *nlist = NULL;
	int i, err = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		stat_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sa.cmd = argv[1];
	if (strcmp(sa.cmd, "similarity") && strcmp(sa.cmd, "decompose") &&
	    strcmp(sa.cmd, "compare")) {
		log_error("unknown stat command '%s' (similarity, decompose, compare)", sa.cmd);
		return CLI_EXIT_USAGE;
	}
	sa.files_a = calloc((size_t)argc, sizeof(char *));
	sa.files_b = calloc((size_t)argc, sizeof(char *));
	sa.pos = calloc((size_t)argc, sizeof(char *));
	if (!sa.files_a || !sa.files_b || !sa.pos) {
		err = log_errno(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 2; i < argc && !err; i++) {
		const char *o = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "--a")) {
			list = &sa.files_a, nlist = &sa.n_a;
		} else if (!strcmp(o, "--b")) {
			list = &sa.files_b, nlist = &sa.n_b;
		} else if (!strcmp(o, "-s") || !strcmp(o, "--strip-hex")) {
			sa.strip_hex = true;
		} else if (!strcmp(o, "--strict")) {
			sa.strict = true;
		} else if (!strcmp(o, "--raw")) {
			sa.raw = true;
		} else if (!strcmp(o, "--json")) {
			sa.json = true;
		} else if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			stat_usage(stdout);
			goto out;
		} else if (!strcmp(o, "--out") || !strcmp(o, "--folded") || !strcmp(o, "--alpha") ||
			   !strcmp(o, "--max-stacks") || !strcmp(o, "--svg")) {
			if (!val) {
				log_error("option '%s' needs a value", o);
				err = -EINVAL;
				break;
			}
			i++;
			if (!strcmp(o, "--out"))
				sa.out_dir = val;
			else if (!strcmp(o, "--folded"))
				sa.folded_out = val;
			else if (!strcmp(o, "--svg"))
				sa.svg_out = val;
			else if (!strcmp(o, "--alpha"))
				err = parse_alpha(val, &sa.alpha) ? 0 : -EINVAL;
			else if (!cli_parse_ulong("--max-stacks", val, &sa.max_stacks))
				err = -EINVAL;
			else if (sa.max_stacks == 0)
				err = log_errno(-EINVAL, "option '--max-stacks' must be at least 1");
		} else if (o[0] == '-' && o[1] == '-' && o[2]) {
			log_error("unknown option '%s'", o);
			err = -EINVAL;
		} else if (list) {
			(*list)[(*nlist)++] = o; /* a file after --a or --b */
		} else {
			sa.pos[sa.n_pos++] = o;
		}
	}
	if (err) {
		stat_usage(stderr);
		goto out;
	}
	if (!strcmp(sa.cmd, "similarity"))
		err = stat_similarity(&sa);
	else if (!strcmp(sa.cmd, "decompose"))
		err = stat_decompose(&sa);
	else
		err = stat_compare(&sa);
out:
	free(sa.files_a);
	free(sa.files_b);
	free(sa.pos);
	return cli_exit_code(err);
}
