/* SPDX-License-Identifier: MIT */
/*
 * query: the parameters of emberd's HTTP API, validated before anything touches the store.
 *
 * - query_urlencoded_parse() splits an application/x-www-form-urlencoded string ("a=1&b=%20x")
 *   into decoded key/value pairs (POST bodies; MHD decodes the URL's own query string).
 * - struct query_common holds what every data endpoint accepts: the range (from, to: see
 *   timeexpr.h; default the last 60 s) and the filters pid, tid, comm (POSIX extended regex),
 *   kernel=0|1, user=0|1, idle=0|1, the workload's container=, service=, unit= and
 *   group_by=container|pod|service|unit (a frame above the root; kept as text here: the daemon
 *   resolves them). query_common_set() takes one pair; query_common_finish()
 *   applies defaults and checks the range against the limit.
 *
 * Errors name the parameter: struct query_error.param is a copy of the key, .reason a static
 * string; the HTTP layer turns them into 400/413 JSON bodies.
 * libc only; not thread-safe per object.
 */
#ifndef EMBER_QUERY_H
#define EMBER_QUERY_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QUERY_MAX_PAIRS 64	/* more pairs than this in one request is a 400 */
#define QUERY_MAX_VALUE 1024	/* bytes of one decoded value */
#define QUERY_MAX_REGEX 256	/* bytes of a comm= regex */

struct query_error {
	char param[64];		/* the offending parameter (truncated copy), or "" */
	const char *reason;	/* static or @buf, lower case */
	int status;		/* HTTP status to answer: 400 or 413 */
	char buf[192];		/* a reason with numbers in it (the limit, the accepted forms) */
};

/* Called per decoded pair; key and value are NUL-terminated, borrowed for the call only.
 * Return 0 to go on, or a negative errno to stop (returned by the parser). */
typedef int (*query_pair_fn)(const char *key, const char *value, void *ctx);

/*
 * Decodes @s[0..len): pairs split on '&' (empty pieces ignored), key and value on the first '=',
 * '+' is a space, %XX a byte. A malformed escape, a NUL byte, a key or value over
 * QUERY_MAX_VALUE or more than QUERY_MAX_PAIRS pairs is -EINVAL with @reterr (may be NULL)
 * filled. Otherwise returns what the last callback returned (0 when all were accepted).
 */
int query_urlencoded_parse(const char *s, size_t len, query_pair_fn cb, void *ctx,
			   struct query_error *reterr);

/* A tri-state filter flag: unset (the endpoint's default), off or on. */
enum query_flag { QUERY_FLAG_UNSET = -1, QUERY_FLAG_OFF = 0, QUERY_FLAG_ON = 1 };

struct ember_regex;

/*
 * Which events a query reads (event=): on-CPU samples (the default), off-CPU time (
 * each unit one quantum of blocked time, [offcpu] quantum_us, 1 ms by default), or wall time
 * (both, in microseconds: a sample is 1e6 / frequency us, a quantum quantum_us; on-CPU stacks
 * under an "[on-cpu]" frame where off-CPU ones have their state), or wakers (the stacks that
 * woke recorded blocked periods, weighed by the blocked time they ended, in quanta).
 */
enum query_event {
	QUERY_EVENT_CPU = 0,
	QUERY_EVENT_OFFCPU,
	QUERY_EVENT_WALL,
	QUERY_EVENT_WAKEUP,
	QUERY_EVENT_CHAIN,
	/* memory and I/O events (emberd's [pagefault], [vmgrow], [blockio], [malloc]): each record
	 * one quantum of its kind's weight: pages, bytes, or with weight=latency nanoseconds */
	QUERY_EVENT_PAGEFAULT,
	QUERY_EVENT_VMGROW,
	QUERY_EVENT_BLOCKIO,
	QUERY_EVENT_MALLOC,
	/* hardware counters: where the kernel offers none, answered with the reason */
	QUERY_EVENT_CYCLES,
	QUERY_EVENT_INSTRUCTIONS,
};

