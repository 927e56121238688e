// SPDX-License-Identifier: MIT
/* struct liveness_state described once (core/base/counters.h): "liveness" in /api/v1/stats, the
 * age gauges and ember_stalled in /metrics. A new value: a field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/service/liveness.h"

#define F(f) .off = offsetof(struct liveness_state, f)
#define SECONDS(f) F(f), .value = COUNTER_DOUBLE, .unit = "s", .json_fmt = "%.3f"

static const char *state(const void *p)
{
	return ((const struct liveness_state *)p)->stalled ? "stalled" : "ok";
}

static const char *reason(const void *p)
{
	return ((const struct liveness_state *)p)->reason;
}

static const char *busy_stage(const void *p)
{
	return ((const struct liveness_state *)p)->busy_stage; /* NULL: null */
}

static const char *worker_stage(const void *p)
{
	return ((const struct liveness_state *)p)->worker_stage;
}

const struct counter_desc liveness_counters[] = {
	{ .key = "state", .value = COUNTER_STR, .str = state },
	{ .key = "stalled", F(stalled), .value = COUNTER_BOOL, .metric = "ember_stalled",
	  .type = COUNTER_GAUGE,
	  .help = "1 while /healthz answers 503: the drain stalled or samples stopped arriving.",
	  .flags = COUNTER_NO_JSON },
	{ .key = "reason", .value = COUNTER_STR, .str = reason },
	{ .key = "last_drain_age_s", SECONDS(last_drain_age_s),
	  .metric = "ember_last_drain_age_seconds", .type = COUNTER_GAUGE,
	  .help = "Seconds since the drain thread last drained the samples (-1: never)." },
	{ .key = "newest_sample_age_s", SECONDS(newest_sample_age_s),
	  .metric = "ember_newest_sample_age_seconds", .type = COUNTER_GAUGE,
	  .help = "Seconds since the newest sample drained was taken (-1: none yet)." },
	{ .key = "busy_stage", .value = COUNTER_STR, .str = busy_stage },
	{ .key = "busy_s", SECONDS(busy_s) },
	{ .key = "worker_stage", .value = COUNTER_STR, .str = worker_stage },
	{ .key = "worker_busy_s", SECONDS(worker_busy_s) },
};
const size_t liveness_counters_n = COUNTERS_N(liveness_counters);
