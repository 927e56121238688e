/* SPDX-License-Identifier: MIT */
/* The ember CLI's shared pieces: the command table, exit codes, input files. */
#ifndef EMBER_CLI_H
#define EMBER_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "ember/core/formats/folded.h"

struct lineread;
struct profile;

enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAILURE = 1,	/* runtime failure: out of memory, write error, ... */
	CLI_EXIT_USAGE = 2,	/* bad usage or bad input */
};

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the command name; returns an exit code */
	const char *summary;
};

/* One prototype per command, from commands.h. */
#define EMBER_CMD(name, fn, summary) int fn(int argc, char **argv);
#include "commands.h"
#undef EMBER_CMD

/* An input file: "-" (or NULL) is stdin; gzip-compressed input is read transparently. */
struct cli_input {
	const char *name;	/* for messages: the path, or "<stdin>" */
	int fd;
	void *gz;		/* gzFile */
	struct lineread *lr;
};

/*
 * 0, or -errno with an error already logged naming the file. Reading through @in->lr, damaged
 * or truncated gzip data is -EBADMSG (logged; exit status 2), never a short but clean end.
 */
int cli_input_open(struct cli_input *in, const char *path);
void cli_input_close(struct cli_input *in);
/*
 * For readers that call gzread() on @in->gz themselves, when it has returned 0: zlib reports a
 * file cut short only as a sticky Z_BUF_ERROR at that point. 0 at a clean end, or -EBADMSG
 * with "'NAME': truncated gzip input (...)" logged.
 */
int cli_input_end_check(struct cli_input *in);

/* Reporting of skipped lines: the first few with file:line, then a total per file. */
struct cli_skips {
	unsigned long shown, total;
};
#define CLI_SKIPS_SHOWN_MAX 5
void cli_report_skip(const char *name, const struct parse_error *err, void *ctx /* cli_skips */);
/* Logs "N malformed lines skipped" for @name if there were any, and resets the count. */
void cli_report_skip_total(const char *name, struct cli_skips *sk);

/*
 * Input that gave no stack but malformed lines (raw `perf script`, usually): logs the error
 * with the next step (`ember collapse` first) and returns -EINVAL (exit 2); else 0.
 */
int cli_no_stacks(const char *name, unsigned long stacks, unsigned long skipped);

/*
 * Reads a folded file into @p, reporting skipped lines. In strict mode the first bad line is an
 * error naming file:line. Returns 0, -EINVAL (bad input, logged) or another -errno (logged).
 */
int cli_read_folded(const char *path, struct profile *p, struct folded_read_opts *opts,
		    struct folded_stats *stats);

/* Writes @p as folded text to stdout. 0 or -errno (logged). */
int cli_write_folded(const struct profile *p);

/* Maps a negative errno to an exit code: EINVAL/ENOENT/EACCES... -> usage, others -> failure. */
int cli_exit_code(int err);

/* Parses a non-negative integer option value; false (and logs) when it is not one. */
bool cli_parse_ulong(const char *opt, const char *s, unsigned long *ret);

#endif
