// SPDX-License-Identifier: MIT
/* liveness: the drain's heartbeat, read by /healthz (include/ember/daemon/service/liveness.h). */
#include "ember/daemon/service/liveness.h"

#include <stdio.h>
#include <string.h>

#include "ember/core/base/clock.h"

#define LOAD(x)	    __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

void liveness_init(struct liveness *l, uint64_t tick_ns, bool samples_expected)
{
	*l = (struct liveness){ .tick_ns = tick_ns ? tick_ns : NSEC_PER_SEC,
				.started_ns = mono_ns(),
				.samples_expected = samples_expected };
}

void liveness_drained(struct liveness *l, uint64_t now_ns, uint64_t newest_ns, uint64_t cpus)
{
	STORE(l->cpus, cpus);
	if (newest_ns > LOAD(l->newest_sample_ns))
		STORE(l->newest_sample_ns, newest_ns);
	STORE(l->last_drain_ns, now_ns);
}

void liveness_set_paused(struct liveness *l, bool paused)
{
	STORE(l->paused, paused);
}

void liveness_busy(struct liveness *l, const char *stage)
{
	if (stage)
		STORE(l->busy_since_ns, mono_ns());
	STORE(l->busy_stage, stage);
}

void liveness_worker_busy(struct liveness *l, const char *stage)
{
	if (!LOAD(l->have_worker))
		STORE(l->have_worker, true);
	if (stage)
		STORE(l->worker_since_ns, mono_ns());
	STORE(l->worker_stage, stage);
}

static double age_s(uint64_t now, uint64_t then)
{
	if (!then)
		return -1.0;
	return now > then ? (double)(now - then) / 1e9 : 0.0;
}

void liveness_check(struct liveness *l, uint64_t now_ns, struct liveness_state *ret)
{
	uint64_t drain = LOAD(l->last_drain_ns), newest = LOAD(l->newest_sample_ns);
	uint64_t since = LOAD(l->busy_since_ns), cpus = LOAD(l->cpus);
	uint64_t wsince = LOAD(l->worker_since_ns);
	const char *wstage = LOAD(l->worker_stage);
	uint64_t worker_ns = LIVENESS_WORKER_TICKS * l->tick_ns;
	uint64_t stall_ns = LIVENESS_STALL_TICKS * l->tick_ns;
	const char *stage = LOAD(l->busy_stage);
	bool paused = LOAD(l->paused);
	/* before the first drain or sample, the time since start stands for its age */
	uint64_t drain_ref = drain ? drain : l->started_ns;
	uint64_t sample_ref = newest ? newest : l->started_ns;
	char busy[96] = "";

	if (stall_ns < 2 * NSEC_PER_SEC)
		stall_ns = 2 * NSEC_PER_SEC;
	if (worker_ns < 5 * NSEC_PER_SEC)
		worker_ns = 5 * NSEC_PER_SEC;
	*ret = (struct liveness_state){ .last_drain_age_s = age_s(now_ns, drain),
					.newest_sample_age_s = age_s(now_ns, newest),
					.busy_stage = stage,
					.busy_s = stage ? age_s(now_ns, since) : 0.0,
					.worker_stage = wstage,
					.worker_busy_s = wstage ? age_s(now_ns, wsince) : 0.0 };
	if (stage)
		snprintf(busy, sizeof(busy), "; busy in '%s' for %.1f s", stage, ret->busy_s);
	if (now_ns > drain_ref && now_ns - drain_ref > stall_ns) {
		ret->stalled = true;
		snprintf(ret->reason, sizeof(ret->reason),
			 "the drain has not run for %.1f s (tick %.3f s)%s%s",
			 (double)(now_ns - drain_ref) / 1e9, (double)l->tick_ns / 1e9,
			 paused ? "; paused by EMBERD_TEST_PAUSE_DRAIN" : "", busy);
	} else if (wstage && now_ns > wsince && now_ns - wsince > worker_ns) {
		/* the drain runs (samples are read and queued, or counted lost past the bound),
		 * but nothing is named or stored */
		ret->stalled = true;
		snprintf(ret->reason, sizeof(ret->reason),
			 "the worker is stuck in '%s' for %.1f s: samples are read but not stored",
			 wstage, (double)(now_ns - wsince) / 1e9);
	} else if (l->samples_expected && cpus && now_ns > sample_ref &&
		   now_ns - sample_ref > stall_ns + l->tick_ns) {
		/* the drain runs, but no sample arrived although the idle task of each of the
		 * online CPUs is sampled: the BPF program does not run (detached, or skipped) */
		ret->stalled = true;
		snprintf(ret->reason, sizeof(ret->reason),
			 "no sample for %.1f s while %llu CPUs are sampled",
			 (double)(now_ns - sample_ref) / 1e9, (unsigned long long)cpus);
	}
}
