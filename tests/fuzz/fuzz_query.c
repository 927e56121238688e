// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: emberd's request parameters. The input is an urlencoded query string
 * (a POST body, or what MHD hands over decoded): every pair goes through the common parameter
 * validation (times, pids, comm regex, flags), the range check, and, as a time and a duration
 * expression, through timeexpr directly.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ember/core/model/query.h"
#include "ember/core/base/timeexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_pair(const char *key, const char *value, void *ctx)
{
	struct query_common *q = ctx;
	struct query_error qe;
	struct parse_error pe;
	char buf[40];
	int64_t v;

	(void)query_common_set(q, key, value, 1700000000000000000LL, &qe);
	if (timeexpr_parse(value, strlen(value), 1700000000000000000LL, &v, &pe) == 0)
		(void)timeexpr_format_rfc3339(v, buf, sizeof(buf));
	(void)timeexpr_parse_duration(value, strlen(value), &v, &pe);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct query_common q;
	struct query_error qe;
	struct parse_error pe;
	int64_t v;

	query_common_init(&q);
	if (query_urlencoded_parse((const char *)data, size, on_pair, &q, &qe) == 0) {
		(void)query_common_finish(&q, 1700000000000000000LL, 60000000000LL,
					  3600000000000LL, &qe);
		if (q.has_comm)
			(void)query_common_match_comm(&q, "burn", 4);
		(void)query_common_match_comm(&q, (const char *)data, size);
	}
	query_common_fini(&q);
	/* the raw bytes as one time expression, with the clock at both ends of its range */
	(void)timeexpr_parse((const char *)data, size, INT64_MAX, &v, &pe);
	(void)timeexpr_parse((const char *)data, size, INT64_MIN, &v, &pe);
	return 0;
}
