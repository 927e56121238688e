// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ember/core/base/regex.h"

static struct ember_regex *compile(const char *pat)
{
	char err[200] = "";
	struct ember_regex *re = ember_regex__new(pat, strlen(pat), err, sizeof(err));

	if (!re)
		fail_msg("'%s' did not compile: %s", pat, err);
	return re;
}

static int match(const struct ember_regex *re, const char *s)
{
	return ember_regex__match(re, s, strlen(s));
}

/* The hostile patterns: each answered by an error or a limit, in bounded time. */
static void test_issue_patterns(void **state)
{
	char err[200] = "", *s;
	struct ember_regex *re;
	size_t n = 4094;

	/* comm=(%7C)(%5C1%5C1)* decoded: backreferences, which made glibc recurse ~65k deep */
	re = ember_regex__new("(|)(\\1\\1)*", 10, err, sizeof(err));
	assert_null(re);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err, "backreferences are not supported"));
	assert_non_null(strstr(err, "offset 4"));

	/* the same text before URL decoding is a valid pattern of literal '|' and '\' */
	re = compile("(\\|)(\\\\1\\\\1)*");
	assert_int_equal(match(re, "|\\1\\1"), 1);
	assert_int_equal(match(re, "x"), 0);
	ember_regex__free(re);

	/* glibc grew to 7 GB on this: PCRE2 refuses to compile it */
	re = ember_regex__new("a{1,32767}{1,32767}", 19, err, sizeof(err));
	assert_null(re);
	assert_int_equal(errno, E2BIG);
	assert_non_null(strstr(err, "too"));

	/* catastrophic backtracking: the limit answers, not a match or a non-match */
	s = malloc(n + 2);
	assert_non_null(s);
	memset(s, 'a', n);
	s[n] = '!';
	s[n + 1] = '\0';
	re = compile("(a+)+$");
	assert_int_equal(match(re, s), -E2BIG);
	assert_int_equal(match(re, "aaa"), 1);
	assert_int_equal(match(re, "aaab"), 0);
	if (ember_regex__jit(re) == 0) {
		assert_int_equal(match(re, s), -E2BIG); /* the JIT honours the match limit */
		assert_int_equal(match(re, "aaa"), 1);
	}
	ember_regex__free(re);
	re = compile("(.*.*)*[[:digit:]]");
	assert_int_equal(match(re, s), -E2BIG);
	assert_int_equal(match(re, "aaaaaaaaaaaaaa!"), -E2BIG); /* short subjects too */
	ember_regex__free(re);

	/* the depth limit: one open backtracking point per iteration of the group */
	for (size_t i = 0; i < n; i++)
		s[i] = i & 1 ? 'b' : 'a';
	s[n] = '\0';
	re = compile("^(a|b)*$");
	assert_int_equal(match(re, s), -E2BIG);
	assert_int_equal(match(re, "abab"), 1);
	if (ember_regex__jit(re) == 0) /* the JIT's stack overflows; the interpreter's limits */
		assert_int_equal(match(re, s), -E2BIG);
	ember_regex__free(re);
	free(s);
}

