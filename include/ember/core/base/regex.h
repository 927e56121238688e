/* SPDX-License-Identifier: MIT */
/*
 * regex: user-supplied regular expressions (emberd's comm= filter, ember merge --grep/--exclude)
 * with bounded time and memory, whatever the pattern.
 *
 * Syntax: POSIX extended regular expressions as glibc's regcomp(REG_EXTENDED | REG_NOSUB) reads
 * them in the C locale, which is what users wrote before this module: a pattern means what it
 * meant there, or is refused with a reason. The pattern is translated into PCRE2 syntax and run
 * by PCRE2's interpreter with a match, depth and heap limit. Differences from glibc:
 *   - backreferences (\1 .. \9, a GNU extension in ERE) are refused (-EINVAL): they are what
 *     makes matching exponential even for an engine that does not backtrack;
 *   - collating elements and equivalence classes of more than one byte ([[.hyphen.]]) are
 *     refused, as glibc does in the C locale; single bytes ([[.a.]], [[=a=]]) are accepted;
 *   - Perl syntax is not PCRE2's here: (?:...), \d, \n, *? mean what they mean in ERE ("?" after
 *     "(" has nothing to repeat; \d is the letter d; *? is (x*)?).
 *   - a quantified group may be refused as too large to compile (a{1,1000} is fine, (abc){1,30000}
 *     is not: PCRE2 copies the group per repetition).
 * Everything is bytes (no UTF-8 decoding): "." is one byte, \w is [A-Za-z0-9_], classes are the
 * C locale's; "." and [^a] match a newline; "$" matches only at the very end.
 *
 * Limits (each answered as listed, never as a silent match or non-match):
 *   pattern over EMBER_REGEX_MAX_PATTERN bytes, over EMBER_REGEX_MAX_GROUPS groups, a {m,n}
 *   count over EMBER_REGEX_MAX_REPEAT, a compiled form over EMBER_REGEX_MAX_COMPILE_BYTES:
 *     ember_regex__new() fails with E2BIG;
 *   a match that takes more than the match limit (steps), the depth limit (nested backtracking
 *   points) or the heap limit: ember_regex__match() returns -E2BIG.
 *
 * Thread-safety: after ember_regex__new() (and the optional setters, which must come before the
 * object is shared), an object is read-only: any number of threads may call
 * ember_regex__match() on it at once. Each call allocates its own PCRE2 match data (~50 ns).
 */
#ifndef EMBER_REGEX_H
#define EMBER_REGEX_H

#include <stddef.h>
#include <stdint.h>

#define EMBER_REGEX_MAX_PATTERN	      1024u	   /* bytes of a pattern */
#define EMBER_REGEX_MAX_GROUPS	      64u	   /* "(" groups in a pattern */
#define EMBER_REGEX_MAX_REPEAT	      32767u	   /* m and n of {m,n} (glibc's RE_DUP_MAX) */
#define EMBER_REGEX_MAX_COMPILE_BYTES (256u << 10) /* memory to compile one pattern */
#define EMBER_REGEX_MATCH_LIMIT	      100000u	   /* default steps per match: ~2-4 ms */
#define EMBER_REGEX_DEPTH_LIMIT	      5000u	   /* nested backtracking points per match */
#define EMBER_REGEX_HEAP_LIMIT_KIB    1024u	   /* backtracking memory per match */

struct ember_regex; /* opaque */

/*
 * Compiles @len bytes at @pattern (need not be NUL-terminated; a NUL byte in it is refused).
 * Returns the object, which the caller frees with ember_regex__free(), or NULL with errno set
 * and a one-line reason in @err (may be NULL; truncated to @errlen), such as
 * "unmatched '(' at offset 0" or "backreferences are not supported ('\1' at offset 3)":
 *   EINVAL  not a valid pattern,
 *   E2BIG   a size limit (pattern, groups, repeat count, compiled size),
 *   ENOMEM  out of memory.
 */
struct ember_regex *ember_regex__new(const char *pattern, size_t len, char *err, size_t errlen);
/* NULL is a no-op. */
void ember_regex__free(struct ember_regex *re);

/*
 * Does @re match anywhere in the @len bytes at @s (need not be NUL-terminated; may hold NULs)?
 * Returns 1 (match), 0 (no match), -E2BIG (the match, depth or heap limit was reached: the answer
 * is unknown, and the caller decides; emberd answers 400, ember exits 2) or -ENOMEM.
 * Thread-safe (see above).
 */
int ember_regex__match(const struct ember_regex *re, const char *s, size_t len);

/* The pattern as given, NUL-terminated. Borrowed: valid until ember_regex__free(). */
const char *ember_regex__pattern(const struct ember_regex *re);

/*
 * Sets the match limit (steps of the matcher per call; 0 restores EMBER_REGEX_MATCH_LIMIT).
 * A step costs 20-40 ns interpreted on the 2-CPU VM, depending on the pattern
 * (docs/benchmarks.md), so the default bounds a call to ~2-4 ms. Raise it where subjects are
 * long and the pattern is the user's own (ember merge on frame names of KiBs: 1000000).
 * Not thread-safe: call before sharing @re.
 */
void ember_regex__set_match_limit(struct ember_regex *re, uint32_t steps);

/*
 * Optional: compiles @re to machine code with PCRE2's JIT (~3x faster per match, ~10x faster to
 * reach the match limit; costs ~0.1-0.3 ms and some executable memory). The JIT honours the
 * match limit (counted its own way) but not the depth and heap limits: it runs on a fixed 32 KiB
 * stack, and a match that needs more is rerun by the interpreter under all three limits.
 * Returns 0, -EOPNOTSUPP (no JIT in this libpcre2) or -ENOMEM (also when executable memory is
 * refused, as under systemd's MemoryDenyWriteExecute=yes); on failure @re keeps working,
 * interpreted. Not thread-safe: call before sharing @re.
 */
int ember_regex__jit(struct ember_regex *re);

#endif
