/* SPDX-License-Identifier: MIT */
/*
 * otlp: CPU samples as an OTLP profiles export request (profiles/v1development, our own subset
 * proto/otlp.proto, encoded with protobuf-c), gzip-compressed, for POST /v1development/profiles.
 *
 * One ResourceProfiles per process (its resource attributes: process.pid,
 * process.executable.name/path, process.executable.build_id.gnu, container.id, k8s.pod.uid,
 * service.name, host.name, and ember's systemd unit), one ScopeProfiles ("ember") with one
 * Profile: sample type samples/count, period type cpu/nanoseconds, period 1e9 / frequency. Every
 * sample keeps its own timestamp: samples of the same stack, thread and CPU share one Sample
 * whose timestamps_unix_nano lists them (values: 1 for each). Sample attributes: thread.id,
 * thread.name, cpu.logical_number.
 *
 * The dictionary is deduplicated and entry 0 of every table is the zero value (the schema's
 * rule). Stacks are leaf first. Frames are told apart by the attribute profile.frame.type of
 * their location: "kernel" ("_[k]"), "jit" ("_[j]", perf maps), "cpython" ("_[py]": function,
 * file and line from "qual (file:line)_[py]") and "native" (everything else); an unresolved
 * native frame "file+0xOFF" or "[file]" has a Mapping for the file and the offset as address,
 * the process's executable's Mapping carrying process.executable.build_id.gnu; a symbolized
 * native frame has one when the caller says where it lives (otlp_writer__add_locs()).
 *
 * Not thread-safe; separate writers are independent.
 */
#ifndef EMBER_OTLP_H
#define EMBER_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* The resource a sample belongs to; a NULL or "" string is not written. Borrowed for the call. */
struct otlp_process {
	uint32_t pid;
	const char *exe_name;
	const char *exe_path;
	const char *build_id;	  /* hex, GNU build id of the executable */
	const char *container_id;
	const char *pod_uid;
	const char *unit;	  /* systemd unit (ember.systemd.unit) */
	const char *service_name;
	const char *host_name;
};

struct otlp_writer; /* opaque */

/* @freq_hz >= 1 (the period); NULL + errno=ENOMEM. Free with otlp_writer__free(). */
struct otlp_writer *otlp_writer__new(uint64_t freq_hz);
void otlp_writer__free(struct otlp_writer *w); /* NULL is a no-op */
/*
 * The profiles' period type @type/@unit and period @period in place of cpu/nanoseconds and
 * 1e9 / frequency (emberd's memory and I/O events: "page_faults"/"pages", "malloc"/"bytes",
 * each sample one quantum of @period units). Before the first add; kept across finishes.
 * 0, -EINVAL (empty or longer than 31 bytes, samples added already) or -ENOMEM.
 */
int otlp_writer__set_type(struct otlp_writer *w, const char *type, const char *unit,
			  uint64_t period);

/*
 * One sample at @time_ns (Unix ns) of thread @tid named @thread_name on @cpu (UINT32_MAX:
 * unknown) with the stack @frames[0..n) ROOT FIRST (ember's frame names, suffixes as in the
 * header comment). 0 or -ENOMEM.
 */
int otlp_writer__add(struct otlp_writer *w, const struct otlp_process *proc, uint64_t time_ns,
		     uint32_t tid, const char *thread_name, uint32_t cpu, const char *const *frames,
		     size_t n);

/*
 * The same, and *@ret_handle a handle for more samples of the same process, thread, CPU and
 * stack (otlp_writer__add_again()), valid until the next finish (otlp_writer__generation()
 * changes).
 */
int otlp_writer__add_ret(struct otlp_writer *w, const struct otlp_process *proc,
			 uint64_t time_ns, uint32_t tid, const char *thread_name, uint32_t cpu,
			 const char *const *frames, size_t n, uint32_t *ret_handle);
/* Where a symbolized native frame lives: the mapped file, its GNU build id (hex) and the file
 * offset of its code; file NULL or "": unknown (no Mapping). Borrowed for the call. */
struct otlp_frame_loc {
	const char *file;
	const char *build_id;
	uint64_t offset;
};

/*
 * The same with @locs[0..n) (may be NULL), aligned with @frames (root first): a plain native
 * frame (no suffix, not "[file]" nor "file+0xOFF") with a file gets a Mapping of that file
 * (carrying process.executable.build_id.gnu) and the offset as its address.
 */
int otlp_writer__add_locs(struct otlp_writer *w, const struct otlp_process *proc,
			  uint64_t time_ns, uint32_t tid, const char *thread_name, uint32_t cpu,
			  const char *const *frames, const struct otlp_frame_loc *locs, size_t n,
			  uint32_t *ret_handle);
/* One more sample at @time_ns like the one @handle was returned for. 0, -EINVAL, -ENOMEM. */
int otlp_writer__add_again(struct otlp_writer *w, uint32_t handle, uint64_t time_ns);
/* Changes at each finish: handles of an older generation are void. */
uint64_t otlp_writer__generation(const struct otlp_writer *w);

/* Samples added since the last finish. */
size_t otlp_writer__samples(const struct otlp_writer *w);
/* An upper estimate of the encoded (uncompressed) request's size so far, in bytes. */
size_t otlp_writer__size(const struct otlp_writer *w);

/*
 * Appends the request (gzip-compressed when @gzip) covering [@start_ns, @end_ns) to @out and
 * empties the writer for the next one. 0 or -ENOMEM.
 */
int otlp_writer__finish(struct otlp_writer *w, uint64_t start_ns, uint64_t end_ns, bool gzip,
			struct sbuf *out);

/*
 * A request too large for the receiver (413) in two: @body (gzip-compressed, as written above)
 * becomes two requests of about half the samples each, appended gzip-compressed to @a and @b
 * (the same dictionary in both). 0, -E2BIG (a single Sample: cannot split), -EINVAL (not a
 * request of ours) or -ENOMEM.
 */
int otlp_split(const void *body, size_t len, struct sbuf *a, struct sbuf *b);

/* Counts what a request holds: resources and timestamps (samples). 0 or -EINVAL. */
int otlp_count(const void *body, size_t len, size_t *ret_resources, size_t *ret_samples);

#endif
