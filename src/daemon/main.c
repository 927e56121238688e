// SPDX-License-Identifier: MIT
/*
 * emberd: the always-on profiler daemon. One event loop on the main thread: epoll over a timerfd
 * (the drain tick) and a signalfd (SIGTERM/SIGINT: exit, SIGUSR1: dump, SIGHUP: ignored).
 * The HTTP server (libmicrohttpd) runs its own thread and talks only to the store.
 */
#include <errno.h>
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

#include "ember/config.h"
#include "ember/http.h"
#include "ember/http_export.h"
#include "ember/log.h"
#include "ember/recording.h"
#include "ember/replay.h"
#include "ember/version.h"

struct emberd {
	struct ember_config cfg;
	int epfd, tfd, sfd;
	uint64_t start_ns;	/* CLOCK_MONOTONIC at start */
	bool stop;
	/* HTTP (issue 7): the server; with --replay it serves @replay instead of the store. */
	struct http_server *http;
	struct recording *replay;
	char **replay_files;
	int nr_replay_files;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int loop_setup(struct emberd *d)
{
	struct itimerspec its = { 0 };
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
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
	return 0;
}

static void on_tick(struct emberd *d)
{
	uint64_t expirations;

	if (read(d->tfd, &expirations, sizeof(expirations)) < 0)
		return;
	if (d->http)
		http_server__tick(d->http); /* finishes due ad hoc captures */
	if (d->cfg.dump_after_s && mono_ns() - d->start_ns >= d->cfg.dump_after_s * 1000000000ULL) {
		log_info("--dump-after %llu s reached", (unsigned long long)d->cfg.dump_after_s);
		d->stop = true;
	}
}

static void on_signal(struct emberd *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info("received %s, exiting", strsignal((int)si.ssi_signo));
			d->stop = true;
			break;
		case SIGUSR1:
			log_info("received SIGUSR1: dump");
			break;
		default:
			log_info("received %s, ignoring", strsignal((int)si.ssi_signo));
			break;
		}
	}
}

static int run(struct emberd *d)
{
	struct epoll_event evs[4];
	int n, i;

	while (!d->stop) {
		n = epoll_wait(d->epfd, evs, 4, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_errno(-errno, "epoll_wait failed");
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == d->sfd)
				on_signal(d);
			else if (evs[i].data.fd == d->tfd)
				on_tick(d);
		}
	}
	return 0;
}

static void emberd_fini(struct emberd *d)
{
	/* HTTP: stop the server here, before the store goes (issue 7). */
	http_server__free(d->http);
	d->http = NULL;
	http_export__unregister();
	recording__free(d->replay);
	free(d->replay_files);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	if (d->sfd >= 0)
		close(d->sfd);
}

int main(int argc, char **argv)
{
	struct emberd d = { .epfd = -1, .tfd = -1, .sfd = -1 };
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
	d.start_ns = mono_ns();

	r = loop_setup(&d);
	if (r)
		goto out;
	/* HTTP: start the server on d.cfg.listen here (issue 7); it reads only the store. */
	r = emberd_http_setup(&d.cfg, NULL, d.replay_files, d.nr_replay_files, &d.http, &d.replay);
	if (r)
		goto out;
	log_info("emberd %s started: %llu Hz, tick %llu ms", EMBER_VERSION,
		 (unsigned long long)d.cfg.frequency_hz, (unsigned long long)d.cfg.tick_ms);
	r = run(&d);
out:
	emberd_fini(&d);
	return r ? 1 : 0;
}
