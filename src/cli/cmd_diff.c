// SPDX-License-Identifier: MIT
/* ember diff: difffolded's three columns, or a red/blue differential flame graph. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/diff.h"
#include "ember/log.h"
#include "ember/profile.h"
#include "ember/sbuf.h"
#include "ember/strtab.h"

static void diff_usage(FILE *f)
{
	fprintf(f,
		"Usage: ember diff [OPTIONS] A B\n"
		"Compares two folded stack files (A before, B after). Without --flamegraph, writes\n"
		"difffolded.pl's three columns 'stack countA countB' (0 where absent), sorted by stack.\n\n"
		"  -n, --normalize    scale A's counts to B's total: int(a * total(B) / total(A))\n"
		"  -s, --strip-hex    replace hex numbers 0x1f2e with 0x... before comparing\n"
		"      --strict       a malformed line is an error, not a counted skip\n"
		"  -h, --help         this text\n");
}

struct diff_args {
	bool normalize, strip_hex, strict;
	const char *a, *b;
};

/* Reads A and B into @ret_a, @ret_b sharing @st. 0 or -errno (logged). */
static int read_pair(const struct diff_args *da, struct strtab *st, struct profile **ret_a,
		     struct profile **ret_b)
{
	struct folded_read_opts opts = {
		.columns = FOLDED_COLUMNS_ONE, /* difffolded: the last number is the count */
		.strict = da->strict,
		.rewrite = da->strip_hex ? folded_strip_hex : NULL,
	};
	struct profile *a = profile__new(st), *b = profile__new(st);
	int err;

	if (!a || !b) {
		err = log_errno(-ENOMEM, "cannot allocate the profiles");
		goto fail;
	}
	err = cli_read_folded(da->a, a, &opts, NULL);
	if (!err)
		err = cli_read_folded(da->b, b, &opts, NULL);
	if (err)
		goto fail;
	*ret_a = a;
	*ret_b = b;
	return 0;
fail:
	profile__free(a);
	profile__free(b);
	return err;
}

static int make_diff(const struct diff_args *da, const struct profile *a, const struct profile *b,
		     struct profile **ret)
{
	struct diff_opts dopts = { .normalize = da->normalize };

	*ret = diff_profiles(a, b, &dopts);
	if (*ret)
		return 0;
	if (errno == EDOM) {
		log_error("cannot normalize: '%s' has no samples", da->a);
		return -EINVAL;
	}
	return log_errno(-errno, "diff failed");
}

static int write_text(const struct profile *d)
{
	struct sbuf sb = SBUF_INIT;
	int err = diff_write(d, &sb);

	if (!err)
		err = sbuf_write_fd(&sb, 1);
	sbuf_fini(&sb);
	if (err)
		log_errno(err, "writing the output failed");
	return err;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },
		{ "strip-hex", no_argument, NULL, 's' },
		{ "strict", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct diff_args da = { 0 };
	struct strtab *st = NULL;
	struct profile *a = NULL, *b = NULL, *d = NULL;
	int c, err = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "nsh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			da.normalize = true;
			break;
		case 's':
			da.strip_hex = true;
			break;
		case 'S':
			da.strict = true;
			break;
		case 'h':
			diff_usage(stdout);
			return CLI_EXIT_OK;
		default:
			diff_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		log_error("diff needs two files, A and B");
		diff_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	da.a = argv[optind];
	da.b = argv[optind + 1];
	st = strtab__new();
	if (!st) {
		err = log_errno(-ENOMEM, "cannot allocate the string table");
		goto out;
	}
	err = read_pair(&da, st, &a, &b);
	if (!err)
		err = make_diff(&da, a, b, &d);
	if (!err)
		err = write_text(d);
out:
	profile__free(d);
	profile__free(a);
	profile__free(b);
	strtab__free(st);
	return cli_exit_code(err);
}
