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
	bool quit;     /* atomic: shutdown_guard__free() wakes the thread to return */
};

/*
 * The guard thread is woken to return by SIGUSR2 sent to it alone (pthread_kill), not cancelled:
 * glibc's pthread_cancel() loads libgcc_s at run time to unwind, and where that library is
 * missing (a minimal initramfs, test_kernel61) the process aborted at exit instead of exiting 0.
 */
#define WAKE_SIGNAL SIGUSR2

static uint64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static bool quitting(struct shutdown_guard *g)
{
	return __atomic_load_n(&g->quit, __ATOMIC_ACQUIRE);
}

static void *guard_main(void *arg)
{
	struct shutdown_guard *g = arg;
	struct timespec ts;
	uint64_t one = 1, now_ns, end_ns;
	sigset_t set, wake;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, WAKE_SIGNAL);
	for (;;) {
		sig = sigwaitinfo(&set, NULL);
		if (quitting(g))
			return NULL;
		if (sig == SIGTERM || sig == SIGINT)
			break;
	}
	__atomic_store_n(&g->stopping, true, __ATOMIC_RELEASE);
	if (g->on_signal)
		g->on_signal(sig, g->ctx);
	(void)!write(g->efd, &one, sizeof(one));
	/* the main thread exits the process before the deadline (its shutdown_guard__free() wakes
	 * this thread), or the deadline ends it */
	sigemptyset(&wake);
	sigaddset(&wake, WAKE_SIGNAL);
	end_ns = mono_now() + g->deadline_ns;
	for (;;) {
		if (quitting(g))
			return NULL;
		now_ns = mono_now();
		if (now_ns >= end_ns)
			break;
		ts.tv_sec = (time_t)((end_ns - now_ns) / 1000000000ULL);
		ts.tv_nsec = (long)((end_ns - now_ns) % 1000000000ULL);
		(void)sigtimedwait(&wake, NULL, &ts);
	}
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
	sigaddset(&set, WAKE_SIGNAL);
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
		/* waiting for a signal or for the deadline: woken, it returns */
		__atomic_store_n(&g->quit, true, __ATOMIC_RELEASE);
		(void)pthread_kill(g->thread, WAKE_SIGNAL);
		(void)pthread_join(g->thread, NULL);
	}
	if (g->efd >= 0)
		close(g->efd);
	free(g);
}
