/* SPDX-License-Identifier: MIT */
/*
 * timeexpr: the time parameters of emberd's HTTP API (from=, to=) and of the CLI, parsed into
 * nanoseconds on the Unix clock (or whatever clock @now_ns is on: replayed perf files use their
 * own). Accepted forms:
 *
 *   1712345678          Unix seconds
 *   1712345678.25       with a fraction (up to 9 digits)
 *   2024-04-05T19:34:38Z, 2024-04-05T19:34:38.5+02:00    RFC 3339 (also 't', 'z', ' ' separator)
 *   now                 @now_ns
 *   -90s -15m -2h -1d -500ms -250us   relative to @now_ns (fractions allowed: -1.5m)
 *   now-90s, now+5s     the same, spelled with "now"
 *
 * Pure and libc-only; no allocation; thread-safe.
 */
#ifndef EMBER_TIMEEXPR_H
#define EMBER_TIMEEXPR_H

#include <stddef.h>
#include <stdint.h>

#include "ember/core/base/parse.h"

#define TIMEEXPR_MAX_LEN 64

/*
 * Parses @len bytes at @s (need not be NUL-terminated). Returns 0 with *ret_ns set, or -EINVAL
 * (or -ERANGE for a value outside what int64 nanoseconds can hold) with @reterr (may be NULL)
 * filled: col is the 1-based offending column, reason a static string. *ret_ns is untouched on
 * failure.
 */
int timeexpr_parse(const char *s, size_t len, int64_t now_ns, int64_t *ret_ns,
		   struct parse_error *reterr);

/*
 * Parses a duration: a number with an optional fraction and a unit (ns us ms s m h d); a bare
 * number is seconds. Used for column_s=, seconds= and relative times. 0 or -EINVAL/-ERANGE.
 */
int timeexpr_parse_duration(const char *s, size_t len, int64_t *ret_ns, struct parse_error *reterr);

/* Appends @ns as RFC 3339 UTC with milliseconds ("2024-04-05T19:34:38.250Z") to @buf (>= 32 bytes).
 * Returns @buf. */
char *timeexpr_format_rfc3339(int64_t ns, char *buf, size_t size);

#endif