struct query_common {
	int64_t from_ns, to_ns;		/* after finish(): from_ns <= to_ns */
	bool has_from, has_to;
	int64_t pid, tid;		/* -1: any */
	bool has_comm;
	struct ember_regex *comm_re; /* set when has_comm; freed by query_common_fini() unless
				      * comm_borrowed (a copy of another query's) */
	bool comm_borrowed; /* comm_re, focus_re and ignore_re belong to another query */
	char comm_src[QUERY_MAX_REGEX + 1];
	char comm_err[128]; /* scratch: why a pattern was refused (the reason points here) */
	enum query_flag kernel, user, idle;
	/* workload identity (emberd's live store; docs/http-api.md): "" any */
	char container[72];	/* container id or a prefix of it (>= 4 hex digits) */
	char service[128];	/* service.name */
	char unit[128];		/* systemd unit ("nginx.service" or "nginx") */
	char group_by[16];	/* "", "container", "pod", "service", "unit" */
	enum query_event event;	/* event=cpu|offcpu|wall|wakeup|chain|pagefault|vmgrow|blockio|
				   malloc|cycles|instructions; default cpu */
	bool weight_latency;	/* weight=latency (event=blockio): the time in flight, not bytes */
	/*
	 * focus=RE, ignore=RE (pprof's -focus and -ignore, `ember merge --grep/--exclude`): keep
	 * only the stacks with a frame matching focus, drop those with a frame matching ignore (a
	 * frame's whole name is the subject; ^ and $ anchor to it). NULL: none. Owned like comm_re
	 * (borrowed with comm_borrowed).
	 */
	struct ember_regex *focus_re, *ignore_re;
	char focus_src[QUERY_MAX_REGEX + 1], ignore_src[QUERY_MAX_REGEX + 1];
};

void query_common_init(struct query_common *q);
void query_common_fini(struct query_common *q);

/*
 * Takes one pair. Returns 1 if @key is a common parameter and @value is valid, 0 if @key is
 * not a common parameter (the endpoint may know it), -EINVAL for a bad value (@reterr filled:
 * param=@key). @now_ns anchors relative times. A repeated key overrides the earlier value.
 */
int query_common_set(struct query_common *q, const char *key, const char *value, int64_t now_ns,
		     struct query_error *reterr);

/*
 * Applies defaults (to = now, from = to - @default_ns) and checks from <= to (-EINVAL, 400)
 * and to - from <= @max_range_ns (-E2BIG, 413; 0 means no limit).
 */
int query_common_finish(struct query_common *q, int64_t now_ns, int64_t default_ns,
			int64_t max_range_ns, struct query_error *reterr);

/*
 * The second range of the two-range endpoints (diff.svg, diff.folded, compare): b_from and b_to
 * (time expressions as from/to), with normalize=0|1 and elided=0|1.
 */
struct query_range_b {
	int64_t from_ns, to_ns;
	bool has_from, has_to;
	bool normalize, elided;
};

/*
 * Takes one pair: 1 if @key is b_from, b_to, normalize or elided and @value is valid, 0 if not
 * one of them, -EINVAL for a bad value (@reterr filled: param=@key). @now_ns anchors relative
 * times.
 */
int query_range_b_set(struct query_range_b *b, const char *key, const char *value, int64_t now_ns,
		      struct query_error *reterr);
/*
 * Both ends are required (400 naming the missing one), b_from <= b_to (400) and the span within
 * @max_range_ns (413; 0: no limit), with no overflow whatever the times. 0 or -EINVAL/-E2BIG.
 */
int query_range_b_finish(const struct query_range_b *b, int64_t max_range_ns,
			 struct query_error *reterr);

/*
 * The error of a comm= pattern that reached its match limit on some comm (regex.h): the query
 * cannot be answered (400 naming comm), never taken as a match or a non-match.
 */
#define QUERY_ECOMM_LIMIT ETIME

/*
 * 1 if the @len bytes at @comm pass the comm= filter (always without one), 0 if not, or
 * -QUERY_ECOMM_LIMIT, -ENOMEM.
 */
int query_common_match_comm(const struct query_common *q, const char *comm, size_t len);

/* The same for a focus= or ignore= pattern (400 naming neither: either may have). */
#define QUERY_EFRAME_LIMIT ELOOP

/*
 * focus= and ignore= on one frame name: QUERY_FRAME_FOCUS and/or QUERY_FRAME_IGNORE bits, or
 * -QUERY_EFRAME_LIMIT (a pattern reached its match limit), -ENOMEM.
 */
#define QUERY_FRAME_FOCUS  1
#define QUERY_FRAME_IGNORE 2
int query_common_match_frame(const struct query_common *q, const char *name, size_t len);
/* Whether focus= or ignore= is set. */
static inline bool query_common_has_frames(const struct query_common *q)
{
	return q->focus_re || q->ignore_re;
}

/*
 * Value helpers for endpoint-specific parameters; each fills @reterr with param=@key.
 * Unsigned decimal in [min, max]: */
int query_parse_u64(const char *key, const char *value, uint64_t min, uint64_t max,
		    uint64_t *ret, struct query_error *reterr);
/* "0" or "1" (also "false"/"true"): */
int query_parse_bool(const char *key, const char *value, bool *ret, struct query_error *reterr);

#endif
