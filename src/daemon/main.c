// SPDX-License-Identifier: MIT
/*
 * emberd: the always-on profiler daemon. One event loop on the main thread: epoll over a timerfd
 * (the drain tick) and a signalfd (SIGTERM/SIGINT: exit, SIGUSR1: dump, SIGHUP: reload).
 * Each tick: the sampler drains the BPF maps, the symbolizer names the frames, the store keeps
 * the timestamped samples. The HTTP server (libmicrohttpd) runs its own thread and talks only to
 * the store.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "ember/core/base/heap.h"
#include "ember/core/base/clock.h"
#include "ember/core/base/log.h"
#include "ember/core/base/sbuf.h"
#include "ember/core/base/strtab.h"
#include "ember/core/base/version.h"
#include "ember/core/base/workq.h"
#include "ember/core/model/profile.h"
#include "ember/core/model/recording.h"
#include "ember/daemon/export/exporter.h"
#include "ember/daemon/export/identity.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/ingest/capture.h"
#include "ember/daemon/ingest/ingest.h"
#include "ember/daemon/ingest/replay.h"
#include "ember/daemon/sample/sampler.h"
#include "ember/daemon/service/config.h"
#include "ember/daemon/service/liveness.h"
#include "ember/daemon/service/shutdown.h"
#include "ember/daemon/service/security.h"
#include "ember/daemon/service/service.h"
#include "ember/daemon/store/store.h"
#include "ember/daemon/store/store_sink.h"
#include "ember/daemon/store/offcpu_sink.h"
#include "ember/daemon/elf/dbgfetch.h"
#include "ember/daemon/symbols/kresolve.h"
#include "ember/daemon/unwind/python.h"
#include "ember/daemon/symbols/symbolizer.h"
#include "ember/daemon/unwind/unwind.h"
#include "ember/daemon/proc/proctrack.h"
#include <linux/types.h>
#include "ember/daemon/sample/bpf_shared.h"

#define NSEC NSEC_PER_SEC
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
/* heap_trim() once a second when malloc keeps more than this free (and an eighth of what is used) */
#define HEAP_TRIM_MIN_FREE (8u << 20)

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
	bool paused;
	struct security_files sec; /* the token and TLS files the server uses */

	struct store *store;
	struct offcpu_sink *offcpu_sink; /* issue 30: off-CPU events' stores; NULL: [offcpu] off */
	struct sampler *sampler;
	struct proc_tracker *procs;	/* the processes' mappings: read once per event */
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
	int final_err;			/* the worker's last dump */
	uint64_t published_ns;		/* atomic: the worker's last publish of the counters */
	pthread_mutex_t wpub_lock;	/* wpub: the worker writes, the drain thread publishes */
	struct worker_pub {
		struct symbolizer_stats symbols;
		struct ingest_stats ingest;
		struct unwind_stats unwind;
		struct proc_tracker_stats procs;
		struct python_stats python;
		struct offcpu_sink_stats offcpu;
	} wpub;
	struct python *py;		/* CPython processes' frames; NULL: [python] enabled = no */
	struct ingest *ingest;	/* groups -> named stacks, for the store and the captures */
	struct store_sink *sink;
	struct sampler_stats last; /* for logging changes of the drop counters */
	uint64_t last_report_ns;
	uint64_t last_prune_ns;
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

/* libbpf's messages as ours: WARN -> warn, INFO -> info, DEBUG only with -v. */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level lvl = level == LIBBPF_WARN ? LOG_LVL_WARN :
			     level == LIBBPF_INFO ? LOG_LVL_INFO : LOG_LVL_DEBUG;
	char *buf = NULL;
	int n;

	if (lvl > log_get_level())
		return 0;
	n = vasprintf(&buf, fmt, ap);
	if (n <= 0) {
		free(buf);
		return 0;
	}
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (!memchr(buf, '\n', (size_t)n)) {
		log_msg(lvl, "libbpf: %s", buf);
	} else {
		/* a verifier log, line by line (log lines are bounded); it can be megabytes: its
		 * first 40 lines, and its last 200, where the reason is */
		size_t lines = 1, i = 0;
		char *p = buf, *nl;

		for (nl = buf; (nl = strchr(nl, '\n')); nl++)
			lines++;
		for (; p; p = nl ? nl + 1 : NULL, i++) {
			nl = strchr(p, '\n');
			if (nl)
				*nl = '\0';
			if (i < 40 || i + 200 >= lines)
				log_msg(lvl, "libbpf: %s", p);
			else if (i == 40)
				log_msg(lvl, "libbpf: [... %zu lines ...]", lines - 240);
		}
	}
	free(buf);
	return 0;
}

/* On the shutdown thread. */
static void on_stop_signal(int signo, void *ctx)
{
	(void)ctx;
	log_info("received %s, exiting", strsignal(signo));
}

/* On the shutdown thread: the main thread did not finish within the deadline. */
static void on_stop_expired(void *ctx)
{
	struct emberd *d = ctx;
	struct liveness_state ls;

	liveness_check(&d->live, mono_ns(), &ls);
	log_warn("exiting without the final drain: the main thread is still busy in '%s' (%.1f s), "
		 "the worker in '%s' (%.1f s)",
		 ls.busy_stage ? ls.busy_stage : "shutdown", ls.busy_s,
		 ls.worker_stage ? ls.worker_stage : "nothing", ls.worker_busy_s);
}

static int loop_setup(struct emberd *d)
{
	struct itimerspec its = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return log_errno(-errno, "cannot block signals");
	d->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->sfd < 0)
		return log_errno(-errno, "cannot create signalfd");
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->tfd < 0)
		return log_errno(-errno, "cannot create timerfd");
	its.it_interval.tv_sec = (time_t)(d->cfg.tick_ms / 1000);
	its.it_interval.tv_nsec = (long)(d->cfg.tick_ms % 1000) * 1000000L;
	its.it_value = its.it_interval;
	if (timerfd_settime(d->tfd, 0, &its, NULL))
		return log_errno(-errno, "cannot arm timerfd");
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return log_errno(-errno, "cannot create epoll");
	ev.data.fd = d->sfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->sfd, &ev))
		return log_errno(-errno, "cannot watch signalfd");
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev))
		return log_errno(-errno, "cannot watch timerfd");
	/* SIGTERM and SIGINT: a thread of their own, which ends the process 1.5 s later if a stage
	 * holds this one (a read that blocks, a long parse) */
	d->guard = shutdown_guard__start(1500 * 1000000ULL, 0, on_stop_signal, on_stop_expired, d);
	if (!d->guard)
		return log_errno(-errno, "cannot start the shutdown thread");
	d->gfd = shutdown_guard__fd(d->guard);
	ev.data.fd = d->gfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->gfd, &ev))
		return log_errno(-errno, "cannot watch the shutdown eventfd");
	return 0;
}

