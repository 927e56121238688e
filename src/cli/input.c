// SPDX-License-Identifier: MIT
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ember/core/base/lineread.h"
#include "ember/core/base/log.h"
#include "ember/core/model/profile.h"

/*
 * zlib's message without the "<fd:N>: " it puts in front of it (gzdopen has no path to give).
 */
static const char *gz_reason(gzFile gz, int *ret_errnum)
{
	const char *msg = gzerror(gz, ret_errnum), *colon;

	if (!strncmp(msg, "<fd:", 4) && (colon = strstr(msg, ": ")))
		msg = colon + 2;
	return msg;
}

int cli_input_end_check(struct cli_input *in)
{
	int errnum = Z_OK;
	const char *msg = gz_reason(in->gz, &errnum);

	if (errnum != Z_BUF_ERROR)
		return 0;
	log_error("'%s': truncated gzip input (%s after %lld bytes of data)", in->name, msg,
		  (long long)gztell(in->gz));
	return -EBADMSG;
}

/*
 * A damaged or truncated gzip file is bad input, not the end of it: -EBADMSG (exit status 2),
 * with the reason logged here, where it is known. The reader never sees a cut-off last line.
 */
static ssize_t read_gz(void *ctx, void *buf, size_t n)
{
	struct cli_input *in = ctx;
	int r, errnum = Z_OK;
	const char *msg;

	if (n > INT32_MAX)
		n = INT32_MAX;
	r = gzread(in->gz, buf, (unsigned int)n);
	if (r > 0)
		return r;
	if (r == 0)
		return cli_input_end_check(in);
	msg = gz_reason(in->gz, &errnum);
	if (errnum == Z_ERRNO)
		return -errno;
	log_error("'%s': corrupt gzip input: %s", in->name, msg);
	return -EBADMSG;
}

int cli_input_open(struct cli_input *in, const char *path)
{
	int err;

	*in = (struct cli_input){ .fd = -1 };
	if (!path || !strcmp(path, "-")) {
		in->name = "<stdin>";
		in->fd = dup(STDIN_FILENO);
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (in->fd < 0) {
		err = -errno;
		return log_errno(err, "cannot open '%s'", in->name);
	}
	/* zlib reads plain input unchanged, so every file goes through it */
	in->gz = gzdopen(in->fd, "rb");
	if (!in->gz) {
		err = -ENOMEM;
		close(in->fd);
		in->fd = -1;
		return log_errno(err, "cannot read '%s'", in->name);
	}
	gzbuffer(in->gz, 256 << 10);
	in->lr = lineread__new(read_gz, in, 0);
	if (!in->lr) {
		cli_input_close(in);
		return log_errno(-ENOMEM, "cannot read '%s'", path ? path : "<stdin>");
	}
	return 0;
}

void cli_input_close(struct cli_input *in)
{
	lineread__free(in->lr);
	if (in->gz)
		gzclose(in->gz); /* closes the fd */
	else if (in->fd >= 0)
		close(in->fd);
	*in = (struct cli_input){ .fd = -1 };
}

void cli_report_skip(const char *name, const struct parse_error *err, void *ctx)
{
	struct cli_skips *sk = ctx;

	if (sk->shown < CLI_SKIPS_SHOWN_MAX) {
		if (err->col)
			log_warn("%s:%lu:%u: %s, skipping", name, err->line, err->col, err->reason);
		else
			log_warn("%s:%lu: %s, skipping", name, err->line, err->reason);
		sk->shown++;
	}
	sk->total++;
}

void cli_report_skip_total(const char *name, struct cli_skips *sk)
{
	if (sk->total)
		log_warn("%s: %lu malformed line%s skipped", name, sk->total,
			 sk->total == 1 ? "" : "s");
	sk->shown = sk->total = 0;
}

int cli_no_stacks(const char *name, unsigned long stacks, unsigned long skipped)
{
	if (stacks || !skipped)
		return 0;
	log_error("%s: no folded stack, %lu malformed line%s: if it is `perf script` output, "
		  "collapse it first: ember collapse %s > %s.folded", name, skipped,
		  skipped == 1 ? "" : "s", strcmp(name, "<stdin>") ? name : "-",
		  strcmp(name, "<stdin>") ? name : "stdin");
	return -EINVAL;
}

int cli_read_folded(const char *path, struct profile *p, struct folded_read_opts *opts,
		    struct folded_stats *stats)
{
	struct cli_skips sk = { 0 };
	struct parse_error perr = { 0 };
	struct folded_stats local = { 0 };
	unsigned long stacks0, skipped0;
	struct cli_input in;
	int err;

	if (!stats)
		stats = &local;
	stacks0 = stats->stacks;
	skipped0 = stats->skipped;

	err = cli_input_open(&in, path);
	if (err)
		return err;
	opts->name = in.name;
	opts->on_skip = cli_report_skip;
	opts->on_skip_ctx = &sk;
	err = folded_read(in.lr, p, opts, stats, &perr);
	if (err == -EINVAL && perr.reason)
		log_error("%s:%lu:%u: %s", in.name, perr.line, perr.col, perr.reason);
	else if (err && err != -EBADMSG) /* the input's reader logged that one */
		log_errno(err, "reading '%s' failed", in.name);
	cli_report_skip_total(in.name, &sk);
	if (!err)
		err = cli_no_stacks(in.name, stats->stacks - stacks0, stats->skipped - skipped0);
	cli_input_close(&in);
	return err;
}

int cli_write_folded(const struct profile *p)
{
	int err = folded_write_file(p, stdout);

	if (!err && fflush(stdout))
		err = -errno;
	if (err)
		log_errno(err, "writing the output failed");
	return err;
}

int cli_exit_code(int err)
{
	switch (-err) {
	case 0:
		return CLI_EXIT_OK;
	case EINVAL:
	case ENOENT:
	case EACCES:
	case EISDIR:
	case ENOTDIR:
	case E2BIG:
	case EBADMSG: /* damaged or truncated compressed input */
		return CLI_EXIT_USAGE;
	default:
		return CLI_EXIT_FAILURE;
	}
}

bool cli_parse_ulong(const char *opt, const char *s, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		log_error("option '%s' needs a non-negative integer, not '%s'", opt, s);
		return false;
	}
	*ret = v;
	return true;
}
