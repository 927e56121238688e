// SPDX-License-Identifier: MIT
/* shutdown: stop signals with a deadline (include/ember/daemon/service/shutdown.h). */
#include "ember/daemon/service/shutdown.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct shutdown_guard {
	pthread_t thread;
	bool started;
	int efd;
	uint64_t deadline_ns;
	int exit_code;
	shutdown_signal_fn on_signal;
	shutdown_expired_fn on_expired;
	void *ctx;
	bool stopping; /* atomic */
};

static void *guard_main(void *arg)
{
	struct shutdown_guard *g = arg;
	struct timespec ts;
	uint64_t one = 1;
	sigset_t set;
	int sig, old;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	do
		sig = sigwaitinfo(&set, NULL); /* a cancellation point: shutdown_guard__free() */
	while (sig < 0);
	/* no cancellation inside the callback (a log line holds stdio's lock) */
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	__atomic_store_n(&g->stopping, true, __ATOMIC_RELEASE);
	if (g->on_signal)
		g->on_signal(sig, g->ctx);
	(void)!write(g->efd, &one, sizeof(one));
	(void)pthread_setcancelstate(old, NULL);
	/* the main thread exits the process before this returns, or the deadline ends it */
	ts.tv_sec = (time_t)(g->deadline_ns / 1000000000ULL);
	ts.tv_nsec = (long)(g->deadline_ns % 1000000000ULL);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	(void)pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	if (g->on_expired)
		g->on_expired(g->ctx);
	_exit(g->exit_code);
	return NULL;
}

struct shutdown_guard *shutdown_guard__start(uint64_t deadline_ns, int exit_code,
					     shutdown_signal_fn on_signal,
					     shutdown_expired_fn on_expired, void *ctx)
{
	struct shutdown_guard *g = calloc(1, sizeof(*g));
	sigset_t set;
	int err;

	if (!g)
		return NULL;
	*g = (struct shutdown_guard){ .efd = -1, .deadline_ns = deadline_ns,
				      .exit_code = exit_code, .on_signal = on_signal,
				      .on_expired = on_expired, .ctx = ctx };
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	err = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (err)
		goto fail;
	g->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (g->efd < 0) {
		err = errno;
		goto fail;
	}
	err = pthread_create(&g->thread, NULL, guard_main, g);
	if (err)
		goto fail;
	g->started = true;
	return g;
fail:
	shutdown_guard__free(g);
	errno = err;
	return NULL;
}

int shutdown_guard__fd(const struct shutdown_guard *g)
{
	return g->efd;
}

bool shutdown_guard__stopping(const struct shutdown_guard *g)
{
	return __atomic_load_n(&g->stopping, __ATOMIC_ACQUIRE);
}

void shutdown_guard__free(struct shutdown_guard *g)
{
	if (!g)
		return;
	if (g->started) {
		/* waiting for a signal or sleeping to the deadline: both are cancellation points */
		(void)pthread_cancel(g->thread);
		(void)pthread_join(g->thread, NULL);
	}
	if (g->efd >= 0)
		close(g->efd);
	free(g);
}