static int on_group(const struct sampler_group *g, void *ctx)
{
	struct emberd *d = ctx;

	if (g->kind) /* issue 30: an off-CPU event */
		return d->offcpu_sink ? ingest__group(d->ingest, g, offcpu_sink__put, d->offcpu_sink)
				      : 0;
	return ingest__group(d->ingest, g, store_sink__put, d->sink);
}

static void report_drops(struct emberd *d, bool force)
{
	struct sampler_stats st;
	uint64_t now = mono_ns();

	if (!force && now - d->last_report_ns < 10 * NSEC)
		return; /* at most one line per 10 s */
	sampler__stats(d->sampler, &st);
#define DELTA(f) (st.f - d->last.f)
	if (DELTA(ringbuf_drops))
		log_warn("ring buffer full: %llu samples lost (raise sampling.ringbuf_size, or "
			 "shorten sampling.tick_ms)",
			 (unsigned long long)DELTA(ringbuf_drops));
	if (DELTA(lost))
		log_warn("%llu samples lost (%llu in BPF: the ring buffer was full; the rest while "
			 "keeping or storing them)",
			 (unsigned long long)DELTA(lost), (unsigned long long)DELTA(lost_in_bpf));
	if (DELTA(cpu_attaches) || DELTA(cpu_detaches))
		log_info("CPU hotplug: %llu attached, %llu detached, %llu CPUs sampled",
			 (unsigned long long)DELTA(cpu_attaches),
			 (unsigned long long)DELTA(cpu_detaches),
			 (unsigned long long)st.cpus_attached);
#undef DELTA
	d->last = st;
	d->last_report_ns = now;
}

/* One line at exit: what was sampled, delivered, dropped, and what it cost. */
static void log_sampler_totals(struct emberd *d)
{
	struct sampler_stats st;
	struct store_stats ss;
	struct ingest_stats in;

	sampler__stats(d->sampler, &st);
	store__stats(d->store, &ss);
	ingest__stats(d->ingest, &in);
	log_info("sampled %llu (idle %llu), delivered %llu, untimed %llu, lost %llu; %llu drains "
		 "of %.0f us avg; BPF %.0f ns/sample; ring %.0f B/sample; %llu bpf() calls; "
		 "store %llu samples in %llu bytes "
		 "(%.2f B/sample records), %llu stacks; stack cache %.0f%% hits",
		 (unsigned long long)st.samples, (unsigned long long)st.idle,
		 (unsigned long long)st.delivered, (unsigned long long)st.untimed,
		 (unsigned long long)st.lost, (unsigned long long)st.drains,
		 st.drains ? (double)st.drain_ns_total / (double)st.drains / 1e3 : 0.0,
		 st.prog_run_cnt ? (double)st.prog_run_ns / (double)st.prog_run_cnt : 0.0,
		 st.samples > st.ringbuf_drops
		     ? (double)st.ring_bytes / (double)(st.samples - st.ringbuf_drops)
		     : 0.0,
		 (unsigned long long)st.bpf_calls, (unsigned long long)ss.samples, (unsigned long long)ss.bytes,
		 ss.samples ? (double)ss.sample_bytes / (double)ss.samples : 0.0,
		 (unsigned long long)ss.stacks,
		 in.cache_hits + in.cache_misses
		     ? 100.0 * (double)in.cache_hits / (double)(in.cache_hits + in.cache_misses)
		     : 0.0);
	if (d->unwind) {
		struct unwind_stats us;

		unwinder__stats(d->unwind, &us);
		log_info("user stacks: %llu by frame pointer (no tables yet), %llu cut short; unwind "
			 "tables: %llu of %llu rows in %llu files, %llu builds in %.0f ms, %llu "
			 "evictions, %llu processes listed, %.1f ms to a process's list on average",
			 (unsigned long long)st.user_fp_walks, (unsigned long long)st.user_truncated,
			 (unsigned long long)us.rows_used, (unsigned long long)us.rows_capacity,
			 (unsigned long long)us.tables, (unsigned long long)us.builds,
			 (double)us.build_ns / 1e6, (unsigned long long)us.evictions,
			 (unsigned long long)us.procs,
			 us.ready_count ? (double)us.ready_ns_total / (double)us.ready_count / 1e6
					: 0.0);
	}
}

/* Writes the folded profile of everything in the store (idle and root per --dump-*). */
static int dump(struct emberd *d)
{
	struct store_filter f = STORE_FILTER_INIT;
	struct strtab *st = NULL;
	struct profile *p = NULL;
	struct sbuf sb = SBUF_INIT;
	size_t *order = NULL, i;
	int fd = STDOUT_FILENO, r = -ENOMEM;

	if (!d->store)
		return 0;
	f.include_idle = d->cfg.dump_idle;
	f.root = (enum store_root)d->cfg.dump_root;
	st = strtab__new();
	if (!st)
		goto out;
	p = store__query(d->store, &f, st);
	if (!p)
		goto out;
	order = profile__sorted(p);
	if (!order)
		goto out;
	for (i = 0; i < profile__nr_stacks(p); i++) {
		profile__stack_text(p, order[i], &sb);
		sbuf_addc(&sb, ' ');
		sbuf_add_count(&sb, profile__count(p, order[i]));
		sbuf_addc(&sb, '\n');
	}
	if (d->cfg.dump_path[0]) {
		fd = open(d->cfg.dump_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			r = log_errno(-errno, "cannot open dump file '%s'", d->cfg.dump_path);
			goto out;
		}
	}
	r = sbuf_write_fd(&sb, fd);
	if (r)
		log_errno(r, "cannot write the dump");
	else
		log_info("dumped %zu stacks, %.0f samples to %s", profile__nr_stacks(p),
			 profile__total(p), d->cfg.dump_path[0] ? d->cfg.dump_path : "stdout");
	if (fd != STDOUT_FILENO)
		close(fd);
out:
	if (r == -ENOMEM)
		log_errno(r, "cannot build the dump");
	free(order);
	profile__free(p);
	strtab__free(st);
	sbuf_fini(&sb);
	return r;
}

