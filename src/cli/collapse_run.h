/* SPDX-License-Identifier: MIT */
/*
 * ember collapse's parsing of its inputs, as one stream: every file through one parser in order,
 * or perf input through a pool of threads (--jobs) whose result is what one parser would have
 * produced. Folded sums go into the run's table; timestamped lines (--timestamps) and bpftrace
 * records are written to stdout as they come. Logging functions (they report the errors they
 * return, and the skipped lines through the run's cli_skips).
 */
#ifndef EMBER_CLI_COLLAPSE_RUN_H
#define EMBER_CLI_COLLAPSE_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "ember/core/formats/collapse.h"
#include "cli.h"

#define COLLAPSE_MAX_JOBS 64

struct collapse_args {
	struct collapse_opts opts;
	bool timestamps;
	unsigned long jobs;
	unsigned long chunk_bytes;	/* --chunk-bytes (testing): chunk size for --jobs */
};

/* One run over the inputs and what it found: plain data, read by the command once it is done. */
struct collapse_run {
	const struct collapse_args *args;
	struct collapse_agg *agg;		/* the result in aggregate mode */
	struct cli_skips sk;
	struct collapse_stats stats;
	unsigned long long no_time;
	char *event;				/* the event kept (owned), "" if none */
	bool event_defaulted;
	char *other_event;
	enum collapse_format fmt;
};

/* Sets up @r for @args (borrowed until collapse_run_fini()). 0 or -ENOMEM (logged). */
int collapse_run_init(struct collapse_run *r, const struct collapse_args *args);
void collapse_run_fini(struct collapse_run *r);

/* Parses @files[0..nfiles) (none: stdin; "-": stdin) as perf script output on args->jobs threads
 * (1..COLLAPSE_MAX_JOBS). 0 or -errno. */
int collapse_run_parallel(struct collapse_run *r, char **files, int nfiles);
/* Parses @files[0..nfiles) in order with one parser of args->opts.format (AUTO: the first lines
 * decide). 0 or -errno. */
int collapse_run_sequential(struct collapse_run *r, char **files, int nfiles);

/* Writes @len bytes of @buf to stdout. 0 or -EIO (logged). */
int collapse_write_out(const void *buf, size_t len);

#endif
