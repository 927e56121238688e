/* SPDX-License-Identifier: MIT */
/*
 * The running daemon: the objects main.c creates (plain data, filled and freed by main.c), and
 * the two threads that run them (docs/architecture.md, "Threads"):
 *   - the drain (pipeline/drain.c): one epoll loop over a timerfd (the tick), the BPF ring
 *     buffer, a signalfd (SIGUSR1: dump, SIGHUP: reload) and the shutdown guard's eventfd;
 *     nothing there can wait;
 *   - the worker (pipeline/worker.c): batches named and stored, the tick's housekeeping
 *     (unwind tables, prune, captures, the counters published), dumps, a new [filter], the
 *     final report;
 * and the process events the sampler reports, fanned out to their stages (procevents.c).
 */
#ifndef EMBER_DAEMON_PIPELINE_EMBERD_H
#define EMBER_DAEMON_PIPELINE_EMBERD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ember/daemon/elf/filecache.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/proc/proctrack.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/service/service.h"
#include "ember/daemon/store/memio_sink.h"
#include "ember/daemon/store/offcpu_sink.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/python.h"
#include "ember/daemon/unwind/hotspot.h"
#include "ember/daemon/unwind/v8.h"
#include "ember/daemon/unwind/unwind.h"

struct ember_py_name_rec;

struct emberd {
	struct ember_config cfg;
	int argc; /* the command line, re-read on SIGHUP */
	char **argv;
	int epfd, tfd, sfd;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at start */
	bool stop;
	struct service_watchdog wd;
	struct liveness live;		/* the drain's heartbeat, for /healthz */
	struct shutdown_guard *guard;	/* SIGTERM/SIGINT, with a deadline */
	int gfd;			/* the guard's eventfd */
	const char *pause_path;		/* $EMBERD_TEST_PAUSE_DRAIN: no drain while it exists */
	bool pretend_no_loop;		/* $EMBERD_PRETEND_NO_BPF_LOOP=1: sample as without bpf_loop() */
	bool pretend_hs_refused;	/* $EMBERD_PRETEND_HS_REFUSED=1: as if the verifier refused
					   the HotSpot step */
	bool paused;
	struct security_files sec; /* the token and TLS files the server uses */

	struct store *store;
	struct offcpu_sink *offcpu_sink; /* off-CPU events' stores; NULL: [offcpu] off */
	struct memio_sink *memio_sink;	/* memory and I/O events' stores; NULL: all off */
	struct sampler *sampler;
	struct proc_tracker *procs;	/* the processes' mappings: read once per event */
	struct filecache *files;	/* the mapped files' facts, shared by their readers */
	struct elfshare *share;		/* the symbolizer's images, for other threads (elfsym.h) */
	struct symbolizer *sym;
	struct kresolve *kres;	/* NULL: kernel symbols from /proc/kallsyms */
	struct strtab *sym_st;	/* the symbolizer's names (main thread only) */
	struct unwinder *unwind;	/* the BPF walker's tables; NULL: frame pointers only */
	struct dbgfetch *fetch;		/* debuginfod; NULL: DEBUGINFOD_URLS unset, or off */
	char debug_dirs[2 * EMBER_PATH_MAX]; /* symbols.debug_dirs and the debuginfod folder */
	bool unwind_pending;		/* atomic: processes wait for tables: work again soon */
	bool unwind_queued;		/* atomic: a W_UNWIND is queued */
	struct workq *wq;		/* the worker: naming, tables, housekeeping */
	uint64_t work_dropped;		/* atomic: work not queued (full queue) */
	uint64_t queued_events;		/* atomic: batches with process events queued in order */
	int final_err;			/* the worker's last dump */
	uint64_t published_ns;		/* atomic: the worker's last publish of the counters */
	pthread_mutex_t wpub_lock;	/* wpub: the worker writes, the drain thread publishes */
	struct worker_pub {
		struct symbolizer_stats symbols;
		struct ingest_stats ingest;
		struct unwind_stats unwind;
		struct proc_tracker_stats procs;
		struct filecache_stats files;
		struct python_stats python;
		struct v8_stats v8;
		struct hotspot_stats hotspot;
		struct offcpu_sink_stats offcpu;
		struct memio_sink_stats memio;
		uint64_t names_bytes; /* the frame names' table (sym_st) */
	} wpub;
	struct python *py;		/* CPython processes' frames; NULL: [python] enabled = no */
	struct v8 *v8;			/* Node processes' JavaScript frames; NULL: none */
	struct hotspot *hs;		/* JVMs' Java frames; NULL: none */
	struct ingest *ingest;	/* groups -> named stacks, for the store and the captures */
	struct store_sink *sink;
	struct sampler_report report; /* for logging changes of the drop counters */
	uint64_t report_evicted_memory, report_evicted_ns; /* ... and of the store's for memory */
	uint64_t last_prune_ns;
	uint64_t names_base;	/* sym_st's bytes a prune after its last renewal (0: not yet) */
	bool names_renewed;	/* ... renewed at the last prune: its base is measured at the next */
	uint64_t last_check_ns;		/* the last prune that read every process's start time */
	uint64_t notify_lost;		/* exec and exit notifications lost, as of that prune */
	int rbfd;		/* the sampler's ring buffer epoll fd, -1 without sampling */
	bool no_pwait2;		/* epoll_pwait2() said ENOSYS: epoll_wait() */

	struct identity *identity;	/* cgroup ids -> workloads, service names */
	int64_t real_off_ns;		/* the store's clock - the sampler's, for the batch delivered */
	struct exporter *exporter;	/* OTLP and Pyroscope pushes; NULL: [export] off */
	struct http_server *http;	/* serves the store, or @replay with --replay */
	struct capture_mgr *captures;	/* second samplers of ad hoc captures (capture.c) */
	struct recording *replay;
	char **replay_files;
	int nr_replay_files;
};


/* The timerfd, the signalfd, the epoll set and the shutdown guard. 0 or -errno, logged. */
int emberd_loop_setup(struct emberd *d);
/* The ring buffer in the epoll set (after sampler__new()). 0 or -errno, logged. */
int emberd_watch_ring(struct emberd *d);
/* The worker thread (after the privileges were dropped: it inherits them). 0 or -errno. */
int emberd_worker_start(struct emberd *d);
/* The drain loop, until SIGTERM/SIGINT or --dump-after. 0 or -errno. */
int emberd_run(struct emberd *d);
/* After emberd_run(): the last samples drained, the final report and dump, the worker
 * stopped. The final dump's result (0 or -errno). */
int emberd_finish(struct emberd *d);

/* The sampler's process events (sampler__set_*_fn(), @ctx the struct emberd), fanned out to
 * the process tracker, the symbolizer, the unwinder, the Python reader and the identity. */
void emberd_on_new_pid(uint32_t pid, bool exec_follows, const uint64_t *ips, size_t n,
		       void *ctx);
void emberd_on_exit_pid(uint32_t pid, uint64_t time_ns, bool gone, void *ctx);
void emberd_on_exec(uint32_t pid, uint64_t time_ns, bool gone, const struct sampler_image *img,
		    void *ctx);
void emberd_on_fork(uint32_t parent, uint32_t child, uint64_t time_ns, bool gone, void *ctx);
void emberd_on_pyname(const struct ember_py_name_rec *r, void *ctx);

#endif
