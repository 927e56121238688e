// SPDX-License-Identifier: MIT
/*
 * The drain thread: one epoll loop over a timerfd (the drain tick), the sampler's ring buffer, a
 * signalfd (SIGUSR1: dump, SIGHUP: reload) and the shutdown guard's eventfd (SIGTERM/SIGINT);
 * nothing here can wait: what can goes to the worker (worker.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "ember/core/base/log.h"
#include "ember/core/base/workq.h"
#include "ember/daemon/export/export_config.h"
#include "ember/daemon/http/http.h"
#include "ember/daemon/service/shutdown.h"
#include "pipeline_internal.h"

#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

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

int emberd_loop_setup(struct emberd *d)
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
		(void)pipeline_push_work(d, W_BATCH, b);
	liveness_busy(&d->live, NULL);
}


/*
 * The test knob: while the file named by $EMBERD_TEST_PAUSE_DRAIN exists, no drain (the ring
 * buffer is not watched either: it would wake the loop for ever). True while paused.
 */
static bool pause_knob(struct emberd *d)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = d->rbfd };
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
	(void)pipeline_push_work(d, W_TICK, NULL);
	/* the worker publishes after each tick's batch (then the counters agree with the store);
	 * when it has not for as long as it takes to call it stuck (10 ticks, at least 5 s), the
	 * sampler's counters from here, so that they keep showing what is read and lost */
	if (d->http &&
	    mono_ns() - __atomic_load_n(&d->published_ns, __ATOMIC_RELAXED) >
		MAX(LIVENESS_WORKER_TICKS * d->cfg.tick_ms * 1000000ULL, 5 * NSEC))
		pipeline_publish(d);
	if (d->cfg.dump_after_s && mono_ns() - d->start_ns >= d->cfg.dump_after_s * NSEC) {
		log_info("--dump-after %llu s reached", (unsigned long long)d->cfg.dump_after_s);
		d->stop = true;
	}
}

/* SIGHUP: the service re-reads the configuration; what changed live goes to its owners here. */
static void reload(struct emberd *d)
{
	unsigned int changed;

	if (service_reload(&d->cfg, d->argc, d->argv, &changed) < 0)
		return;
	if ((changed & SERVICE_CHANGE_FILTER) && d->ingest)
		(void)pipeline_push_work(d, W_FILTER, NULL); /* the worker's ingest */
	if (changed & SERVICE_CHANGE_EXPORT) {
		struct exporter *was = d->exporter;

		export_reload(&d->cfg, d->store, d->procs, d->share, d->identity, &d->exporter);
		if (d->exporter && !was && d->memio_sink) /* a new one: the memory and I/O stores */
			exporter__set_memio(d->exporter, d->memio_sink);
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
			(void)pipeline_push_work(d, W_DUMP, NULL);
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

int emberd_run(struct emberd *d)
{
	struct epoll_event evs[5];
	struct timespec ts;
	int64_t sleep_ns;
	uint64_t due;
	int n, i;

	while (!d->stop) {
		sleep_ns = drain_sleep_ns(d);
		ts = (struct timespec){ .tv_sec = sleep_ns / 1000000000,
					.tv_nsec = sleep_ns % 1000000000 };
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
		if (!n && d->unwind && !d->paused &&
		    __atomic_load_n(&d->unwind_pending, __ATOMIC_RELAXED) &&
		    !__atomic_exchange_n(&d->unwind_queued, true, __ATOMIC_RELAXED))
			(void)pipeline_push_work(d, W_UNWIND, NULL);
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

/*
 * Edge-triggered: the drain wakes when a record asks for it (a new process's first sample, the
 * first exec of a burst, the watermark), not whenever records are waiting. The ring's own poll
 * is level-triggered: each of the loop's timed waits (an exec's due time, a table build's
 * come-back) would return at once for the samples queued without a wake-up, and read them: one
 * more wake-up each time. They are read at the tick, or with the next wake-up, which reads all.
 */
int emberd_watch_ring(struct emberd *d)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	d->rbfd = sampler__epoll_fd(d->sampler);
	ev.data.fd = d->rbfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->rbfd, &ev))
		return log_errno(-errno, "cannot watch the ring buffer");
	return 0;
}

int emberd_finish(struct emberd *d)
{
	sampler__stop(d->sampler); /* then the totals add up: sampled == delivered */
	take(d, false);
	liveness_busy(&d->live, "final drain");
	/* a full queue: wait for room (the shutdown thread bounds the wait) */
	while (pipeline_push_work(d, W_FINAL, NULL) == -ENOSPC)
		(void)nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	workq__finish(d->wq); /* everything queued, then the worker stops */
	return d->final_err;
}
