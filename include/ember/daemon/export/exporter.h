/* SPDX-License-Identifier: MIT */
/*
 * exporter: pushes the store's samples to the fleet, on a thread of its own (sampling never
 * waits on the network: the thread reads the store like an HTTP query, a batch under the lock
 * at a time).
 *
 *   OTLP       every otlp_interval (+-10% jitter): the samples appended to the store since the
 *              last round (store__foreach_since(): late ones too, each with its own time) as
 *              OTLP profiles (core/formats/otlp.h), POST <endpoint>/v1development/profiles,
 *              application/x-protobuf, Content-Encoding: gzip; a message past max_message is cut
 *              in two at the writer, a 413 splits it again (otlp_split()).
 *   Pyroscope  every pyroscope_interval: one pprof profile per service (and container/pod),
 *              POST <url>/ingest?name=<service>.cpu{service_name=..,container_id=..,pod_uid=..}
 *              &from=&until=&sampleRate=&spyName=ember&format=pprof, multipart "profile";
 *              X-Scope-OrgID and basic (user:password file) or bearer (token file) auth.
 *
 * A Pyroscope 413 drops the batch (counted: too_large; a pprof profile is not split). Stopping
 * ends a request in flight at once (libcurl's progress callback).
 *
 * Delivery: every batch goes through one queue bounded in bytes (queue_memory): past the bound
 * the oldest batches are dropped, counted with their samples. A batch is retried with backoff
 * (1 s doubling up to 60 s, +-20% jitter, or the Retry-After the server gave) on timeouts,
 * connection errors, 429 and 5xx; dropped and counted on another 4xx. Requests time out after
 * timeout (whole request) and a transfer slower than 1 KiB/s for 5 s is cut.
 */
#ifndef EMBER_EXPORTER_H
#define EMBER_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ember/daemon/export/identity.h"
#include "ember/core/base/counters.h"

struct store;

#define EXPORTER_PATH_MAX 4096

struct exporter_opts {
	char otlp_endpoint[EXPORTER_PATH_MAX];	/* base URL; "": off */
	uint64_t otlp_interval_ms;
	char pyroscope_url[EXPORTER_PATH_MAX];	/* base URL; "": off */
	uint64_t pyroscope_interval_ms;
	char pyroscope_tenant[256];		/* X-Scope-OrgID; "": none */
	char basic_auth_file[EXPORTER_PATH_MAX];  /* "user:password"; "": none */
	char bearer_token_file[EXPORTER_PATH_MAX]; /* a token; "": none */
	char ca_file[EXPORTER_PATH_MAX];	/* CA bundle; "": the system's */
	char client_cert[EXPORTER_PATH_MAX];	/* PEM; "": none */
	char client_key[EXPORTER_PATH_MAX];
	uint64_t queue_bytes;			/* the queue's bound */
	uint64_t max_message_bytes;		/* an OTLP message's bound (uncompressed) */
	uint64_t timeout_ms;			/* a request's bound */
	uint64_t retry_max_ms;			/* the longest backoff */
	uint64_t freq_hz;			/* the sampling frequency (the period) */
	char host_name[256];
	struct elfshare *share;			/* the symbolizer's images, borrowed by frameloc
						   (elfsym.h); NULL: it reads its files itself */
};

enum exporter_kind { EXPORTER_OTLP, EXPORTER_PYROSCOPE, EXPORTER_KINDS };

enum exporter_fail { EXPORT_FAIL_TIMEOUT, EXPORT_FAIL_CONNECT, EXPORT_FAIL_429,
		     EXPORT_FAIL_5XX, EXPORT_FAIL_4XX, EXPORT_FAIL_TOO_LARGE, EXPORT_FAIL_OTHER,
		     EXPORT_FAILS };

/* The names of enum exporter_fail ("timeout", "connect", "http_429", ...). */
extern const char *const exporter_fail_names[EXPORT_FAILS];

struct exporter_stats {
	bool enabled;
	uint64_t requests;		/* answered 2xx */
	uint64_t samples;		/* ... holding this many samples */
	uint64_t bytes;			/* ... of this many bytes on the wire (bodies) */
	uint64_t failed[EXPORT_FAILS];	/* attempts that failed, by reason */
	uint64_t retries;
	uint64_t splits;		/* 413: a message split in two */
	uint64_t bodies_cut;		/* answers whose body passed 64 KiB: not read further */
	uint64_t queued, queued_bytes, queued_samples; /* gauges */
	uint64_t dropped, dropped_samples; /* batches dropped (queue full, rejected) */
	uint64_t last_success_ns;	/* Unix ns; 0: never */
	uint64_t batches;		/* batches made */
	uint64_t build_ns;		/* time spent making them (store read + encode) */
	/* OTLP: symbolized native frames given a mapping (frameloc.h), or not; files read */
	uint64_t frames_located, frames_unlocated, frame_files, frame_files_deferred;
	uint64_t frame_procs_deferred;
	uint64_t frame_procs_refused;	/* frameloc: lookups in a process not held (its cap) */
	uint64_t frame_files_ns;
	uint64_t frame_files_borrowed;	/* frameloc: of frame_files, the symbolizer's image borrowed */
	uint64_t frame_files_unshared;	/* frameloc: files the symbolizer held no image of: left */
	uint64_t frame_images_kept;	/* gauge: images the symbolizer let go, kept for frameloc */
	uint64_t frame_images_kept_found; /* ... found by frameloc or identity while kept */
};

struct exporter; /* opaque */

/* Starts the thread. @store, @id and @procs (the process tracker: the frames' mappings)
 * borrowed. NULL + errno. */
struct proc_tracker;
struct exporter *exporter__new(struct store *store, struct identity *id,
			       struct proc_tracker *procs, const struct exporter_opts *o);
/* Stops the thread (an attempt in flight ends within timeout_ms); NULL is a no-op. */
void exporter__free(struct exporter *e);
/*
 * Memory and I/O events pushed too (OTLP only): each store of @k that is on (memio_sink.h),
 * from now on, one OTLP message per store and round with its own period type (page_faults/
 * pages, vm_growth/bytes, block_io/bytes, block_io_latency/nanoseconds, malloc/bytes) and the
 * quantum as period. @k borrowed, outlives the exporter.
 */
struct memio_sink;
void exporter__set_memio(struct exporter *e, const struct memio_sink *k);
/* New settings (a reload): the next round uses them; the queue is kept. 0. */
int exporter__set_opts(struct exporter *e, const struct exporter_opts *o);
/* struct exporter_stats described once (exporter_counters.c, core/base/counters.h) */
extern const struct counter_desc exporter_counters[];
extern const size_t exporter_counters_n;
/* "otlp", "pyroscope": the names of enum exporter_kind in the stats and the metrics */
extern const char *const exporter_kind_names[EXPORTER_KINDS];

/* Any thread. @ret[EXPORTER_KINDS]. */
void exporter__stats(struct exporter *e, struct exporter_stats *ret);

/* Checks the options (URLs, files readable): 0 or -EINVAL with a reason in @err. */
int exporter_check_opts(const struct exporter_opts *o, char *err, size_t errlen);

#endif
