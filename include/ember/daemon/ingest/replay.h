/* SPDX-License-Identifier: MIT */
/*
 * replay: `emberd --replay FILE...` loads recorded profiles into a recording (recording.h) that
 * the HTTP server then serves instead of the live store: the flame scope workflow over captures
 * taken elsewhere, without BPF or root. Inputs, told apart by their first line:
 *   - `perf script` text (via collapse.h, as stackcollapse-perf.pl --kernel --jit folds it;
 *     times are perf's clock, pid/tid/comm from each record's header);
 *   - "ember-samples v1" timestamped folded samples (via samples.h; comm, pid and tid from the
 *     root frame "comm", "comm-PID" or "comm-PID/TID").
 * Logging: none; errors come back as -errno plus a message.
 */
#ifndef EMBER_REPLAY_H
#define EMBER_REPLAY_H

#include <stddef.h>

struct recording;

struct replay_stats {
	unsigned long files;
	unsigned long long samples;	/* records added */
	unsigned long long skipped;	/* malformed lines skipped */
	unsigned long long no_time;	/* perf records without a time: not placeable, skipped */
	/* perf: the records' periods summed (a weight: ns for cpu-clock); each record is added
	 * as one sample */
	double period_sum;
};

/*
 * Reads @path ("-" is stdin) into @rec (not frozen yet). 0, or -errno with a one-line reason
 * in @err: open/read errors, -EINVAL for a file that is neither format, -E2BIG over the
 * recording's memory bound.
 */
int replay_load_file(struct recording *rec, const char *path, struct replay_stats *st, char *err,
		     size_t errlen);

/*
 * Takes "--replay FILE..." (files up to the next argument starting with '-', or "--replay=FILE")
 * out of @argv, so that the rest goes to the normal option parser. Returns the number of files
 * found (0: not replaying) with *ret_files a malloc'ed array of borrowed argv strings (caller
 * frees the array), or -EINVAL when --replay has no file, -ENOMEM.
 */
int replay_args_extract(int *argc, char **argv, char ***ret_files);

#endif