/* --- the worker: what reads processes' files, names frames, builds tables (issue 25) -------- */

enum work_kind { W_BATCH, W_TICK, W_UNWIND, W_DUMP, W_FILTER, W_FINAL };

struct work {
	enum work_kind kind;
	struct sampler_batch *b;	/* W_BATCH */
	char comms[EMBER_LIST_MAX];	/* W_FILTER: the new [filter] lists */
	char cgroups[EMBER_LIST_MAX];
};

/* Queues work for the worker; a full queue drops it, counted (a batch's samples as lost). */
static int push_work(struct emberd *d, enum work_kind kind, struct sampler_batch *b)
{
	struct work *w = calloc(1, sizeof(*w));
	int r = w ? 0 : -ENOMEM;

	if (w) {
		*w = (struct work){ .kind = kind, .b = b };
		if (kind == W_FILTER) {
			snprintf(w->comms, sizeof(w->comms), "%s", d->cfg.exclude_comms);
			snprintf(w->cgroups, sizeof(w->cgroups), "%s", d->cfg.exclude_cgroups);
		}
		/* a new process's events and its tables first: its mappings and interpreter are read
		 * while it lives, its tables built (under their budget) while the single loop would
		 * have, not after the naming of the tick's samples queued before them */
		r = (kind == W_BATCH && b && !sampler_batch__samples(b)) || kind == W_UNWIND
			? workq__push_urgent(d->wq, w)
			: workq__push(d->wq, w);
	}
	if (r) {
		free(w);
		if (b)
			sampler_batch__drop(d->sampler, b);
		__atomic_fetch_add(&d->work_dropped, 1, __ATOMIC_RELAXED);
	}
	return r;
}

/* The worker's counters, for the drain thread to publish with the sampler's. */
static void copy_worker_stats(struct emberd *d)
{
	struct worker_pub p = { 0 };

	symbolizer__stats(d->sym, &p.symbols);
	proc_tracker__stats(d->procs, &p.procs);
	ingest__stats(d->ingest, &p.ingest);
	if (d->unwind)
		unwinder__stats(d->unwind, &p.unwind);
	if (d->py)
		python__stats(d->py, &p.python);
	if (d->offcpu_sink)
		offcpu_sink__stats(d->offcpu_sink, &p.offcpu);
	pthread_mutex_lock(&d->wpub_lock);
	d->wpub = p;
	pthread_mutex_unlock(&d->wpub_lock);
}

/*
 * Expiry every 5 s (exited processes keep their state for a grace period, for the samples still
 * in flight). Exec and exit are notified by the BPF programs, so reading every cached process's
 * start time and executable (two /proc reads each) is a safety net: once a minute, or at once
 * after a notification was lost or without the programs.
 */
static void prune(struct emberd *d)
{
	struct sampler_stats st;
	uint64_t lost;

	if (mono_ns() - d->last_prune_ns < 5 * NSEC)
		return;
	sampler__stats(d->sampler, &st);
	lost = st.exec_drops + st.exit_drops + st.events_lost;
	if (!st.exec_notify || !st.exit_notify || lost != d->notify_lost ||
	    mono_ns() - d->last_check_ns >= 60 * NSEC) {
		(void)symbolizer__prune(d->sym);
		d->last_check_ns = mono_ns();
		d->notify_lost = lost;
	} else {
		(void)symbolizer__prune_gone(d->sym);
	}
	if (d->py)
		python__prune(d->py);
	if (d->unwind)
		(void)unwinder__sweep(d->unwind); /* processes gone, whatever was missed */
	(void)proc_tracker__sweep(d->procs);
	d->last_prune_ns = mono_ns();
}

static void unwind_work(struct emberd *d)
{
	if (!d->unwind)
		return;
	liveness_worker_busy(&d->live, "unwind tables");
	__atomic_store_n(&d->unwind_pending, unwinder__work(d->unwind) > 0, __ATOMIC_RELAXED);
}

/* Counters for /api/v1/stats: the sampler's now, the worker's as of its last tick. Either thread. */
static void publish(struct emberd *d)
{
	struct http_published pub = { .have_unwind = d->unwind != NULL, .have_python = d->py != NULL };

	sampler__stats(d->sampler, &pub.sampler);
	(void)sampler__offcpu_stats(d->sampler, &pub.offcpu);
	pthread_mutex_lock(&d->wpub_lock);
	pub.offcpu_sink = d->wpub.offcpu;
	pub.symbols = d->wpub.symbols;
	pub.ingest = d->wpub.ingest;
	pub.unwind = d->wpub.unwind;
	pub.procs = d->wpub.procs;
	pub.python = d->wpub.python;
	pthread_mutex_unlock(&d->wpub_lock);
	if (d->exporter) { /* its own thread's counters, under its lock */
		exporter__stats(d->exporter, pub.exporters);
		pub.have_exporter = true;
	}
	if (d->identity)
		identity__stats(d->identity, &pub.identity);
	http_server__publish(d->http, &pub);
}