/* Patterns and subjects where ember must answer as glibc regcomp(REG_EXTENDED) does. */
/* clang-format off */
static const struct {
	const char *re, *s;
	int match;
} same_as_glibc[] = {
	{ "python", "python3", 1 },
	{ "^python$", "python3", 0 },
	{ "^(java|python3|node)$", "node", 1 },
	{ "^(java|python3|node)$", "nodejs", 0 },
	{ "^kworker/[0-9]+:[0-9]+$", "kworker/0:1", 1 },
	{ "^kworker/[0-9]+:[0-9]+$", "kworker/u4:1", 0 },
	{ "", "anything", 1 },
	{ "a|", "b", 1 },
	{ "()", "x", 1 },
	{ "(|a)", "", 1 },
	{ "(^)*", "x", 1 },
	{ "a.c", "abc", 1 },
	{ "a.c", "a\nc", 1 },	     /* "." matches a newline */
	{ "[^x]", "\n", 1 },
	{ "a$", "a\n", 0 },	     /* "$" only at the very end */
	{ "a$b", "a$b", 0 },	     /* "$" is an anchor anywhere */
	{ "a^", "a^", 0 },
	{ "\\n", "n", 1 },	     /* ERE: \n is the letter n */
	{ "\\n", "\n", 0 },
	{ "\\d", "d", 1 },
	{ "\\d", "1", 0 },
	{ "\\t", "\t", 0 },
	{ "\\.", ".", 1 },
	{ "\\.", "x", 0 },
	{ "\\(a\\)", "(a)", 1 },
	{ "a\\|b", "a|b", 1 },
	{ "a\\|b", "a", 0 },
	{ "\\{", "{", 1 },
	{ "\\w+", "%_%", 1 },
	{ "^\\w+$", "a-b", 0 },
	{ "\\W", "abc", 0 },
	{ "\\s", "x y", 1 },
	{ "\\S", " \t", 0 },
	{ "\\bab", "x ab", 1 },
	{ "\\bab", "xab", 0 },
	{ "\\Bb", "ab", 1 },
	{ "\\<ab", "<ab", 1 },
	{ "\\<b", "ab", 0 },
	{ "ab\\>", "ab c", 1 },
	{ "a\\>", "ab", 0 },
	{ "\\`a", "ab", 1 },
	{ "\\`b", "ab", 0 },
	{ "b\\'", "ab", 1 },
	{ "a\\'", "ab", 0 },
	{ ")", ")", 1 },	     /* an unmatched ')' is literal */
	{ "a)", "a)", 1 },
	{ "a**", "", 1 },	     /* stacked quantifiers: (a*)* */
	{ "a*?b", "aab", 1 },
	{ "a*+a", "aa", 1 },	     /* not possessive */
	{ "^a+*$", "aaa", 1 },
	{ "^a{1}{2}$", "aa", 1 },
	{ "^a{1}{2}$", "a", 0 },
	{ "^a{1,2}{3}$", "aaaaaa", 1 },
	{ "^a{1,2}{3}$", "aa", 0 },
	{ "^a{,2}$", "aa", 1 },	     /* glibc: {,n} is {0,n} */
	{ "^a{,2}$", "aaa", 0 },
	{ "^a{,}$", "aaaa", 1 },
	{ "^a{2,}$", "a", 0 },
	{ "^a{01}$", "a", 1 },
	{ "ab{0}c", "ac", 1 },
	{ "ab{0}c", "abc", 0 },
	{ "x{0}", "", 1 },
	{ "^(ab|cd){2,}$", "abcdab", 1 },
	{ "^(ab|cd){2,}$", "ab", 0 },
	{ "(a|ab)(c|bcd)(d*)", "abcd", 1 },
	{ "[\\]", "\\", 1 },	     /* a backslash is literal in brackets */
	{ "[\\d]", "d", 1 },
	{ "[\\d]", "1", 0 },
	{ "[a\\]]", "a]", 1 },
	{ "[a\\]]", "a", 0 },
	{ "[]a]", "]", 1 },
	{ "[^]a]", "]", 0 },
	{ "[^]a]", "b", 1 },
	{ "[a-]", "-", 1 },
	{ "[-a]", "-", 1 },
	{ "[^-a]", "-", 0 },
	{ "[%--]", "&", 1 },
	{ "[--@]", ".", 1 },
	{ "[---]", "-", 1 },
	{ "[a[]", "[", 1 },
	{ "[[]", "[", 1 },
	{ "[.]", "a", 0 },
	{ "[[.a.]]", "a", 1 },
	{ "[[=a=]]", "a", 1 },
	{ "[a-[.z.]]", "y", 1 },
	{ "[[.-.]-z]", ":", 1 },
	{ "[\\\\-a]", "^", 1 },
	{ "[[:digit:]-]", "-", 1 },
	{ "[[:upper:]]", "a", 0 },
	{ "[[:alpha:]]+", "x", 1 },
	{ "[[:space:]]", "\t", 1 },
	{ "[[:punct:]]", "_", 1 },
	{ "[^[:alnum:]]", "abc", 0 },
	{ "[[:xdigit:]]{4}", "beef", 1 },
	{ "\xc3\xa4", "\xc3\xa4", 1 }, /* bytes, not characters */
	{ "[\xc3\xa4]", "\xc3", 1 },
	{ "^.$", "\xc3\xa4", 0 },
	{ "^..$", "\xc3\xa4", 1 },
	{ "[\x80-\xff]", "\xc3", 1 },
	{ "#", "a#b", 1 },	     /* not PCRE2's extended-mode comments */
	{ "a b", "a b", 1 },
};
/* clang-format on */

