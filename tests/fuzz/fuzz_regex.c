// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the regex module (emberd's comm=, ember merge --grep/--exclude). The input is
 * PATTERN NUL SUBJECT (without a NUL, the input is both). Every pattern must compile or be refused
 * with a reason, and every match must end with 1, 0 or -E2BIG; interpreted and JIT-compiled must
 * agree. Small patterns are also run through glibc's regcomp/regexec (the syntax ember keeps):
 * where both accept a pattern they must give the same answer, and ember may refuse only what
 * glibc refuses too, or backreferences and sizes. The oracle skips what makes glibc itself slow
 * or huge (backreferences, large counts).
 */
#include <errno.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ember/core/base/regex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ORACLE_MAX 48 /* bytes of pattern and subject compared with glibc */

static void crash(const char *what, const char *pat, size_t plen, const char *s, size_t slen)
{
	fprintf(stderr, "%s: pattern '%.*s' subject '%.*s'\n", what, (int)plen, pat, (int)slen, s);
	abort();
}

/*
 * glibc can be compared only on small, NUL-free inputs without what makes it slow or huge:
 * backreferences, and quantifiers, which it compiles by copying (20 stacked "+" took it 6 s to
 * compile): at most 4 of them, with counts below 10.
 */
static int oracle_fits(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t i, quants = 0;

	if (plen > ORACLE_MAX || slen > ORACLE_MAX || memchr(s, '\0', slen))
		return 0;
	for (i = 0; i < plen; i++) {
		if (pat[i] == '\\' && i + 1 < plen && pat[i + 1] >= '1' && pat[i + 1] <= '9')
			return 0;
		if (i > 0 && pat[i] >= '0' && pat[i] <= '9' && pat[i - 1] >= '0' &&
		    pat[i - 1] <= '9')
			return 0;
		if (strchr("*+?{", pat[i]) && ++quants > 4)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *pat = (const char *)data, *s = pat;
	const char *nul = memchr(data, '\0', size);
	size_t plen = size, slen = size;
	struct ember_regex *re;
	char err[160], pbuf[ORACLE_MAX + 1], sbuf[ORACLE_MAX + 1];
	int r, rj, g, gerr;
	regex_t gre;

	if (nul) {
		plen = (size_t)(nul - pat);
		s = nul + 1;
		slen = size - plen - 1;
	}
	err[0] = '\0';
	re = ember_regex__new(pat, plen, err, sizeof(err));
	if (!re) {
		if ((errno != EINVAL && errno != E2BIG && errno != ENOMEM) || !err[0])
			crash("refused without errno and reason", pat, plen, s, slen);
	} else {
		if (strlen(ember_regex__pattern(re)) != plen)
			crash("pattern copy", pat, plen, s, slen);
		r = ember_regex__match(re, s, slen);
		if (r != 1 && r != 0 && r != -E2BIG)
			crash("match result", pat, plen, s, slen);
		if (ember_regex__jit(re) == 0) {
			rj = ember_regex__match(re, s, slen);
			/* the JIT counts the match limit its own way: a limit may differ, not an
			 * answer */
			if (rj != r && rj != -E2BIG && r != -E2BIG)
				crash("JIT and interpreter disagree", pat, plen, s, slen);
		}
		ember_regex__free(re);
	}
	if (!oracle_fits(pat, plen, s, slen))
		return 0;
	memcpy(pbuf, pat, plen);
	pbuf[plen] = '\0';
	memcpy(sbuf, s, slen);
	sbuf[slen] = '\0';
	gerr = regcomp(&gre, pbuf, REG_EXTENDED | REG_NOSUB);
	re = ember_regex__new(pat, plen, err, sizeof(err));
	if (re && gerr)
		crash("ember accepts what glibc refuses", pat, plen, s, slen);
	if (!re && !gerr && errno != E2BIG)
		crash("ember refuses what glibc accepts", pat, plen, s, slen);
	if (re && !gerr) {
		r = ember_regex__match(re, s, slen);
		g = regexec(&gre, sbuf, 0, NULL, 0) == 0;
		if (r != -E2BIG && r != g)
			crash("ember and glibc disagree", pat, plen, s, slen);
	}
	if (!gerr)
		regfree(&gre);
	ember_regex__free(re);
	return 0;
}