/* On the worker: one item, in the order queued. */
static void work_run(void *ctx, void *item)
{
	struct emberd *d = ctx;
	struct work *w = item;
	int r;

	switch (w->kind) {
	case W_BATCH:
		liveness_worker_busy(&d->live, "naming");
		d->real_off_ns = (int64_t)(real_ns() - mono_ns());
		store_sink__set_clock_offset(d->sink, d->real_off_ns);
		if (d->offcpu_sink)
			offcpu_sink__set_clock_offset(d->offcpu_sink, d->real_off_ns);
		r = sampler_batch__deliver(d->sampler, w->b, on_group, d);
		if (r < 0)
			log_errno(r, "delivery failed, samples counted as lost");
		if (d->offcpu_sink && offcpu_sink__flush(d->offcpu_sink) < 0)
			log_debug("chain graph: store full");
		sampler_batch__free(d->sampler, w->b);
		liveness_worker_busy(&d->live, "store");
		(void)store__expire(d->store, clock_ns(CLOCK_REALTIME));
		if (d->offcpu_sink)
			offcpu_sink__expire(d->offcpu_sink, clock_ns(CLOCK_REALTIME));
		/* new processes in it: their tables now (under the budget), not at the next tick */
		unwind_work(d);
		break;
	case W_TICK:
		unwind_work(d);
		liveness_worker_busy(&d->live, "prune");
		prune(d);
		liveness_worker_busy(&d->live, "captures");
		capture_mgr__tick(d->captures);
		if (d->http)
			http_server__tick(d->http); /* finishes due ad hoc captures */
		sampler__events(d->sampler);
		copy_worker_stats(d);
		if (d->http) {
			publish(d);
			__atomic_store_n(&d->published_ns, mono_ns(), __ATOMIC_RELAXED);
		}
		report_drops(d, false);
		/* free pages left in malloc's arenas by renders and batches back to the kernel */
		(void)heap_trim(mono_ns(), HEAP_TRIM_MIN_FREE);
		break;
	case W_UNWIND:
		__atomic_store_n(&d->unwind_queued, false, __ATOMIC_RELAXED);
		unwind_work(d);
		break;
	case W_DUMP:
		liveness_worker_busy(&d->live, "dump");
		(void)dump(d);
		break;
	case W_FILTER:
		if (ingest__set_filter(d->ingest, w->comms, w->cgroups))
			log_warn("reload: [filter] lists too long, ignoring");
		if (d->http)
			http_server__flush_cache(d->http); /* answers rendered under the old filter */
		break;
	case W_FINAL:
		liveness_worker_busy(&d->live, "final report");
		report_drops(d, true);
		log_sampler_totals(d);
		if (d->cfg.dump_after_s)
			d->final_err = dump(d);
		break;
	}
	liveness_worker_busy(&d->live, NULL);
	free(w);
}

/* --- the drain thread: the ring buffer, the tick, the signals; nothing that can wait -------- */

/* Takes what the ring buffer holds (@events_only: the process events) and queues it. */
static void take(struct emberd *d, bool events_only)
{
	struct sampler_batch *b;
	uint64_t cpus, newest;

	liveness_busy(&d->live, "drain");
	b = sampler__take(d->sampler, events_only);
	newest = sampler__newest_ns(d->sampler, &cpus);
	liveness_drained(&d->live, mono_ns(), newest, cpus);
	if (b)
		(void)push_work(d, W_BATCH, b);
	liveness_busy(&d->live, NULL);
}


/*
 * The test knob: while the file named by $EMBERD_TEST_PAUSE_DRAIN exists, no drain (the ring
 * buffer is not watched either: it would wake the loop for ever). True while paused.
 */
static bool pause_knob(struct emberd *d)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = d->rbfd };
	bool paused = d->pause_path && !access(d->pause_path, F_OK);

	if (paused == d->paused)
		return paused;
	d->paused = paused;
	liveness_set_paused(&d->live, paused);
	log_info("%s the drain (%s)", paused ? "pausing" : "resuming", d->pause_path);
	if (d->rbfd >= 0)
		(void)epoll_ctl(d->epfd, paused ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, d->rbfd, &ev);
	return paused;
}

static void on_tick(struct emberd *d)
{
	uint64_t expirations;

	if (read(d->tfd, &expirations, sizeof(expirations)) < 0)
		return;
	service_watchdog_ping(&d->wd); /* WATCHDOG=1: the loop is alive */
	if (!d->sampler) /* --replay: nothing is sampled, no worker */
		return;
	if (pause_knob(d))
		return;
	take(d, false);
	(void)push_work(d, W_TICK, NULL);
	/* the worker publishes after each tick's batch (then the counters agree with the store);
	 * when it has not for as long as it takes to call it stuck (10 ticks, at least 5 s), the
	 * sampler's counters from here, so that they keep showing what is read and lost */
	if (d->http &&
	    mono_ns() - __atomic_load_n(&d->published_ns, __ATOMIC_RELAXED) >
		MAX(LIVENESS_WORKER_TICKS * d->cfg.tick_ms * 1000000ULL, 5 * NSEC))
		publish(d);
	if (d->cfg.dump_after_s && mono_ns() - d->start_ns >= d->cfg.dump_after_s * NSEC) {
		log_info("--dump-after %llu s reached", (unsigned long long)d->cfg.dump_after_s);
		d->stop = true;
	}
}

/* [export] as the exporter's options. */
static void export_opts(const struct ember_config *c, struct exporter_opts *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->otlp_endpoint, sizeof(o->otlp_endpoint), "%s", c->export_otlp_endpoint);
	o->otlp_interval_ms = c->export_otlp_interval_ms;
	snprintf(o->pyroscope_url, sizeof(o->pyroscope_url), "%s", c->export_pyroscope_url);
	o->pyroscope_interval_ms = c->export_pyroscope_interval_ms;
	snprintf(o->pyroscope_tenant, sizeof(o->pyroscope_tenant), "%s",
		 c->export_pyroscope_tenant);
	snprintf(o->basic_auth_file, sizeof(o->basic_auth_file), "%s", c->export_basic_auth_file);
	snprintf(o->bearer_token_file, sizeof(o->bearer_token_file), "%s",
		 c->export_bearer_token_file);
	snprintf(o->ca_file, sizeof(o->ca_file), "%s", c->export_ca_file);
	snprintf(o->client_cert, sizeof(o->client_cert), "%s", c->export_client_cert);
	snprintf(o->client_key, sizeof(o->client_key), "%s", c->export_client_key);
	o->queue_bytes = c->export_queue_bytes;
	o->max_message_bytes = c->export_max_message_bytes;
	o->timeout_ms = c->export_timeout_ms;
	o->retry_max_ms = c->export_retry_max_ms;
	o->freq_hz = c->frequency_hz;
	if (gethostname(o->host_name, sizeof(o->host_name) - 1))
		o->host_name[0] = '\0';
}