static void test_same_as_glibc(void **state)
{
	struct ember_regex *re;
	regex_t g;
	size_t i;
	int got;

	for (i = 0; i < sizeof(same_as_glibc) / sizeof(same_as_glibc[0]); i++) {
		const char *p = same_as_glibc[i].re, *s = same_as_glibc[i].s;

		assert_int_equal(regcomp(&g, p, REG_EXTENDED | REG_NOSUB), 0);
		if ((regexec(&g, s, 0, NULL, 0) == 0) != same_as_glibc[i].match)
			fail_msg("case %zu: glibc says '%s' on '%s' is %d", i, p, s,
				 !same_as_glibc[i].match);
		regfree(&g);
		re = compile(p);
		got = match(re, s);
		if (got != same_as_glibc[i].match)
			fail_msg("case %zu: '%s' on '%s': %d, want %d", i, p, s, got,
				 same_as_glibc[i].match);
		ember_regex__free(re);
	}
}

/* Patterns that glibc refuses too (except where noted), with the errno and a word of reason. */
/* clang-format off */
static const struct {
	const char *re;
	int err;
	const char *reason;
} refused[] = {
	{ "*a", EINVAL, "'*' at offset 0 has nothing to repeat" },
	{ "(*a)", EINVAL, "nothing to repeat" },
	{ "a|*b", EINVAL, "nothing to repeat" },
	{ "^*", EINVAL, "nothing to repeat" },
	{ "a$*", EINVAL, "nothing to repeat" },
	{ "\\b*", EINVAL, "nothing to repeat" },
	{ "{", EINVAL, "nothing to repeat" },
	{ "(?:a)", EINVAL, "'?' at offset 1 has nothing to repeat" }, /* no Perl syntax */
	{ "a{", EINVAL, "unmatched '{' at offset 1" },
	{ "a{1,2", EINVAL, "unmatched '{'" },
	{ "a{x}", EINVAL, "invalid interval at offset 1" },
	{ "a{}", EINVAL, "invalid interval" },
	{ "a{1, 2}", EINVAL, "invalid interval" },
	{ "a{2,1}", EINVAL, "invalid interval" },
	{ "a{1,32768}", E2BIG, "repetition count over 32767" },
	{ "a{99999999999999999999}", E2BIG, "repetition count" },
	{ "(", EINVAL, "unmatched '(' at offset 0" },
	{ "(a(b)", EINVAL, "unmatched '(' at offset 0" },
	{ "[", EINVAL, "unmatched '[' at offset 0" },
	{ "[]", EINVAL, "unmatched '['" },
	{ "[^]", EINVAL, "unmatched '['" },
	{ "x[[:alpha:]", EINVAL, "unmatched '[' at offset 1" },
	{ "[[:alpha]", EINVAL, "unmatched '['" },
	{ "[[:foo:]]", EINVAL, "invalid character class '[:foo:]'" },
	{ "[[:ALPHA:]]", EINVAL, "invalid character class" },
	{ "[[.hyphen.]]", EINVAL, "collating element '[.hyphen.]'" },
	{ "[z-a]", EINVAL, "invalid range end" },
	{ "[a-c-e]", EINVAL, "invalid range" },
	{ "[[:alpha:]-z]", EINVAL, "invalid range" },
	{ "[[=a=]-z]", EINVAL, "invalid range" },
	{ "\\", EINVAL, "trailing backslash" },
	{ "a\\", EINVAL, "trailing backslash at offset 1" },
	{ "\\1", EINVAL, "backreferences" },
	{ "(a)\\1", EINVAL, "backreferences" }, /* glibc accepts this one */
};
/* clang-format on */

