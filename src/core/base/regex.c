// SPDX-License-Identifier: MIT
/*
 * regex: POSIX extended regular expressions, translated into PCRE2 syntax and run by PCRE2 under
 * limits. The only file of core that uses libpcre2.
 *
 * Why translate rather than hand PCRE2 the pattern: users wrote ERE (glibc regcomp), and the two
 * differ where it matters: "\n" and "\d" are letters in ERE; a backslash is literal inside
 * brackets; "a{,2}" is {0,2}; "a*?" and "a*+" stack quantifiers instead of being lazy or
 * possessive (possessive changes what matches); "$" does not match before a final newline; "."
 * matches a newline; "\<" "\>" are word starts and ends. The translator reads the ERE grammar
 * (what glibc accepts, refusing backreferences) and writes PCRE2 that matches the same strings:
 * every literal byte as \xHH, every group non-capturing (nothing reads captures, and frames stay
 * small), stacked quantifiers wrapped in (?:...). Whether a match exists does not depend on
 * leftmost-longest versus leftmost-first, so PCRE2's backtracking gives glibc's answers.
 */
#include "ember/core/base/regex.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "ember/core/base/errbuf.h"
#include "ember/core/base/sbuf.h"

/*
 * Memory for compiling goes through a budget. Debian's PCRE2 (link size 2) refuses compiled
 * patterns over 64 KiB by itself, and the worst we found within 1024 bytes of pattern took
 * ~33 KiB in all; the budget makes the stated bound ours, whatever the library's build. The code
 * block keeps using this allocator for its free, so the budget lives in the object.
 */
struct budget {
	size_t used, max;
	bool refused; /* an allocation was over the budget */
};

struct ember_regex {
	pcre2_code *code;
	pcre2_match_context *mctx;
	struct budget budget;
	char pattern[]; /* NUL-terminated copy */
};

/* A header in front of each block so that free knows the size. */
struct budget_hdr {
	size_t size;
	max_align_t align[];
};

static void *budget_malloc(size_t size, void *data)
{
	struct budget *b = data;
	struct budget_hdr *h;

	if (size > b->max - b->used) {
		b->refused = true;
		return NULL;
	}
	h = malloc(sizeof(*h) + size);
	if (!h)
		return NULL;
	h->size = size;
	b->used += size;
	return h->align;
}

static void budget_free(void *ptr, void *data)
{
	struct budget *b = data;
	struct budget_hdr *h;

	if (!ptr)
		return;
	h = (struct budget_hdr *)((char *)ptr - offsetof(struct budget_hdr, align));
	b->used -= h->size;
	free(h);
}

/* --- ERE -> PCRE2 ----------------------------------------------------------------------------- */

enum last_item {
	LAST_NONE,  /* start, after "(", "|" or an anchor: a quantifier has nothing to repeat */
	LAST_ATOM,  /* a repeatable item starts at ->atom */
	LAST_QUANT, /* the item at ->atom is already quantified */
};

struct ere {
	const unsigned char *p;
	size_t len, pos;
	struct sbuf out;
	size_t atom; /* offset in out of the last repeatable item */
	enum last_item last;
	unsigned int groups, depth;		 /* groups opened so far; open now */
	size_t open_out[EMBER_REGEX_MAX_GROUPS]; /* per open group: its offset in out */
	size_t open_in[EMBER_REGEX_MAX_GROUPS];	 /* and in the pattern, for messages */
	char *err;
	size_t errlen;
};

