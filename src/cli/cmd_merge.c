// SPDX-License-Identifier: MIT
/* ember merge: sum folded files, filter stacks by frame regex, strip hex, keep the top N. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"

static void merge_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember merge [OPTIONS] [FILE...]\n"
		"Merges folded stack files (summing identical stacks) and writes folded stacks,\n"
		"sorted by stack. FILE '-' or no FILE reads stdin; gzip input is read as is.\n\n"
		"  -g, --grep RE      keep stacks with a frame matching RE (POSIX extended;\n"
		"                     ^ and $ anchor to a frame name); repeatable: any matches\n"
		"  -x, --exclude RE   drop stacks with a frame matching RE; repeatable\n"
		"  -s, --strip-hex    replace hex numbers 0x1f2e with 0x... before merging\n"
		"  -t, --top N        keep only the N heaviest stacks\n"
		"      --strict       a malformed line is an error, not a counted skip\n"
		"  -h, --help         this text\n");
}

struct frame_filter {
	regex_t *grep, *excl;
	size_t ngrep, nexcl;
	/* per frame id: 0 unknown, bit 1 set = known; bit 2 grep match; bit 4 exclude match */
	unsigned char *memo;
	size_t memo_cap;
};

static int frame_class(struct frame_filter *ff, const struct strtab *st, uint32_t id)
{
	unsigned char c = 1;
	const char *name;
	size_t i;

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
	for (i = 0; i < ff->ngrep; i++)
		if (!regexec(&ff->grep[i], name, 0, NULL, 0)) {
			c |= 2;
			break;
		}
	for (i = 0; i < ff->nexcl; i++)
		if (!regexec(&ff->excl[i], name, 0, NULL, 0)) {
			c |= 4;
			break;
		}
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

	f = profile__stack(p, idx, &n);
	for (i = 0; i < n; i++) {
		c = frame_class(ff, profile__strtab(p), f[i]);
		if (c < 0 || (c & 4))
			return false; /* on ENOMEM the stack is dropped; the caller checks ff->memo */
		if (c & 2)
			grep_hit = true;
	}
	return grep_hit;
}

static int add_regex(regex_t **arr, size_t *n, const char *re)
{
	regex_t *na = realloc(*arr, (*n + 1) * sizeof(**arr));
	char msg[256];
	int r;

	if (!na)
		return -ENOMEM;
	*arr = na;
	r = regcomp(&na[*n], re, REG_EXTENDED | REG_NOSUB);
	if (r) {
		regerror(r, &na[*n], msg, sizeof(msg));
		log_error("bad regular expression '%s': %s", re, msg);
		return -EINVAL;
	}
	(*n)++;
	return 0;
}

struct heavy {
	size_t idx;
	double w;
	const struct profile *p;
};

static int cmp_heavy(const void *a, const void *b)
{
	const struct heavy *x = a, *y = b;

	if (x->w != y->w)
		return (x->w < y->w) - (x->w > y->w); /* heaviest first */
	return profile__cmp_stacks(x->p, x->idx, y->idx);
}

/* Keeps the @top heaviest stacks of @p (ties: stack order). New profile, or NULL + errno. */
static struct profile *keep_top(const struct profile *p, size_t top)
{
	size_t n = profile__nr_stacks(p), i, depth;
	struct heavy *h = malloc((n ? n : 1) * sizeof(*h));
	struct profile *q = profile__new(profile__strtab(p));

	if (!h || !q)
		goto nomem;
	for (i = 0; i < n; i++)
		h[i] = (struct heavy){ .idx = i, .w = profile__count(p, i) + profile__count2(p, i),
				       .p = p };
	qsort(h, n, sizeof(*h), cmp_heavy);
	profile__set_has_count2(q, profile__has_count2(p));
	for (i = 0; i < n && i < top; i++) {
		const uint32_t *f = profile__stack(p, h[i].idx, &depth);

		if (profile__add2(q, f, depth, profile__count(p, h[i].idx),
				  profile__count2(p, h[i].idx)) < 0)
			goto nomem;
	}
	profile__set_has_count2(q, profile__has_count2(p));
	free(h);
	return q;
nomem:
	free(h);
	profile__free(q);
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
			err = add_regex(&ff.grep, &ff.ngrep, optarg);
			break;
		case 'x':
			err = add_regex(&ff.excl, &ff.nexcl, optarg);
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
		if (!q || (profile__nr_stacks(p) && !ff.memo)) {
			err = log_errno(-ENOMEM, "filtering failed");
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
		regfree(&ff.grep[k]);
	for (k = 0; k < ff.nexcl; k++)
		regfree(&ff.excl[k]);
	free(ff.grep);
	free(ff.excl);
	free(ff.memo);
	profile__free(p);
	strtab__free(st);
	return ret;
}
