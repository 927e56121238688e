/* SPDX-License-Identifier: MIT */
/*
 * liveness: whether emberd is still sampling, as the thread that drains samples last said so,
 * read by any thread (the HTTP server's /healthz, /api/v1/stats, /metrics) without a lock. The
 * drain thread stamps each drain and the newest sample it read; any thread that runs a stage
 * marks it busy around the work, so that a stalled daemon names the stage it is stuck in.
 *
 * Plain data with atomics: embed it, liveness_init() it, no fini. Thread-safe.
 */
#ifndef EMBER_LIVENESS_H
#define EMBER_LIVENESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ember/core/base/counters.h"

struct liveness {
	uint64_t tick_ns;		/* the drain interval */
	uint64_t started_ns;		/* CLOCK_MONOTONIC at liveness_init() */
	bool samples_expected;		/* every online CPU yields samples (the idle task is
					   sampled): no new sample for a while is a stall */
	/* atomics below; CLOCK_MONOTONIC ns, 0: never */
	uint64_t last_drain_ns;
	uint64_t newest_sample_ns;
	uint64_t cpus;			/* CPUs sampled, as of the last drain */
	const char *busy_stage;		/* a string literal; NULL: the loop is waiting */
	uint64_t busy_since_ns;
	bool paused;			/* the test knob (EMBERD_TEST_PAUSE_DRAIN) holds the drain */
	bool have_worker;		/* a worker names the samples: watch it too */
	const char *worker_stage;	/* what the worker does (a literal); NULL: it waits */
	uint64_t worker_since_ns;
};

/* A stall is called after this many ticks without a drain (and at least 2 s); a worker is called
 * stuck after this many ticks in one stage (and at least 5 s: a big file takes its time). */
#define LIVENESS_STALL_TICKS 3
#define LIVENESS_WORKER_TICKS 10

void liveness_init(struct liveness *l, uint64_t tick_ns, bool samples_expected);

/* The drain ran at @now_ns; @newest_ns: the newest sample's time it read (0: none new). */
void liveness_drained(struct liveness *l, uint64_t now_ns, uint64_t newest_ns, uint64_t cpus);
void liveness_set_paused(struct liveness *l, bool paused);

/* Marks @stage (a string literal) busy from now on the drain thread; NULL: done. */
void liveness_busy(struct liveness *l, const char *stage);
/* The same for the worker (and says there is one). */
void liveness_worker_busy(struct liveness *l, const char *stage);

struct liveness_state {
	bool stalled;
	char reason[256];		/* "" when not stalled */
	double last_drain_age_s;	/* -1: never drained */
	double newest_sample_age_s;	/* -1: no sample yet */
	const char *busy_stage;		/* NULL: waiting */
	double busy_s;			/* for how long */
	const char *worker_stage;	/* NULL: waiting, or no worker */
	double worker_busy_s;
};

/* struct liveness_state described once (liveness_counters.c, core/base/counters.h) */
extern const struct counter_desc liveness_counters[];
extern const size_t liveness_counters_n;

/* The state at @now_ns (CLOCK_MONOTONIC). */
void liveness_check(struct liveness *l, uint64_t now_ns, struct liveness_state *ret);

#endif