/* [export] checked (--check-config and start-up). 0 or -EINVAL, logged. */
static int export_check(const struct ember_config *c)
{
	struct exporter_opts o;
	char err[512];

	export_opts(c, &o);
	if (exporter_check_opts(&o, err, sizeof(err))) {
		log_error("%s", err);
		return -EINVAL;
	}
	if (identity_check_rules(c->export_service_rules)) {
		log_error("export.service_rules: '%s' is not a list of unit, container, pod, exe, "
			  "comm, regex", c->export_service_rules);
		return -EINVAL;
	}
	if (identity_check_service_regex(c->export_service_regex, err, sizeof(err))) {
		log_error("export.service_regex: %s", err);
		return -EINVAL;
	}
	return 0;
}

/* SIGHUP: the service re-reads the configuration; what changed live goes to its owners here. */
static void reload(struct emberd *d)
{
	unsigned int changed;

	if (service_reload(&d->cfg, d->argc, d->argv, &changed) < 0)
		return;
	if ((changed & SERVICE_CHANGE_FILTER) && d->ingest)
		(void)push_work(d, W_FILTER, NULL); /* the worker's ingest */
	if ((changed & SERVICE_CHANGE_EXPORT) && !export_check(&d->cfg) && d->identity) {
		struct exporter_opts o;

		export_opts(&d->cfg, &o);
		(void)identity__set_rules(d->identity, d->cfg.export_service_rules);
		(void)identity__set_service_regex(d->identity, d->cfg.export_service_regex, NULL, 0);
		if (d->exporter)
			(void)exporter__set_opts(d->exporter, &o);
		else if (d->store && (o.otlp_endpoint[0] || o.pyroscope_url[0]))
			d->exporter = exporter__new(d->store, d->identity, d->procs, &o);
	}
	if (changed & SERVICE_CHANGE_TOKEN) {
		if (!security_files_reload_token(&d->cfg, &d->sec) && d->http)
			(void)http_server__set_token(d->http, d->sec.token);
	}
	if (!d->http)
		return;
	if (changed & SERVICE_CHANGE_HTTP_LIMITS)
		http_server__set_limits(d->http, d->cfg.http_max_range_s,
					d->cfg.http_max_response_bytes, d->cfg.http_max_body_bytes);
	else if (changed & (SERVICE_CHANGE_FILTER | SERVICE_CHANGE_LOG))
		http_server__flush_cache(d->http); /* answers rendered under the old settings */
}

static void on_signal(struct emberd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			log_info("received SIGUSR1: dump");
			if (!d->sampler)
				break;
			if (!d->paused)
				take(d, false); /* everything sampled until now, before the dump */
			(void)push_work(d, W_DUMP, NULL);
			break;
		case SIGHUP:
			log_info("received SIGHUP: reloading the configuration");
			liveness_busy(&d->live, "reload");
			reload(d);
			liveness_busy(&d->live, NULL);
			break;
		default:
			log_info("received %s, ignoring", strsignal((int)si.ssi_signo));
			break;
		}
	}
}

/*
 * A new process's first sample or the first exec of a burst woke us up: read the ring; the
 * process events go to the worker when due (sampler__events_due_ns(): a first sample at once,
 * the execs of a burst together, process.exec_batch_us after the first).
 */
static void on_ring(struct emberd *d)
{
	(void)sampler__poll(d->sampler);
}

/*
 * How long the drain may sleep (ns; -1: until woken): tables still to build (a budget per call:
 * come back within 5 ms rather than at the next tick, so that new processes are walked with them
 * soon), process events due. While the worker has a backlog, the events wait in the sampler's
 * batch (read, so the ring does not fill) and go with a later take: a burst of new processes
 * cannot fill the queue ahead of the tick's samples.
 */
static int64_t drain_sleep_ns(struct emberd *d)
{
	int64_t t = -1, ev;
	uint64_t due;

	if (d->paused || !d->sampler)
		return -1;
	if (__atomic_load_n(&d->unwind_pending, __ATOMIC_RELAXED))
		t = 5 * 1000000;
	due = sampler__events_due_ns(d->sampler);
	if (due) {
		ev = workq__len(d->wq) >= 64 ? 1000000 : MAX((int64_t)(due - mono_ns()), 0);
		if (t < 0 || ev < t)
			t = ev;
	}
	return t;
}

static int run(struct emberd *d)
{
	struct epoll_event evs[5];
	struct timespec ts;
	int64_t sleep_ns;
	uint64_t due;
	int n, i;

	while (!d->stop) {
		sleep_ns = drain_sleep_ns(d);
		ts = (struct timespec){ .tv_sec = sleep_ns / 1000000000, .tv_nsec = sleep_ns % 1000000000 };
		/* to the microsecond (epoll_wait()'s milliseconds where the kernel, or valgrind,
		 * has no epoll_pwait2: Linux < 5.11) */
		n = d->no_pwait2 ? -1 : epoll_pwait2(d->epfd, evs, 5, sleep_ns < 0 ? NULL : &ts, NULL);
		if (n < 0 && (d->no_pwait2 || errno == ENOSYS)) {
			d->no_pwait2 = true;
			n = epoll_wait(d->epfd, evs, 5,
				       sleep_ns < 0 ? -1 : (int)((sleep_ns + 999999) / 1000000));
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_errno(-errno, "epoll_wait failed");
		}
		if (!n && d->unwind && !d->paused && __atomic_load_n(&d->unwind_pending, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&d->unwind_queued, true, __ATOMIC_RELAXED))
			(void)push_work(d, W_UNWIND, NULL);
		for (i = 0; i < n && !d->stop; i++) {
			if (evs[i].data.fd == d->gfd)
				d->stop = true;
			else if (evs[i].data.fd == d->sfd)
				on_signal(d);
			else if (evs[i].data.fd == d->tfd)
				on_tick(d);
			else if (evs[i].data.fd == d->rbfd)
				on_ring(d);
		}
		due = d->sampler && !d->paused ? sampler__events_due_ns(d->sampler) : 0;
		if (due && !d->stop && mono_ns() >= due && workq__len(d->wq) < 64)
			take(d, true);
	}
	return 0;
}

/* A new process was sampled: capture its mappings while it lives. */
static void on_new_pid(uint32_t pid, void *ctx)
{
	struct emberd *d = ctx;

	proc_tracker__invalidate(d->procs, pid); /* one read for the three below */
	symbolizer__note_pid(d->sym, pid);
	unwinder__note_pid(d->unwind, pid);
	if (d->py)
		python__note_pid(d->py, pid);
}