static void test_refused(void **state)
{
	struct ember_regex *re;
	char err[200];
	size_t i;

	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err[0] = '\0';
		re = ember_regex__new(refused[i].re, strlen(refused[i].re), err, sizeof(err));
		if (re)
			fail_msg("'%s' compiled", refused[i].re);
		if (errno != refused[i].err || !strstr(err, refused[i].reason))
			fail_msg("'%s': errno %d '%s', want %d '%s'", refused[i].re, errno, err,
				 refused[i].err, refused[i].reason);
	}
	/* no reason buffer, or a short one */
	assert_null(ember_regex__new("(", 1, NULL, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(ember_regex__new("(", 1, err, 8));
	assert_int_equal(strlen(err), 7);
}

static void test_size_limits(void **state)
{
	char pat[EMBER_REGEX_MAX_PATTERN + 2], err[200];
	struct ember_regex *re;
	size_t i, n;

	memset(pat, 'a', sizeof(pat));
	re = ember_regex__new(pat, EMBER_REGEX_MAX_PATTERN, err, sizeof(err));
	assert_non_null(re);
	ember_regex__free(re);
	assert_null(ember_regex__new(pat, EMBER_REGEX_MAX_PATTERN + 1, err, sizeof(err)));
	assert_int_equal(errno, E2BIG);
	assert_string_equal(err, "pattern too long (1025 bytes, limit 1024)");

	for (n = 0, i = 0; i < EMBER_REGEX_MAX_GROUPS; i++)
		n += (size_t)sprintf(pat + n, "(a)");
	re = ember_regex__new(pat, n, err, sizeof(err));
	assert_non_null(re);
	assert_int_equal(ember_regex__match(re, pat, 0), 0);
	ember_regex__free(re);
	strcpy(pat + n, "(a)");
	assert_null(ember_regex__new(pat, n + 3, err, sizeof(err)));
	assert_int_equal(errno, E2BIG);
	assert_string_equal(err, "too many groups (limit 64)");

	/* nesting: 64 groups deep is fine, and the stacked quantifiers' groups count for PCRE2 */
	n = 0;
	for (i = 0; i < EMBER_REGEX_MAX_GROUPS; i++)
		pat[n++] = '(';
	pat[n++] = 'a';
	for (i = 0; i < EMBER_REGEX_MAX_GROUPS; i++) {
		pat[n++] = ')';
		pat[n++] = '*';
	}
	re = ember_regex__new(pat, n, err, sizeof(err));
	assert_non_null(re);
	assert_int_equal(ember_regex__match(re, "xyz", 3), 1);
	ember_regex__free(re);
	memset(pat, '*', sizeof(pat));
	pat[0] = 'a';
	assert_null(ember_regex__new(pat, 1000, err, sizeof(err)));
	assert_int_equal(errno, E2BIG);
	assert_non_null(strstr(err, "pattern too complex"));

	/* a group repeated past what PCRE2 compiles */
	assert_null(ember_regex__new("(abcdefgh){1,30000}", 19, err, sizeof(err)));
	assert_int_equal(errno, E2BIG);
	re = compile("(abcdefgh){1,100}");
	ember_regex__free(re);
	re = compile("^a{32767}");
	assert_int_equal(match(re, "aaa"), 0);
	ember_regex__free(re);
}

static void test_bytes(void **state)
{
	struct ember_regex *re;
	char err[200];

	/* no NUL needed after either; the subject may hold NULs, the pattern may not */
	re = ember_regex__new("abcdef", 3, err, sizeof(err));
	assert_non_null(re);
	assert_string_equal(ember_regex__pattern(re), "abc");
	assert_int_equal(ember_regex__match(re, "xxabcyy", 5), 1);
	assert_int_equal(ember_regex__match(re, "xxabcyy", 4), 0);
	assert_int_equal(ember_regex__match(re, "\0abc", 4), 1);
	ember_regex__free(re);
	re = compile("^a.b$");
	assert_int_equal(ember_regex__match(re, "a\0b", 3), 1);
	ember_regex__free(re);
	assert_null(ember_regex__new("a\0b", 3, err, sizeof(err)));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err, "NUL byte at offset 1");
	ember_regex__free(NULL);
}

