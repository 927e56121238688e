/* SPDX-License-Identifier: MIT */
/*
 * shutdown: SIGTERM and SIGINT stop emberd within a deadline, whatever a stage is doing. A thread
 * of its own waits for them (sigwaitinfo: the signals are blocked in every thread), tells the
 * main loop through an eventfd it polls, and, if the process has not exited by the deadline (a
 * stage blocked in a read of a file a process controls, a long parse), calls the expiry callback
 * and ends the process with _exit(): a hung stage loses the final drain, never the shutdown.
 *
 * Non-logging: the callbacks log. Start once, after the signals are blocked.
 */
#ifndef EMBER_SHUTDOWN_H
#define EMBER_SHUTDOWN_H

#include <stdbool.h>
#include <stdint.h>

struct shutdown_guard; /* opaque */

/* Called on the guard's thread: a stop signal arrived; the guard's deadline runs from now. */
typedef void (*shutdown_signal_fn)(int signo, void *ctx);
/* Called on the guard's thread when the deadline passed: the process ends right after it. */
typedef void (*shutdown_expired_fn)(void *ctx);

/*
 * Blocks SIGTERM and SIGINT in the calling thread (the threads it creates later inherit that)
 * and starts the guard. @deadline_ns: from the signal to _exit(@exit_code). Returns the guard or
 * NULL with errno set. Free with shutdown_guard__free().
 */
struct shutdown_guard *shutdown_guard__start(uint64_t deadline_ns, int exit_code,
					     shutdown_signal_fn on_signal,
					     shutdown_expired_fn on_expired, void *ctx);

/* The eventfd that becomes readable at a stop signal (borrowed, owned by the guard). */
int shutdown_guard__fd(const struct shutdown_guard *g);

/* A stop signal arrived. */
bool shutdown_guard__stopping(const struct shutdown_guard *g);

/* Stops the guard's thread (the deadline no longer applies) and frees it. NULL is a no-op. */
void shutdown_guard__free(struct shutdown_guard *g);

#endif
