// SPDX-License-Identifier: MIT
/* ember merge: sum folded files, filter stacks by frame regex, strip hex, keep the top N. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/regex.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void merge_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember merge [OPTIONS] [FILE...]\n"
		"Merges folded stack files (summing identical stacks) and writes folded stacks,\n"
		"sorted by stack. FILE '-' or no FILE reads stdin; gzip input is read as is.\n\n"
		"  -g, --grep RE      keep stacks with a frame matching RE (POSIX extended, no\n"
		"                     backreferences; ^ and $ anchor to a frame name);\n"
		"                     repeatable: any matches\n"
		"  -x, --exclude RE   drop stacks with a frame matching RE; repeatable\n"
		"  -s, --strip-hex    replace hex numbers 0x1f2e with 0x... before merging\n"
		"  -t, --top N        keep only the N heaviest stacks\n"
		"      --strict       a malformed line is an error, not a counted skip\n"
		"  -h, --help         this text\n");
}

/*
 * A pattern is the user's own and frame names can be KiBs long (C++ templates), so it gets ten
 * times the default match limit; a frame on which it still reaches the limit stops the merge
 * (exit 2) rather than being counted as a match or a non-match.
 */
#define MERGE_MATCH_LIMIT (10 * EMBER_REGEX_MATCH_LIMIT)

struct frame_filter {
	struct ember_regex **grep, **excl;
	size_t ngrep, nexcl;
	/* per frame id: 0 unknown, bit 1 set = known; bit 2 grep match; bit 4 exclude match */
	unsigned char *memo;
	size_t memo_cap;
	int err; /* the first error of a match: -ENOMEM, or -E2BIG with the frame logged */
};

/* 1 if a pattern of @res matches @name, 0 if none does, or -errno (logged when -E2BIG). */
static int match_any(struct ember_regex *const *res, size_t n, const char *name, size_t len)
{
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		r = ember_regex__match(res[i], name, len);
		if (r == -E2BIG)
			log_error("pattern '%s' reached its match limit on frame '%.200s%s'",
				  ember_regex__pattern(res[i]), name, len > 200 ? "..." : "");
		if (r)
			return r;
	}
	return 0;
}

static int frame_class(struct frame_filter *ff, const struct strtab *st, uint32_t id)
{
	unsigned char c = 1;
	const char *name;
	size_t len;
	int r;

	if (id >= ff->memo_cap) {
		size_t cap = ff->memo_cap ? ff->memo_cap : 1024;
		unsigned char *nm;

		while (cap <= id)
			cap *= 2;
		nm = realloc(ff->memo, cap);
		if (!nm)
			return -ENOMEM;
		memset(nm + ff->memo_cap, 0, cap - ff->memo_cap);
		ff->memo = nm;
		ff->memo_cap = cap;
	}
	if (ff->memo[id])
		return ff->memo[id];
	name = strtab__str(st, id);
	len = strtab__len(st, id);
	r = match_any(ff->grep, ff->ngrep, name, len);
	if (r > 0)
		c |= 2;
	if (r >= 0) {
		r = match_any(ff->excl, ff->nexcl, name, len);
		if (r > 0)
			c |= 4;
	}
	if (r < 0)
		return r;
	ff->memo[id] = c;
	return c;
}

static bool keep_stack(const struct profile *p, size_t idx, void *ctx)
{
	struct frame_filter *ff = ctx;
	const uint32_t *f;
	size_t n, i;
	bool grep_hit = ff->ngrep == 0;
	int c;

	if (ff->err)
		return false;
	f = profile__stack(p, idx, &n);
	for (i = 0; i < n; i++) {
		c = frame_class(ff, profile__strtab(p), f[i]);
		if (c < 0) {
			ff->err = c; /* the caller checks it after the filter */
			return false;
		}
		if (c & 4)
			return false;
		if (c & 2)
			grep_hit = true;
	}
	return grep_hit;
}

static int add_regex(struct ember_regex ***arr, size_t *n, const char *opt, const char *pat)
{
	struct ember_regex **na = realloc(*arr, (*n + 1) * sizeof(**arr));
	struct ember_regex *re;
	char reason[160];
	int err;

	if (!na)
		return log_errno(-ENOMEM, "out of memory");
	*arr = na;
	re = ember_regex__new(pat, strlen(pat), reason, sizeof(reason));
	if (!re) {
		err = -errno;
		if (err == -ENOMEM)
			return log_errno(err, "out of memory");
		log_error("%s: bad regular expression '%s': %s", opt, pat, reason);
		return -EINVAL;
	}
	ember_regex__set_match_limit(re, MERGE_MATCH_LIMIT);
	na[(*n)++] = re;
	return 0;
}