/* A sampled process's leader exited: gone, or other threads still run (its next exit tells). */
static void on_exit_pid(uint32_t pid, uint64_t time_ns, bool gone, void *ctx)
{
	struct emberd *d = ctx;

	(void)gone;
	proc_tracker__exit(d->procs, pid);
	symbolizer__check_pid(d->sym, pid);
	if (d->identity) /* a pid reused later is another process: its executable read again */
		identity__proc_event(d->identity, pid, (uint64_t)((int64_t)time_ns + d->real_off_ns),
				     true);
	unwinder__forget_pid(d->unwind, pid); /* a thread left behind notes it again */
	if (d->py)
		python__forget_pid(d->py, pid, time_ns);
}

/*
 * A process called exec (every one, sampled or not: issue 26): its cached mappings are the old
 * image's. The new image is listed for the walker now, from its first instruction, so that a
 * process living a few milliseconds is walked with its tables from its first sample; its next
 * sample calls on_new_pid() again (the BPF program forgot it too), when ld.so has mapped the
 * libraries. @gone: its exit is in the same batch (it lived less than process.exec_batch_us):
 * nothing to read or list.
 */
static void on_exec(uint32_t pid, uint64_t time_ns, bool gone, void *ctx)
{
	struct emberd *d = ctx;

	proc_tracker__exec(d->procs, pid, gone);
	/* kept for the old image's samples not drained yet (up to two ticks' worth) */
	symbolizer__retire_pid(d->sym, pid, time_ns);
	/* the BPF program deleted its list at the exec; deleted again, as a list written since
	 * (from a read before the exec) would walk the new image wrong */
	unwinder__forget_pid(d->unwind, pid);
	if (!gone)
		unwinder__exec_pid(d->unwind, pid);
	/* the exporter names the old image's samples with the old executable, not /proc's new one */
	if (d->identity)
		identity__proc_event(d->identity, pid, (uint64_t)((int64_t)time_ns + d->real_off_ns),
				     false);
	if (d->py)
		python__forget_pid(d->py, pid, time_ns);
}

/*
 * A new process by fork (issue 26 item 2): it runs its parent's image, so it is listed for the
 * walker with its parent's list and shares its parent's mappings, no /proc read. @gone: its exec
 * or exit is in the same batch: nothing to do.
 */
static void on_fork(uint32_t parent, uint32_t child, uint64_t time_ns, bool gone, void *ctx)
{
	struct emberd *d = ctx;

	(void)time_ns;
	proc_tracker__fork(d->procs, parent, child, gone,
			   !gone && !unwinder__fork_pid(d->unwind, parent, child));
}

/* A code object's names, sent by the BPF program at its first sample in a process. */
static void on_pyname(const struct ember_py_name_rec *r, void *ctx)
{
	struct emberd *d = ctx;

	if (d->py)
		python__on_name(d->py, r);
}

/* Identity always (the HTTP filters use it); the exporter's thread when [export] asks. */
static int export_setup(struct emberd *d)
{
	struct exporter_opts o;

	char err[512];

	d->identity = identity__new(NULL, d->cfg.export_service_rules);
	if (!d->identity)
		return log_errno(-errno, "cannot create the workload identity");
	if (identity__set_service_regex(d->identity, d->cfg.export_service_regex, err,
					sizeof(err))) {
		log_error("export.service_regex: %s", err);
		return -EINVAL;
	}
	export_opts(&d->cfg, &o);
	if (!d->store || (!o.otlp_endpoint[0] && !o.pyroscope_url[0]))
		return 0;
	d->exporter = exporter__new(d->store, d->identity, d->procs, &o);
	if (!d->exporter)
		return log_errno(-errno, "cannot start the exporter");
	log_info("exporting%s%s%s%s", o.otlp_endpoint[0] ? " OTLP profiles to " : "",
		 o.otlp_endpoint, o.pyroscope_url[0] ? " Pyroscope profiles to " : "",
		 o.pyroscope_url);
	return 0;
}

