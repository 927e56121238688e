// SPDX-License-Identifier: MIT
/* struct http_load_stats described once (core/base/counters.h): the server's bounds at work in
 * "http" of /api/v1/stats and the ember_http_* families (docs/security.md). A new counter: a
 * field, one row here. */
#include <stddef.h>

#include "ember/core/base/counters.h"
#include "ember/daemon/http/http.h"

#define U64(f) .off = offsetof(struct http_load_stats, f), .value = COUNTER_U64

static const char *closed_name(unsigned int i)
{
	return i == 0 ? "timeout" : i == 1 ? "pressure" : "?";
}

static const char *rejected_name(unsigned int i)
{
	static const char *const names[] = { "renders", "memory", "connections", "stopping" };

	return i < COUNTERS_N(names) ? names[i] : "?";
}

#define RENDERS(s) .metric = "ember_http_renders", .label = "state", .label_value = s

const struct counter_desc http_load_counters[] = {
	{ .key = "responses_aborted", U64(responses_aborted),
	  .metric = "ember_http_responses_aborted_total", .type = COUNTER_COUNTER,
	  .help = "HTTP responses the client did not take to the end." },
	{ .key = "connections", U64(connections), .metric = "ember_http_connections",
	  .type = COUNTER_GAUGE,
	  .help = "HTTP connections, by state (open: all of them; busy: serving a request).",
	  .label = "state", .label_value = "open" },
	{ .key = "busy_connections", U64(busy_connections), .metric = "ember_http_connections",
	  .label = "state", .label_value = "busy" },
	{ .key = "connections_accepted", U64(accepted) },
	/* evicted_timeout, evicted_pressure: two uint64_t in a row */
	{ .key = "connections_closed", U64(evicted_timeout), .nr = 2, .name = closed_name,
	  .array_label = "reason", .metric = "ember_http_connections_closed_total",
	  .type = COUNTER_COUNTER,
	  .help = "HTTP connections closed by emberd, by reason (timeout: no whole request within "
		  "http.request_timeout; pressure: idle when the connection limits were reached)." },
	{ .key = "renders", U64(renders), .metric = "ember_http_renders_total",
	  .type = COUNTER_COUNTER, .help = "Renders started." },
	{ .key = "renders_cancelled", U64(renders_cancelled),
	  .metric = "ember_http_renders_cancelled_total", .type = COUNTER_COUNTER,
	  .help = "Renders stopped or dropped because their client had gone." },
	{ .key = "renders_running", U64(renders_running), RENDERS("running"),
	  .type = COUNTER_GAUGE,
	  .help = "Renders now, by state (running, queued, waiting: for the clock, pprof's "
		  "wait=1)." },
	{ .key = "renders_queued", U64(renders_queued), RENDERS("queued") },
	{ .key = "renders_waiting", U64(renders_waiting), RENDERS("waiting") },
	/* rejected_renders .. rejected_stopping: four uint64_t in a row */
	{ .key = "rejected", U64(rejected_renders), .nr = 4, .name = rejected_name,
	  .array_label = "reason", .metric = "ember_http_rejected_total", .type = COUNTER_COUNTER,
	  .help = "Requests answered 503 by a bound, by reason (renders: render queue full; "
		  "memory: http.response_memory in use; connections: beyond the connection limits; "
		  "stopping)." },
	{ .key = "response_bytes", U64(response_bytes), .unit = "bytes",
	  .metric = "ember_http_response_memory_bytes", .type = COUNTER_GAUGE,
	  .help = "Memory of response bodies: being rendered, cached or sent." },
	{ .key = "response_bytes_peak", U64(response_bytes_peak), .unit = "bytes" },
	{ .key = "response_memory", U64(response_memory_bytes), .unit = "bytes",
	  .metric = "ember_http_response_memory_max_bytes", .type = COUNTER_GAUGE,
	  .help = "The bound on it (http.response_memory)." },
};
const size_t http_load_counters_n = COUNTERS_N(http_load_counters);

/* struct http_memory_stats: "memory" in /api/v1/stats, the ember_memory_* families. */
#define MEM(f) .off = offsetof(struct http_memory_stats, f), .unit = "bytes"

static const char *part_name(unsigned int i)
{
	static const char *const names[HTTP_MEM__NR] = {
		"start",       "store",	 "names",  "symbols", "file_cache",
		"processes",   "stack_cache", "python", "v8",	   "unwind",  "offcpu",
		"memio",       "responses",   "renders", "captures",
	};

	return i < HTTP_MEM__NR ? names[i] : "?";
}

static double accounted_share(const void *p)
{
	const struct http_memory_stats *m = p;

	return m->heap_in_use ? (double)m->accounted / (double)m->heap_in_use : 0.0;
}

const struct counter_desc http_memory_counters[] = {
	{ .key = "heap_in_use", MEM(heap_in_use), .value = COUNTER_U64 },
	{ .key = "accounted", MEM(accounted), .value = COUNTER_U64,
	  .metric = "ember_memory_accounted_bytes", .type = COUNTER_GAUGE,
	  .help = "Heap bytes the parts of emberd say they hold (the sum of ember_memory_bytes)." },
	{ .key = "unaccounted", MEM(unaccounted), .value = COUNTER_I64,
	  .metric = "ember_memory_unaccounted_bytes", .type = COUNTER_GAUGE,
	  .help = "Heap bytes in use that no part accounts for (negative: a part overcounts)." },
	{ .key = "accounted_share", .value = COUNTER_FN, .fn = accounted_share,
	  .json_fmt = "%.4f" },
	{ .key = "parts", MEM(parts), .value = COUNTER_U64, .nr = HTTP_MEM__NR, .name = part_name,
	  .array_label = "part", .metric = "ember_memory_bytes", .type = COUNTER_GAUGE,
	  .help = "Heap bytes held, by part (start: in use at start beyond the parts then)." },
};
const size_t http_memory_counters_n = COUNTERS_N(http_memory_counters);
