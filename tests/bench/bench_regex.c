// SPDX-License-Identifier: MIT
/*
 * The regex benchmark (built and run by bench_regex.sh): per pattern, side by side with glibc's
 * regcomp/regexec (REG_EXTENDED | REG_NOSUB, what ember used before), the cost of
 *  - compiling and freeing (µs, mean), and the optional JIT compile on top;
 *  - matching a set of comm names (ns per match; the subjects cycle): glibc, ember interpreted,
 *    ember with JIT;
 *  - reaching the match limit on a hostile pattern (ms per call), interpreted and JIT.
 * Prints a Markdown table.
 * Usage: bench_regex [MATCHES]
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ember/core/base/regex.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static const char *const comms[] = {
	"systemd",   "kworker/0:1", "python3", "java",	   "emberd", "sshd", "burn",
	"rcu_sched", "ksoftirqd/1", "node",    "postgres", "bash",   "gzip", "Xorg",
};
#define NCOMMS (sizeof(comms) / sizeof(comms[0]))

struct ember_regex *compile(const char *pat, int jit)
{
	char err[160];
	struct ember_regex *re = ember_regex__new(pat, strlen(pat), err, sizeof(err));

	if (!re) {
		fprintf(stderr, "'%s': %s\n", pat, err);
		exit(1);
	}
	if (jit && ember_regex__jit(re))
		fprintf(stderr, "'%s': no JIT\n", pat);
	return re;
}

static double ember_ns(const char *pat, int jit, long n)
{
	struct ember_regex *re = compile(pat, jit);
	double t0;
	long i, hits = 0;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		hits += ember_regex__match(re, comms[i % NCOMMS], strlen(comms[i % NCOMMS])) == 1;
	t0 = (now_ns() - t0) / (double)n;
	ember_regex__free(re);
	return hits < 0 ? -1 : t0;
}

static double glibc_ns(const char *pat, long n)
{
	regex_t re;
	double t0;
	long i, hits = 0;

	if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB))
		return -1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		hits += !regexec(&re, comms[i % NCOMMS], 0, NULL, 0);
	t0 = (now_ns() - t0) / (double)n;
	regfree(&re);
	return hits < 0 ? -1 : t0;
}

/* Mean µs of compiling @pat (and JIT-compiling it when @jit), then freeing it: what a request
 * pays. A mean, not a median: the JIT's allocator maps and unmaps executable memory now and
 * then, and that is part of the cost. */
static double compile_us(const char *pat, int jit)
{
	const int n = 5000;
	double t0 = now_ns();
	int i;

	for (i = 0; i < n; i++) {
		struct ember_regex *re = compile(pat, 0);

		if (jit)
			(void)ember_regex__jit(re);
		ember_regex__free(re);
	}
	return (now_ns() - t0) / n / 1e3;
}

/* Mean µs of glibc's regcomp + regfree of @pat. */
static double glibc_compile_us(const char *pat)
{
	const int n = 5000;
	double t0 = now_ns();
	regex_t re;
	int i;

	for (i = 0; i < n; i++) {
		if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB))
			return -1;
		regfree(&re);
	}
	return (now_ns() - t0) / n / 1e3;
}

/* ms per call of a hostile pattern on @subj, and what the call returned. */
static double limit_ms(const char *pat, const char *subj, int jit, int *ret)
{
	struct ember_regex *re = compile(pat, jit);
	double t0;
	int i;

	t0 = now_ns();
	for (i = 0; i < 5; i++)
		*ret = ember_regex__match(re, subj, strlen(subj));
	t0 = (now_ns() - t0) / 5 / 1e6;
	ember_regex__free(re);
	return t0;
}

int main(int argc, char **argv)
{
	static const char *const pats[] = {
		"python",
		"^(java|python3|node)$",
		"^kworker/[0-9]+:[0-9]+$",
		"[[:digit:]]",
		"^(systemd|sshd|emberd|postgres|Xorg|bash|gzip|burn)$",
	};
	static const char *const hostile[] = { "(a+)+$", "(.*.*)*[[:digit:]]" };
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	char subj[4096];
	size_t i;
	int r1, r2;

	printf("| pattern | glibc compile µs | ember compile µs | +JIT µs | glibc ns/match | "
	       "ember ns/match | ember JIT ns/match |\n"
	       "| --- | --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		printf("| `%s` | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", pats[i],
		       glibc_compile_us(pats[i]), compile_us(pats[i], 0),
		       compile_us(pats[i], 1) - compile_us(pats[i], 0), glibc_ns(pats[i], n),
		       ember_ns(pats[i], 0, n), ember_ns(pats[i], 1, n));
	printf("\n| hostile pattern | subject | interpreted ms/call | JIT ms/call |\n"
	       "| --- | --- | --- | --- |\n");
	memset(subj, 'a', 15);
	subj[15] = '!';
	subj[16] = '\0';
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		double a = limit_ms(hostile[i], subj, 0, &r1),
		       b = limit_ms(hostile[i], subj, 1, &r2);

		printf("| `%s` | 15 x a + ! | %.2f (%s) | %.2f (%s) |\n", hostile[i], a,
		       r1 == -E2BIG ? "limit"
		       : r1	    ? "match"
				    : "no match",
		       b,
		       r2 == -E2BIG ? "limit"
		       : r2	    ? "match"
				    : "no match");
	}
	memset(subj, 'a', sizeof(subj) - 2);
	subj[sizeof(subj) - 2] = '!';
	subj[sizeof(subj) - 1] = '\0';
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		double a = limit_ms(hostile[i], subj, 0, &r1),
		       b = limit_ms(hostile[i], subj, 1, &r2);

		printf("| `%s` | 4094 x a + ! | %.2f (%s) | %.2f (%s) |\n", hostile[i], a,
		       r1 == -E2BIG ? "limit"
		       : r1	    ? "match"
				    : "no match",
		       b,
		       r2 == -E2BIG ? "limit"
		       : r2	    ? "match"
				    : "no match");
	}
	return 0;
}