static int sampling_setup(struct emberd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct sampler_opts so = {
		.freq_hz = d->cfg.frequency_hz,
		.include_idle = d->cfg.include_idle,
		.idle_stacks = d->cfg.idle_stacks,
		.hardware_event = d->cfg.hardware_event,
		.tick_ms = (uint32_t)d->cfg.tick_ms,
		.ringbuf_bytes = (uint32_t)d->cfg.ringbuf_bytes,
		.unwind_rows = d->cfg.unwind ? (uint32_t)(d->cfg.unwind_memory_bytes / sizeof(struct ember_unwind_prow)) : 0,
		.unwind_procs = (uint32_t)d->cfg.unwind_procs,
		.exec_batch_ns = d->cfg.process_exec_batch_us * 1000,
		.python_procs = (uint32_t)d->cfg.python_procs,
		.python_lines = d->cfg.python_lines,
	};
	struct symbolizer_opts yo = SYMBOLIZER_OPTS_DEFAULT;
	struct unwind_opts uo = UNWIND_OPTS_DEFAULT;
	struct sampler_stats st;
	char err[512];
	int r;

	d->store = store__new(d->cfg.retention_s, d->cfg.memory_limit_bytes);
	if (!d->store)
		return log_errno(-errno, "cannot create the sample store");
	d->sym_st = strtab__new();
	if (!d->sym_st)
		return log_errno(-ENOMEM, "cannot create the symbol table");
	yo.perf_maps = d->cfg.perf_maps;
	yo.inline_frames = d->cfg.inline_frames;
	yo.demangle = d->cfg.demangle;
	yo.max_pids = d->cfg.max_pids;
	yo.debug_dirs = d->cfg.debug_dirs;
	uo.debug_dir = d->cfg.debug_dirs; /* the CFI of a debug file found by build-id too */
	/* debug files from the host's debuginfod servers (DEBUGINFOD_URLS, as perf and gdb read
	 * it), fetched on the worker into a folder searched as one more debug dir */
	if (d->cfg.debuginfod) {
		struct dbgfetch_opts fo = { .cache_dir = d->cfg.debuginfod_cache,
					    .max_bytes = d->cfg.debuginfod_cache_bytes,
					    .timeout_ms = (uint32_t)d->cfg.debuginfod_timeout_ms };

		d->fetch = dbgfetch__new(&fo);
		if (d->fetch) {
			snprintf(d->debug_dirs, sizeof(d->debug_dirs), "%s%s%s", d->cfg.debug_dirs,
				 d->cfg.debug_dirs[0] ? ":" : "", dbgfetch__dir(d->fetch));
			yo.debug_dirs = uo.debug_dir = d->debug_dirs;
			yo.fetch = uo.fetch = d->fetch;
			log_info("debug files of stripped programs from debuginfod ('%s'), kept in "
				 "'%s' (up to %llu MiB, %llu ms a fetch)",
				 getenv("DEBUGINFOD_URLS"), dbgfetch__dir(d->fetch),
				 (unsigned long long)(d->cfg.debuginfod_cache_bytes >> 20),
				 (unsigned long long)d->cfg.debuginfod_timeout_ms);
		} else if (errno != ENOENT) {
			log_warn("no debuginfod: cannot use '%s' for its files: %s, ignoring",
				 d->cfg.debuginfod_cache, strerror(errno));
		}
	}
	yo.addr_offsets = d->cfg.addr_offsets;
	yo.max_elfs = d->cfg.max_elfs;
	yo.max_perfmap_bytes = d->cfg.max_perfmap_bytes;
	yo.max_symbols = d->cfg.max_symbols;
	yo.max_perfmap_entries = d->cfg.max_perfmap_entries;
	yo.max_image_bytes = d->cfg.max_image_bytes;
	yo.max_section_bytes = d->cfg.max_section_bytes;
	/* kernel frames through the kernel's own lookup; /proc/kallsyms where it cannot run */
	d->kres = kresolve__new(err, sizeof(err));
	if (d->kres) {
		yo.kernel_resolve = kresolve__resolve;
		yo.kernel_resolve_ctx = d->kres;
	} else {
		log_info("kernel symbols from /proc/kallsyms: %s", err);
	}
	/* one reader of the processes' mappings for the symbolizer, the unwinder and CPython's */
	d->procs = proc_tracker__new(&(struct proc_tracker_opts){
		.force_maps_read = !d->cfg.process_maps_query });
	if (!d->procs)
		return log_errno(-errno, "cannot create the process tracker");
	yo.procs = uo.procs = d->procs;
	d->sym = symbolizer__new(&yo, d->sym_st);
	if (!d->sym)
		return log_errno(-errno, "cannot create the symbolizer");
	d->ingest = ingest__new(d->sym, d->sym_st);
	if (!d->ingest)
		return log_errno(-errno, "cannot create the ingest");
	if (ingest__set_filter(d->ingest, d->cfg.exclude_comms, d->cfg.exclude_cgroups))
		return log_errno(-EINVAL, "[filter] lists too long");
	d->sink = store_sink__new(d->store, d->sym_st);
	if (!d->sink)
		return log_errno(-errno, "cannot create the store's sink");
	r = offcpu_sink__from_config(&d->cfg, d->sym_st, &so.offcpu, &d->offcpu_sink, err,
				     sizeof(err)); /* issue 30 */
	if (r)
		return log_errno(r, "[offcpu]: %s", err);
	/* a kernel without bpf_loop() (< 5.17: Debian 11, Ubuntu 22.04's GA kernel) cannot run the
	 * walker: sample anyway, by frame pointer, and say once what that costs.
	 * EMBERD_PRETEND_NO_BPF_LOOP=1 takes that path on any kernel (test_degraded.sh) */
	r = sampler_probe_walker();
	if (d->pretend_no_loop || r == 0) {
		so.fp_only = true;
		so.unwind_rows = 0;
		log_warn("kernel has no bpf_loop() (Linux < 5.17)%s: user stacks by frame pointer "
			 "only, without unwind tables or Python frames; programs built without "
			 "frame pointers (most distribution packages) lose their callers: their "
			 "stacks end after 1-3 frames",
			 d->pretend_no_loop ? " [EMBERD_PRETEND_NO_BPF_LOOP]" : "");
	} else if (r < 0) {
		log_debug("bpf_loop() probe failed (%s): trying the BPF walker", strerror(-r));
	}
	if (so.fp_only && so.offcpu.enabled) {
		/* the off-CPU programs walk user stacks with the BPF walker (bpf_loop) */
		log_warn("[offcpu] needs the BPF walker (bpf_loop(), Linux 5.17+): off-CPU events "
			 "are off");
		so.offcpu.enabled = false;
	}
	r = sampler__new(&so, &d->sampler, err, sizeof(err));
	if (r) {
		log_error("cannot start sampling: %s", err);
		return r;
	}
	if (so.unwind_rows) {
		uo.max_procs = (uint32_t)d->cfg.unwind_procs;
		uo.max_section_bytes = d->cfg.max_section_bytes;
		d->unwind = unwinder__new(d->sampler, &uo);
		if (!d->unwind)
			log_warn("user stacks by frame pointer only: cannot set up the unwind tables: "
				 "%s", strerror(errno));
		ingest__set_unwinder(d->ingest, d->unwind);
	}
	if (d->cfg.python && !so.fp_only) {
		struct python_opts po = PYTHON_OPTS_DEFAULT;

		po.lines = d->cfg.python_lines;
		po.max_procs = (uint32_t)d->cfg.python_procs;
		po.max_codes = (uint32_t)d->cfg.python_codes;
		po.procs = d->procs;
		d->py = python__new(d->sampler, d->sym_st, &po);
		if (!d->py)
			log_warn("no Python frames: %s", strerror(errno));
		ingest__set_python(d->ingest, d->py);
		sampler__set_pyname_fn(d->sampler, on_pyname, d);
	}
	sampler__set_pid_fn(d->sampler, on_new_pid, d);
	sampler__set_exec_fn(d->sampler, on_exec, d);
	sampler__set_exit_fn(d->sampler, on_exit_pid, d);
	sampler__set_fork_fn(d->sampler, on_fork, d);
	d->rbfd = sampler__epoll_fd(d->sampler);
	ev.data.fd = d->rbfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->rbfd, &ev))
		return log_errno(-errno, "cannot watch the ring buffer");
	sampler__stats(d->sampler, &st);
	d->last = st;
	log_info("sampling %llu CPUs at %llu Hz with the %s event (BPF program id %u, %u "
		 "instructions verified; whole stacks through a %u KiB ring buffer)",
		 (unsigned long long)st.cpus_attached, (unsigned long long)d->cfg.frequency_hz,
		 st.hardware_event ? "cpu-cycles" : "cpu-clock", st.prog_id, st.prog_verified_insns,
		 st.ringbuf_bytes / 1024);
	return 0;
}

