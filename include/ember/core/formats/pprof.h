/* SPDX-License-Identifier: MIT */
/*
 * pprof: CPU profiles in pprof's format (a gzip-compressed profile.proto message, our own
 * proto/profile.proto, encoded with protobuf-c), written and read.
 *
 * Writing: each distinct frame name becomes one Function; each physical frame, together with the
 * inlined frames ("name_[i]") that follow it in the folded stack, becomes one Location whose
 * lines list the inlined callees innermost first; each Location belongs to a Mapping by the
 * annotation of its physical frame: "[kernel.kallsyms]" for "_[k]", "[jit]" for "_[j]" and
 * "[user]" otherwise (every mapping says has_functions, so pprof never tries to re-symbolize),
 * user first (pprof's header names the first: "File: [user]"). A Function's name is the frame
 * without its marker ("_[k]", "_[j]", "_[i]", "_[py]"); a Python frame "qualname (file:line)_[py]"
 * gives name qualname, filename file and the line (in the Function and the Line); the folded
 * frame is the system_name when it differs, which pprof_read() prefers when it has a marker.
 * Samples carry two values, samples/count and cpu/nanoseconds (count * period, or with
 * counts_ns the count itself and count / period samples), and optional
 * labels pid, tid (numbers) and comm (a string). A folded profile read back with pprof_read()
 * is the same profile.
 *
 * Reading: any pprof profile (Go's runtime, Parca, perf_data_converter, ours), gzip-compressed
 * or not, into folded stacks: frames root first, inlined lines expanded, a location without
 * lines shown as its address ("0x4a1f20"). Not thread-safe; separate objects are independent.
 */
#ifndef EMBER_PPROF_H
#define EMBER_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/parse.h"

struct profile;
struct sbuf;

#define PPROF_DEFAULT_FREQ_HZ 99u
/* Largest decompressed profile pprof_read() accepts unless told otherwise. */
#define PPROF_DEFAULT_MAX_BYTES (512u << 20)

struct pprof_opts {
	uint64_t freq_hz;	/* sampling frequency: period = 1e9 / freq_hz ns; 0: 99 Hz */
	int64_t time_ns;	/* start of the collection, Unix ns; 0: unknown (not written) */
	int64_t duration_ns;	/* length of the collection; 0: unknown (not written) */
	int compress_level;	/* zlib level 1..9; 0: zlib's default */
	/*
	 * The counts added are CPU time in nanoseconds (perf's cpu-clock periods summed), not
	 * samples: cpu/nanoseconds is the count itself and samples/count the count divided by
	 * the period (@period_ns, else 1e9 / @freq_hz), rounded.
	 */
	bool counts_ns;
	uint64_t period_ns;	/* 0: 1e9 / freq_hz */
	/*
	 * The time's sample type in place of "cpu" (NULL: "cpu"): "off_cpu", "wall", "wakeup",
	 * "chain" for emberd's off-CPU events, whose counts are quanta of @period_ns:
	 * samples/count is then the quanta, TYPE/nanoseconds their time. Borrowed (a string
	 * literal: the writer keeps the pointer).
	 */
	const char *sample_type;
	/* The unit of that sample type (NULL: "nanoseconds"): "pages" or "bytes" for emberd's
	 * memory and I/O events, whose counts are quanta of @period_ns in that unit. Borrowed. */
	const char *unit;
};

/* Labels of one sample; a field that is unknown is -1 (pid, tid) or NULL (comm). */
struct pprof_labels {
	int64_t pid;
	int64_t tid;
	const char *comm;	/* borrowed for the call */
};
#define PPROF_LABELS_NONE ((struct pprof_labels){ .pid = -1, .tid = -1, .comm = NULL })

struct pprof_writer; /* opaque */

/* @opts may be NULL (defaults); it is copied. NULL + errno=ENOMEM; free with pprof_writer__free(). */
struct pprof_writer *pprof_writer__new(const struct pprof_opts *opts);
void pprof_writer__free(struct pprof_writer *w); /* NULL is a no-op */

/*
 * Adds @count samples of the stack @frames[0..n) (root first; names borrowed for the call, any
 * bytes but NUL) with @labels (may be NULL: none). Identical stacks with identical labels are
 * summed. A fractional count is rounded to the nearest integer (pprof values are integers) and
 * counted in pprof_writer__rounded(). Returns 0, -EINVAL for a negative or non-finite count, or
 * -ENOMEM.
 */
int pprof_writer__add(struct pprof_writer *w, const char *const *frames, size_t n, double count,
		      const struct pprof_labels *labels);
/* Adds every stack of @p (first counts) without labels. 0, -EINVAL or -ENOMEM. */
int pprof_writer__add_profile(struct pprof_writer *w, const struct profile *p);
/* Sets (or overrides) the collection's start and length. */
void pprof_writer__set_time(struct pprof_writer *w, int64_t time_ns, int64_t duration_ns);
/* How many added counts were not integers (and were rounded). */
unsigned long pprof_writer__rounded(const struct pprof_writer *w);

/*
 * Appends the gzip-compressed profile to @out (binary, not NUL-safe text). The writer stays
 * usable (more adds, another finish). 0, -ENOMEM, or -EOVERFLOW if a value does not fit in
 * 64 bits.
 */
int pprof_writer__finish(struct pprof_writer *w, struct sbuf *out);

/* One call: @p (first counts) as a gzip-compressed profile appended to @out. 0 or -errno. */
int pprof_write_profile(const struct profile *p, const struct pprof_opts *opts, struct sbuf *out);

struct pprof_read_opts {
	/*
	 * Which value of each sample becomes the folded count: an index into sample_type, or -1
	 * for "samples/count" when the profile has it, otherwise its default sample type (the
	 * last one when none is named, as pprof does).
	 */
	int sample_index;
	size_t max_bytes;	/* decompressed size limit; 0: PPROF_DEFAULT_MAX_BYTES */
};
#define PPROF_READ_OPTS_DEFAULT ((struct pprof_read_opts){ .sample_index = -1, .max_bytes = 0 })

/* What pprof_read() found besides the stacks. */
struct pprof_info {
	int64_t time_ns, duration_ns, period;
	unsigned long samples;		/* samples added */
	unsigned long skipped;		/* samples with a negative value, not added */
	int sample_index;		/* the value used */
	char sample_type[64];		/* "samples/count", "cpu/nanoseconds", ... (truncated) */
};

/*
 * Reads a pprof profile (gzip-compressed or plain protobuf) from @buf[0..len) into @p (interning
 * into @p's strtab). Returns 0; -EINVAL for input that is not a valid profile (bad gzip, bad
 * protobuf, a reference to a missing string/location/function, no such sample index), with
 * @reterr (may be NULL) giving the reason; -E2BIG past the size limit; -ENOMEM. On error @p may
 * hold part of the samples. @opts and @ret_info may be NULL.
 */
int pprof_read(const void *buf, size_t len, struct profile *p, const struct pprof_read_opts *opts,
	       struct pprof_info *ret_info, struct parse_error *reterr);

/* True if @buf starts like a gzip stream (pprof files on disk and over HTTP are). */
bool pprof_is_gzip(const void *buf, size_t len);

#endif