static void test_match_limit(void **state)
{
	struct ember_regex *re = compile("(a+)+$");

	/* ~49k steps on 15 bytes: under the default, over a lowered limit */
	assert_int_equal(match(re, "aaaaaaaaaaaaaa!"), 0);
	ember_regex__set_match_limit(re, 1000);
	assert_int_equal(match(re, "aaaaaaaaaaaaaa!"), -E2BIG);
	ember_regex__set_match_limit(re, 0);
	assert_int_equal(match(re, "aaaaaaaaaaaaaa!"), 0);
	ember_regex__free(re);
}

struct thread_arg {
	const struct ember_regex *re;
	int bad;
};

static void *matcher(void *p)
{
	struct thread_arg *a = p;
	int i;

	for (i = 0; i < 20000; i++)
		if (match(a->re, i & 1 ? "kworker/1:0" : "kworker/u8:2") != (i & 1))
			a->bad++;
	return NULL;
}

/* One object, matched from several threads at once (emberd's HTTP threads). */
static void test_threads(void **state)
{
	struct ember_regex *re = compile("^kworker/[0-9]+:[0-9]+$");
	struct thread_arg args[4];
	pthread_t t[4];
	int i, pass;

	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && ember_regex__jit(re))
			break;
		for (i = 0; i < 4; i++) {
			args[i] = (struct thread_arg){ .re = re };
			assert_int_equal(pthread_create(&t[i], NULL, matcher, &args[i]), 0);
		}
		for (i = 0; i < 4; i++) {
			assert_int_equal(pthread_join(t[i], NULL), 0);
			assert_int_equal(args[i].bad, 0);
		}
	}
	ember_regex__free(re);
}

#ifndef PR_SET_MDWE
#define PR_SET_MDWE		 65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

/* In a fresh process (the JIT's allocator keeps executable memory it already has). */
static int mdwe_child(void)
{
	struct ember_regex *re;

	if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0))
		return 77; /* kernel before 6.3 */
	re = ember_regex__new("a+b", 3, NULL, 0);
	if (!re || ember_regex__jit(re) != -ENOMEM || ember_regex__match(re, "xaab", 4) != 1)
		return 1;
	ember_regex__free(re);
	return 0;
}

/* Under MemoryDenyWriteExecute (the unit's setting; PR_SET_MDWE here) the JIT cannot get
 * executable memory: ember_regex__jit() fails and the pattern works interpreted. */
static void test_jit_denied(void **state)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_regex", "--mdwe-child", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		skip();
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_patterns), cmocka_unit_test(test_same_as_glibc),
		cmocka_unit_test(test_refused),	       cmocka_unit_test(test_size_limits),
		cmocka_unit_test(test_bytes),	       cmocka_unit_test(test_match_limit),
		cmocka_unit_test(test_threads),	       cmocka_unit_test(test_jit_denied),
	};

	if (argc > 1 && !strcmp(argv[1], "--mdwe-child"))
		return mdwe_child();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