static void emberd_fini(struct emberd *d)
{
	workq__free(d->wq); /* first: the worker uses everything below */
	/* HTTP: stop the server here, before the store goes (issue 7). */
	http_server__free(d->http);
	d->http = NULL;
	exporter__free(d->exporter); /* its thread reads the store */
	identity__free(d->identity);
	capture_mgr__free(d->captures); /* after the server: it uses the manager */
	recording__free(d->replay);
	free(d->replay_files);
	unwinder__free(d->unwind);
	python__free(d->py);
	sampler__free(d->sampler);
	symbolizer__free(d->sym);
	proc_tracker__free(d->procs);
	dbgfetch__free(d->fetch); /* after its two users */
	kresolve__free(d->kres);
	store_sink__free(d->sink);
	offcpu_sink__free(d->offcpu_sink);
	ingest__free(d->ingest);
	strtab__free(d->sym_st);
	store__free(d->store);
	security_files_fini(&d->sec);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
}

int main(int argc, char **argv)
{
	struct emberd d = { .epfd = -1, .tfd = -1, .sfd = -1, .rbfd = -1, .gfd = -1,
			    .wpub_lock = PTHREAD_MUTEX_INITIALIZER };
	char err[1024];
	int r;

	log_set_prog("emberd");
	ember_config_init(&d.cfg);
	/* --replay FILE...: serve recorded profiles (issue 7); taken out before getopt sees it */
	d.nr_replay_files = replay_args_extract(&argc, argv, &d.replay_files);
	if (d.nr_replay_files < 0) {
		log_error("--replay needs at least one file (perf script text or ember-samples)");
		return 2;
	}
	r = ember_config_from_args(&d.cfg, argc, argv, stdout, err, sizeof(err));
	if (r > 0)
		return 0;
	if (r < 0) {
		log_error("%s", err);
		return 2;
	}
	log_set_level((enum log_level)d.cfg.log_level);
	if (d.cfg.check_config) { /* --check-config: files, token, policy; print; exit */
		r = service_check_config(&d.cfg);
		return r ? r : export_check(&d.cfg) ? 2 : 0;
	}
	if (export_check(&d.cfg))
		return 2;
	/* a listen address the policy refuses (non-loopback without TLS and a token) is a
	 * configuration error: exit 2, which the unit does not retry, before loading anything */
	if (security_check_listen(&d.cfg, err, sizeof(err))) {
		log_error("%s", err);
		return 2;
	}
	d.argc = argc; /* SIGHUP re-reads them */
	d.argv = argv;
	service_watchdog_init(&d.wd);
	libbpf_set_print(libbpf_log);
	d.start_ns = mono_ns();
	liveness_init(&d.live, d.cfg.tick_ms * 1000000ULL, d.cfg.include_idle);
	d.pretend_no_loop = getenv("EMBERD_PRETEND_NO_BPF_LOOP") &&
			    !strcmp(getenv("EMBERD_PRETEND_NO_BPF_LOOP"), "1");
	d.pause_path = getenv("EMBERD_TEST_PAUSE_DRAIN");
	if (d.pause_path && !d.pause_path[0])
		d.pause_path = NULL;

	r = loop_setup(&d);
	if (r)
		goto out;
	if (!d.nr_replay_files) {
		r = sampling_setup(&d);
		if (r)
			goto out;
	}
	/* HTTP: the listen policy, the token and TLS files, then the server on d.cfg.listen */
	r = security_files_load(&d.cfg, &d.sec);
	if (r)
		goto out;
	r = emberd_http_setup(&d.cfg, &d.sec, d.store, d.replay_files, d.nr_replay_files, &d.http,
			      &d.replay);
	if (r)
		goto out;
	if (d.sampler && d.http)
		http_server__set_liveness(d.http, &d.live);
	if (d.offcpu_sink && d.http)
		http_server__set_offcpu(d.http, d.offcpu_sink, d.cfg.offcpu_quantum_us,
					d.cfg.frequency_hz);
	if (d.sampler && d.http) { /* captures with a frequency or pid get their own sampler */
		d.captures = capture_mgr__new(&d.cfg, d.ingest, d.sym, d.sampler);
		if (d.captures)
			http_server__set_captures(d.http, d.captures);
		else
			log_warn("captures will use the live store only: out of memory");
	}
	r = export_setup(&d);
	if (r)
		goto out;
	if (d.http)
		http_server__set_identity(d.http, d.identity);
	r = emberd_drop_privileges(&d.cfg); /* BPF attached, socket bound: keep what is needed */
	if (r)
		goto out;
	/* the worker after the drop: it inherits the capabilities this thread kept */
	if (d.sampler) {
		d.wq = workq__new(work_run, &d, 1024);
		if (!d.wq) {
			r = log_errno(-errno, "cannot start the worker thread");
			goto out;
		}
	}
	log_info("emberd %s started: %llu Hz, tick %llu ms; start-up took %.1f ms of CPU",
		 EMBER_VERSION, (unsigned long long)d.cfg.frequency_hz,
		 (unsigned long long)d.cfg.tick_ms, (double)clock_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6);
	service_notify_ready(d.sampler ? "sampling, serving HTTP" : "replaying, serving HTTP");
	service_watchdog_ping(&d.wd); /* the first ping now, not a tick later */
	r = run(&d);
	service_notify_stopping();
	if (!r && d.sampler) {
		sampler__stop(d.sampler); /* then the totals add up: sampled == delivered */
		take(&d, false);
		liveness_busy(&d.live, "final drain");
		/* a full queue: wait for room (the shutdown thread bounds the wait) */
		while (push_work(&d, W_FINAL, NULL) == -ENOSPC)
			(void)nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		workq__finish(d.wq); /* everything queued, then the worker stops */
		r = d.final_err;
	}
out:
	liveness_busy(&d.live, "exit");
	emberd_fini(&d);
	shutdown_guard__free(d.guard); /* last: it covers the frees above */
	return r ? 1 : 0;
}