/* Writes the reason for a refused pattern and returns @ret. */
static int __attribute__((format(printf, 3, 4))) fail(struct ere *e, int ret, const char *fmt, ...)
{
	va_list ap;

	if (e->err && e->errlen) {
		va_start(ap, fmt);
		vsnprintf(e->err, e->errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static void emit_byte(struct ere *e, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char b[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
		sbuf_addc(&e->out, (char)c);
	else
		sbuf_add(&e->out, b, sizeof(b));
}

static void atom_begin(struct ere *e)
{
	e->atom = e->out.len;
	e->last = LAST_ATOM;
}

static int quantify(struct ere *e, const char *q, size_t at)
{
	static const char open[] = "(?:";

	if (e->last == LAST_NONE)
		return fail(e, -EINVAL, "'%c' at offset %zu has nothing to repeat", e->p[at], at);
	if (e->last == LAST_QUANT) {
		/* ERE stacks quantifiers: a** is (a*)*, a*? is (a*)?, a{1}{2} is (a{1}){2} */
		if (sbuf_grow(&e->out, sizeof(open)))
			return -ENOMEM;
		memmove(e->out.buf + e->atom + 3, e->out.buf + e->atom, e->out.len - e->atom + 1);
		memcpy(e->out.buf + e->atom, open, 3);
		e->out.len += 3;
		sbuf_addc(&e->out, ')');
	}
	sbuf_adds(&e->out, q);
	e->last = LAST_QUANT;
	return 0;
}

/* Reads a decimal count of an interval at e->pos; -1 when there is none. */
static long read_count(struct ere *e)
{
	long v = -1;

	while (e->pos < e->len && e->p[e->pos] >= '0' && e->p[e->pos] <= '9') {
		v = (v < 0 ? 0 : v) * 10 + (e->p[e->pos++] - '0');
		if (v > EMBER_REGEX_MAX_REPEAT)
			v = EMBER_REGEX_MAX_REPEAT + 1; /* keep reading; refused below */
	}
	return v;
}

/* "{m}", "{m,}", "{m,n}" or glibc's "{,n}" and "{,}" at e->pos (on the '{'). */
static int interval(struct ere *e)
{
	size_t at = e->pos;
	long m, n;
	char q[32];

	e->pos++;
	m = read_count(e);
	n = m;
	if (e->pos < e->len && e->p[e->pos] == ',') {
		e->pos++;
		n = read_count(e);
		if (m < 0)
			m = 0;
	} else if (m < 0) {
		n = -2; /* "{" without a count: refused below */
	}
	if (e->pos >= e->len)
		return fail(e, -EINVAL, "unmatched '{' at offset %zu", at);
	if (e->p[e->pos] != '}' || n == -2)
		return fail(e, -EINVAL, "invalid interval at offset %zu", at);
	e->pos++;
	if (m > EMBER_REGEX_MAX_REPEAT || n > EMBER_REGEX_MAX_REPEAT)
		return fail(e, -E2BIG, "repetition count over %u at offset %zu",
			    EMBER_REGEX_MAX_REPEAT, at);
	if (n >= 0 && n < m)
		return fail(e, -EINVAL, "invalid interval at offset %zu: %ld > %ld", at, m, n);
	if (n < 0)
		snprintf(q, sizeof(q), "{%ld,}", m);
	else if (n == m)
		snprintf(q, sizeof(q), "{%ld}", m);
	else
		snprintf(q, sizeof(q), "{%ld,%ld}", m, n);
	return quantify(e, q, at);
}

static bool class_name_ok(const unsigned char *s, size_t n)
{
	static const char *const names[] = {
		"alpha", "upper", "lower", "digit", "xdigit", "alnum",
		"punct", "space", "blank", "cntrl", "print",  "graph"
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(names[i], s, n))
			return true;
	return false;
}

enum elem_kind { ELEM_BYTE, ELEM_EQUIV, ELEM_CLASS };

struct elem {
	enum elem_kind kind;
	unsigned char c;	   /* BYTE, EQUIV */
	const unsigned char *name; /* CLASS */
	size_t name_len;
	bool bare_dash; /* an unbracketed '-' */
};

/* One element of a bracket expression at e->pos: a byte, [.x.], [=x=] or [:name:]. */
static int bracket_elem(struct ere *e, size_t open_at, struct elem *ret)
{
	const unsigned char *p = e->p;
	unsigned char kind;
	size_t start, end;

	if (p[e->pos] == '[' && e->pos + 1 < e->len &&
	    (p[e->pos + 1] == '.' || p[e->pos + 1] == '=' || p[e->pos + 1] == ':')) {
		kind = p[e->pos + 1];
		start = e->pos + 2;
		for (end = start; end + 1 < e->len; end++)
			if (p[end] == kind && p[end + 1] == ']')
				break;
		if (end + 1 >= e->len)
			return fail(e, -EINVAL, "unmatched '[' at offset %zu", open_at);
		e->pos = end + 2;
		if (kind == ':') {
			if (!class_name_ok(p + start, end - start))
				return fail(e, -EINVAL,
					    "invalid character class '[:%.*s:]' at offset %zu",
					    (int)(end - start), p + start, start - 2);
			*ret = (struct elem){ .kind = ELEM_CLASS, .name = p + start };
			ret->name_len = end - start;
			return 0;
		}
		if (end - start != 1)
			return fail(e, -EINVAL,
				    "collating element '[%c%.*s%c]' at offset %zu is not supported",
				    kind, (int)(end - start), p + start, kind, start - 2);
		*ret = (struct elem){ .kind = kind == '.' ? ELEM_BYTE : ELEM_EQUIV, .c = p[start] };
		return 0;
	}
	*ret = (struct elem){ .kind = ELEM_BYTE, .c = p[e->pos], .bare_dash = p[e->pos] == '-' };
	e->pos++;
	return 0;
}

/* A bracket expression at e->pos (on the '['). A backslash in it is a literal byte. */
static int bracket(struct ere *e)
{
	size_t open_at = e->pos;
	struct elem a, b;
	bool first = true;
	int err;

	e->pos++;
	atom_begin(e);
	sbuf_addc(&e->out, '[');
	if (e->pos < e->len && e->p[e->pos] == '^') {
		sbuf_addc(&e->out, '^');
		e->pos++;
	}
	for (;; first = false) {
		if (e->pos >= e->len)
			return fail(e, -EINVAL, "unmatched '[' at offset %zu", open_at);
		if (e->p[e->pos] == ']' && !first) {
			e->pos++;
			break;
		}
		if (first && e->p[e->pos] == ']') { /* "[]a]": a leading ']' is literal */
			a = (struct elem){ .kind = ELEM_BYTE, .c = ']' };
			e->pos++;
		} else {
			err = bracket_elem(e, open_at, &a);
			if (err)
				return err;
		}
		/* a range "a-z"; a '-' first or last is literal */
		if (e->pos + 1 < e->len && e->p[e->pos] == '-' && e->p[e->pos + 1] != ']') {
			size_t dash = e->pos;

			if (a.kind != ELEM_BYTE || (a.bare_dash && !first))
				return fail(e, -EINVAL, "invalid range at offset %zu", dash);
			e->pos++;
			err = bracket_elem(e, open_at, &b);
			if (err)
				return err;
			if (b.kind != ELEM_BYTE || b.c < a.c)
				return fail(e, -EINVAL, "invalid range end at offset %zu",
					    dash + 1);
			if (e->pos + 1 < e->len && e->p[e->pos] == '-' && e->p[e->pos + 1] != ']')
				return fail(e, -EINVAL, "invalid range at offset %zu", e->pos);
			emit_byte(e, a.c);
			sbuf_addc(&e->out, '-');
			emit_byte(e, b.c);
			continue;
		}
		if (a.bare_dash && !first && e->pos < e->len && e->p[e->pos] != ']')
			return fail(e, -EINVAL, "invalid range at offset %zu", e->pos - 1);
		if (a.kind == ELEM_CLASS) {
			sbuf_adds(&e->out, "[:");
			sbuf_add(&e->out, a.name, a.name_len);
			sbuf_adds(&e->out, ":]");
		} else {
			emit_byte(e, a.c);
		}
	}
	sbuf_addc(&e->out, ']');
	return 0;
}

/* A backslash at e->pos. */
static int escape(struct ere *e)
{
	size_t at = e->pos;
	unsigned char c;

	if (e->pos + 1 >= e->len)
		return fail(e, -EINVAL, "trailing backslash at offset %zu", at);
	c = e->p[e->pos + 1];
	e->pos += 2;
	switch (c) {
	case '1' ... '9':
		return fail(e, -EINVAL, "backreferences are not supported ('\\%c' at offset %zu)",
			    c, at);
	case 'w':
	case 'W':
	case 's':
	case 'S':
		atom_begin(e);
		sbuf_addc(&e->out, '\\');
		sbuf_addc(&e->out, (char)c);
		return 0;
	case 'b':
	case 'B': /* assertions: nothing to repeat after them, as in glibc */
		sbuf_addc(&e->out, '\\');
		sbuf_addc(&e->out, (char)c);
		break;
	case '<':
		sbuf_adds(&e->out, "\\b(?=\\w)");
		break;
	case '>':
		sbuf_adds(&e->out, "\\b(?<=\\w)");
		break;
	case '`':
		sbuf_adds(&e->out, "\\A");
		break;
	case '\'':
		sbuf_adds(&e->out, "\\z");
		break;
	default: /* any other escaped byte is itself: \n is 'n', \. is '.' */
		atom_begin(e);
		emit_byte(e, c);
		return 0;
	}
	e->last = LAST_NONE;
	return 0;
}

static int translate(struct ere *e)
{
	unsigned char c;
	int err = 0;

	while (!err && e->pos < e->len) {
		c = e->p[e->pos];
		switch (c) {
		case '\0':
			return fail(e, -EINVAL, "NUL byte at offset %zu", e->pos);
		case '(':
			if (e->groups == EMBER_REGEX_MAX_GROUPS)
				return fail(e, -E2BIG, "too many groups (limit %u)",
					    EMBER_REGEX_MAX_GROUPS);
			e->open_out[e->depth] = e->out.len;
			e->open_in[e->depth] = e->pos;
			e->depth++;
			e->groups++;
			sbuf_adds(&e->out, "(?:");
			e->last = LAST_NONE;
			e->pos++;
			break;
		case ')':
			e->pos++;
			if (!e->depth) { /* glibc: an unmatched ')' is literal */
				atom_begin(e);
				emit_byte(e, c);
				break;
			}
			e->depth--;
			sbuf_addc(&e->out, ')');
			e->atom = e->open_out[e->depth];
			e->last = LAST_ATOM;
			break;
		case '|':
		case '^':
		case '$':
			sbuf_addc(&e->out, (char)c);
			e->last = LAST_NONE;
			e->pos++;
			break;
		case '*':
		case '+':
		case '?':
			err = quantify(e, (const char[]){ (char)c, '\0' }, e->pos);
			e->pos++;
			break;
		case '{':
			if (e->last == LAST_NONE)
				return quantify(e, "", e->pos);
			err = interval(e);
			break;
		case '.':
			atom_begin(e);
			sbuf_addc(&e->out, '.');
			e->pos++;
			break;
		case '[':
			err = bracket(e);
			break;
		case '\\':
			err = escape(e);
			break;
		default:
			atom_begin(e);
			emit_byte(e, c);
			e->pos++;
		}
	}
	if (err)
		return err;
	if (e->depth)
		return fail(e, -EINVAL, "unmatched '(' at offset %zu", e->open_in[e->depth - 1]);
	return sbuf_error(&e->out);
}

/* --- the object ------------------------------------------------------------------------------- */

/* PCRE2's compile errors left after translation are sizes, or bugs of the translator. */
static int compile_errno(int code)
{
	switch (code) {
	case PCRE2_ERROR_PARENTHESES_NEST_TOO_DEEP:
	case PCRE2_ERROR_PATTERN_TOO_LARGE:
	case PCRE2_ERROR_HEAP_FAILED:
	case PCRE2_ERROR_PARENTHESES_STACK_CHECK:
	case PCRE2_ERROR_PATTERN_TOO_COMPLICATED:
	case PCRE2_ERROR_PATTERN_STRING_TOO_LONG:
		return E2BIG;
	default:
		return EINVAL;
	}
}

struct ember_regex *ember_regex__new(const char *pattern, size_t len, char *err, size_t errlen)
{
	struct ember_regex *re = NULL;
	struct ere e = {
		.p = (const unsigned char *)pattern, .len = len, .err = err, .errlen = errlen
	};
	pcre2_general_context *gctx = NULL;
	pcre2_compile_context *cctx = NULL;
	PCRE2_UCHAR msg[120];
	PCRE2_SIZE erroff;
	int r, code;

	if (len > EMBER_REGEX_MAX_PATTERN) {
		r = errbuf_set(err, errlen, -E2BIG, "pattern too long (%zu bytes, limit %u)", len,
			       EMBER_REGEX_MAX_PATTERN);
		goto out;
	}
	r = translate(&e);
	if (r)
		goto out;
	re = calloc(1, sizeof(*re) + len + 1);
	if (!re) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(re->pattern, pattern, len);
	re->budget.max = EMBER_REGEX_MAX_COMPILE_BYTES;
	gctx = pcre2_general_context_create(budget_malloc, budget_free, &re->budget);
	cctx = gctx ? pcre2_compile_context_create(gctx) : NULL;
	re->mctx = pcre2_match_context_create(NULL);
	if (!cctx || !re->mctx) {
		r = -ENOMEM;
		goto out;
	}
	(void)pcre2_set_max_pattern_length(cctx, e.out.len);
	re->code = pcre2_compile((PCRE2_SPTR)(e.out.buf ? e.out.buf : ""), e.out.len,
				 PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_UTF |
				     PCRE2_NEVER_UCP | PCRE2_NEVER_BACKSLASH_C,
				 &code, &erroff, cctx);
	if (!re->code) {
		if (re->budget.refused) {
			r = errbuf_set(err, errlen, -E2BIG,
				       "pattern too complex: over %u KiB to compile",
				       EMBER_REGEX_MAX_COMPILE_BYTES >> 10);
			goto out;
		}
		if (code == PCRE2_ERROR_HEAP_FAILED) {
			r = -ENOMEM;
			goto out;
		}
		(void)pcre2_get_error_message(code, msg, sizeof(msg));
		r = errbuf_set(err, errlen, -compile_errno(code), "pattern too complex: %s",
			       (const char *)msg);
		goto out;
	}
	(void)pcre2_set_match_limit(re->mctx, EMBER_REGEX_MATCH_LIMIT);
	(void)pcre2_set_depth_limit(re->mctx, EMBER_REGEX_DEPTH_LIMIT);
	(void)pcre2_set_heap_limit(re->mctx, EMBER_REGEX_HEAP_LIMIT_KIB);
out:
	pcre2_compile_context_free(cctx);
	pcre2_general_context_free(gctx); /* the code keeps a copy of its allocator */
	sbuf_fini(&e.out);
	if (r) {
		if (r == -ENOMEM)
			(void)errbuf_set(err, errlen, r, "out of memory");
		ember_regex__free(re);
		errno = -r;
		return NULL;
	}
	return re;
}

void ember_regex__free(struct ember_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	pcre2_match_context_free(re->mctx);
	free(re);
}

const char *ember_regex__pattern(const struct ember_regex *re)
{
	return re->pattern;
}

void ember_regex__set_match_limit(struct ember_regex *re, uint32_t steps)
{
	(void)pcre2_set_match_limit(re->mctx, steps ? steps : EMBER_REGEX_MATCH_LIMIT);
}

int ember_regex__jit(struct ember_regex *re)
{
	int r = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);

	if (r == 0)
		return 0;
	return r == PCRE2_ERROR_NOMEMORY ? -ENOMEM : -EOPNOTSUPP;
}

int ember_regex__match(const struct ember_regex *re, const char *s, size_t len)
{
	pcre2_match_data *md;
	int r;

	/* Match data per call keeps the object shareable between threads; with one pair it is a
	 * small block, plus the interpreter's frames, which it keeps in the match data. */
	md = pcre2_match_data_create(1, NULL);
	if (!md)
		return -ENOMEM;
	r = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, 0, md, re->mctx);
	if (r == PCRE2_ERROR_JIT_STACKLIMIT) /* the JIT's fixed stack: the interpreter's limits */
		r = pcre2_match(re->code, (PCRE2_SPTR)s, len, 0, PCRE2_NO_JIT, md, re->mctx);
	pcre2_match_data_free(md);
	if (r >= 0)
		return 1;
	switch (r) {
	case PCRE2_ERROR_NOMATCH:
		return 0;
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
	case PCRE2_ERROR_JIT_STACKLIMIT:
		return -E2BIG;
	case PCRE2_ERROR_NOMEMORY:
		return -ENOMEM;
	default:
		return -EINVAL; /* not reached: no UTF checks, no partial matching */
	}
}