struct heavy {
	size_t idx;
	unsigned __int128 n; /* count + count2, exactly when both are integers */
	double w;	     /* else their sum as a double */
	const struct profile *p;
};

static int cmp_heavy(const void *a, const void *b)
{
	const struct heavy *x = a, *y = b;

	if (x->n != y->n)
		return (x->n < y->n) - (x->n > y->n); /* heaviest first */
	if (x->w != y->w)
		return (x->w < y->w) - (x->w > y->w);
	return profile__cmp_stacks(x->p, x->idx, y->idx);
}

static bool in_top(const struct profile *p, size_t idx, void *ctx)
{
	return ((const bool *)ctx)[idx];
}

/*
 * Keeps the @top heaviest stacks of @p (ties: stack order), with their counts copied exactly.
 * New profile, or NULL + errno.
 */
static struct profile *keep_top(const struct profile *p, size_t top)
{
	size_t n = profile__nr_stacks(p), i;
	struct heavy *h = malloc((n ? n : 1) * sizeof(*h));
	bool *keep = calloc(n ? n : 1, sizeof(*keep));
	struct profile *q = NULL;
	uint64_t c1, c2;

	if (!h || !keep)
		goto nomem;
	for (i = 0; i < n; i++) {
		h[i] = (struct heavy){ .idx = i, .p = p };
		if (profile__count_exact(p, i, &c1, &c2))
			h[i].n = (unsigned __int128)c1 + c2;
		else
			h[i].w = profile__count(p, i) + profile__count2(p, i);
	}
	qsort(h, n, sizeof(*h), cmp_heavy);
	for (i = 0; i < n && i < top; i++)
		keep[h[i].idx] = true;
	q = profile__filter(p, in_top, keep);
	if (!q)
		goto nomem;
	free(h);
	free(keep);
	return q;
nomem:
	free(h);
	free(keep);
	errno = ENOMEM;
	return NULL;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "grep", required_argument, NULL, 'g' },
		{ "exclude", required_argument, NULL, 'x' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "top", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct frame_filter ff = { 0 };
	struct folded_read_opts opts = { .columns = FOLDED_COLUMNS_AUTO };
	struct strtab *st = NULL;
	struct profile *p = NULL, *q;
	unsigned long top = 0;
	bool has_top = false;
	int c, i, err = 0, ret = CLI_EXIT_OK;
	size_t k;

	while ((c = getopt_long(argc, argv, "g:x:st:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'g':
			err = add_regex(&ff.grep, &ff.ngrep, "--grep", optarg);
			break;
		case 'x':
			err = add_regex(&ff.excl, &ff.nexcl, "--exclude", optarg);
			break;
		case 's':
			opts.rewrite = folded_strip_hex;
			break;
		case 't':
			if (!cli_parse_ulong("--top", optarg, &top))
				err = -EINVAL;
			has_top = true;
			break;
		case 'S':
			opts.strict = true;
			break;
		case 'h':
			merge_usage(stdout);
			goto out;
		default:
			merge_usage(stderr);
			err = -EINVAL;
		}
		if (err)
			goto out;
	}
	st = strtab__new();
	p = st ? profile__new(st) : NULL;
	if (!p) {
		err = log_errno(-ENOMEM, "cannot allocate the profile");
		goto out;
	}
	if (optind >= argc) {
		err = cli_read_folded("-", p, &opts, NULL);
	} else {
		for (i = optind; i < argc && !err; i++)
			err = cli_read_folded(argv[i], p, &opts, NULL);
	}
	if (err)
		goto out;
	if (ff.ngrep || ff.nexcl) {
		q = profile__filter(p, keep_stack, &ff);
		if (!q || ff.err) {
			err = ff.err ? ff.err : -ENOMEM;
			if (err == -ENOMEM)
				log_errno(err, "filtering failed");
			profile__free(q);
			goto out;
		}
		profile__free(p);
		p = q;
	}
	if (has_top && top < profile__nr_stacks(p)) {
		q = keep_top(p, top);
		if (!q) {
			err = log_errno(-ENOMEM, "--top failed");
			goto out;
		}
		profile__free(p);
		p = q;
	}
	err = cli_write_folded(p);
out:
	if (err)
		ret = cli_exit_code(err);
	for (k = 0; k < ff.ngrep; k++)
		ember_regex__free(ff.grep[k]);
	for (k = 0; k < ff.nexcl; k++)
		ember_regex__free(ff.excl[k]);
	free(ff.grep);
	free(ff.excl);
	free(ff.memo);
	profile__free(p);
	strtab__free(st);
	return ret;
}
